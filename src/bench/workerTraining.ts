/**
 * One training run in a training worker, as the extension runs it — Node's worker thread or
 * a Web Worker, whichever `worker` is — and what it gave: the outcome, the threads and
 * backend it ran on, the last exact match, its log lines, the files it wrote, and its
 * throughput read back from metrics.jsonl: training tokens/s over the steps after the first
 * tenth (warm-up left out), whole and in ten windows (median, min, max), so evaluations,
 * checkpoints and snapshots count as a user waits for them. No Node API: the browser test's
 * page and the web benchmark's page bundle it for Chromium, the benchmark runs it on Node.
 *
 * Leaves out: starting the worker and the file system behind it (the callers).
 */

import type { LabFs } from '../lab/files/labFs';
import { exists, listNames } from '../lab/files/labFs';
import { readMetrics, readRunJson } from '../lab/runs/runFolder';
import { TrainingWorker } from '../lab/workers/trainingClient';
import type { RunOutcome } from '../lab/workers/trainingClient';
import type { StepMetrics, TrainSpec } from '../protocol/data';
import type { FromTrainingWorker } from '../protocol/trainingWorker';
import type { Stats } from './benchRun';
import { summarize } from './benchRun';

/** Windows the warm steps are cut into for the spread of tokens/s. */
const WINDOWS = 10;

/** What one training run in a worker gave. */
export interface WorkerTraining {
  readonly outcome: RunOutcome;
  /** WebAssembly threads the session trained on (null: it never started, or it trained on WebGPU). */
  readonly threads: number | null;
  readonly backend: string | null;
  /** Why `auto` chose that backend (null: a backend named outright, or it never started). */
  readonly backendChoice: string | null;
  /** The exact match of the last evaluation (null: none, or a decoder-only model). */
  readonly exactMatch: number | null;
  readonly logs: readonly string[];
  /** run.json's status at the end ('none': a run refused before its folder was written has none). */
  readonly status: string;
  /** The run folder's entries, sorted. */
  readonly files: readonly string[];
  /** Steps in metrics.jsonl. */
  readonly steps: number;
  /** The training loss of each logged step, in order. */
  readonly losses: readonly number[];
  /** Training tokens/s over the warm steps (0 when there are too few). */
  readonly tokensPerSec: number;
  /** Tokens/s in each of ten windows of the warm steps (null when there are too few). */
  readonly windows: Stats | null;
}

/**
 * Tokens/s from the first to the last of `steps` (the first one's own tokens not counted: its time is before the span).
 */
function rate(steps: readonly StepMetrics[]): number {
  const first = steps[0];
  const last = steps[steps.length - 1];
  if (!first || !last || steps.length < 2 || last.elapsedMs <= first.elapsedMs) return 0;
  return steps.slice(1).reduce((n, m) => n + m.tokens, 0) / ((last.elapsedMs - first.elapsedMs) / 1000);
}

/** The throughput of a run's logged steps: whole over the steps after the first tenth, and per window. */
export function warmThroughput(steps: readonly StepMetrics[]): { tokensPerSec: number; windows: Stats | null } {
  const warm = steps.slice(Math.floor(steps.length / 10));
  const size = Math.floor(warm.length / WINDOWS);
  const rates: number[] = [];
  // Windows share their edge step, so no step's time falls between two windows.
  for (let w = 0; size >= 2 && w < WINDOWS; w++) rates.push(rate(warm.slice(w * size, (w + 1) * size + 1)));
  return { tokensPerSec: rate(warm), windows: rates.length > 0 ? summarize(rates) : null };
}

/**
 * Trains `spec` into `runDir` of `fs` (the file system the worker writes through) in `worker`
 * on `helpers` helper threads (absent: the worker's default), waits for the end, ends the
 * worker, and reads back what {@link WorkerTraining} holds.
 */
export async function trainInWorker(
  worker: TrainingWorker,
  fs: LabFs,
  runDir: string,
  spec: TrainSpec,
  helpers?: number,
): Promise<WorkerTraining> {
  const events: FromTrainingWorker[] = [];
  worker.onMessage((m) => events.push(m));
  await worker.start(runDir, spec, false, null, null, null, helpers);
  const outcome = await worker.outcome;
  await worker.dispose();
  const start = events.find((e) => e.type === 'train/didStart');
  const evals = events.filter((e) => e.type === 'train/didEval');
  const last = evals[evals.length - 1];
  // A run refused before it started leaves no folder: nothing to read back.
  const started = await exists(fs, fs.join(runDir, 'run.json'));
  const { steps } = started ? await readMetrics(fs, runDir) : { steps: [] };
  return {
    outcome,
    threads: start?.type === 'train/didStart' ? (start.model.threads ?? null) : null,
    backend: start?.type === 'train/didStart' ? start.model.backend : null,
    backendChoice: start?.type === 'train/didStart' ? (start.model.backendChoice ?? null) : null,
    exactMatch: last?.type === 'train/didEval' ? (last.exactMatch ?? null) : null,
    logs: events.flatMap((e) => (e.type === 'train/didLog' ? [e.message] : [])),
    status: started ? (await readRunJson(fs, runDir)).status : 'none',
    files: started ? (await listNames(fs, runDir)).sort() : [],
    steps: steps.length,
    losses: steps.map((m) => m.loss),
    ...warmThroughput(steps),
  };
}
