/**
 * Test helper (not a test file): random JavaScript strings from a seeded Rng, mixing the
 * cases that break tokenizers — ASCII, Latin-1, CJK, astral code points (emoji, CJK ext. B,
 * anything up to U+10FFFF), combining marks, \r\n, tabs, NUL, apostrophes and digits (for the
 * pre-tokenizer), and lone high/low surrogates. Leaves out: any notion of natural language.
 */

import type { Rng } from '../../../../src/engine/rng';

type Piece = (rng: Rng) => string;

const range =
  (lo: number, hi: number): Piece =>
  (rng) =>
    String.fromCodePoint(lo + rng.int(hi - lo + 1));

const PIECES: readonly Piece[] = [
  range(0x61, 0x7a), // a-z
  range(0x61, 0x7a),
  range(0x41, 0x5a), // A-Z
  range(0x20, 0x7e), // printable ASCII
  range(0x30, 0x39), // digits
  () => ' ',
  () => ' ',
  () => "'",
  () => '\r\n',
  () => '\n',
  () => '\t',
  () => '\u0000',
  range(0xa0, 0xff), // Latin-1
  range(0x4e00, 0x9fff), // CJK unified ideographs
  range(0x0300, 0x036f), // combining diacritical marks
  range(0x1f600, 0x1f64f), // emoji (astral)
  range(0x20000, 0x2a6df), // CJK extension B (astral)
  range(0x10000, 0x10ffff), // any astral code point
  range(0x80, 0xd7ff), // any BMP code point below the surrogates
  range(0xe000, 0xffff), // any BMP code point above them (private use, U+FFFD, U+FFFF)
  (rng) => String.fromCharCode(0xd800 + rng.int(0x400)), // lone high surrogate
  (rng) => String.fromCharCode(0xdc00 + rng.int(0x400)), // lone low surrogate
];

/** One random string of up to `maxPieces` pieces (each one or two code points). */
export function randomText(rng: Rng, maxPieces = 40): string {
  const n = rng.int(maxPieces + 1);
  let s = '';
  for (let i = 0; i < n; i++) s += (PIECES[rng.int(PIECES.length)] as Piece)(rng);
  return s;
}

/** True when `s` has a lone surrogate (ES2024's `isWellFormed` is not in our ES2022 lib). */
export function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return true;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return true;
    }
  }
  return false;
}
