/**
 * How long one training step of a configuration will take on this machine, measured
 * before anything is saved (the configure step shows it next to the parameter count and
 * memory). Real optimizer steps run on random tokens: first until two in a row take about
 * the same time (the first steps pay what is paid once — compiling and tiering up the
 * WebAssembly, starting helper threads, first touches of memory; in a fresh web worker the
 * first steps took 20× a later one, and an estimate of "≈ 5.5 s per step" became 0.25 s),
 * then for about a quarter of a second, of which the median step counts; on the threads training would get (the helpers
 * are waited for, up to a few
 * seconds, and the result says how many ran: a web page that is not cross-origin isolated
 * has one); their FLOP rate (the engine's own count: ≈ 6 FLOPs per parameter per token plus
 * attention, Kaplan et al. 2020 §2.1) then scales to the full batch. Models too large to
 * allocate casually are measured at their kind's small preset and scaled by FLOPs.
 *
 * With the WebGPU backend the steps run on the platform's device (`LabPlatform.gpu`), each awaiting
 * its loss readback as training does, and the result names the adapter.
 *
 * Leaves out: memory pressure of the real size.
 */

import type { ParallelRunner } from '../../engine/backends/wasm/parallel';
import type { ModelConfig } from '../../engine/config';
import { estimateModel } from '../../engine/models/estimate';
import type { Batch } from '../../engine/models/inputs';
import { Transformer } from '../../engine/models/transformer';
import { Rng } from '../../engine/rng';
import { Trainer } from '../../engine/train';
import { createWebGpuBackend } from '../../engine/backends/webgpu/webgpuBackend';
import type { TrainSpec } from '../../protocol/data';
import type { OpenedGpu } from '../platform/platform';
import type { TrainingDevice } from './trainingDevice';
import { openTrainingDevice } from './trainingDevice';
import { backendFor, buildOptimizer, optimizerConfig, resolveConfig } from '../runs/specModel';

/** Largest model measured at its own size. */
const MAX_MEASURED_PARAMS = 4_000_000;
/** Rows and positions of the measured batch. */
const PROBE_ROWS = 4;
const PROBE_LEN = 32;

/** Result of a calibration. */
export interface Calibration {
  readonly secondsPerStep: number;
  readonly flopsPerSec: number;
  readonly backend: string;
  /** Threads the steps ran on. */
  readonly threads: number;
}

/** Longest wait for the helper threads to start before measuring without them. */
const HELPERS_WAIT_MS = 3000;

/** The part of the WebAssembly backend that says whether its helpers run (the reference backend has none). */
interface Threaded {
  readonly threads?: number;
  threadsReady?(): boolean;
  dispose?(): void;
}

/**
 * Waits (letting the workers start) until the backend's helpers serve or the wait is over; returns the threads in use.
 */
async function helpersStarted(backend: Threaded, now: () => number): Promise<number> {
  const threads = backend.threads ?? 1;
  if (threads <= 1 || !backend.threadsReady) return 1;
  const end = now() + HELPERS_WAIT_MS;
  while (!backend.threadsReady() && now() < end) await new Promise((r) => setTimeout(r, 10));
  return backend.threadsReady() ? threads : 1;
}

function randomBatch(cfg: ModelConfig, B: number, T: number, rng: Rng): Batch {
  const ids = (n: number, vocab: number): Int32Array => Int32Array.from({ length: n }, () => 4 + rng.int(vocab - 4));
  const input = ids(B * T, cfg.vocabSize);
  const targets = ids(B * T, cfg.vocabSize);
  return cfg.kind === 'encoder-decoder'
    ? { B, T, input, targets, S: T, src: ids(B * T, cfg.srcVocabSize) }
    : { B, T, input, targets };
}

/** Most steps and milliseconds of the warm-up, and how close two in a row must be to end it. */
const MAX_WARMUP_STEPS = 10;
const MAX_WARMUP_MS = 20_000;
const STEADY_RATIO = 1.25;
/** Fewest and most timed steps. */
const MIN_TIMED_STEPS = 3;
const MAX_TIMED_STEPS = 50;

/**
 * Seconds of one `step` by the clock `now` (ms), without what is paid once: steps run until
 * two in a row are within STEADY_RATIO of each other (at most MAX_WARMUP_STEPS steps or
 * MAX_WARMUP_MS), untimed; then every step is timed for `budgetMs` (at least MIN_TIMED_STEPS, at
 * most MAX_TIMED_STEPS) and the median is the answer, so one slow step left over from the
 * warm-up, a collection or another process moves it no more than one fast one.
 */
