/**
 * How the dashboard writes tokens: as rendered by the engine (empty shown as ∅), PAD recognised. Pure (no DOM), so
 * the tests compute expected labels with the same rules.
 *
 * Leaves out: numbers (src/common/format.ts, shared with the extension and the CLI).
 */

/**
 * A token as people can read it. Token strings arrive already rendered by the engine's one
 * token rendering (`displayText` in src/engine/tokenizers/wtf8.ts: `·` space, `↵` newline,
 * `→` tab, `<0xNN>` for bytes that are not text), so the dashboard, the report, the CLI and
 * the editor's hovers all show the same string; here only the empty token becomes ∅.
 */
export function showToken(token: string): string {
  return token === '' ? '∅' : token;
}

/** Whether a token string is a padding token. */
export function isPadToken(token: string): boolean {
  return token === '<pad>';
}
