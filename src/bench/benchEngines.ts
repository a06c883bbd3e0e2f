/**
 * The two training engines on the same run: the session `attention-lab train --task TASK`
 * trains (the task's own model, batch and schedule; no evaluation, snapshots or periodic
 * checkpoints, so only the steps are timed), once on our engine (WebAssembly, every core) and
 * once per PyTorch device this machine has (the CPU; CUDA in fp32 and bf16 where torch sees a
 * GPU), each into its own run folder, one after another.
 *
 * Both engines log the same metrics.jsonl, so one rule measures both: tokens/s of each block
 * of BLOCK steps (target tokens ÷ the block's share of `elapsedMs`), the first block left out
 * (JIT, allocator and — on a GPU — kernel selection warm up there), median [min–max] over the
 * rest. Start-up (Python, torch import, reading the data) is outside every block.
 *
 * Leaves out: the raw model comparison on the bench configs (scripts/pytorch/bench.py, bench.ts).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PytorchOptions, TaskName } from '../protocol/data';
import { runPytorchSession } from '../lab/pytorch/pytorchSession.node';
import { describeEnv, probeTorch } from '../lab/pytorch/probe.node';
import { NODE_FS } from '../lab/files/fs.node';
import { readMetrics } from '../lab/runs/runFolder';
import { trainSpecOf } from '../lab/runs/runSpec';
import { runSession } from '../lab/training/session';
import { SessionControl } from '../lab/training/sessionControl';
import { NODE_PLATFORM } from '../lab/platform/platform.node';
import type { FromTrainingWorker } from '../protocol/trainingWorker';
import type { Stats } from './benchRun';
import { summarize } from './benchRun';

/** Steps per timed block. */
const BLOCK = 10;

/** One engine's training speed on the run. */
export interface EngineSpeed {
  /** "ours (wasm)", "pytorch cpu", "pytorch cuda bf16" … as the run folder's backendUsed says. */
  readonly engine: string;
  readonly tokensPerS: Stats;
}

/** Every engine on one task's run. */
export interface EnginesResult {
  readonly task: TaskName;
  readonly steps: number;
  /** The torch that trained the PyTorch rows, in one line (version, Python, devices). */
  readonly torch: string;
  readonly engines: readonly EngineSpeed[];
}

/** Tokens/s of each block of a run's metrics after the first. */
async function blockRates(runDir: string): Promise<number[]> {
  const steps = (await readMetrics(NODE_FS, runDir)).steps;
  const rates: number[] = [];
  for (let end = 2 * BLOCK; end <= steps.length; end += BLOCK) {
    const block = steps.slice(end - BLOCK, end);
    const ms = (block[BLOCK - 1]?.elapsedMs ?? 0) - (steps[end - BLOCK - 1]?.elapsedMs ?? 0);
    if (ms > 0) rates.push(block.reduce((n, s) => n + s.tokens, 0) / (ms / 1000));
  }
  return rates;
}

async function trainOnce(task: TaskName, steps: number, pytorch: PytorchOptions | null): Promise<EngineSpeed> {
  const spec = trainSpecOf({ kind: 'task', task }, { steps, evalEvery: 0, snapshotEvery: 0, checkpointEvery: 0 });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-bench-engines-'));
  const runDir = path.join(root, 'run');
  let engine = '';
  let failure: string | null = null;
  const emit = (m: FromTrainingWorker): void => {
    if (m.type === 'train/didStart') engine = m.model.backend;
    if (m.type === 'train/didFail') failure = m.error.message;
  };
  try {
    const control = new SessionControl();
    const request = { runDir, spec, resume: false, stopAt: null, extendTo: null };
    await (pytorch
      ? runPytorchSession({ request, pytorch, control, emit })
      : runSession({ platform: NODE_PLATFORM, request, control, emit }));
    if (failure) throw new Error(failure);
    const rates = await blockRates(runDir);
    if (rates.length === 0) throw new Error(`${steps} steps are too few to time (at least ${2 * BLOCK})`);
    return { engine: pytorch ? engine : `ours (${engine})`, tokensPerS: summarize(rates) };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Trains `task`'s run for `steps` steps on our engine and on PyTorch (`python`, the trainer in
 * `trainerDir`) on each device it has; one line per finished engine through `log`.
 */
export async function measureEngines(
  task: TaskName,
  steps: number,
  python: string,
  trainerDir: string,
  log: (line: string) => void,
): Promise<EnginesResult> {
  const env = await probeTorch(python, trainerDir);
  const devices: Pick<PytorchOptions, 'device' | 'bf16'>[] = [
    { device: 'cpu', bf16: false },
    ...(env.cuda
      ? [{ device: 'cuda' as const, bf16: false }, ...(env.bf16 ? [{ device: 'cuda' as const, bf16: true }] : [])]
      : []),
  ];
  const engines: EngineSpeed[] = [];
  for (const d of [null, ...devices]) {
    const r = await trainOnce(task, steps, d ? { python, nproc: 1, accumulate: 1, trainerDir, ...d } : null);
    log(`engines ${task}: ${r.engine} ${Math.round(r.tokensPerS.median)} tokens/s`);
    engines.push(r);
  }
  return { task, steps, torch: describeEnv(env), engines };
}
