/**
 * Cutting text into pieces that tokenize exactly as the whole: for both tokenizers, on
 * prose, code, whitespace runs, emoji and lone surrogates, the ids of the pieces joined are
 * the ids of the whole text; counts fed piece by piece equal counts of the whole.
 */

import { describe, expect, it } from 'vitest';
import { ChunkCounts } from '../../../../src/engine/tokenizers/bpeTrain';
import { trainBpeTokenizer } from '../../../../src/engine/tokenizers/bpeTokenizer';
import { CharCounts, trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { safeCut, textPieces } from '../../../../src/engine/tokenizers/textPieces';
import { Rng } from '../../../../src/engine/rng';

const PROSE = `First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n  It's   odd—isn't it?  123 4567\tdone.\n`;
const CODE = 'function f(x) {\n    return x  +  1; // 👋 héllo\n}\n\n\n  \t\nconst s = "a\\u00e9";\r\n';

/** A text of random pieces of prose, code, blanks, emoji and a lone surrogate. */
function mixed(seed: number, n: number): string {
  const rng = new Rng(seed);
  const parts = [PROSE, CODE, '   ', '\n\n', '👋🏽', 'ab\uD800cd', 'word', ' ', '\u00a0x', "'s", '...', '٣٤'];
  let s = '';
  for (let i = 0; i < n; i++) s += parts[rng.int(parts.length)];
  return s;
}

function piecesOf(text: string, size: number): string[] {
  return [...textPieces(text, size)].map((p) => p.piece);
}

describe('safeCut', () => {
  it('cuts where whitespace follows non-whitespace, never inside a surrogate pair', () => {
    expect(safeCut('ab  cd', 1)).toEqual({ index: 2, exact: true });
    expect(safeCut('ab  cd', 3)).toEqual({ index: 6, exact: true }); // no later safe cut: the end
    expect(safeCut('abcdef', 2, 2)).toEqual({ index: 4, exact: false });
    const emoji = 'a'.repeat(3) + '👋'.repeat(4);
    const cut = safeCut(emoji, 3, 1); // would land between the halves of 👋
    expect(cut.exact).toBe(false);
    expect(cut.index).toBe(5);
  });

  it('pieces always join back to the text', () => {
    const t = mixed(1, 300);
    for (const size of [1, 7, 64, 1000]) expect(piecesOf(t, size).join('')).toBe(t);
  });
});

describe('pieces tokenize as the whole', () => {
  const corpus = mixed(2, 400);
  const bpe = trainBpeTokenizer([corpus], { vocabSize: 400 });
  const char = trainCharTokenizer([corpus]);
  for (const [name, tok] of [
    ['bpe', bpe],
    ['char', char],
  ] as const) {
    it(`${name}: ids of the pieces = ids of the whole (exact cuts)`, () => {
      for (const seed of [3, 4, 5]) {
        const text = mixed(seed, 200);
        const whole = Array.from(tok.encode(text));
        for (const size of [5, 33, 257]) {
          const pieces = [...textPieces(text, size)];
          expect(pieces.every((p) => p.exact)).toBe(true);
          expect(pieces.flatMap((p) => Array.from(tok.encode(p.piece)))).toEqual(whole);
        }
      }
    });
  }

  it('a cut with no whitespace nearby is flagged inexact', () => {
    const text = 'x'.repeat(200_000);
    const pieces = [...textPieces(text, 1000)];
    expect(pieces.some((p) => !p.exact)).toBe(true);
    expect(pieces.map((p) => p.piece).join('')).toBe(text);
  });
});

describe('counts fed piece by piece', () => {
  it('CharCounts and ChunkCounts equal the counts of the whole text', () => {
    const text = mixed(6, 300);
    const a = new CharCounts();
    const b = new CharCounts();
    a.add(text);
    for (const p of piecesOf(text, 50)) b.add(p);
    expect(b.tokenizer().toJSON()).toEqual(a.tokenizer().toJSON());
    expect(a.tokenizer().toJSON()).toEqual(trainCharTokenizer([text]).toJSON());
    const c = new ChunkCounts();
    const d = new ChunkCounts();
    c.add(text);
    for (const p of piecesOf(text, 50)) d.add(p);
    expect([...d.freq].sort()).toEqual([...c.freq].sort());
    expect(trainBpeTokenizer(d, { vocabSize: 350 }).toJSON()).toEqual(
      trainBpeTokenizer([text], { vocabSize: 350 }).toJSON(),
    );
  });
});
