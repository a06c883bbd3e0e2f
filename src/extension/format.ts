/**
 * How numbers read in the UI: parameter counts (1.2M), bytes (3.4 MB), durations (0.12 s,
 * 4 min), losses and rates, and one-line summaries of a run's data and of a configuration
 * estimate. Pure, shared by the status bar, trees, quick picks and notifications.
 *
 * Leaves out: localization (English, with SI prefixes and a dot as decimal separator).
 */

import type { DataSummary, SkippedFile } from '../protocol/data';
import { SKIP_REASON_TEXT, summarizeSkipped } from '../protocol/data';

/** 1234 → "1.2k", 12_345_678 → "12.3M". */
export function formatCount(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(a >= 1e10 ? 0 : 1)}G`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(a >= 1e7 ? 1 : 2)}M`;
  if (a >= 1e3) return `${(n / 1e3).toFixed(a >= 1e4 ? 0 : 1)}k`;
  return String(Math.round(n));
}

/** Bytes in B, KB, MB, GB (powers of 1024, as file managers show them). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}

/** Seconds as "35 ms", "1.4 s", "3 min 20 s", "2 h 5 min". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds < 1) return `${Math.max(1, Math.round(seconds * 1000))} ms`;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m} min${seconds % 60 >= 1 ? ` ${Math.floor(seconds % 60)} s` : ''}`;
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
}

/** A loss with 3 decimals, or "–" before the first step. */
export function formatLoss(loss: number | null): string {
  return loss === null || !Number.isFinite(loss) ? '–' : loss.toFixed(3);
}

/** "2 binary, 1 ignored by .gitignore". */
export const skippedReasons = summarizeSkipped;

/** The reason of one skipped file, for people. */
export function skippedReason(reason: SkippedFile['reason']): string {
  return SKIP_REASON_TEXT[reason];
}

/** "12 files (34.0 KB) · skipped 3: 2 binary, 1 ignored by .gitignore". */
export function dataLine(d: DataSummary): string {
  if (d.bytes === 0 && d.skipped.length === 0) return d.description;
  const files = `${d.documents} ${d.documents === 1 ? 'file' : 'files'} (${formatBytes(d.bytes)})`;
  return d.skipped.length ? `${files} · skipped ${d.skipped.length}: ${skippedReasons(d.skipped)}` : files;
}

/** "1.2M parameters · ~48 MB · ≈ 0.12 s/step". */
export function estimateLine(params: number, memoryBytes: number, secondsPerStep: number | null): string {
  const time = secondsPerStep === null ? '' : ` · ≈ ${formatDuration(secondsPerStep)}/step`;
  return `${formatCount(params)} parameters · ~${formatBytes(memoryBytes)}${time}`;
}
