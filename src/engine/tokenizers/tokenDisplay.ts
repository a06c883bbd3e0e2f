/**
 * How a sequence of tokens reads: the ONE labelling every surface shows (heatmap axes and
 * tiles, the logit lens, hovers, `attention-lab tokenize`, exports). A byte-level BPE smaller
 * than a script's character set splits characters across tokens (映 is E6 98 A0 in UTF-8,
 * and a 600-token vocabulary trained on Japanese may hold E6 98 in one token and A0 画 in the
 * next); a token on its own is then only bytes, but in its sequence each byte belongs to a
 * character. So labels are made for the whole sequence:
 *
 * - a character whose bytes all lie in the token reads as itself (whitespace marked: `·`
 *   space, `↵` newline, `→` tab — displayText in wtf8.ts);
 * - a character split across tokens is written in each token that holds some of its bytes,
 *   with `…` on the side where it continues: E6 98 | A0 画 read `映…` and `…映画`;
 * - bytes that form no character (ill-formed, or a character cut off where the sequence
 *   ends) stay `<0xNN>`; a cut-off one ends in `…` — the only `<0x..>` a text shows;
 * - special tokens (`<bos>`, `<|endoftext|>`) read as their names and end a run of bytes.
 *
 * What a label holds, for hovers, is said by src/common/tokenLabels.ts (which the dashboard
 * shares), from the label alone.
 *
 * Leaves out: how tokens are made (the tokenizers) and the bytes ⇄ text codec (wtf8.ts).
 */

import type { Tokenizer } from './special';
import { codePointAt, decodeWtf8, displayText, hexByte } from './wtf8';

/** The mark written where a split character continues in the next or previous token. */
export const SPLIT_MARK = '…';

/** A token of a sequence: its bytes, or the name of a special token (which has none). */
export type TokenPiece = Uint8Array | { readonly special: string };

/** Bytes of one code point in WTF-8 (a lone surrogate takes three, as wtf8.ts writes it). */
function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** One unit of a run of bytes: a character over [start, end), or one byte that forms none (text null). */
interface Unit {
  readonly start: number;
  readonly end: number;
  readonly text: string | null;
  /** An incomplete character cut off by the end of the run. */
  readonly cut: boolean;
}

/** The characters and stray bytes of `bytes`, with their byte spans. */
function unitsOf(bytes: Uint8Array): Unit[] {
  const units: Unit[] = [];
  let pos = 0;
  const text = (from: number, to: number): void => {
    const s = decodeWtf8(bytes.subarray(from, to));
    let at = from;
    for (let i = 0; i < s.length;) {
      const cp = codePointAt(s, i);
      const n = cp > 0xffff ? 2 : 1;
      const len = utf8Length(cp);
      units.push({ start: at, end: at + len, text: s.slice(i, i + n), cut: false });
      at += len;
      i += n;
    }
  };
  decodeWtf8(bytes, bytes.length, (_b, start, end) => {
    text(pos, start);
    // Cut off: the start of a character (a lead byte and what followed) reaching the end of the run.
    const lead = bytes[start] as number;
    const cut = end === bytes.length && lead >= 0xc2 && lead <= 0xf4;
    for (let i = start; i < end; i++) units.push({ start: i, end: i + 1, text: null, cut });
    pos = end;
    return '';
  });
  text(pos, bytes.length);
  return units;
}

/**
 * Labels of consecutive tokens (see the file comment): one string per piece, computed with
 * the neighbours each token's bytes share characters with.
 */
export function labelPieces(pieces: readonly TokenPiece[]): string[] {
  const out: string[] = new Array<string>(pieces.length).fill('');
  let i = 0;
  while (i < pieces.length) {
    const p = pieces[i] as TokenPiece;
    if (!(p instanceof Uint8Array)) {
      out[i] = p.special;
      i++;
      continue;
    }
    // A run of byte tokens, labelled together.
    let j = i;
    const bounds: number[] = [0];
    while (j < pieces.length && pieces[j] instanceof Uint8Array)
      bounds.push((bounds[bounds.length - 1] as number) + (pieces[j++] as Uint8Array).length);
    const bytes = new Uint8Array(bounds[bounds.length - 1] as number);
    for (let k = i; k < j; k++) bytes.set(pieces[k] as Uint8Array, bounds[k - i] as number);
    const units = unitsOf(bytes);
    for (let k = i; k < j; k++) out[k] = labelOf(units, bytes, bounds[k - i] as number, bounds[k - i + 1] as number);
    i = j;
  }
  return out;
}

/** The label of the token holding bytes [a, b) of a run. */
function labelOf(units: readonly Unit[], bytes: Uint8Array, a: number, b: number): string {
  let label = '';
  for (const u of units) {
    if (u.end <= a || u.start >= b) continue;
    if (u.text === null) {
      label +=
        hexByte(bytes[u.start] as number) + (u.cut && u.end === bytes.length && b === bytes.length ? SPLIT_MARK : '');
      continue;
    }
    label += `${u.start < a ? SPLIT_MARK : ''}${displayText(u.text)}${u.end > b ? SPLIT_MARK : ''}`;
  }
  return label;
}

/**
 * Labels of `ids` under `tok`, each read in its sequence (see the file comment): the labels
 * of heatmap axes, prompt tiles, scored tokens and `tokenize`.
 */
export function tokenLabels(tok: Tokenizer, ids: ArrayLike<number>): string[] {
  return labelPieces(Array.from({ length: ids.length }, (_, i) => pieceOf(tok, ids[i] as number)));
}

/**
 * The label of `next` read after `context` (its last few tokens are enough: a character has
 * at most four bytes): how a predicted token reads where it would go.
 */
export function nextTokenLabel(tok: Tokenizer, context: ArrayLike<number>, next: number): string {
  const from = Math.max(0, context.length - 4);
  const ids = [...Array.from({ length: context.length - from }, (_, i) => context[from + i] as number), next];
  return tokenLabels(tok, ids)[ids.length - 1] as string;
}

/**
 * Whether the bytes of `ids` end inside a character: a lead byte of a multi-byte UTF-8
 * character with fewer of its continuation bytes after it than it announces (a special
 * token ends a run of bytes: never inside one). What a decode goes on past its last token
 * for, so it never ends in part of a character.
 */
export function endsMidCharacter(tok: Tokenizer, ids: ArrayLike<number>): boolean {
  const tail: number[] = [];
  for (let i = ids.length - 1; i >= 0 && tail.length < 4; i--) {
    const bytes = tok.tokenBytes(ids[i] as number);
    if (!bytes) break;
    for (let j = bytes.length - 1; j >= 0 && tail.length < 4; j--) tail.unshift(bytes[j] as number);
  }
  for (let back = 1; back <= tail.length; back++) {
    const b = tail[tail.length - back] as number;
    if (b < 0x80) return false; // ASCII: whole
    if (b < 0xc0) continue; // a continuation byte: look further back for its lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
    return back < need && b >= 0xc2 && b <= 0xf4;
  }
  return false;
}

function pieceOf(tok: Tokenizer, id: number): TokenPiece {
  return tok.tokenBytes(id) ?? { special: tok.tokenText(id) };
}
