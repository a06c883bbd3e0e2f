/**
 * Character tokenizer: fixed specials, vocabulary order and cap, byte fallback for unseen
 * characters, exact round-trips for random strings, errors for bad options and ids.
 */

import { describe, it, expect } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { Rng } from '../../../../src/engine/rng';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { BOS, EOS, PAD, UNK, byteId } from '../../../../src/engine/tokenizers/special';
import { encodeWtf8 } from '../../../../src/engine/tokenizers/wtf8';
import { randomText } from './randomText';

function thrown(f: () => unknown): EngineError {
  try {
    f();
  } catch (e) {
    if (EngineError.is(e)) return e;
    throw e;
  }
  throw new Error('expected an EngineError, nothing was thrown');
}

describe('trainCharTokenizer', () => {
  it('puts the specials at 0..3 and the bytes at 4..259', () => {
    const tok = trainCharTokenizer(['hello'], {});
    expect([PAD, BOS, EOS, UNK]).toEqual([0, 1, 2, 3]);
    expect([0, 1, 2, 3].map((id) => tok.tokenText(id))).toEqual(['<pad>', '<bos>', '<eos>', '<unk>']);
    expect(tok.tokenText(4)).toBe('<0x00>');
    expect(tok.tokenText(4 + 0x41)).toBe('A');
    expect(tok.tokenText(259)).toBe('<0xFF>');
    expect(tok.vocabSize).toBe(260 + 4); // h, e, l, o
  });

  it('orders characters by frequency, ties by code point, across documents', () => {
    // counts: a 3, b 1, space 1, c 1, é 2 → a, é, then the ties by code point: ' ' (0x20), b, c.
    const tok = trainCharTokenizer(['ab é', 'caéa'], {});
    expect([260, 261, 262, 263, 264].map((id) => tok.tokenText(id))).toEqual(['a', 'é', '·', 'b', 'c']);
    expect(Array.from(tok.encode('cab é'))).toEqual([264, 260, 263, 262, 261]);
  });

  it('caps the vocabulary at maxVocab and falls back to bytes for the rest', () => {
    const tok = trainCharTokenizer(['aaab b'], { maxVocab: 262 }); // keeps a (3), b (2); drops space (1)
    expect(tok.vocabSize).toBe(262);
    expect(Array.from(tok.encode('ab '))).toEqual([260, 261, byteId(0x20)]);
    expect(tok.decode(tok.encode('ab '))).toBe('ab ');
  });

  it('encodes unseen characters as their UTF-8 bytes and never as UNK', () => {
    const tok = trainCharTokenizer(['abc'], {});
    const s = 'a😀b€\ud800';
    const ids = Array.from(tok.encode(s));
    const expected = [
      260,
      ...Array.from(encodeWtf8('😀'), byteId),
      261,
      ...Array.from(encodeWtf8('€'), byteId),
      ...Array.from(encodeWtf8('\ud800'), byteId),
    ];
    expect(ids).toEqual(expected);
    expect(ids).not.toContain(UNK);
    expect(tok.decode(ids)).toBe(s);
  });

  it('byteLength: the tokens of any text add up to its UTF-8 size (byte fallback included); specials count nothing', () => {
    const tok = trainCharTokenizer(['aé€😀 '], {});
    const rng = new Rng(3);
    for (const s of ['aé€😀 ', 'zß中😺\ud800', ...Array.from({ length: 200 }, () => randomText(rng))]) {
      const ids = tok.encode(s, { bos: true, eos: true });
      expect(Array.from(ids).reduce((n, id) => n + tok.byteLength(id), 0)).toBe(encodeWtf8(s).length);
    }
    expect([PAD, BOS, EOS, UNK].map((id) => tok.byteLength(id))).toEqual([0, 0, 0, 0]);
  });

  it('never puts lone surrogates in the vocabulary', () => {
    const tok = trainCharTokenizer(['\ud800\ud800\udc00x'], {}); // lone high, then a pair (U+10000), then x
    expect(tok.vocabSize).toBe(262);
    expect(tok.toJSON().chars).toEqual(['x', '\u{10000}']); // tie (1 each): smaller code point first
  });

  it('round-trips thousands of random strings exactly, with every id in range and no UNK', () => {
    const rng = new Rng(21);
    const corpus = Array.from({ length: 200 }, () => randomText(rng));
    const tok = trainCharTokenizer(corpus, { maxVocab: 600 });
    let minId = Infinity,
      maxId = -Infinity,
      failures = 0;
    for (let n = 0; n < 3000; n++) {
      const s = randomText(rng);
      const ids = tok.encode(s);
      for (const id of ids) {
        minId = Math.min(minId, id);
        maxId = Math.max(maxId, id);
      }
      if (tok.decode(ids) !== s) failures++;
    }
    expect(failures).toBe(0);
    expect(minId).toBeGreaterThan(UNK);
    expect(maxId).toBeLessThan(tok.vocabSize);
    expect(maxId).toBeGreaterThan(300); // learned characters were used, not only bytes
  });

  it('adds BOS/EOS on request and decodes specials as text or skips them', () => {
    const tok = trainCharTokenizer(['ab'], {});
    const ids = tok.encode('ab', { bos: true, eos: true });
    expect(Array.from(ids)).toEqual([BOS, 260, 261, EOS]);
    expect(tok.decode(ids)).toBe('<bos>ab<eos>');
    expect(tok.decode([PAD, ...ids, PAD], { skipSpecial: true })).toBe('ab');
  });

  it('decodes invalid byte sequences as U+FFFD instead of throwing', () => {
    const tok = trainCharTokenizer(['a'], {});
    expect(tok.decode([byteId(0xff), 260, byteId(0xe2), byteId(0x82)])).toBe('\ufffda\ufffd');
  });

  it('rejects out-of-range ids in decode and tokenText', () => {
    const tok = trainCharTokenizer(['ab'], {});
    for (const bad of [262, -1, 1.5, Number.NaN]) {
      const e = thrown(() => tok.decode([260, bad]));
      expect(e.code).toBe('tokenizer/invalid');
      expect(e.message).toContain('0..261');
    }
    expect(thrown(() => tok.tokenText(262)).code).toBe('tokenizer/invalid');
  });

  it('rejects maxVocab below the 260 base ids with config/invalid', () => {
    for (const bad of [259, 0, 300.5]) {
      const e = thrown(() => trainCharTokenizer(['abc'], { maxVocab: bad }));
      expect(e.code).toBe('config/invalid');
      expect(e.message).toContain('260');
    }
  });

  it('is deterministic: the same corpus gives the same JSON', () => {
    const rng1 = new Rng(5),
      rng2 = new Rng(5);
    const a = trainCharTokenizer(
      Array.from({ length: 50 }, () => randomText(rng1)),
      { maxVocab: 400 },
    );
    const b = trainCharTokenizer(
      Array.from({ length: 50 }, () => randomText(rng2)),
      { maxVocab: 400 },
    );
    expect(JSON.stringify(a.toJSON())).toBe(JSON.stringify(b.toJSON()));
    expect(a.vocabSize).toBe(400);
  });
});
