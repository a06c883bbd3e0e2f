/**
 * `attention-lab bench --grokking`: the wall-clock time the modular-addition task's default run
 * (`attention-lab train --task modular-addition`, our engine on every core) takes to reach 99%
 * test accuracy, one run per seed, each stopped at the validation that first reaches it (or at
 * the run's last step). The clock starts before the run folder is made, so it counts what a user
 * waits for: data, model, steps, validations with their progress measures, checkpoints.
 *
 * Leaves out: the tokens/s of the model configs (bench.ts) and the engines' comparison
 * (benchEngines.ts).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatDuration, formatPercent } from '../common/format';
import { NODE_PLATFORM } from '../lab/platform/platform.node';
import { trainSpecOf } from '../lab/runs/runSpec';
import { runSession } from '../lab/training/session';
import { SessionControl } from '../lab/training/sessionControl';
import type { FromTrainingWorker } from '../protocol/trainingWorker';

/** The test accuracy a run must reach. */
export const GROKKED = 0.99;

/** One seed's run. */
export interface GrokkingSeed {
  readonly seed: number;
  /** The first validation step with test accuracy ≥ 99%; null when the run ended first. */
  readonly step: number | null;
  /** Wall-clock seconds from the start to that validation (or to the run's end). */
  readonly seconds: number;
  /** Test accuracy at the last validation. */
  readonly testAcc: number;
  /** The key frequencies at the last validation. */
  readonly keyFreqs: readonly number[];
  /** The engine and threads, as the session said ("wasm ×2"). */
  readonly backend: string;
}

/** Every seed's run. */
export interface GrokkingBench {
  readonly task: 'modular-addition';
  readonly steps: number;
  readonly seeds: readonly GrokkingSeed[];
}

/** Trains the task's default run for one seed until its test accuracy reaches 99%. */
async function oneSeed(seed: number, log: (line: string) => void): Promise<GrokkingSeed> {
  const spec = trainSpecOf({ kind: 'task', task: 'modular-addition' }, { seed, snapshotEvery: 0, checkpointEvery: 0 });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-bench-grokking-'));
  const control = new SessionControl();
  const t0 = Date.now();
  let reached: { step: number; seconds: number } | null = null;
  let last = { testAcc: 0, keyFreqs: [] as readonly number[] };
  let backend = '';
  let failure: string | null = null;
  const emit = (m: FromTrainingWorker): void => {
    if (m.type === 'train/didStart') backend = `${m.model.backend} ×${m.model.threads ?? 1}`;
    if (m.type === 'train/didFail') failure = m.error.message;
    if (m.type !== 'train/didEval' || !m.grokking) return;
    last = { testAcc: m.grokking.testAcc, keyFreqs: m.grokking.keyFreqs };
    if (reached === null && m.grokking.testAcc >= GROKKED) {
      reached = { step: m.step, seconds: (Date.now() - t0) / 1000 };
      control.stop();
    }
  };
  try {
    const request = { runDir: path.join(root, 'run'), spec, resume: false, stopAt: null, extendTo: null };
    await runSession({ platform: NODE_PLATFORM, request, control, emit });
    if (failure) throw new Error(failure);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  const r = reached as { step: number; seconds: number } | null;
  const out = { seed, step: r?.step ?? null, seconds: r?.seconds ?? (Date.now() - t0) / 1000, ...last, backend };
  const time = formatDuration(out.seconds);
  log(
    `grokking seed ${seed}: ` +
      (out.step === null
        ? `test accuracy ${formatPercent(out.testAcc)} after ${spec.training.steps} steps (${time})`
        : `99% test accuracy at step ${out.step} after ${time}`),
  );
  return out;
}

/** The task's default run for each of `seeds`, one after another; a line per seed through `log`. */
export async function runGrokkingBench(seeds: readonly number[], log: (line: string) => void): Promise<GrokkingBench> {
  const results: GrokkingSeed[] = [];
  for (const seed of seeds) results.push(await oneSeed(seed, log));
  return {
    task: 'modular-addition',
    steps: trainSpecOf({ kind: 'task', task: 'modular-addition' }).training.steps,
    seeds: results,
  };
}

/** The result as a table for people. */
export function formatGrokkingBench(r: GrokkingBench): string {
  const rows = r.seeds.map(
    (s) =>
      `  ${String(s.seed).padEnd(5)} ${(s.step === null ? `not in ${r.steps}` : String(s.step)).padEnd(12)} ` +
      `${formatDuration(s.seconds).padEnd(9)} ${formatPercent(s.testAcc).padEnd(8)} ${s.keyFreqs.join(', ')}`,
  );
  const done = r.seeds.filter((s) => s.step !== null).map((s) => s.seconds);
  const worst = done.length ? Math.max(...done) : null;
  return [
    `Grokking: --task modular-addition to ${formatPercent(GROKKED)} test accuracy (${r.seeds[0]?.backend ?? ''})`,
    `  seed  step         time      test acc key frequencies`,
    ...rows,
    worst === null ? '  no seed reached it' : `  slowest of ${done.length}: ${formatDuration(worst)}`,
  ].join('\n');
}
