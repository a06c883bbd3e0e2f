/**
 * The PyTorch engine's test bench: Debian's python3-torch (/usr/bin/python3, installed by
 * test/e2e/setup.sh, which `npm test` runs first), the trainer package from python/, and
 * helpers that train a run with either engine in-process (the sessions the training worker
 * hosts) and read back what the run folder holds.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { runPytorchSession } from '../../../../src/lab/pytorch/pytorchSession.node';
import { runSession } from '../../../../src/lab/training/session';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import { NODE_PLATFORM } from '../../../../src/lab/platform/platform.node';
import type { PytorchOptions, StepMetrics, TrainSpec } from '../../../../src/protocol/data';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';

/** Debian's Python with torch. */
export const PYTHON = '/usr/bin/python3';
/** The folder holding the trainer package as the repository holds it (dist/pytorch/ is a copy). */
export const TRAINER_DIR = path.resolve(__dirname, '../../../../python');

/** Options of a PyTorch session on the CPU. */
export function torchOptions(nproc = 1, extra: Partial<PytorchOptions> = {}): PytorchOptions {
  return { python: PYTHON, nproc, accumulate: 1, device: 'cpu', bf16: false, trainerDir: TRAINER_DIR, ...extra };
}

/** A new empty folder's path for a run (the folder itself does not exist yet). */
export function runPath(name = 'run'): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'al-torch-')), name);
}

/** How to train one session: our engine (`pytorch` null) or PyTorch's. */
export interface SessionPlan {
  readonly resume?: boolean;
  readonly stopAt?: number | null;
  readonly extendTo?: number | null;
  readonly pytorch?: PytorchOptions | null;
  readonly control?: SessionControl;
  readonly onEvent?: (e: FromTrainingWorker) => void;
}

/** Trains one session of `spec` in `runDir`; returns every notification. Throws on train/didFail. */
export async function trainSession(
  runDir: string,
  spec: TrainSpec,
  plan: SessionPlan = {},
): Promise<FromTrainingWorker[]> {
  const events: FromTrainingWorker[] = [];
  const emit = (m: FromTrainingWorker): void => {
    events.push(m);
    plan.onEvent?.(m);
  };
  const control = plan.control ?? new SessionControl();
  const request = {
    runDir,
    spec,
    resume: plan.resume ?? false,
    stopAt: plan.stopAt ?? null,
    extendTo: plan.extendTo ?? null,
  };
  await (plan.pytorch
    ? runPytorchSession({ request, pytorch: plan.pytorch, control, emit })
    : runSession({ platform: NODE_PLATFORM, request, control, emit }));
  const fail = events.find((e) => e.type === 'train/didFail');
  if (fail) throw new Error(JSON.stringify(fail));
  return events;
}

/** The step lines of a run's metrics.jsonl. */
export function stepLines(runDir: string): StepMetrics[] {
  return fs
    .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StepMetrics & { type: string })
    .filter((l) => l.type === 'step');
}

/** The largest difference of two runs' per-step training losses (same steps, same count). */
export function lossGap(a: readonly StepMetrics[], b: readonly StepMetrics[]): number {
  if (a.length !== b.length || a.some((x, i) => x.step !== b[i]?.step))
    throw new Error(`steps differ: ${a.map((x) => x.step)} vs ${b.map((x) => x.step)}`);
  return Math.max(...a.map((x, i) => Math.abs(x.loss - (b[i] as StepMetrics).loss)));
}

/** Every tensor of a run's model.safetensors. */
export function modelTensors(runDir: string): Map<string, Float32Array> {
  const f = decodeSafetensors(
    new Uint8Array(fs.readFileSync(path.join(runDir, 'model.safetensors'))),
    'model.safetensors',
  );
  return new Map([...f.tensors].map(([k, t]) => [k, t.data as Float32Array]));
}

/** The largest elementwise difference of two runs' weights (the same tensors in both). */
export function weightGap(a: string, b: string): number {
  const x = modelTensors(a);
  const y = modelTensors(b);
  if ([...x.keys()].sort().join() !== [...y.keys()].sort().join())
    throw new Error('the two checkpoints hold different tensors');
  let gap = 0;
  for (const [k, t] of x) {
    const u = y.get(k) as Float32Array;
    for (let i = 0; i < t.length; i++) gap = Math.max(gap, Math.abs((t[i] as number) - (u[i] as number)));
  }
  return gap;
}

/** Runs Python `code` (with the trainer's folder importable) on `input`; returns stdout. */
export function python(code: string, input = ''): string {
  return execFileSync(PYTHON, ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(TRAINER_DIR)})\n${code}`], {
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
  });
}
