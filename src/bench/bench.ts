/**
 * `attention-lab bench` / `npm run bench`: how fast our engine trains, decodes and
 * multiplies matrices on this machine, next to PyTorch (scripts/pytorch/bench.py, run in the
 * same invocation when `/usr/bin/python3 -c 'import torch'` works) and TensorFlow.js (its
 * wasm backend, when installed), plus how responsive the main thread stays while a run
 * trains in a worker thread, and our engine beside the PyTorch engine training the same run
 * (benchEngines.ts). Every figure is median, min and max over its samples.
 *
 * Work is sequential, so no two measurements compete for the cores, and interleaved — each
 * config on ours, then the same config on PyTorch; our matmul, then PyTorch's — so on a
 * machine shared with other work both sides see the same load. Each (config, thread count)
 * gets a fresh backend, disposed afterwards.
 *
 * Leaves out: formatting (benchReport.ts) and argument parsing (src/cli/bench.ts; `npm run bench` runs that command).
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { Backend } from '../engine/backend';
import { createReferenceBackend } from '../engine/backends/reference';
import type { WasmBackend } from '../engine/backends/wasm/wasmBackend';
import { createWasmBackend } from '../engine/backends/wasm/wasmBackend';
import type { BenchConfigName } from './benchConfigs';
import { BENCH_CONFIG_NAMES, benchConfig } from './benchConfigs';
import type { Stats } from './benchRun';
import { benchTrainer, measureDecode, measureMatmul, measureTraining } from './benchRun';
import type { TorchResult } from './benchTorch';
import { TORCH_PYTHON, runTorchBench, torchUnavailableReason } from './benchTorch';
import type { EnginesResult } from './benchEngines';
import { measureEngines } from './benchEngines';
import type { BenchWorkerData, BenchWorkerMessage } from './benchWorker';
import { createWasmThreads } from '../lab/platform/threads.node';
import { NODE_PLATFORM } from '../lab/platform/platform.node';
import type { ScoresCost } from './benchScores';
import { measureScoresCost } from './benchScores';

/** Options of {@link runBench}. */
export interface BenchOptions {
  /** Configs to measure (default: all four). */
  readonly configs?: readonly BenchConfigName[];
  /** Thread counts to measure (default: 1 and every core). */
  readonly threads?: readonly number[];
  /** Matrix sizes for GFLOP/s (default 64, 128, 256, 512, 1024). */
  readonly matmulSizes?: readonly number[];
  /** Fewer steps and shorter timings: a smoke run, not numbers to report. */
  readonly quick?: boolean;
  /** Run the PyTorch comparison when available (default true). */
  readonly pytorch?: boolean;
  /** scripts/pytorch/bench.py (default: under the working directory). */
  readonly pytorchScript?: string;
  /** The bundled benchWorker.ts for the event-loop measurement; without it that part is skipped. */
  readonly workerScript?: string | null;
  /** The bundled benchTfjsMain.ts for the TF.js comparison; without it that part is skipped. */
  readonly tfjsScript?: string | null;
  /** @tensorflow/tfjs-backend-wasm's dist folder (default: under the working directory's node_modules). */
  readonly tfjsWasmDir?: string;
  /** Measure what head scores cost training (default true). */
  readonly scores?: boolean;
  /** The shipped PyTorch trainer (dist/pytorch/), for the engines on the same run; without it that part is skipped. */
  readonly trainerDir?: string | null;
  /** The Python of the engines' PyTorch side (default /usr/bin/python3, as the rest of the comparison). */
  readonly python?: string;
  /** Called with one line per finished measurement. */
  readonly onProgress?: (line: string) => void;
}

/** A part that did not run, and why. */
export interface Skipped {
  readonly skipped: string;
}

/** Our figures for one config, by thread count ("1", "2", …). */
export interface OurConfigResult {
  readonly train: Readonly<Record<string, Stats>>;
  readonly decode: Readonly<Record<string, Stats>>;
}

/** Main-thread responsiveness while a run trains in a worker. */
export interface EventLoopResult {
  readonly config: BenchConfigName;
  readonly threads: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
  /** The worker's training speed meanwhile. */
  readonly trainTokensPerS: number;
}