export function timeStep(step: () => void, now: () => number, budgetMs: number): number {
  const timed = (): number => {
    const t = now();
    step();
    return now() - t;
  };
  const warmStart = now();
  let last = timed();
  for (let i = 1; i < MAX_WARMUP_STEPS && now() - warmStart < MAX_WARMUP_MS; i++) {
    const t = timed();
    const steady = Math.max(t, last) <= STEADY_RATIO * Math.min(t, last);
    last = t;
    if (steady) break;
  }
  const times: number[] = [];
  const t0 = now();
  do times.push(timed());
  while (times.length < MIN_TIMED_STEPS || (now() - t0 < budgetMs && times.length < MAX_TIMED_STEPS));
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median = times.length % 2 ? (times[mid] as number) : ((times[mid - 1] as number) + (times[mid] as number)) / 2;
  return Math.max(median, 1e-6) / 1000;
}

/** {@link timeStep} for a step that ends when its promise does (a WebGPU step awaits its loss readback). */
export async function timeStepAsync(
  step: () => Promise<unknown>,
  now: () => number,
  budgetMs: number,
): Promise<number> {
  const timed = async (): Promise<number> => {
    const t = now();
    await step();
    return now() - t;
  };
  const warmStart = now();
  let last = await timed();
  for (let i = 1; i < MAX_WARMUP_STEPS && now() - warmStart < MAX_WARMUP_MS; i++) {
    const t = await timed();
    const steady = Math.max(t, last) <= STEADY_RATIO * Math.min(t, last);
    last = t;
    if (steady) break;
  }
  const times: number[] = [];
  const t0 = now();
  do times.push(await timed());
  while (times.length < MIN_TIMED_STEPS || (now() - t0 < budgetMs && times.length < MAX_TIMED_STEPS));
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median = times.length % 2 ? (times[mid] as number) : ((times[mid - 1] as number) + (times[mid] as number)) / 2;
  return Math.max(median, 1e-6) / 1000;
}

/**
 * The device `spec` trains on (webgpu, or auto on a real GPU), opened from `gpu`; refused in one line
 * where none opens.
 */
async function calibrationGpu(
  spec: TrainSpec,
  gpu: (() => Promise<OpenedGpu>) | undefined,
): Promise<TrainingDevice['gpu']> {
  return (await openTrainingDevice(spec.backend, gpu)).gpu;
}

/**
 * Seconds per step of `spec` with a tokenizer of `vocabSize` ids, on the helper threads
 * `threads()` gives (the ones training would get), or on the device `gpu()` opens when the spec's
 * backend is webgpu (or auto on a real GPU: trainingDevice.ts). `now` is a millisecond clock (the
 * worker passes `performance.now`).
 */
export async function calibrate(
  spec: TrainSpec,
  vocabSize: number,
  now: () => number,
  threads: () => ParallelRunner | null,
  budgetMs = 250,
  gpu?: () => Promise<OpenedGpu>,
): Promise<Calibration> {
  const full = resolveConfig(spec, vocabSize);
  const rows = spec.training.batchSize;
  const len = Math.min(spec.training.seqLen, full.maxLen);
  const fullFlops = estimateModel(full, { maxBatch: rows, maxLen: len }).trainFlopsPerToken * rows * len;
  const big = estimateModel(full, { maxBatch: 1, maxLen: Math.min(len, PROBE_LEN) }).params > MAX_MEASURED_PARAMS;
  const probeSpec: TrainSpec = big ? { ...spec, model: { ...spec.model, preset: 'small', overrides: {} } } : spec;
  const cfg = big ? resolveConfig(probeSpec, Math.min(vocabSize, 2000)) : full;
  const T = Math.min(len, PROBE_LEN);
  const B = Math.min(rows, PROBE_ROWS);
  const opened = await calibrationGpu(spec, gpu);
  const onGpu = opened ? createWebGpuBackend(opened.device) : null;
  const backend = onGpu ?? backendFor(spec.backend, threads);
  const ran = onGpu ? 1 : await helpersStarted(backend as Threaded, () => Date.now());
  const model = new Transformer(cfg, {
    maxBatch: B,
    maxLen: T,
    ...(cfg.kind === 'encoder-decoder' ? { maxSrcLen: T } : {}),
  }).bind(backend);
  const rng = new Rng(1);
  model.initialize(rng);
  const trainer = new Trainer(model, buildOptimizer(model, optimizerConfig(probeSpec, cfg)), rng);
  const batch = randomBatch(cfg, B, T, rng);
  let seconds: number;
  if (onGpu && opened) {
    onGpu.uploadAll();
    try {
      seconds = await timeStepAsync(() => trainer.stepAsync(batch, onGpu), now, budgetMs);
    } finally {
      opened.device.destroy();
    }
  } else seconds = timeStep(() => trainer.step(batch), now, budgetMs);
  const probeFlops = estimateModel(cfg, { maxBatch: B, maxLen: T }).trainFlopsPerToken * B * T;
  const flopsPerSec = probeFlops / seconds;
  (backend as Threaded).dispose?.(); // its helper threads end with it
  const name = opened ? `webgpu (${opened.adapter.name})` : backend.name;
  return { secondsPerStep: fullFlops / flopsPerSec, flopsPerSec, backend: name, threads: ran };
}
