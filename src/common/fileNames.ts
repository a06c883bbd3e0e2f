/**
 * A run's name as a folder name, for the folders named after a run (an export): the name a
 * person gave it, with the characters no file system takes (`/ \ : * ? " < > |`, control
 * characters) as `-`, so the export of "日本語 6L" is `日本語 6L/`, not the run's id.
 *
 * Pure: part of the common layer, so the extension names the folder it asks about exactly as
 * the lab writes it.
 */

/** The longest folder name made (in UTF-16 units; file systems allow 255 bytes). */
const MAX_NAME = 80;

/** `name` as a folder name; `fallback` (the run folder's own name) when nothing of it is left. */
export function folderNameOf(name: string, fallback: string): string {
  const safe = name
    // oxlint-disable-next-line no-control-regex -- control characters are what a folder name may not hold
    .replace(/[/\\:*?"<>|\u0000-\u001f\u007f]/g, '-')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_NAME)
    .replace(/^[.\s]+|[.\s]+$/g, '');
  return safe === '' ? fallback : safe;
}