/** Everything one benchmark run measured. */
export interface BenchResult {
  readonly machine: {
    readonly cpu: string;
    readonly cores: number;
    readonly node: string;
    readonly v8: string;
    /** 1-minute load average before and after: other processes on the cores make every figure noisier. */
    readonly loadAverage: readonly [number, number];
  };
  /** 'wasm' (SIMD) or 'reference' where WebAssembly SIMD is unavailable. */
  readonly backend: string;
  readonly threads: readonly number[];
  readonly configs: Readonly<Partial<Record<BenchConfigName, OurConfigResult>>>;
  /** threads → size → GFLOP/s. */
  readonly matmul: Readonly<Record<string, Readonly<Record<string, Stats>>>>;
  readonly eventLoop: EventLoopResult | Skipped;
  readonly pytorch: TorchResult | Skipped;
  readonly tfjs: { readonly backend: string; readonly train: Stats } | Skipped;
  /** Training tokens/s with head scores on vs off at the default snapshot cadence, per task. */
  readonly headScores: readonly ScoresCost[] | Skipped;
  /** Our engine and the PyTorch engine (each device) training the same run, per task. */
  readonly engines: readonly EnginesResult[] | Skipped;
}

const now = (): number => performance.now();

/** A backend with `threads` threads (wasm where available), and a promise for when its helpers serve. */
async function backendWith(threads: number): Promise<Backend> {
  const runner = threads > 1 ? createWasmThreads(threads - 1) : null;
  const wasm = createWasmBackend({ runner });
  if (!wasm) {
    runner?.dispose();
    return createReferenceBackend();
  }
  if (runner) await runner.whenReady();
  return wasm;
}

/** The backend's name, and for wasm whether its kernels use fused multiply-add (relaxed SIMD). */
function describeBackend(backend: Backend): string {
  const fma = (backend as Partial<WasmBackend>).fma;
  if (fma === undefined) return backend.name;
  return fma
    ? `${backend.name} (SIMD with fused multiply-add)`
    : `${backend.name} (SIMD without fused multiply-add: relaxed SIMD unavailable)`;
}

function release(backend: Backend): void {
  (backend as Partial<WasmBackend>).dispose?.();
}

function steps(name: BenchConfigName, quick: boolean): { warmup: number; timed: number; decodes: number } {
  const big = name === 'base-encdec';
  if (quick) return { warmup: 1, timed: big ? 2 : 3, decodes: 1 };
  return { warmup: big ? 2 : 3, timed: big ? 5 : 20, decodes: big ? 1 : 3 };
}

/** Our training and decoding figures for one config at each thread count. */
async function measureConfig(
  name: BenchConfigName,
  threads: readonly number[],
  quick: boolean,
  log: (s: string) => void,
): Promise<{ result: OurConfigResult; backend: string }> {
  const cfg = benchConfig(name);
  const s = steps(name, quick);
  const train: Record<string, Stats> = {};
  const decode: Record<string, Stats> = {};
  let backendName = 'reference';
  for (const t of threads) {
    const backend = await backendWith(t);
    backendName = describeBackend(backend);
    try {
      const trainer = benchTrainer(cfg, backend);
      train[t] = measureTraining(trainer, cfg, s.warmup, s.timed, now, quick ? 300 : 1500);
      decode[t] = measureDecode(trainer, cfg, backend, s.decodes, now);
    } finally {
      release(backend);
    }
    log(
      `ours ${name} ${t} thread(s): ${Math.round(train[t]!.median)} tokens/s, decode ` +
        `${decode[t]!.median.toFixed(3)} ms/token`,
    );
  }
  return { result: { train, decode }, backend: backendName };
}

/** Our matmul GFLOP/s at each size and thread count, the thread counts taking turns (see measureMatmul). */
async function measureOurMatmul(
  threads: readonly number[],
  sizes: readonly number[],
  quick: boolean,
  log: (s: string) => void,
): Promise<Record<string, Record<string, Stats>>> {
  const matmul: Record<string, Record<string, Stats>> = {};
  const backends: Backend[] = [];
  try {
    for (const t of threads) backends.push(await backendWith(t));
    for (const t of threads) matmul[t] = {};
    for (const n of sizes) {
      const stats = measureMatmul(backends, n, quick ? 0.15 : 0.6, now);
      threads.forEach((t, i) => (matmul[t]![n] = stats[i] as Stats));
    }
  } finally {
    backends.forEach(release);
  }
  for (const t of threads)
    log(
      `ours matmul ${t} thread(s): ${sizes.map((n) => `${n}: ${matmul[t]![n]!.median.toFixed(1)}`).join(', ')} GFLOP/s`,
    );
  return matmul;
}

