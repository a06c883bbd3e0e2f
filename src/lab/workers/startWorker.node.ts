/**
 * Workers on Node: a `worker_threads` Worker running one of the bundles in dist/ (the
 * training worker, the model worker), as a {@link HostedWorker}.
 *
 * Leaves out: Web Workers (startWorker.web.ts).
 */

import { Worker } from 'node:worker_threads';
import type { HostedWorker } from './workerHandle';

/** Starts the bundle `script` in a worker thread; `name` says which worker in messages. */
export function startNodeWorker(script: string, name: string): HostedWorker {
  const worker = new Worker(script);
  let ended = false;
  let lost: ((message: string) => void) | null = null;
  const lose = (message: string): void => {
    if (ended) return;
    ended = true;
    lost?.(message);
  };
  worker.on('error', (e) => lose(`The ${name} crashed: ${e.message}`));
  worker.on('exit', (code) => lose(`The ${name} exited unexpectedly (code ${code}).`));
  return {
    post: (msg, transfer = []) => worker.postMessage(msg, transfer),
    onMessage: (listener) => worker.on('message', listener),
    onLost: (listener) => {
      lost = listener;
    },
    terminate: async () => {
      ended = true;
      await worker.terminate();
    },
  };
}
