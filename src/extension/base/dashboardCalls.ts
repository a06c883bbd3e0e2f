/**
 * What the rooms below the dashboard ask of it: open it on a run, reload it, and show a decode, an
 * attention or an evaluation made elsewhere. The dashboard (dashboard/dashboardManager.ts) implements it and
 * activation passes it in, so the runs, training and command rooms never import the dashboard.
 *
 * Leaves out: the panel and its messages (dashboard/).
 */

import type { EvaluationRecord } from '../../protocol/evaluation';
import type { AttentionSnapshot, DecodeOutput, DecodeParams } from '../../protocol/model';

/** The dashboard's calls for other rooms. */
export interface DashboardCalls {
  /** Opens the dashboard (or reveals it) showing `runId` (the live or newest run when null). */
  open(runId?: string | null, preserveFocus?: boolean): void;
  /** Resends every run to an open dashboard (after a rename, a note, a delete). */
  reload(): void;
  /** Shows the attention of a text in the run's Attention and Heads tabs. */
  showAttention(runDir: string, snapshot: AttentionSnapshot): Promise<void>;
  /** Puts a decode made outside the dashboard into its playground. */
  showDecode(runDir: string, params: DecodeParams, output: DecodeOutput): void;
  /** Adds a run's new evaluation to an open dashboard. */
  showEvaluation(runDir: string, evaluation: EvaluationRecord): void;
}
