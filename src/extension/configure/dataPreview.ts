/**
 * The texts of Configure's live look at a documents glob: the line under the glob box
 * ("37 files, 1.2 MB · 4 skipped: 2 lockfile, 1 minified, 1 too large"), the refusal of a
 * glob that matches nothing (with what to try), and the rows of the "Preview files…" list
 * (files with their sizes, skipped files with why). Pure (no VS Code import), so the
 * wording is unit-tested; configure.ts shows them.
 *
 * Leaves out: finding and planning the files (training/trainData.ts and the lab's
 * data/corpusPreview.ts).
 */

import { formatBytes, formatCount } from '../../common/format';
import type { SkippedFile } from '../../protocol/data';
import { summarizeSkipped } from '../../protocol/data';
import { skippedReason } from '../base/summaryLines';

/** What a look at a glob found (the lab's CorpusPreview plus what finding the files said). */
export interface GlobPreview {
  readonly glob: string;
  /** Files VS Code found for the glob (after files.exclude, attentionLab.data.exclude and the runs folder). */
  readonly found: number;
  /** True when more files matched than were looked at (`found` is then the cap). */
  readonly capped: boolean;
  /** Files left out by attentionLab.data.exclude. */
  readonly excluded: number;
  readonly files: readonly { readonly path: string; readonly bytes: number }[];
  readonly bytes: number;
  readonly skipped: readonly SkippedFile[];
  /** Planned files read for the content checks (the first ones in path order). */
  readonly read: number;
  /** Planned files before reading. */
  readonly planned: number;
}

/** How the line under the glob box reads: informative, a warning, or a refusal. */
export type PreviewSeverity = 'info' | 'warning' | 'error';

const plural = (n: number, one: string, many = `${one}s`): string => `${formatCount(n)} ${n === 1 ? one : many}`;

/** The refusal of a glob that matched no file, and what to try instead. */
export function noMatchMessage(glob: string, excluded: number): string {
  const cause = excluded ? ` once attentionLab.data.exclude leaves out ${plural(excluded, 'file')}` : '';
  const hint =
    glob.includes('/') || glob.startsWith('**')
      ? 'check the folder and the extension'
      : `try **/${glob} to search every folder`;
  return (
    `No file in this workspace matches "${glob}"${cause} (files.exclude applies): ${hint}, ` +
    `e.g. **/*.md or docs/**/*.txt.`
  );
}

/** The line under the glob box, and how serious it is. */
export function previewLine(p: GlobPreview): { severity: PreviewSeverity; message: string } {
  if (p.found === 0) return { severity: 'error', message: noMatchMessage(p.glob, p.excluded) };
  const skipped = p.skipped.length ? ` · ${formatCount(p.skipped.length)} skipped: ${summarizeSkipped(p.skipped)}` : '';
  if (p.files.length === 0) {
    return {
      severity: 'error',
      message:
        `All ${plural(p.found, 'matching file')} would be skipped ` +
        `(${summarizeSkipped(p.skipped)}); point the glob at UTF-8 text files.`,
    };
  }
  const files = plural(p.files.length, 'file');
  const count = p.capped
    ? `${formatCount(p.found)}+ files match; of ${formatCount(p.found)} looked at: ${files}`
    : files;
  const unread = p.planned - p.read;
  const notes = [
    p.excluded ? `${formatCount(p.excluded)} excluded by attentionLab.data.exclude` : '',
    unread > 0 ? `contents of ${formatCount(unread)} checked when training reads them` : '',
  ].filter(Boolean);
  const message =
    `${count}, ${formatBytes(p.bytes)}${skipped}` +
    `${notes.length ? ` (${notes.join('; ')})` : ''} — Preview files… ` +
    `lists them.`;
  return { severity: p.skipped.length > 0 || p.capped ? 'warning' : 'info', message };
}

/** One row of the "Preview files…" list. */
export interface PreviewRow {
  readonly kind: 'file' | 'skipped' | 'separator';
  readonly label: string;
  readonly description?: string;
}

/** The rows of the preview list: the files to train on, then the skipped ones with why. */
export function previewRows(p: GlobPreview, maxRows = 500): PreviewRow[] {
  const rows: PreviewRow[] = [];
  const files = p.files.slice(0, maxRows);
  rows.push({
    kind: 'separator',
    label:
      `${plural(p.files.length, 'file')} to train on, ${formatBytes(p.bytes)}` +
      `${p.capped ? ` (of ${formatCount(p.found)} looked at)` : ''}`,
  });
  for (const f of files) rows.push({ kind: 'file', label: f.path, description: formatBytes(f.bytes) });
  if (p.files.length > files.length)
    rows.push({ kind: 'separator', label: `… and ${plural(p.files.length - files.length, 'more file')}` });
  if (p.skipped.length) {
    rows.push({ kind: 'separator', label: `${formatCount(p.skipped.length)} skipped` });
    for (const f of p.skipped.slice(0, maxRows)) {
      rows.push({
        kind: 'skipped',
        label: f.path,
        description: `skipped: ${skippedReason(f.reason)}${f.bytes !== undefined ? ` (${formatBytes(f.bytes)})` : ''}`,
      });
    }
    if (p.skipped.length > maxRows)
      rows.push({ kind: 'separator', label: `… and ${plural(p.skipped.length - maxRows, 'more skipped file')}` });
  }
  return rows;
}