/**
 * PyTorch's side, run piece by piece right after ours (config by config, then matmul) so
 * both see the same load on a shared machine. Collects into one TorchResult.
 */
class TorchSide {
  private result: {
    torchVersion: string;
    blas: string | null;
    configs: Record<string, TorchResult['configs'][string]>;
    matmul: TorchResult['matmul'];
  } | null = null;
  private failure: string | null;

  private constructor(
    private readonly script: string,
    private readonly threads: readonly number[],
    private readonly quick: boolean,
    failure: string | null,
  ) {
    this.failure = failure;
  }

  /** Checks `/usr/bin/python3 -c 'import torch'` and the script (unless disabled). */
  static async open(options: BenchOptions, threads: readonly number[], quick: boolean): Promise<TorchSide> {
    const script = options.pytorchScript ?? path.resolve('scripts/pytorch/bench.py');
    if (options.pytorch === false) return new TorchSide(script, threads, quick, 'disabled');
    const why = await torchUnavailableReason();
    if (why) return new TorchSide(script, threads, quick, `PyTorch is not available: ${why}`);
    if (!existsSync(script))
      return new TorchSide(script, threads, quick, `the PyTorch benchmark script ${script} does not exist`);
    return new TorchSide(script, threads, quick, null);
  }

  /** Runs one piece (a config, or the matmul sizes when config is null); a failure ends the comparison. */
  async run(config: BenchConfigName | null, log: (s: string) => void): Promise<void> {
    if (this.failure !== null) return;
    log(`PyTorch ${config ?? 'matmul'}…`);
    try {
      const r = await runTorchBench(this.script, config ? [config] : [], this.threads, this.quick, config === null);
      this.result ??= { torchVersion: r.torchVersion, blas: r.blas, configs: {}, matmul: {} };
      Object.assign(this.result.configs, r.configs);
      if (config === null) this.result.matmul = r.matmul;
    } catch (e) {
      this.failure = e instanceof Error ? e.message : String(e);
    }
  }

  outcome(): TorchResult | Skipped {
    if (this.failure !== null) return { skipped: this.failure };
    return this.result ?? { skipped: 'nothing was measured' };
  }
}

