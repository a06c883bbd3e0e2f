/**
 * One-line summaries the extension shows: a run's data (files, size, what was skipped and
 * why) and a configuration's estimate (parameters, memory, time per step). Pure, shared by
 * the trees, quick picks, the configuration view and the log.
 *
 * Leaves out: how each number is written (src/format.ts, shared with the CLI and the dashboard).
 */

import { formatBytes, formatCompact, formatDuration, formatLoss } from '../format';
import type { DataSummary, SkippedFile } from '../protocol/data';
import { SKIP_REASON_TEXT, summarizeSkipped } from '../protocol/data';

/** "2 binary, 1 ignored by .gitignore". */
export const skippedReasons = summarizeSkipped;

/** The reason of one skipped file, for people. */
export function skippedReason(reason: SkippedFile['reason']): string {
  return SKIP_REASON_TEXT[reason];
}

/** "12 files (34 KB) · skipped 3: 2 binary, 1 ignored by .gitignore". */
export function dataLine(d: DataSummary): string {
  if (d.bytes === 0 && d.skipped.length === 0) return d.description;
  const files = `${d.documents} ${d.documents === 1 ? 'file' : 'files'} (${formatBytes(d.bytes)})`;
  return d.skipped.length ? `${files} · skipped ${d.skipped.length}: ${skippedReasons(d.skipped)}` : files;
}

/** "1.2M parameters · ~48 MB · ≈ 120ms/step". */
export function estimateLine(params: number, memoryBytes: number, secondsPerStep: number | null): string {
  const time = secondsPerStep === null ? '' : ` · ≈ ${formatDuration(secondsPerStep)}/step`;
  return `${formatCompact(params)} parameters · ~${formatBytes(memoryBytes)}${time}`;
}

/** The training notification's message: "step 120/2000 · loss 1.2345", or that it is paused there and how to go on. */
export function progressLine(step: number, totalSteps: number, loss: number | null, paused: boolean): string {
  const at = `step ${step}/${totalSteps}${loss === null ? '' : ` · loss ${formatLoss(loss)}`}`;
  return paused ? `paused at ${at} — Pause / Resume Training continues` : at;
}
