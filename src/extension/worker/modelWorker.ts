/**
 * The extension's model worker (a `worker_threads` worker, bundled as dist/modelWorker.js):
 * answers decode, score, attention, export and speed-calibration requests so none of that
 * compute runs on the extension host's thread. Requests are validated on arrival and
 * answered one at a time, each with exactly one `model/did*` or `model/didFail` carrying
 * its id. Opened runs are cached and reopened when their checkpoint file changes.
 *
 * Leaves out: training (dist/worker.js does that) and any VS Code API.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MessagePort } from 'node:worker_threads';
import { parentPort } from 'node:worker_threads';
import { EngineError } from '../../engine/errors';
import { exportPytorch } from '../../lab/exportPytorch';
import type { OpenRun } from '../../lab/openRun';
import { openRun } from '../../lab/openRun';
import { playgroundDecode } from '../../lab/playground';
import { backendFor } from '../../lab/prepare';
import { RUN_FILES, readRunJson } from '../../lab/runFolder';
import type { HostToModelWorker, ModelWorkerToHost } from '../../protocol';
import { ProtocolError, validateHostToModelWorker } from '../../protocol';
import { attendText } from './attendText';
import { calibrate } from './calibrate';
import { scoreText } from './scoreText';
import { enableWasmRelaxedSimd } from '../../lab/wasmFlags';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

/** Open runs by folder, with the checkpoint's mtime they were opened at. */
type RunCache = Map<string, { mtimeMs: number; run: OpenRun }>;

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

function handle(msg: HostToModelWorker, opened: RunCache, post: (msg: ModelWorkerToHost, transfer?: ArrayBuffer[]) => void): void {
  const id = msg.id;
  switch (msg.type) {
    case 'model/decode': {
      const output = playgroundDecode(open(opened, msg.runDir), msg.params, (token, logprob) => post({ type: 'model/didToken', id, token, logprob }));
      post({ type: 'model/didDecode', id, output });
      return;
    }
    case 'model/score':
      post({ type: 'model/didScore', id, output: scoreText(open(opened, msg.runDir), msg.source, msg.text) });
      return;
    case 'model/attend': {
      const snapshot = attendText(open(opened, msg.runDir), msg.text);
      post({ type: 'model/didAttend', id, snapshot }, [...snapshot.maps.map((m) => m.data.buffer as ArrayBuffer), ...snapshot.masks.map((m) => m.data.buffer as ArrayBuffer)]);
      return;
    }
    case 'model/export':
      post({ type: 'model/didExport', id, output: exportPytorch(open(opened, msg.runDir).model, msg.outDir) });
      return;
    case 'model/calibrate':
      post({ type: 'model/didCalibrate', id, ...calibrate(msg.spec, msg.vocabSize, () => performance.now()) });
      return;
    default:
      msg satisfies never;
  }
}

/** Answers requests arriving on `port` until the worker is terminated. */
function serve(port: MessagePort): void {
  const opened: RunCache = new Map();
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
    try {
      handle(msg, opened, post);
    } catch (e) {
      const error = EngineError.is(e) ? e.toData() : { code: 'internal', message: `Internal error in the model worker: ${(e as Error)?.message ?? String(e)}` };
      post({ type: 'model/didFail', id: msg.id, error });
    }
  });
  post({ type: 'worker/ready' });
}

if (!parentPort) throw new Error('modelWorker.js must run in a worker thread');
serve(parentPort);
