/**
 * The training worker's entry point (a `worker_threads` worker): validates each command
 * from its host, runs one session (our engine's, or the PyTorch engine's, which it follows
 * from here while the trainer runs as a child process), and posts protocol notifications back. Training never
 * runs on the host's thread, so an editor or a terminal stays responsive.
 */

import { parentPort } from 'node:worker_threads';
import type { WorkerToHost } from '../../protocol/trainingWorker';
import { ProtocolError } from '../../protocol/schema';
import { validateHostToWorker } from '../../protocol/trainingWorker';
import { runPytorchSession } from '../pytorch/pytorchSession';
import { runSession } from '../training/session';
import { SessionControl } from '../training/sessionControl';
import { enableWasmRelaxedSimd } from './wasmFlags';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

const port = parentPort;
if (!port) throw new Error('the training worker must run in a worker thread (dist/worker.js)');

const control = new SessionControl();
let started = false;

function post(msg: WorkerToHost, transfer?: ArrayBuffer[]): void {
  port?.postMessage(msg, transfer ?? []);
}

port.on('message', (raw: unknown) => {
  let msg;
  try {
    msg = validateHostToWorker(raw);
  } catch (e) {
    const message = e instanceof ProtocolError ? e.message : String(e);
    post({ type: 'train/didLog', level: 'warn', message: `Ignored an invalid command: ${message}` });
    return;
  }
  switch (msg.type) {
    case 'train/start':
      if (started) {
        post({ type: 'train/didLog', level: 'warn', message: 'A run is already training in this worker; start ignored.' });
        return;
      }
      started = true;
      // PyTorch trains in a child process this worker follows; ours trains here.
      void (msg.pytorch
        ? runPytorchSession(msg.runDir, msg.spec, msg.resume, control, post, msg.stopAt, msg.extendTo, msg.pytorch)
        : runSession(msg.runDir, msg.spec, msg.resume, control, post, msg.stopAt, msg.extendTo));
      return;
    case 'train/pause':
      control.pause();
      return;
    case 'train/resume':
      control.resume();
      return;
    case 'train/stop':
      control.stop();
      return;
    default:
      msg satisfies never;
  }
});

post({ type: 'worker/ready' });
