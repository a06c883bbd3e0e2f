/**
 * The lab in a browser's worker (the web extension host's nested training and model
 * workers, and the browser tests): files through the channel to the extension host
 * (remoteFs.ts), and WebAssembly helper threads as Web Workers where the page is
 * cross-origin isolated — one thread otherwise — and WebGPU through `navigator.gpu`
 * (webgpu.web.ts). Also the worker's message line to the side that started it, on which
 * the file answers travel beside the worker's own protocol.
 *
 * Leaves out: the workers' jobs (trainingService.ts, modelService.ts).
 */

import { isFileMessage } from '../../protocol/files';
import { RemoteFs } from '../files/remoteFs';
import type { LabPlatform, WorkerChannel } from './platform';
import { createWebThreads, webThreadsAvailable } from './threads.web';
import { openWebGpu } from './webgpu.web';

/** The browser worker scope's messaging (the lab compiles against Node's types). */
interface WorkerScope {
  postMessage(msg: unknown, transfer?: ArrayBuffer[]): void;
  onmessage: ((e: { data: unknown }) => void) | null;
}

/** Why the backend runs on one thread here, or null when helpers can run. */
export function oneThreadReason(): string | null {
  return webThreadsAvailable()
    ? null
    : 'this page is not cross-origin isolated, so no helper thread can share the WebAssembly memory ' +
        '(SharedArrayBuffer needs COOP/COEP)';
}

/** This worker's platform and its channel to the side that started it. */
export function webWorkerPlatform<Out>(): { platform: LabPlatform; channel: WorkerChannel<Out> } {
  const self = globalThis as unknown as WorkerScope;
  const post = (msg: unknown, transfer: ArrayBuffer[] = []): void => self.postMessage(msg, transfer);
  const fs = new RemoteFs(post);
  let listener: ((msg: unknown) => void) | null = null;
  self.onmessage = (e) => {
    if (isFileMessage(e.data)) fs.receive(e.data);
    else listener?.(e.data);
  };
  return {
    platform: {
      fs,
      threads: (helpers) => (webThreadsAvailable() ? createWebThreads(helpers) : null),
      gpu: openWebGpu,
    },
    channel: {
      post,
      onMessage: (l) => {
        listener = l;
      },
    },
  };
}
