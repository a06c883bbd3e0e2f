/**
 * How the dashboard writes tokens: as labelled by the engine (empty shown as ∅), PAD
 * recognised, and a split character's piece explained in its hover. Pure (no DOM), so the
 * tests compute expected labels with the same rules.
 *
 * Leaves out: numbers (src/common/format.ts, shared with the extension and the CLI).
 */

import { describeToken } from '../../src/common/tokenLabels';

/**
 * A token as people can read it. Token strings arrive already labelled by the engine's one
 * labelling (`tokenLabels` in src/engine/tokenizers/tokenDisplay.ts: `·` space, `↵` newline,
 * `→` tab, a split character's piece as `映…` / `…映`, `<0xNN>` only for bytes that form no
 * character), so the dashboard, the report, the CLI and the editor's hovers all show the same
 * string; here only the empty token becomes ∅.
 */
export function showToken(token: string): string {
  return token === '' ? '∅' : token;
}

/** A token's hover: the token, and for a piece of a character split across tokens, which character and its bytes. */
export function tokenTitle(token: string): string {
  return describeToken(showToken(token));
}

/** Whether a token string is a padding token. */
export function isPadToken(token: string): boolean {
  return token === '<pad>';
}
