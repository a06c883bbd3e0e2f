/**
 * Reading a token label back, for hovers and notes: every label is made by the engine's one
 * labelling (src/engine/tokenizers/tokenDisplay.ts), where a character split across tokens
 * is written in each token that holds some of its bytes, with `…` where it continues, and a
 * character the sequence cuts off as `◌…` (which one is unknown). Here,
 * from the label alone: whether it is such a piece, and a sentence for its hover naming the
 * character, its code point and its UTF-8 bytes. Shared by the dashboard, the CLI and the
 * editor's hovers.
 *
 * Leaves out: making labels (the engine) and the token's own bytes (`tokenize --json` prints them).
 */

/**
 * The mark of a split character's continuation (the engine's SPLIT_MARK; src/lab/runs/modelConfigShape.ts checks they
 * agree).
 */
export const SPLIT_MARK = '…';

/** What stands for a character the sequence cuts off (the engine's CUT_MARK; test/unit/common checks they agree). */
export const CUT_MARK = '◌';

/** The characters (code points) of a label, with whether each starts or ends at a split mark. */
function firstAndLast(label: string): { first: string; last: string } {
  const cps = [...label];
  return { first: cps[1] ?? '', last: cps[cps.length - 2] ?? '' };
}

/**
 * True when a label holds part of a character: a split mark next to a character UTF-8 writes in more than one byte, or
 * after a character the sequence cuts off (`◌…`; `<0xE6>…` in labels saved before).
 */
export function isPartialLabel(label: string): boolean {
  if (label.length < 2) return false;
  const { first, last } = firstAndLast(label);
  const wide = (c: string): boolean => (c.codePointAt(0) ?? 0) >= 0x80;
  return (
    (label.startsWith(SPLIT_MARK) && wide(first)) ||
    (label.endsWith(SPLIT_MARK) && (wide(last) || label.endsWith(`>${SPLIT_MARK}`)))
  );
}

/** "U+6620, UTF-8 E6 98 A0" of one character. */
function codeOf(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  const bytes = Array.from(new TextEncoder().encode(ch), (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(
    ' ',
  );
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}, UTF-8 ${bytes}`;
}

/**
 * What a label holds, for its hover: the label itself, and for a piece of a split character
 * which character it belongs to, with its code point and bytes ("…映画 — ends 映 (U+6620,
 * UTF-8 E6 98 A0), begun in the previous token").
 */
export function describeToken(label: string): string {
  if (!isPartialLabel(label)) return label;
  const { first, last } = firstAndLast(label);
  const opens = label.startsWith(SPLIT_MARK);
  const closes = label.endsWith(SPLIT_MARK);
  // A character cut off where the sequence ends (`◌…`; labels saved before it read `<0xE6>…`).
  if (closes && (label.endsWith(`${CUT_MARK}${SPLIT_MARK}`) || label.endsWith(`>${SPLIT_MARK}`))) {
    if (opens && [...label].length === 3) return `${label} — more bytes of a character the sequence cuts off`;
    const parts = opens && first !== CUT_MARK ? [`ends ${first} (${codeOf(first)}), begun in the previous token`] : [];
    parts.push('ends with the first bytes of a character the sequence cuts off (which one, its next bytes would say)');
    return `${label} — ${parts.join('; ')}`;
  }
  if (opens && closes && [...label].length === 3)
    return `${label} — middle bytes of ${first} (${codeOf(first)}), split across tokens`;
  const parts: string[] = [];
  if (opens) parts.push(`ends ${first} (${codeOf(first)}), begun in the previous token`);
  if (closes) parts.push(`begins ${last} (${codeOf(last)}), finished in the next token`);
  return `${label} — ${parts.join('; ')}`;
}
