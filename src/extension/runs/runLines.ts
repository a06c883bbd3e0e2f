/**
 * The words for a run and its state in the editor's small places: the active run's status-bar
 * item and tooltip, a run in a quick pick, the training notification's line. Pure (no VS Code
 * import), so each wording is tested.
 *
 * Leaves out: the state itself (protocol/runStatus.ts) and the numbers' formats (src/common/format.ts).
 */

import { formatBackend, formatCompact, formatLoss } from '../../common/format';
import type { RunItem } from './runsModel';

/** "decoder-only · completed · step 60/60 · val 1.234": what tells runs apart in a quick pick. */
export function runChoiceDescription(r: RunItem): string {
  if (r.imported !== null) return `${r.kind ?? 'model'} · imported (${r.imported}) · not trained here`;
  const val = r.bestValLoss === null ? '' : ` · val ${formatLoss(r.bestValLoss)}`;
  return `${r.kind ?? 'model'} · ${r.status} · step ${r.step}/${r.totalSteps}${val}`;
}

/** The status-bar text for the active run (or for none). */
export function activeRunText(r: RunItem | undefined): string {
  if (!r) return '$(star-empty) No active run';
  return `$(star-full) ${r.name} · ${r.kind ?? 'model'} · ${r.imported !== null ? 'imported' : `step ${r.step}`}`;
}

/** The tooltip's lines (Markdown-free text) for the active run. */
export function activeRunTooltip(r: RunItem | undefined): string {
  if (!r) return 'No active run: commands ask which run to use. Click to pick one.';
  const lines = [
    `Active run: ${r.name}`,
    r.imported !== null
      ? `${r.kind ?? 'model'} · imported (${r.imported}) · not trained here` +
        `${r.backend ? ` · ${formatBackend(r.backend)}` : ''}`
      : `${r.kind ?? 'model'} · ${r.status} · step ${r.step} of ${r.totalSteps}` +
        ` · best validation loss ${formatLoss(r.bestValLoss)}` +
        `${r.backend ? ` · ${formatBackend(r.backend)}` : ''}`,
  ];
  if (r.note) lines.push(`Note: ${r.note}`);
  lines.push('Score Selection, Show Attention, Decode and Export use this run. Click to pick another.');
  return lines.join('\n\n');
}

/** The progress notification's line: the state the run is in now, in words. */
export function trainingProgressMessage(st: {
  readonly step: number;
  readonly totalSteps: number;
  readonly loss: number | null;
  readonly paused: boolean;
  readonly stopping: boolean;
}): string {
  const where = `step ${st.step}/${st.totalSteps} · loss ${formatLoss(st.loss)}`;
  // Not "after step N": the step in progress (a PyTorch run's next one or two) still finishes first.
  if (st.stopping) return `stopping at the end of the step in progress, with a checkpoint · ${where}…`;
  if (st.paused) return `paused at ${where} — "Pause / Resume Training" or the dashboard's Resume continues it`;
  return where;
}

/** A training run's state as the status bar item shows it. */
export interface TrainingLine {
  readonly step: number;
  readonly totalSteps: number;
  readonly loss: number | null;
  readonly tokensPerSec: number;
  readonly paused: boolean;
  readonly stopping: boolean;
}

/** The training status-bar item's text: paused and stopping said in words, not only by the icon. */
export function trainingStatusText(s: TrainingLine): string {
  const icon = s.paused ? '$(debug-pause)' : s.stopping ? '$(loading~spin)' : '$(sync~spin)';
  const rate = s.tokensPerSec > 0 && !s.paused ? ` · ${formatCompact(s.tokensPerSec)} tok/s` : '';
  const state = s.paused ? 'paused at ' : s.stopping ? 'stopping · ' : '';
  return `${icon} Attention Lab: ${state}step ${s.step}/${s.totalSteps} · loss ${formatLoss(s.loss)}${rate}`;
}

/**
 * Whether the item that says how a run ended ("finished at step 7500") stays up: while that
 * run is the active one (or none is), not under another run the commands now act on.
 */
export function endedRunStays(ended: string, active: string | null): boolean {
  return active === null || active === ended;
}