/** Trains in a worker thread (all threads) while sampling this thread's event-loop delay. */
function measureEventLoop(workerScript: string, threads: number, seconds: number): Promise<EventLoopResult> {
  const config: BenchConfigName = 'tiny-decoder';
  const data: BenchWorkerData = { config, helpers: threads - 1, seconds };
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerScript, { workerData: data });
    worker.on('message', (m: BenchWorkerMessage) => {
      if (m.type === 'started') histogram.enable();
      else if (m.type === 'failed') reject(new Error(m.message));
      else {
        histogram.disable();
        resolve({
          config,
          threads,
          p99Ms: histogram.percentile(99) / 1e6,
          maxMs: histogram.max / 1e6,
          meanMs: histogram.mean / 1e6,
          trainTokensPerS: m.tokensPerS,
        });
      }
    });
    worker.on('error', reject);
    worker.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the benchmark worker exited with code ${code}`));
    });
  });
}

function runTfjs(
  script: string,
  wasmDir: string,
  quick: boolean,
): Promise<{ backend: string; train: Stats } | Skipped> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [script, wasmDir, quick ? '1' : '2', quick ? '3' : '6'],
      { timeout: 20 * 60_000 },
      (err, stdout) => {
        try {
          const r = JSON.parse(String(stdout).trim().split('\n').pop() ?? '') as {
            backend?: string;
            train?: Stats;
            skipped?: string;
          };
          if (r.backend && r.train) resolve({ backend: r.backend, train: r.train });
          else resolve({ skipped: r.skipped ?? 'TF.js printed no result' });
        } catch {
          resolve({ skipped: `TF.js run failed${err ? `: ${err.message}` : ''}` });
        }
      },
    );
  });
}

/** Runs the benchmark (minutes; see BenchOptions.quick for a smoke run). */
export async function runBench(options: BenchOptions = {}): Promise<BenchResult> {
  const log = options.onProgress ?? ((): void => undefined);
  const loadBefore = loadavg()[0] ?? 0;
  const cores = availableParallelism();
  const threads = [...new Set(options.threads ?? [1, cores])].filter((t) => t >= 1).sort((a, b) => a - b);
  const configs = options.configs ?? BENCH_CONFIG_NAMES;
  const quick = options.quick ?? false;
  const torch = await TorchSide.open(options, threads, quick);
  const ours: Partial<Record<BenchConfigName, OurConfigResult>> = {};
  let backend = 'reference';
  for (const name of configs) {
    const r = await measureConfig(name, threads, quick, log);
    ours[name] = r.result;
    backend = r.backend;
    await torch.run(name, log);
  }
  const matmul = await measureOurMatmul(threads, options.matmulSizes ?? [64, 128, 256, 512, 1024], quick, log);
  await torch.run(null, log);

  const maxThreads = threads[threads.length - 1] ?? 1;
  let eventLoop: EventLoopResult | Skipped = {
    skipped: 'no worker script (run through npm run bench or pass workerScript)',
  };
  if (options.workerScript) {
    try {
      eventLoop = await measureEventLoop(options.workerScript, maxThreads, quick ? 2 : 5);
      log(`event loop while training in a worker: p99 ${eventLoop.p99Ms.toFixed(1)} ms`);
    } catch (e) {
      eventLoop = { skipped: `the training worker failed: ${e instanceof Error ? e.message : String(e)}` };
    }
  }

  let tfjs: { backend: string; train: Stats } | Skipped = {
    skipped: 'no TF.js script (run through npm run bench or pass tfjsScript)',
  };
  if (options.tfjsScript) {
    log('running TensorFlow.js (wasm backend)…');
    tfjs = await runTfjs(
      options.tfjsScript,
      options.tfjsWasmDir ?? path.resolve('node_modules/@tensorflow/tfjs-backend-wasm/dist'),
      quick,
    );
  }

  let headScores: readonly ScoresCost[] | Skipped = { skipped: 'disabled' };
  if (options.scores !== false) {
    const costs: ScoresCost[] = [];
    try {
      for (const task of ['reverse', 'induction'] as const) {
        log(`training ${task} with head scores on and off, taking turns…`);
        const c = await measureScoresCost(task, quick ? 2 : 6, now);
        costs.push(c);
        log(
          `head scores ${task}: on ${Math.round(c.on.median)} tokens/s, off ` +
            `${Math.round(c.off.median)} tokens/s, on/off ${c.ratio.median.toFixed(3)}`,
        );
      }
      headScores = costs;
    } catch (e) {
      headScores = { skipped: `a training session failed: ${e instanceof Error ? e.message : String(e)}` };
    }
  }

  const engines = await measureAllEngines(options, quick, log);
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return {
    machine: {
      cpu,
      cores,
      node: process.versions.node,
      v8: process.versions.v8,
      loadAverage: [loadBefore, loadavg()[0] ?? 0],
    },
    backend,
    threads,
    configs: ours,
    matmul,
    eventLoop,
    pytorch: torch.outcome(),
    tfjs,
    headScores,
    engines,
  };
}

/** The engines on the same run, per task (benchEngines.ts). */
async function measureAllEngines(
  options: BenchOptions,
  quick: boolean,
  log: (s: string) => void,
): Promise<readonly EnginesResult[] | Skipped> {
  if (options.pytorch === false) return { skipped: 'disabled' };
  if (!options.trainerDir) return { skipped: 'no trainer (run through npm run bench or pass trainerDir)' };
  const results: EnginesResult[] = [];
  // A software WebGPU adapter takes seconds a step: it is timed on the first run only.
  let software: string | null = null;
  try {
    for (const task of ['induction', 'reverse'] as const) {
      log(`training the ${task} run on each engine…`);
      const python = options.python ?? TORCH_PYTHON;
      const openGpu = software === null ? NODE_PLATFORM.gpu : undefined;
      const r = await measureEngines(task, quick ? 30 : 120, python, options.trainerDir, log, openGpu ?? null);
      const gpu = r.webgpu;
      if (!('skipped' in gpu) && gpu.software) software = `${gpu.adapter}, on the ${task} run`;
      results.push(
        openGpu || software === null
          ? r
          : { ...r, webgpu: { skipped: `the software adapter is timed once (${software}), not on every run` } },
      );
    }
  } catch (e) {
    return { skipped: e instanceof Error ? e.message : String(e) };
  }
  return results;
}
