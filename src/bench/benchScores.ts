/**
 * What head scores cost a training run: training tokens/s of the real session (src/lab/training/session.ts,
 * run folder and all) with head scores on and off, at the task's default snapshot cadence (as
 * `attention-lab train` sets it: a twentieth of the steps, induction a sixtieth). Evaluation and
 * periodic checkpoints are off in both, so the only difference between the two is the
 * scoring at each snapshot (the diagnostic forward pass and the score sums).
 *
 * Both sessions run at once in this thread and take turns: one trains a block of exactly
 * `snapshotEvery` steps (so each block holds one snapshot) while the other waits paused, then
 * they swap — interleaved, so a shared machine's drift hits both alike. The first block of each
 * (which includes the step-0 snapshot and the JIT's warm-up) is not counted. The figure is the
 * tokens of a block over its wall time; the ratio is on ÷ off, median over the rounds. On a
 * busy machine that ratio swings by more than the scores cost, so the snapshot itself is timed
 * too (from its step's train/didStep to its train/didSnapshot): the difference on − off over
 * a block's time is the scores' share of training, measured over milliseconds, not seconds.
 *
 * Leaves out: formatting (benchReport.ts).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TaskName, TrainSpec } from '../protocol/data';
import type { FromTrainingWorker } from '../protocol/trainingWorker';
import { runSession } from '../lab/training/session';
import { SessionControl } from '../lab/training/sessionControl';
import { NODE_PLATFORM } from '../lab/platform/platform.node';
import { trainSpecOf } from '../lab/runs/runSpec';
import type { Stats } from './benchRun';
import { summarize } from './benchRun';

/** Tokens/s with scores on and off, and their ratio per round. */
export interface ScoresCost {
  readonly task: TaskName;
  readonly snapshotEvery: number;
  readonly rounds: number;
  readonly on: Stats;
  readonly off: Stats;
  /** on ÷ off per round (1 = free; 0.97 = 3% slower). */
  readonly ratio: Stats;
  /** Milliseconds from a snapshot step's train/didStep to its train/didSnapshot (capture, scores, file), on and off. */
  readonly snapshotMs: { readonly on: Stats; readonly off: Stats };
  /** (snapshot ms on − off) ÷ ms of a block: the scores' share of training time, far less noisy than the ratio. */
  readonly overhead: number;
}

/**
 * The spec `attention-lab train --task TASK` makes (the one rule: src/lab/runs/runSpec.ts), without evaluation or
 * periodic checkpoints.
 */
export function benchTaskSpec(task: TaskName): TrainSpec {
  return trainSpecOf({ kind: 'task', task }, { evalEvery: 0, checkpointEvery: 0 });
}

/** One session that trains in blocks when told to. */
class Side {
  readonly control = new SessionControl();
  readonly rates: number[] = [];
  readonly blockMs: number[] = [];
  readonly snapshotMs: number[] = [];
  private tokens = 0;
  private snapshotFrom = 0;
  private counted = false;
  private started = 0;
  private blockEnd = 0;
  private onBlock: (() => void) | null = null;
  private failure: string | null = null;
  done: Promise<void>;

  constructor(dir: string, spec: TrainSpec, stopAt: number, headScores: boolean, now: () => number) {
    this.control.pause();
    const emit = (m: FromTrainingWorker): void => {
      if (m.type === 'train/didStep') {
        this.tokens += m.tokens;
        // Pause after this step's snapshot: the loop checks at the top of the next step.
        if (m.step === this.blockEnd) {
          this.control.pause();
          this.snapshotFrom = now();
        }
      } else if (m.type === 'train/didSnapshot') {
        if (this.counted && m.step === this.blockEnd) this.snapshotMs.push(now() - this.snapshotFrom);
      } else if (m.type === 'train/didPause' || m.type === 'train/didFinish') {
        const cb = this.onBlock;
        this.onBlock = null;
        cb?.();
      } else if (m.type === 'train/didFail') {
        this.failure = m.error.message;
        const cb = this.onBlock;
        this.onBlock = null;
        cb?.();
      }
    };
    this.done = runSession({
      platform: NODE_PLATFORM,
      request: { runDir: dir, spec, resume: false, stopAt, extendTo: null },
      control: this.control,
      emit,
      options: { headScores },
    });
  }

  /** Trains up to step `end`; resolves with tokens/s of the block. */
  block(end: number, counted: boolean, now: () => number): Promise<void> {
    return new Promise((resolve, reject) => {
      // A session that failed while the other side trained has nothing left to run.
      if (this.failure !== null) return reject(new Error(this.failure));
      this.tokens = 0;
      this.blockEnd = end;
      this.counted = counted;
      this.onBlock = () => {
        if (this.failure !== null) return reject(new Error(this.failure));
        const ms = now() - this.started;
        if (counted) {
          this.rates.push(this.tokens / (ms / 1000));
          this.blockMs.push(ms);
        }
        resolve();
      };
      this.started = now();
      this.control.resume();
    });
  }
}

/**
 * Tokens/s of `task` with head scores on and off, `rounds` counted blocks each (plus one
 * warm-up block), taking turns.
 */
export async function measureScoresCost(
  task: TaskName,
  rounds: number,
  now: () => number,
  spec: TrainSpec = benchTaskSpec(task),
): Promise<ScoresCost> {
  const every = spec.training.snapshotEvery;
  const stopAt = (rounds + 1) * every;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-bench-scores-'));
  const on = new Side(path.join(tmp, 'on'), spec, stopAt, true, now);
  const off = new Side(path.join(tmp, 'off'), spec, stopAt, false, now);
  try {
    for (let b = 0; b <= rounds; b++) {
      // Alternate which side goes first, so neither always follows the other.
      const [first, second] = b % 2 === 0 ? [on, off] : [off, on];
      await first.block((b + 1) * every, b > 0, now);
      await second.block((b + 1) * every, b > 0, now);
    }
    on.control.resume();
    off.control.resume();
    await Promise.all([on.done, off.done]);
  } finally {
    on.control.stop();
    off.control.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const ratios = on.rates.map((r, i) => r / (off.rates[i] as number));
  const snapOn = summarize(on.snapshotMs);
  const snapOff = summarize(off.snapshotMs);
  const block = summarize([...on.blockMs, ...off.blockMs]);
  return {
    task,
    snapshotEvery: every,
    rounds,
    on: summarize(on.rates),
    off: summarize(off.rates),
    ratio: summarize(ratios),
    snapshotMs: { on: snapOn, off: snapOff },
    overhead: (snapOn.median - snapOff.median) / block.median,
  };
}
