/**
 * The extension's model worker (a `worker_threads` worker, bundled as dist/modelWorker.js):
 * answers decode, score, attention (and its layers one at a time), export, import, speed-calibration, evaluate-on-files,
 * logit-lens and head-ablation requests
 * so none of that compute runs on the extension host's thread. Each job is written once in
 * the lab (lab/inference/ for decode, score, attention, lens and ablation; lab/evaluation/evaluateFiles.ts,
 * lab/interop/exportPytorch.ts, lab/training/calibrate.ts), where the CLI's commands call it too: this file
 * opens runs, calls the job and posts what it returns. Requests are validated on arrival and answered one at a time, in order
 * (an evaluation reads its files before it computes, and the next request waits for it),
 * each with exactly one `model/did*` or `model/didFail` carrying its id. Opened runs are
 * cached and reopened when their checkpoint file changes. An evaluation polls its request's
 * shared cancel flag between batches.
 *
 * Leaves out: training (dist/worker.js does that) and any VS Code API.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MessagePort } from 'node:worker_threads';
import { parentPort } from 'node:worker_threads';
import { EngineError } from '../../engine/errors';
import { DiskFullError } from '../runs/atomicFile';
import { calibrate } from '../training/calibrate';
import { EvaluationCancelled, evaluateFiles } from '../evaluation/evaluateFiles';
import { CancelledError } from '../data/documentData';
import { exportRun } from '../interop/exportFolder';
import { compareHeadsOff } from '../inference/ablate';
import { importCheckpoint } from '../interop/importCheckpoint';
import type { TextAttention } from '../inference/attend';
import { attendText } from '../inference/attend';
import { decodeText } from '../inference/decode';
import type { LensInput } from '../inference/lens';
import { logitLens } from '../inference/lens';
import { scoreText } from '../inference/score';
import type { OpenRun } from '../runs/openRun';
import { openRun } from '../runs/openRun';
import { backendFor } from '../training/prepare';
import { RUN_FILES, readRunJson } from '../runs/runFolder';
import { enableWasmRelaxedSimd } from './wasmFlags';
import type { LensInputData } from '../../protocol/analysis';
import type { ErrorData } from '../../protocol/data';
import type { HostToModelWorker, ModelWorkerToHost } from '../../protocol/modelWorker';
import { validateHostToModelWorker } from '../../protocol/modelWorker';
import { ProtocolError } from '../../protocol/schema';
import { SnapshotDrawer, drawPendingSnapshots } from '../pytorch/follow';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

/** Open runs by folder, with the checkpoint's mtime they were opened at and the attention of the last text asked for. */
type RunCache = Map<string, { mtimeMs: number; run: OpenRun; attention?: { text: string; run: OpenRun; result: TextAttention } }>;

function open(opened: RunCache, runDir: string): OpenRun {
  const file = path.join(runDir, RUN_FILES.model);
  let mtimeMs: number;
  try {
    mtimeMs = fs.statSync(file).mtimeMs;
  } catch {
    readRunJson(runDir); // says clearly when the folder is not a run at all
    throw new EngineError('input/invalid', `${path.basename(runDir)} has no trained model yet (no ${RUN_FILES.model}); train it for a few steps first.`);
  }
  const hit = opened.get(runDir);
  if (hit && hit.mtimeMs === mtimeMs) return hit.run;
  const run = openRun(runDir, backendFor(readRunJson(runDir).spec.backend), 4);
  opened.set(runDir, { mtimeMs, run });
  return run;
}

/**
 * The attention of `text` with a run's model: the last one computed for the run when it is
 * of the same text and checkpoint (its whole maps serve the layers the dashboard opens one at
 * a time), else computed now and kept in its place. Maps are posted as copies (never
 * transferred), so what is kept stays whole.
 */
function attention(opened: RunCache, runDir: string, text: string): TextAttention {
  const r = open(opened, runDir);
  const entry = opened.get(runDir);
  const kept = entry?.attention;
  if (kept && kept.text === text && kept.run === r) return kept.result;
  const result = attendText(r, text);
  if (entry) entry.attention = { text, run: r, result };
  return result;
}

