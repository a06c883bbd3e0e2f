/**
 * Head scores of a run at one snapshot step, as `attention-lab heads` prints them and any
 * other front door would show them: read back from the snapshot file, where training stored
 * them (lab/training/snapshots.ts; computed by lab/training/headScores.ts), so every front door
 * shows the same numbers.
 *
 * Leaves out: computing scores for a snapshot that has none (files written before scores
 * existed): a new run has them.
 */

import { EngineError } from '../../engine/errors';
import type { HeadScoreData } from '../../protocol/model';
import { readSnapshot, snapshotSteps } from '../training/snapshots';

/** Every head's scores at one step (layer and head 0-based, as in the protocol). */
export interface HeadsAtStep {
  readonly step: number;
  readonly heads: readonly HeadScoreData[];
}

/** The head scores at `step`, or at the latest snapshot when `step` is null. */
export function headsOfRun(runDir: string, step: number | null): HeadsAtStep {
  const steps = snapshotSteps(runDir);
  if (steps.length === 0) throw new EngineError('input/invalid', `${runDir} has no attention snapshots; train with --snapshot-every N (N > 0) to record head scores.`);
  const at = step ?? (steps[steps.length - 1] as number);
  if (!steps.includes(at)) {
    throw new EngineError('input/invalid', `${runDir} has no snapshot at step ${at}; pick --step from ${steps.length > 12 ? `${steps.slice(0, 12).join(', ')}, …` : steps.join(', ')}.`);
  }
  const snap = readSnapshot(runDir, at);
  if (!snap.headScores) throw new EngineError('input/invalid', `The snapshot at step ${at} has no head scores (it was written before they existed); train a new run to get them.`);
  return { step: at, heads: snap.headScores };
}
