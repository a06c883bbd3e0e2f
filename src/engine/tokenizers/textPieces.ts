/**
 * Cutting a long text into pieces that tokenize exactly as the whole does, so a 100 MB file
 * can be counted, sampled and encoded a megabyte at a time (memory in proportion to the ids,
 * progress and cancellation between pieces).
 *
 * A cut is safe at index i when text[i] is whitespace (`\s`) and text[i − 1] is not. For the
 * character tokenizer any code-point boundary is safe. For GPT-2's pre-tokenizer
 * (pretokenize.ts) no chunk spans such an i: the letter, digit, punctuation and contraction
 * alternatives never contain whitespace after their optional leading space, and a whitespace
 * chunk cannot start before i because text[i − 1] is not whitespace. Nor does a chunk inside
 * a piece read past the piece's end: the only lookahead, `\s+(?!\S)`, stops at a whitespace
 * run that inside the piece is always followed by text[i − 1]'s kind of character.
 * So encoding the pieces and concatenating the ids gives the ids of the whole text.
 *
 * Leaves out: text with no whitespace for a long stretch (minified code, unspaced scripts):
 * there a piece is cut at a code-point boundary, which can split one pre-tokenizer chunk in
 * two; {@link safeCut} says when it had to.
 */

/** The pre-tokenizer's notion of whitespace. */
const WS = /\s/u;

function isWs(text: string, i: number): boolean {
  return WS.test(text[i] as string);
}

/**
 * The first safe cut at or after `from` (see the file comment), searching at most
 * `maxSearch` characters; past that, the nearest code-point boundary at `from + maxSearch`
 * (`exact: false`). Returns `text.length` when the text ends first.
 */
export function safeCut(text: string, from: number, maxSearch = 1 << 16): { index: number; exact: boolean } {
  const n = text.length;
  if (from <= 0) return { index: 0, exact: true };
  if (from >= n) return { index: n, exact: true };
  const limit = Math.min(n, from + maxSearch);
  for (let i = from; i < limit; i++) {
    if (isWs(text, i) && !isWs(text, i - 1)) return { index: i, exact: true };
  }
  if (limit >= n) return { index: n, exact: true };
  // No safe cut nearby: cut anyway, but never between the halves of a surrogate pair.
  const c = text.charCodeAt(limit);
  const index = c >= 0xdc00 && c <= 0xdfff ? limit + 1 : limit;
  return { index, exact: false };
}

/** One piece of a text, where it starts, and whether its end is a safe cut. */
export interface TextPiece {
  readonly piece: string;
  readonly start: number;
  readonly exact: boolean;
}

/**
 * Consecutive pieces of about `pieceChars` characters that together make `text`, each
 * ending at a {@link safeCut}. A generator, so a caller can await between pieces.
 */
export function* textPieces(text: string, pieceChars: number): Generator<TextPiece> {
  let start = 0;
  while (start < text.length) {
    const cut = safeCut(text, start + Math.max(1, pieceChars));
    const end = Math.max(cut.index, start + 1);
    yield { piece: text.slice(start, end), start, exact: cut.exact };
    start = end;
  }
}
