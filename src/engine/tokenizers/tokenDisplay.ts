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
 * - a character cut off where the sequence ends (its first bytes, the rest never came: the
 *   last position of a lens, a prediction, a decode stopped inside one) reads as `◌…` in
 *   each token holding some of its bytes (`…◌…` in a later one): which character it would
 *   have been is unknown, so the dotted circle stands in for it;
 * - bytes that form no character (ill-formed) stay `<0xNN>` — the only `<0x..>` a text shows;
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

/** What stands for a character the sequence cuts off (U+25CC DOTTED CIRCLE): `◌…`. */
export const CUT_MARK = '◌';

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
    if (end === bytes.length && lead >= 0xc2 && lead <= 0xf4) units.push({ start, end, text: null, cut: true });
    else for (let i = start; i < end; i++) units.push({ start: i, end: i + 1, text: null, cut: false });
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
      // A cut-off character continues past every token that holds its bytes (the rest never came).
      label += u.cut ? `${u.start < a ? SPLIT_MARK : ''}${CUT_MARK}${SPLIT_MARK}` : hexByte(bytes[u.start] as number);
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
 * How many bytes at the end of `ids` begin a character they do not finish: a lead byte of a
 * multi-byte UTF-8 character and the continuation bytes after it, fewer than it announces
 * (0 when the bytes end on a whole character, on bytes that form none, or on a special
 * token, which ends a run of bytes). The last four bytes decide it: a character has at most four.
 */
export function cutCharacterBytes(tok: Tokenizer, ids: ArrayLike<number>): number {
  const tail: number[] = [];
  for (let i = ids.length - 1; i >= 0 && tail.length < 4; i--) {
    const bytes = tok.tokenBytes(ids[i] as number);
    if (!bytes) break;
    for (let j = bytes.length - 1; j >= 0 && tail.length < 4; j--) tail.unshift(bytes[j] as number);
  }
  let cut = 0;
  decodeWtf8(tail, tail.length, (b, start, end) => {
    const lead = b[start] as number;
    cut = end === tail.length && lead >= 0xc2 && lead <= 0xf4 ? end - start : 0;
    return '';
  });
  return cut;
}

/**
 * Whether the bytes of `ids` end inside a character ({@link cutCharacterBytes}): what a
 * decode goes on past its last token for, so it never ends in part of a character.
 */
export function endsMidCharacter(tok: Tokenizer, ids: ArrayLike<number>): boolean {
  return cutCharacterBytes(tok, ids) > 0;
}

function pieceOf(tok: Tokenizer, id: number): TokenPiece {
  return tok.tokenBytes(id) ?? { special: tok.tokenText(id) };
}
