/**
 * How the dashboard writes tokens: whitespace made visible, PAD recognised. Pure (no DOM), so
 * the tests compute expected labels with the same rules.
 *
 * Leaves out: numbers (src/format.ts, shared with the extension and the CLI).
 */

/** A token as people can read it: whitespace made visible, empty shown as ∅. */
export function showToken(token: string): string {
  if (token === '') return '∅';
  return token.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥').replace(/\r/g, '␍');
}

/** Whether a token string is a padding token. */
export function isPadToken(token: string): boolean {
  return token === '<pad>';
}