async function handle(msg: HostToModelWorker, opened: RunCache, post: (msg: ModelWorkerToHost, transfer?: ArrayBuffer[]) => void): Promise<void> {
  const id = msg.id;
  switch (msg.type) {
    case 'model/decode': {
      const onToken = (token: string, logprob: number): void => post({ type: 'model/didToken', id, token, logprob });
      const { output } = decodeText(open(opened, msg.runDir), msg.params, { attention: true, onToken });
      post({ type: 'model/didDecode', id, output });
      return;
    }
    case 'model/score':
      post({ type: 'model/didScore', id, output: scoreText(open(opened, msg.runDir), msg.source, msg.text).output });
      return;
    case 'model/attend': {
      const { snapshot } = attention(opened, msg.runDir, msg.text);
      post({ type: 'model/didAttend', id, snapshot });
      return;
    }
    case 'model/attendLayer': {
      const map = attention(opened, msg.runDir, msg.text).full.find((m) => m.stack === msg.stack && m.layer === msg.layer);
      if (!map) throw new EngineError('input/invalid', `The model has no ${msg.stack} layer ${msg.layer + 1}.`);
      post({ type: 'model/didAttendLayer', id, map });
      return;
    }
    case 'model/export': {
      const { dir, files, tensors, warnings } = exportRun(open(opened, msg.runDir), msg.outDir, { force: msg.force });
      post({ type: 'model/didExport', id, output: { dir, files: [...files], tensors, warnings: [...warnings] } });
      return;
    }
    case 'model/calibrate':
      post({ type: 'model/didCalibrate', id, ...calibrate(msg.spec, msg.vocabSize, () => performance.now()) });
      return;
    case 'model/evaluateFiles': {
      const cancel = msg.cancel;
      let posted = -Infinity;
      const output = await evaluateFiles(open(opened, msg.runDir), msg.data, {
        maxPairs: msg.maxPairs,
        decoding: msg.decoding,
        tokenize: msg.tokenize,
        onProgress: (done, total) => {
          // At most ten a second: a large test set is thousands of batches.
          if (done < total && performance.now() - posted < 100) return;
          posted = performance.now();
          post({ type: 'model/didProgress', id, done, total });
        },
        cancelled: () => Atomics.load(cancel, 0) !== 0,
      });
      post({ type: 'model/didEvaluateFiles', id, output });
      return;
    }
    case 'model/lens':
      post({ type: 'model/didLens', id, output: logitLens(open(opened, msg.runDir), lensInput(msg.input), { topK: msg.topK, fit: msg.fit }) });
      return;
    case 'model/drawSnapshots': {
      const runDir = msg.runDir;
      post({ type: 'model/didDrawSnapshots', id, drawn: drawPendingSnapshots(runDir, () => new SnapshotDrawer(runDir, backendFor(readRunJson(runDir).spec.backend))) });
      return;
    }
    case 'model/ablate':
      post({ type: 'model/didAblate', id, output: compareHeadsOff(open(opened, msg.runDir), lensInput(msg.input), msg.off, { topK: msg.topK, fit: msg.fit }) });
      return;
    case 'model/import': {
      const cancel = msg.cancel;
      let posted = -Infinity;
      const res = await importCheckpoint({ from: msg.from, out: msg.outDir, ...(msg.heads === undefined ? {} : { heads: msg.heads }) }, {
        onProgress: (p) => {
          if (p.done < p.total && performance.now() - posted < 100) return; // at most ten a second
          posted = performance.now();
          post({ type: 'model/didProgress', id, done: p.done, total: p.total });
        },
        isCancelled: () => Atomics.load(cancel, 0) !== 0,
      });
      const { runDir, layout, layoutText, modelFile, params, tensors, tokenizer, notes } = res;
      post({ type: 'model/didImport', id, output: { runDir, layout, layoutText, modelFile, params, tensors, tokenizer, notes: [...notes] } });
      return;
    }
    default:
      msg satisfies never;
  }
}

/** The lab's lens input of a request's. */
function lensInput(input: LensInputData): LensInput {
  if (input.kind === 'decoder-only') return { prompt: input.prompt };
  return input.tgt === undefined ? { src: input.src } : { src: input.src, tgt: input.tgt };
}

/** The error a failed request is answered with. */
function errorOf(e: unknown): ErrorData {
  if (EngineError.is(e)) return e.toData();
  if (DiskFullError.is(e)) return { code: e.code, message: e.message };
  if (e instanceof EvaluationCancelled || e instanceof CancelledError) return { code: 'cancelled', message: e.message };
  return { code: 'internal', message: `Internal error in the model worker: ${(e as Error)?.message ?? String(e)}` };
}

/** Answers requests arriving on `port` until the worker is terminated. */
function serve(port: MessagePort): void {
  const opened: RunCache = new Map();
  let queue: Promise<void> = Promise.resolve(); // requests run one after another
  const post = (msg: ModelWorkerToHost, transfer: ArrayBuffer[] = []): void => port.postMessage(msg, transfer);
  port.on('message', (raw: unknown) => {
    let msg: HostToModelWorker;
    try {
      msg = validateHostToModelWorker(raw);
    } catch (e) {
      const id = typeof (raw as { id?: unknown })?.id === 'number' ? (raw as { id: number }).id : 0;
      post({ type: 'model/didFail', id, error: { code: 'protocol', message: `The model worker got an invalid request (${e instanceof ProtocolError ? e.message : String(e)}).` } });
      return;
    }
    queue = queue
      .then(async () => {
        try {
          await handle(msg, opened, post);
        } catch (e) {
          post({ type: 'model/didFail', id: msg.id, error: errorOf(e) });
        }
      })
      .catch(() => undefined); // only posting the failure itself lands here: nothing can carry it, so keep serving
  });
  post({ type: 'worker/ready' });
}

if (!parentPort) throw new Error('modelWorker.js must run in a worker thread');
serve(parentPort);
