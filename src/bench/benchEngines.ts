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
 * Where Dawn's binding opens a WebGPU adapter, our engine also trains on it (`--backend
 * webgpu`, after WebAssembly). A real GPU trains the same steps; a software adapter
 * (SwiftShader, llvmpipe: seconds per step) trains only {@link SOFTWARE_STEPS} steps timed one
 * by one after the first, so the bench grows by seconds, and is reported, not compared. The
 * bench never points Vulkan at a software driver itself (`VK_ICD_FILENAMES` does).
 *
 * Leaves out: the raw model comparison on the bench configs (scripts/pytorch/bench.py, bench.ts).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BackendKind, PytorchOptions, TaskName } from '../protocol/data';
import { runPytorchSession } from '../lab/pytorch/pytorchSession.node';
import { describeEnv, probeTorch } from '../lab/pytorch/probe.node';
import { NODE_FS } from '../lab/files/fs.node';
import { readMetrics } from '../lab/runs/runFolder';
import { trainSpecOf } from '../lab/runs/runSpec';
import { runSession } from '../lab/training/session';
import { SessionControl } from '../lab/training/sessionControl';
import { NODE_PLATFORM } from '../lab/platform/platform.node';
import type { OpenedGpu } from '../lab/platform/platform';
import type { FromTrainingWorker } from '../protocol/trainingWorker';
import type { Stats } from './benchRun';
import { summarize } from './benchRun';

/** Steps per timed block. */
const BLOCK = 10;

/** Steps on a software WebGPU adapter: the first warms up, each later one is a block of its own. */
export const SOFTWARE_STEPS = 3;

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
  /** Our engine on WebGPU, or why it did not train (no binding, no adapter, disabled, failed). */
  readonly webgpu: WebGpuSpeed | { readonly skipped: string };
}

/** Our engine on a WebGPU adapter. */
export interface WebGpuSpeed extends EngineSpeed {
  /** The adapter as the session names it ("google swiftshader (software) · Vulkan"). */
  readonly adapter: string;
  /** A CPU implementation (SwiftShader, llvmpipe): its speed is reported, not compared. */
  readonly software: boolean;
  /** Steps it trained (fewer than the others' on a software adapter). */
  readonly steps: number;
  /** Steps per timed block (1 on a software adapter). */
  readonly block: number;
}

/** Tokens/s of each block of a run's metrics after the first. */
async function blockRates(runDir: string, size: number): Promise<number[]> {
  const steps = (await readMetrics(NODE_FS, runDir)).steps;
  const rates: number[] = [];
  for (let end = 2 * size; end <= steps.length; end += size) {
    const block = steps.slice(end - size, end);
    const ms = (block[size - 1]?.elapsedMs ?? 0) - (steps[end - size - 1]?.elapsedMs ?? 0);
    if (ms > 0) rates.push(block.reduce((n, s) => n + s.tokens, 0) / (ms / 1000));
  }
  return rates;
}

async function trainOnce(
  task: TaskName,
  steps: number,
  pytorch: PytorchOptions | null,
  backend: BackendKind = 'auto',
  block = BLOCK,
): Promise<EngineSpeed> {
  const spec = trainSpecOf(
    { kind: 'task', task },
    { steps, evalEvery: 0, snapshotEvery: 0, checkpointEvery: 0, backend },
  );
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
    const rates = await blockRates(runDir, block);
    if (rates.length === 0) throw new Error(`${steps} steps are too few to time (at least ${2 * block})`);
    return { engine: pytorch ? engine : `ours (${engine})`, tokensPerS: summarize(rates) };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Our engine on WebGPU: `openGpu` names the adapter (and is closed again: the session opens its
 * own device), then the run trains on it — `steps` on a GPU, {@link SOFTWARE_STEPS} on a software
 * adapter. No adapter, and a failed run, come back as one line.
 */
export async function measureWebGpu(
  task: TaskName,
  steps: number,
  openGpu: () => Promise<OpenedGpu>,
): Promise<EnginesResult['webgpu']> {
  const opened = await openGpu();
  if (!opened.ok) return { skipped: opened.reason };
  opened.device.destroy();
  const { name, software } = opened.adapter;
  const n = software ? SOFTWARE_STEPS : steps;
  const block = software ? 1 : BLOCK;
  try {
    const r = await trainOnce(task, n, null, 'webgpu', block);
    return { engine: `ours (webgpu) on ${name}`, tokensPerS: r.tokensPerS, adapter: name, software, steps: n, block };
  } catch (e) {
    return { skipped: `training on ${name} failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * Trains `task`'s run for `steps` steps on our engine (WebAssembly, then WebGPU where `openGpu`
 * opens an adapter; null leaves WebGPU out) and on PyTorch (`python`, the trainer in
 * `trainerDir`) on each device it has; one line per finished engine through `log`.
 */
export async function measureEngines(
  task: TaskName,
  steps: number,
  python: string,
  trainerDir: string,
  log: (line: string) => void,
  openGpu: (() => Promise<OpenedGpu>) | null = NODE_PLATFORM.gpu ?? null,
): Promise<EnginesResult> {
  const env = await probeTorch(python, trainerDir);
  const devices: Pick<PytorchOptions, 'device' | 'bf16'>[] = [
    { device: 'cpu', bf16: false },
    ...(env.cuda
      ? [{ device: 'cuda' as const, bf16: false }, ...(env.bf16 ? [{ device: 'cuda' as const, bf16: true }] : [])]
      : []),
  ];
  const engines: EngineSpeed[] = [];
  let webgpu: EnginesResult['webgpu'] = { skipped: 'disabled' };
  for (const d of [null, ...devices]) {
    const r = await trainOnce(task, steps, d ? { python, nproc: 1, accumulate: 1, trainerDir, ...d } : null);
    log(`engines ${task}: ${r.engine} ${Math.round(r.tokensPerS.median)} tokens/s`);
    engines.push(r);
    if (d === null && openGpu) {
      webgpu = await measureWebGpu(task, steps, openGpu);
      log(
        'skipped' in webgpu
          ? `engines ${task}: no WebGPU — ${webgpu.skipped}`
          : `engines ${task}: ${webgpu.engine} ${Math.round(webgpu.tokensPerS.median)} tokens/s`,
      );
    }
  }
  return { task, steps, torch: describeEnv(env), engines, webgpu };
}
