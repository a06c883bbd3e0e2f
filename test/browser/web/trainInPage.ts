/**
 * The page side of the web training worker's browser test (bundled by webTraining.test.ts
 * for the browser): plays the web extension host — starts dist/web/trainingWorker.js from a
 * `blob:` URL through the lab's own `startWebWorker`, answers its file calls from a file
 * system in memory — trains a built-in task's default run, and returns what the test checks.
 *
 * Leaves out: assertions (the test).
 */

import { MemoryFs } from '../../../src/lab/files/memoryFs';
import { listNames } from '../../../src/lab/files/labFs';
import { readMetrics, readRunJson } from '../../../src/lab/runs/runFolder';
import { trainSpecOf } from '../../../src/lab/runs/runSpec';
import { TrainingWorker } from '../../../src/lab/workers/trainingHost';
import type { RunOutcome } from '../../../src/lab/workers/trainingHost';
import { startWebWorker } from '../../../src/lab/workers/webWorkers';
import type { TaskName } from '../../../src/protocol/data';
import type { WorkerToHost } from '../../../src/protocol/trainingWorker';

/** What one training in the page gave. */
export interface PageRun {
  readonly outcome: RunOutcome;
  readonly crossOriginIsolated: boolean;
  readonly threads: number | null;
  readonly backend: string | null;
  readonly exactMatch: number | null;
  readonly logs: readonly string[];
  readonly status: string;
  readonly files: readonly string[];
  readonly steps: number;
  /** Tokens per second over the steps after the first tenth (warm-up left out). */
  readonly tokensPerSec: number;
}

async function train(source: string, task: TaskName, helpers?: number, steps?: number): Promise<PageRun> {
  const fs = new MemoryFs();
  const runDir = 'vscode-userdata://test/User/globalStorage/attention-lab/runs/run-1';
  const worker = new TrainingWorker(startWebWorker(Promise.resolve(source), fs, 'training worker'));
  const events: WorkerToHost[] = [];
  worker.onMessage((m) => events.push(m));
  const spec = trainSpecOf({ kind: 'task', task }, steps === undefined ? {} : { steps });
  await worker.start(runDir, spec, false, null, null, helpers);
  const outcome = await worker.outcome;
  await worker.dispose();
  const start = events.find((e) => e.type === 'train/didStart');
  const evals = events.filter((e) => e.type === 'train/didEval');
  const last = evals[evals.length - 1];
  const { steps: logged } = await readMetrics(fs, runDir);
  const warm = logged.slice(Math.floor(logged.length / 10));
  const seconds = warm.length > 1 ? ((warm[warm.length - 1]?.elapsedMs ?? 0) - (warm[0]?.elapsedMs ?? 0)) / 1000 : 0;
  const tokens = warm.slice(1).reduce((n, m) => n + m.tokens, 0);
  return {
    outcome,
    crossOriginIsolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
    threads: start?.type === 'train/didStart' ? (start.model.threads ?? null) : null,
    backend: start?.type === 'train/didStart' ? start.model.backend : null,
    exactMatch: last?.type === 'train/didEval' ? last.exactMatch : null,
    logs: events.flatMap((e) => (e.type === 'train/didLog' ? [e.message] : [])),
    status: (await readRunJson(fs, runDir)).status,
    files: (await listNames(fs, runDir)).sort(),
    steps: logged.length,
    tokensPerSec: seconds > 0 ? tokens / seconds : 0,
  };
}

(globalThis as unknown as { trainInPage: typeof train }).trainInPage = train;
