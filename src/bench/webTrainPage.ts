/**
 * A page that plays VS Code's web extension host for the training worker, bundled for
 * Chromium by the browser test (test/browser/webTraining.test.ts) and the web benchmark
 * (benchWeb.ts): starts the web bundle dist/web/trainingWorker.js (its text is passed in)
 * from a `blob:` URL through the lab's own `startWebWorker`, answers its file calls from
 * memory playing `workspace.fs` (wholeFileFs.ts, as the web host's), trains a built-in
 * task's default run (or one with other choices: the WebGPU backend, a smaller model) and returns what it gave.
 * Whether the page is cross-origin isolated — so whether helper threads can run — is up to
 * the headers it was served with.
 *
 * Leaves out: assertions and reporting (the test, the benchmark).
 */

import { MemoryFs, workspaceLikeFs } from '../lab/files/memoryFs';
import type { RunChoices } from '../lab/runs/runSpec';
import { trainSpecOf } from '../lab/runs/runSpec';
import { TrainingWorker } from '../lab/workers/trainingClient';
import { startWebWorker } from '../lab/workers/startWorker.web';
import type { TaskName } from '../protocol/data';
import type { WorkerTraining } from './workerTraining';
import { trainInWorker } from './workerTraining';

/** What one training in the page gave. */
export interface PageRun extends WorkerTraining {
  readonly crossOriginIsolated: boolean;
}

/**
 * Trains `task`'s default run (`steps` steps when given, and `choices` over the defaults: a backend, a smaller model)
 * in the web training worker of `source`, on `helpers` helper threads.
 */
async function trainInPage(
  source: string,
  task: TaskName,
  helpers?: number,
  steps?: number,
  choices: RunChoices = {},
): Promise<PageRun> {
  // Files as the web host has them: memory playing `workspace.fs` under the whole-file layer (log parts and all).
  const fs = workspaceLikeFs(new MemoryFs());
  const runDir = 'vscode-userdata://test/User/globalStorage/attention-lab/runs/run-1';
  const worker = new TrainingWorker(startWebWorker(Promise.resolve(source), fs, 'training worker'));
  const spec = trainSpecOf({ kind: 'task', task }, steps === undefined ? choices : { ...choices, steps });
  const run = await trainInWorker(worker, fs, runDir, spec, helpers);
  return {
    ...run,
    crossOriginIsolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
  };
}

(globalThis as unknown as { trainInPage: typeof trainInPage }).trainInPage = trainInPage;
