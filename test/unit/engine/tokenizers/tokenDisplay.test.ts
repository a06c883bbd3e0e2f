/**
 * The one labelling of tokens in their sequence (src/engine/tokenizers/tokenDisplay.ts): over
 * every byte value, CJK split at every byte, emoji, combining marks and zero-width joiners —
 * a byte that belongs to a character is labelled with that character (split ones marked
 * with …), and `<0x..>` is left only where no character exists.
 */
import { describe, expect, it } from 'vitest';
import { trainBpeTokenizer } from '../../../../src/engine/tokenizers/bpeTokenizer';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import {
  CUT_MARK,
  SPLIT_MARK,
  cutCharacterBytes,
  endsMidCharacter,
  labelPieces,
  nextTokenLabel,
  tokenLabels,
} from '../../../../src/engine/tokenizers/tokenDisplay';
import type { Tokenizer } from '../../../../src/engine/tokenizers/special';
import { displayText, encodeWtf8 } from '../../../../src/engine/tokenizers/wtf8';

/** `text`'s bytes cut into tokens of the given lengths (the rest in a last token). */
function cut(text: string, lengths: readonly number[]): Uint8Array[] {
  const bytes = encodeWtf8(text);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const n of lengths) {
    out.push(bytes.subarray(at, at + n));
    at += n;
  }
  if (at < bytes.length) out.push(bytes.subarray(at));
  return out;
}

/** A character whose UTF-8 holds byte b, and b's index in it; null for the bytes UTF-8 never uses. */
function characterWith(b: number): { ch: string; at: number } | null {
  if (b < 0x80) return { ch: String.fromCharCode(b), at: 0 };
  if (b <= 0xbf) return { ch: String.fromCodePoint(0x1000 | (b & 0x3f)), at: 2 }; // E1 80 b
  if (b >= 0xc2 && b <= 0xdf) return { ch: String.fromCodePoint(((b & 0x1f) << 6) | 0x00), at: 0 };
  if (b >= 0xe0 && b <= 0xef) return { ch: String.fromCodePoint(((b & 0x0f) << 12) | (b === 0xe0 ? 0x800 : 0)), at: 0 };
  if (b >= 0xf0 && b <= 0xf4)
    return { ch: String.fromCodePoint(((b & 0x07) << 18) | (b === 0xf0 ? 0x10000 : 0)), at: 0 };
  return null; // C0, C1, F5..FF: never in well-formed UTF-8
}

describe('token labels in their sequence', () => {
  it('every byte value: alone in a token inside a character, labelled with that character; <0x..> only for bytes UTF-8 never uses', () => {
    const hex: number[] = [];
    for (let b = 0; b < 256; b++) {
      const c = characterWith(b);
      if (!c) {
        const label = labelPieces([Uint8Array.of(0x61), Uint8Array.of(b), Uint8Array.of(0x62)])[1] as string;
        expect(label).toBe(`<0x${b.toString(16).toUpperCase()}>`);
        hex.push(b);
        continue;
      }
      const bytes = encodeWtf8(c.ch);
      expect(bytes[c.at]).toBe(b);
      const pieces = [bytes.subarray(0, c.at), bytes.subarray(c.at, c.at + 1), bytes.subarray(c.at + 1)].filter(
        (p) => p.length > 0,
      );
      const labels = labelPieces(pieces);
      const mine = labels[c.at === 0 ? 0 : 1] as string;
      const shown = displayText(c.ch);
      if (bytes.length === 1) expect(mine).toBe(shown);
      else {
        expect(mine).toContain(shown);
        expect(mine).not.toContain('<0x');
        expect(mine).toBe(`${c.at > 0 ? SPLIT_MARK : ''}${shown}${c.at < bytes.length - 1 ? SPLIT_MARK : ''}`);
      }
    }
    expect(hex).toEqual([0xc0, 0xc1, ...Array.from({ length: 11 }, (_, i) => 0xf5 + i)]);
  });

  it('Japanese split at every byte reads as its characters, each split one marked, never <0x', () => {
    const text = '映画を見ると必ず感動する。';
    for (const size of [1, 2, 4, 5]) {
      const pieces = cut(
        text,
        Array.from({ length: 40 }, () => size),
      );
      const labels = labelPieces(pieces);
      expect(labels.join('')).not.toContain('<0x');
      // Dropping the marks and the repeats of split characters gives the text back.
      const chars = labels.flatMap((l) => [...l.replaceAll(SPLIT_MARK, '')]);
      expect([...new Set(chars)].join('')).toBe([...new Set(text)].join(''));
    }
    expect(labelPieces(cut('映画', [2, 2]))).toEqual([
      `映${SPLIT_MARK}`,
      `${SPLIT_MARK}映画${SPLIT_MARK}`,
      `${SPLIT_MARK}画`,
    ]);
  });

  it('emoji, zero-width joiners and combining marks: surrogate pairs stay whole, each code point labelled', () => {
    expect(labelPieces(cut('😀', [1]))).toEqual([`😀${SPLIT_MARK}`, `${SPLIT_MARK}😀`]);
    expect(labelPieces(cut('😀!', [4]))).toEqual(['😀', '!']);
    const dev = '👩\u200d💻'; // woman, ZWJ, laptop: three code points
    expect(labelPieces(cut(dev, [4, 3]))).toEqual(['👩', '\u200d', '💻']);
    expect(labelPieces(cut(dev, [5]))).toEqual([`👩\u200d${SPLIT_MARK}`, `${SPLIT_MARK}\u200d💻`]);
    const accent = 'e\u0301'; // e + combining acute (CC 81)
    expect(labelPieces(cut(accent, [2]))).toEqual([`e\u0301${SPLIT_MARK}`, `${SPLIT_MARK}\u0301`]);
    expect(labelPieces(cut(accent, [1]))).toEqual(['e', '\u0301']);
  });

  it('a character cut off where the sequence ends reads ◌… in each of its tokens, never as bytes; specials end a run', () => {
    expect(labelPieces(cut('映', [2]).slice(0, 1))).toEqual([`${CUT_MARK}${SPLIT_MARK}`]);
    expect(labelPieces(cut('映', [1, 1]).slice(0, 2))).toEqual([
      `${CUT_MARK}${SPLIT_MARK}`,
      `${SPLIT_MARK}${CUT_MARK}${SPLIT_MARK}`,
    ]);
    expect(labelPieces(cut('画映', [4]).slice(0, 1))).toEqual([`画${CUT_MARK}${SPLIT_MARK}`]);
    expect(labelPieces(cut('😀', [3]).slice(0, 1))).toEqual([`${CUT_MARK}${SPLIT_MARK}`]);
    const [a, b] = cut('映', [1]);
    expect(labelPieces([a as Uint8Array, { special: '<|endoftext|>' }, b as Uint8Array])).toEqual([
      `${CUT_MARK}${SPLIT_MARK}`,
      '<|endoftext|>',
      '<0x98><0xA0>', // continuation bytes with no lead form no character: bytes
    ]);
    expect(labelPieces([encodeWtf8(' the\n\t'), { special: '<bos>' }])).toEqual(['·the↵→', '<bos>']);
  });

  it('tokenLabels and nextTokenLabel read a real BPE trained on Japanese: 600 tokens, characters everywhere', () => {
    const corpus = [
      '映画を見ると必ず感動する。',
      '私は毎日日本語を勉強します。',
      '彼女は駅で友達を待っていた。',
      '明日は雨が降るかもしれない。',
    ].map((s) => s.repeat(3));
    const tok = trainBpeTokenizer(corpus, { vocabSize: 600 });
    const ids = tok.encode('映画を見ると必ず感動する。');
    const labels = tokenLabels(tok, ids);
    expect(labels.join('')).not.toContain('<0x');
    expect(labels.some((l) => l.includes(SPLIT_MARK)) || ids.length <= 13).toBe(true);
    const solo = Array.from(ids, (id) => tok.tokenText(id)).join('');
    expect(tokenLabels(tok, Int32Array.of(tok.specialIds.bos, ...ids))[0]).toBe('<bos>');
    // The last token read after its context equals its label in the sequence.
    expect(nextTokenLabel(tok, ids.subarray(0, ids.length - 1), ids[ids.length - 1] as number)).toBe(
      labels[labels.length - 1],
    );
    // A char tokenizer's byte fallback for an unseen character reads the same way.
    const chars = trainCharTokenizer(['abc']);
    const unseen = chars.encode('a映');
    expect(tokenLabels(chars, unseen)).toEqual([
      'a',
      `映${SPLIT_MARK}`,
      `${SPLIT_MARK}映${SPLIT_MARK}`,
      `${SPLIT_MARK}映`,
    ]);
    expect(solo.length).toBeGreaterThan(0);
  });
});

