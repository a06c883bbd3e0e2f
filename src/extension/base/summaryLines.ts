/**
 * One-line summaries the extension shows: a run's data (files, size, what was skipped and
 * why), a configuration's estimate (parameters, memory, time per step) and what a decode gave
 * (how many tokens, why it stopped). Pure, shared by the trees, quick picks, the configuration
 * view, Decode… and the log.
 *
 * Leaves out: how each number is written (src/common/format.ts, shared with the CLI and the dashboard).
 */

import { formatBytes, formatCompact, formatDuration } from '../../common/format';
import type { DataSummary, SkippedFile } from '../../protocol/data';
import { SKIP_REASON_TEXT, summarizeSkipped } from '../../protocol/data';
import type { DecodeOutput } from '../../protocol/model';
import { stopReasonText } from '../../protocol/model';

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

/**
 * What Decode… tells: "Decoded 200 token(s) with run-1 — as many as asked for (max tokens); the
 * setting attentionLab.decode.maxTokens asks for more.", then the context note when the model's
 * context shaped the decode (the sliding window, or beam search stopping there).
 */
export function decodeMessage(runName: string, output: DecodeOutput): string {
  const more = output.stopReason === 'maxTokens' ? '; the setting attentionLab.decode.maxTokens asks for more' : '';
  const note = output.contextNote !== undefined ? ` ${output.contextNote}` : '';
  return (
    `Decoded ${output.tokens.length} token(s) with ${runName} — ` +
    `${stopReasonText(output.stopReason)}${more}.${note}`
  );
}
