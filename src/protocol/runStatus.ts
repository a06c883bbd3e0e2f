/**
 * The one rule for the state and step a run shows, wherever it is shown (the Runs view,
 * its tooltip, the status bar, the dashboard header, the quick picks): what run.json says,
 * with the run that trains right now laid over it. A run.json that says "training" or
 * "paused" while nothing trains it was interrupted (a window reload, a crash): it shows
 * "interrupted" at its last checkpoint's step, because that is where Resume continues
 * (the metrics logged after that checkpoint are dropped on resume). It lives beside the
 * messages because the dashboard applies it too, to the steps it receives live.
 *
 * Leaves out: reading run.json (lab/runs/runFolder.ts) and how each view words the state.
 */

/** What run.json can say about a run. */
export type SavedRunStatus = 'created' | 'training' | 'paused' | 'completed' | 'stopped' | 'failed';

/** The state a run shows. */
export type ShownRunStatus = SavedRunStatus | 'interrupted';

/** A run that is training right now, as the process that trains it knows it. */
export interface LiveProgress {
  /** The last step it finished. */
  readonly step: number;
  readonly paused: boolean;
}

/** The state and step a run shows. */
export interface ShownRunState {
  readonly status: ShownRunStatus;
  readonly step: number;
}

/**
 * The state and step to show for a run whose run.json says `saved` (`step` there is the
 * last checkpoint's), and that is training now when `live` is given.
 */
export function shownRunState(
  saved: { readonly status: ShownRunStatus; readonly step: number },
  live: LiveProgress | null,
): ShownRunState {
  if (live) return { status: live.paused ? 'paused' : 'training', step: Math.max(saved.step, live.step) };
  if (saved.status === 'training' || saved.status === 'paused') return { status: 'interrupted', step: saved.step };
  return { status: saved.status, step: saved.step };
}