describe('endsMidCharacter', () => {
  /** A byte-level tokenizer whose token i is `pieces[i]` (null: a special token). */
  const tokOf = (pieces: readonly (readonly number[] | null)[]): Tokenizer =>
    ({
      tokenBytes: (id: number) => (pieces[id] ? Uint8Array.from(pieces[id] as number[]) : null),
    }) as unknown as Tokenizer;
  // 映 = E6 98 A0, 😀 = F0 9F 98 80, é = C3 A9
  const tok = tokOf([
    [0x61],
    [0xe6, 0x98],
    [0xa0],
    [0xe6],
    [0x98, 0xa0, 0x61],
    [0xf0, 0x9f, 0x98],
    [0x80],
    [0xc3],
    [0xa9],
    null,
    [0xff],
  ]);

  it('is true only while a lead byte waits for its continuation bytes', () => {
    expect(endsMidCharacter(tok, [0])).toBe(false);
    expect(endsMidCharacter(tok, [0, 1])).toBe(true);
    expect(endsMidCharacter(tok, [1, 2])).toBe(false);
    expect(endsMidCharacter(tok, [3])).toBe(true);
    expect(endsMidCharacter(tok, [3, 4])).toBe(false);
    expect(endsMidCharacter(tok, [5])).toBe(true);
    expect(endsMidCharacter(tok, [5, 6])).toBe(false);
    expect(endsMidCharacter(tok, [7])).toBe(true);
    expect(endsMidCharacter(tok, [7, 8])).toBe(false);
    expect(endsMidCharacter(tok, [1, 9])).toBe(false); // a special token ends the run of bytes
    expect(endsMidCharacter(tok, [10])).toBe(false); // a byte no character uses waits for nothing
    expect(endsMidCharacter(tok, [])).toBe(false);
  });

  it('cutCharacterBytes counts the bytes of the cut-off character, 0 for ill-formed bytes that no byte can finish', () => {
    expect(cutCharacterBytes(tok, [0, 1])).toBe(2);
    expect(cutCharacterBytes(tok, [3])).toBe(1);
    expect(cutCharacterBytes(tok, [0, 5])).toBe(3);
    expect(cutCharacterBytes(tok, [1, 2])).toBe(0);
    expect(cutCharacterBytes(tok, [1, 0])).toBe(0); // E6 98 then 'a': ill-formed, not waiting
    expect(cutCharacterBytes(tok, [4, 3])).toBe(1); // …映a then E6
  });
});
