/**
 * A Node worker thread's channel to the thread that started it (`parentPort`), for the worker entries that
 * run on Node (trainingWorker.node.ts, modelWorker.node.ts).
 *
 * Leaves out: the web's channel (the worker's global scope: webWorkerChannel.ts).
 */

import { parentPort } from 'node:worker_threads';
import type { WorkerChannel } from '../platform/platform';

/** This thread's channel to the thread that started it; throws outside a worker thread. */
export function parentChannel<Out>(bundle: string): WorkerChannel<Out> {
  const port = parentPort;
  if (!port) throw new Error(`${bundle} must run in a worker thread`);
  return {
    post: (msg, transfer = []) => port.postMessage(msg, transfer),
    onMessage: (listener) => port.on('message', listener),
  };
}
