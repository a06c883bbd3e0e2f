/**
 * WTF-8: agrees with UTF-8 (TextEncoder/TextDecoder) on well-formed text and on ill-formed
 * bytes, encodes lone surrogates losslessly, and the display helpers mark partial bytes.
 */

import { describe, it, expect } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import {
  byteTokenText,
  decodeWtf8,
  displayBytes,
  displayText,
  encodeWtf8,
} from '../../../../src/engine/tokenizers/wtf8';
import { hasLoneSurrogate, randomText } from './randomText';

describe('encodeWtf8', () => {
  it('equals UTF-8 for well-formed strings', () => {
    const rng = new Rng(1);
    const enc = new TextEncoder();
    let checked = 0;
    for (let n = 0; n < 2000; n++) {
      const s = randomText(rng);
      if (hasLoneSurrogate(s)) continue;
      expect(Array.from(encodeWtf8(s))).toEqual(Array.from(enc.encode(s)));
      checked++;
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('writes lone surrogates as 3-byte sequences and pairs as one 4-byte sequence', () => {
    // U+D800 = 1101 100000 000000 → ED A0 80; U+DFFF → ED BF BF (UTF-8's 3-byte pattern).
    expect(Array.from(encodeWtf8('\ud800'))).toEqual([0xed, 0xa0, 0x80]);
    expect(Array.from(encodeWtf8('\udfff'))).toEqual([0xed, 0xbf, 0xbf]);
    // A low before a high is two lone surrogates, not a pair.
    expect(Array.from(encodeWtf8('\udc00\ud800'))).toEqual([0xed, 0xb0, 0x80, 0xed, 0xa0, 0x80]);
    // U+1F600 = 000 011111 011000 000000 → F0 9F 98 80.
    expect(Array.from(encodeWtf8('\ud83d\ude00'))).toEqual([0xf0, 0x9f, 0x98, 0x80]);
  });
});

describe('decodeWtf8', () => {
  it('inverts encodeWtf8 for thousands of random strings, lone surrogates included', () => {
    const rng = new Rng(2);
    let lone = 0;
    for (let n = 0; n < 3000; n++) {
      const s = randomText(rng);
      if (hasLoneSurrogate(s)) lone++;
      expect(decodeWtf8(encodeWtf8(s))).toBe(s);
    }
    expect(lone).toBeGreaterThan(300);
  });

  it('replaces ill-formed bytes exactly as the WHATWG UTF-8 decoder does (bytes without 0xED)', () => {
    const rng = new Rng(3);
    const dec = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
    const interesting = [
      0x00, 0x41, 0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x9f, 0xa0, 0x90,
      0x8f,
    ];
    for (let n = 0; n < 3000; n++) {
      const len = rng.int(12);
      const bytes = new Uint8Array(len);
      for (let i = 0; i < len; i++) {
        let b = rng.next() < 0.5 ? (interesting[rng.int(interesting.length)] as number) : rng.int(256);
        if (b === 0xed) b = 0xee; // ED is where WTF-8 deliberately differs (surrogates)
        bytes[i] = b;
      }
      expect(decodeWtf8(bytes)).toBe(dec.decode(bytes));
    }
  });

  it('handles surrogate-range and truncated sequences after 0xED without throwing', () => {
    expect(decodeWtf8([0xed, 0xa0, 0x80])).toBe('\ud800');
    expect(decodeWtf8([0xed, 0x9f, 0xbf])).toBe('\ud7ff');
    expect(decodeWtf8([0xed, 0xa0])).toBe('\ufffd'); // truncated: one maximal subpart
    expect(decodeWtf8([0xed, 0xc0])).toBe('\ufffd\ufffd'); // bad continuation, then a bad lead
    expect(decodeWtf8([0xc0, 0x80])).toBe('\ufffd\ufffd'); // overlong NUL
    expect(decodeWtf8([0xf4, 0x90, 0x80, 0x80])).toBe('\ufffd\ufffd\ufffd\ufffd'); // above U+10FFFF
    expect(decodeWtf8([0x61, 0xe2, 0x82])).toBe('a\ufffd');
  });

  it('decodes only the requested prefix', () => {
    expect(decodeWtf8([0x61, 0x62, 0x63], 2)).toBe('ab');
  });
});

describe('display helpers', () => {
  it('shows spaces, newlines and tabs as marks, invisible code points by number', () => {
    expect(displayText(' the')).toBe('·the');
    expect(displayText('a\r\n\tb')).toBe('a␍↵→b');
    expect(displayText('\u0000\u001b\u007f')).toBe('<0x00><0x1B><0x7F>');
    expect(displayText('\u0085')).toBe('<U+0085>');
    expect(displayText('\ud800')).toBe('<U+D800>');
    expect(displayText('😀é')).toBe('😀é');
  });

  it('renders every byte value: printable ASCII as itself, whitespace as marks, the rest as <0xNN>', () => {
    const marks: Record<number, string> = { 0x09: '→', 0x0a: '↵', 0x0d: '␍', 0x20: '·' };
    for (let b = 0; b < 256; b++) {
      const hex = `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
      const expected = marks[b] ?? (b > 0x20 && b < 0x7f ? String.fromCharCode(b) : hex);
      expect(byteTokenText(b), `byte ${b}`).toBe(expected);
      expect(displayBytes([b]), `byte ${b}`).toBe(expected); // a one-byte BPE token reads the same
    }
    expect(byteTokenText(0x41)).toBe('A');
    expect(byteTokenText(0x2e)).toBe('.');
    expect(byteTokenText(0x0a)).toBe('↵');
  });

  it('marks bytes that are only part of a character', () => {
    expect(byteTokenText(0xe2)).toBe('<0xE2>');
    expect(displayBytes([0x20, 0x61, 0xe2, 0x82])).toBe('·a<0xE2><0x82>');
    expect(displayBytes([0x98, 0x80, 0x20])).toBe('<0x98><0x80>·');
    expect(displayBytes(encodeWtf8(' é'))).toBe('·é');
    expect(displayBytes(encodeWtf8('\ud800'))).toBe('<U+D800>');
  });
});
