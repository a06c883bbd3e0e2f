/**
 * Head scores of a run, as `attention-lab heads` prints them and any other front door would
 * show them: at a snapshot step, read back from the snapshot file where training stored them
 * (snapshots.ts; computed by headScores.ts); or measured now with the model (attend.ts) on a
 * text, or — for a run without snapshots, such as an imported model — on the run's
 * diagnostic sequences. Every front door shows the same numbers.
 *
 * Leaves out: computing scores for a snapshot that has none (files written before scores
 * existed): a new run has them, and the model measures them now on a text.
 */

import { EngineError } from '../../engine/errors';
import type { HeadScoreData } from '../../protocol/model';
import type { LabFs } from '../files/labFs';
import type { OpenRun } from './openRun';
import { readSnapshot, snapshotSteps } from '../runs/snapshotFiles';
import { attendDiagnostic, attendText } from './attend';

/** What a set of scores was measured on: a training snapshot's probe, a text, or the diagnostic sequences. */
export type HeadsMeasuredOn = 'snapshot' | 'text' | 'diagnostic';

/** Every head's scores at one step (layer and head 0-based, as in the protocol). */
export interface HeadsAtStep {
  readonly step: number;
  readonly heads: readonly HeadScoreData[];
  readonly on: HeadsMeasuredOn;
  /** When the text was cut to the model's context, the sentence that says so. */
  readonly truncation?: string;
}

/** True when the run has attention snapshots to read scores from. */
export async function hasSnapshots(fs: LabFs, runDir: string): Promise<boolean> {
  return (await snapshotSteps(fs, runDir)).length > 0;
}

/** The head scores at `step`, or at the latest snapshot when `step` is null. */
export async function headsOfRun(fs: LabFs, runDir: string, step: number | null): Promise<HeadsAtStep> {
  const steps = await snapshotSteps(fs, runDir);
  if (steps.length === 0)
    throw new EngineError(
      'input/invalid',
      `${runDir} has no attention snapshots; measure the heads now with --text TEXT (or with no ` +
        `flags, on the diagnostic sequences), or train with --snapshot-every N (N > 0).`,
    );
  const at = step ?? (steps[steps.length - 1] as number);
  if (!steps.includes(at)) {
    throw new EngineError(
      'input/invalid',
      `${runDir} has no snapshot at step ${at}; pick --step from ` +
        `${steps.length > 12 ? `${steps.slice(0, 12).join(', ')}, …` : steps.join(', ')}.`,
    );
  }
  const snap = await readSnapshot(fs, runDir, at);
  if (!snap.headScores)
    throw new EngineError(
      'input/invalid',
      `The snapshot at step ${at} has no head scores (it was written before they existed); measure ` +
        `them now with --text TEXT, or train a new run.`,
    );
  return { step: at, heads: snap.headScores, on: 'snapshot' };
}

/** The head scores of the run's model on `text` (induction on the diagnostic sequences). */
export function headsOfText(r: OpenRun, text: string): HeadsAtStep {
  const { snapshot } = attendText(r, text);
  return {
    step: r.step,
    heads: snapshot.headScores ?? [],
    on: 'text',
    ...(snapshot.truncation !== undefined ? { truncation: snapshot.truncation } : {}),
  };
}

/** The head scores of the run's model on its diagnostic sequences (see attend.ts `attendDiagnostic`). */
export function headsOnDiagnostics(r: OpenRun): HeadsAtStep {
  const a = attendDiagnostic(r);
  if (!a)
    throw new EngineError(
      'input/invalid',
      `The model's context or vocabulary is too small for the diagnostic sequences; measure the ` +
        `heads on a text with --text TEXT.`,
    );
  return { step: r.step, heads: a.snapshot.headScores ?? [], on: 'diagnostic' };
}
