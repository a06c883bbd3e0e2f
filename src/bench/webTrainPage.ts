/**
 * A page that plays VS Code's web extension host for the training worker, bundled for
 * Chromium by the browser test (test/browser/webTraining.test.ts) and the web benchmark
 * (benchWeb.ts): starts the web bundle dist/web/trainingWorker.js (its text is passed in)
 * from a `blob:` URL through the lab's own `startWebWorker`, answers its file calls from
 * memory playing `workspace.fs` (wholeFileFs.ts, as the web host's), trains a built-in
 * task's default run (or one with other choices: the WebGPU backend, a smaller model) and returns what it gave;
 * `inferInPage` then asks the web model worker about the trained run (decode, score, attention) on its backend.
 * Whether the page is cross-origin isolated — so whether helper threads can run — is up to
 * the headers it was served with.
 *
 * Leaves out: assertions and reporting (the test, the benchmark).
 */

import type { LabFs } from '../lab/files/labFs';
import { MemoryFs, workspaceLikeFs } from '../lab/files/memoryFs';
import { readRunJson, writeRunJson } from '../lab/runs/runFolder';
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
  return (await trainOnPageFs(source, task, helpers, steps, choices)).run;
}

/** The run folder of the page's one run. */
const RUN_DIR = 'vscode-userdata://test/User/globalStorage/attention-lab/runs/run-1';

/** {@link trainInPage}'s training, with the memory file system that holds the run folder ({@link RUN_DIR}). */
async function trainOnPageFs(
  source: string,
  task: TaskName,
  helpers: number | undefined,
  steps: number | undefined,
  choices: RunChoices,
): Promise<{ run: PageRun; fs: LabFs }> {
  // Files as the web host has them: memory playing `workspace.fs` under the whole-file layer (log parts and all).
  const fs = workspaceLikeFs(new MemoryFs());
  const worker = new TrainingWorker(startWebWorker(Promise.resolve(source), fs, 'training worker'));
  const spec = trainSpecOf({ kind: 'task', task }, steps === undefined ? choices : { ...choices, steps });
  const run = await trainInWorker(worker, fs, RUN_DIR, spec, helpers);
  const crossOriginIsolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  return { run: { ...run, crossOriginIsolated }, fs };
}

(globalThis as unknown as { trainInPage: typeof trainInPage }).trainInPage = trainInPage;

/** What the web model worker answered for one run, asked on the backend its run.json names. */
export interface PageInference {
  /** The greedy decode's token ids and the per-token log-probabilities of the scored text. */
  readonly decodeIds: readonly number[];
  readonly scoreLogprobs: readonly number[];
  /** Every attention map of the text, flattened in order: 8-bit sqrt8 codes (common/attentionCodec.ts). */
  readonly attention: readonly number[];
  /** Every number of every head's scores (computed from the float32 probabilities), in order. */
  readonly headScores: readonly number[];
  /** How many times the worker asked `navigator.gpu` for an adapter while answering. */
  readonly adapterRequests: number;
}

/** A model worker request answered by its `model/did<Kind>` (or failed by `model/didFail`). */
function ask(
  worker: ReturnType<typeof startWebWorker>,
  answers: Map<number, (msg: Record<string, unknown>) => void>,
  id: number,
  msg: Record<string, unknown>,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    answers.set(id, (a) => {
      if (a['type'] === 'model/didFail') reject(new Error(JSON.stringify(a['error'])));
      else resolve(a['output']);
    });
    worker.post({ ...msg, id });
  });
}

/**
 * Trains `task` on `choices` in the web training worker of `trainSource`, then asks the web model worker of
 * `modelSource` — started as the web extension host starts it, its source prefixed with a counter of
 * `navigator.gpu.requestAdapter` calls — for a greedy decode, a score and the attention of `text`: once on the backend
 * the run trained on, then again with run.json's backend set to wasm (the CPU), in a fresh worker.
 */
async function inferInPage(
  trainSource: string,
  modelSource: string,
  task: TaskName,
  steps: number,
  choices: RunChoices,
  prompt: string,
  text: string,
): Promise<{ trained: PageRun; asTrained: PageInference; onCpu: PageInference }> {
  const { run: trained, fs } = await trainOnPageFs(trainSource, task, undefined, steps, choices);
  const runDir = RUN_DIR;
  const counter =
    'if (self.navigator && self.navigator.gpu) { const gpu = self.navigator.gpu; ' +
    'const request = gpu.requestAdapter.bind(gpu); ' +
    "gpu.requestAdapter = (o) => { self.postMessage({ type: 'test/adapterRequested' }); return request(o); }; }\n";
  const infer = async (): Promise<PageInference> => {
    const worker = startWebWorker(Promise.resolve(counter + modelSource), fs, 'model worker');
    const answers = new Map<number, (msg: Record<string, unknown>) => void>();
    let adapterRequests = 0;
    const ready = new Promise<void>((resolve) =>
      worker.onMessage((m) => {
        const msg = m as Record<string, unknown>;
        if (msg['type'] === 'worker/ready') resolve();
        else if (msg['type'] === 'test/adapterRequested') adapterRequests++;
        else if (typeof msg['id'] === 'number' && msg['type'] !== 'model/didToken')
          answers.get(msg['id'] as number)?.(msg);
      }),
    );
    await ready;
    const params = {
      input: prompt,
      strategy: 'greedy',
      beam: 1,
      lengthPenalty: 0,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: 12,
      seed: 1,
    };
    const decoded = (await ask(worker, answers, 1, { type: 'model/decode', runDir, params })) as { ids: number[] };
    const scored = (await ask(worker, answers, 2, { type: 'model/score', runDir, source: null, text })) as {
      logprobs: number[];
    };
    const attended = (await ask(worker, answers, 3, { type: 'model/attend', runDir, text })) as {
      maps: { data: ArrayLike<number> }[];
      headScores?: { scores: Record<string, unknown> }[];
    };
    const numbers = (v: unknown): number[] =>
      typeof v === 'number' ? [v] : v !== null && typeof v === 'object' ? Object.values(v).flatMap(numbers) : [];
    await worker.terminate();
    return {
      decodeIds: decoded.ids,
      scoreLogprobs: scored.logprobs,
      attention: attended.maps.flatMap((m) => Array.from(m.data)),
      headScores: (attended.headScores ?? []).flatMap((h) => numbers(h.scores)),
      adapterRequests,
    };
  };
  const asTrained = await infer();
  const json = await readRunJson(fs, runDir);
  await writeRunJson(fs, runDir, { ...json, spec: { ...json.spec, backend: 'wasm' } });
  const onCpu = await infer();
  return { trained, asTrained, onCpu };
}

(globalThis as unknown as { inferInPage: typeof inferInPage }).inferInPage = inferInPage;
