/**
 * Workers in a browser, as the side that starts them sees them (a {@link HostedWorker}): a Web Worker
 * started from a `blob:` URL of a classic bundle (dist/web/*.js) — VS Code's web extension
 * host cannot start a worker from the extension's own URL, and wraps workers so that only
 * classic scripts load — whose file calls (protocol/files.ts) are answered from the host's
 * file system. The bundle's text may still be on its way when the worker is asked for:
 * messages posted meanwhile wait for it.
 *
 * Leaves out: Node's workers (startWorker.node.ts).
 */

import { isFileMessage } from '../../protocol/files';
import { FileServer } from '../files/fileServer';
import type { LabFs } from '../files/labFs';
import type { HostedWorker } from './workerHandle';

/** The parts of the browser's worker API this uses (the lab compiles against Node's types). */
interface BrowserWorker {
  onmessage: ((e: { data: unknown }) => void) | null;
  onerror: ((e: { message?: string; preventDefault?: () => void }) => void) | null;
  postMessage(msg: unknown, transfer?: ArrayBuffer[]): void;
  terminate(): void;
}
interface BrowserScope {
  readonly Worker: new (url: string, options?: { name?: string }) => BrowserWorker;
  readonly Blob: new (parts: string[], options: { type: string }) => unknown;
  readonly URL: { createObjectURL(blob: unknown): string; revokeObjectURL(url: string): void };
}

/**
 * Starts the classic bundle whose text `source` resolves to as a worker named `name`,
 * answering its file calls from `fs`.
 */
export function startWebWorker(source: Promise<string>, fs: LabFs, name: string): HostedWorker {
  const g = globalThis as unknown as BrowserScope;
  let worker: BrowserWorker | null = null;
  let url: string | null = null;
  let ended = false;
  const queue: { msg: unknown; transfer: ArrayBuffer[] }[] = [];
  const listeners: ((msg: unknown) => void)[] = [];
  let onLost: ((message: string) => void) | null = null;
  const lose = (message: string): void => {
    if (ended) return;
    ended = true;
    onLost?.(message);
  };
  const server = new FileServer(fs, (answer, transfer) => worker?.postMessage(answer, transfer));
  source.then(
    (text) => {
      if (ended) return;
      url = g.URL.createObjectURL(new g.Blob([text], { type: 'text/javascript' }));
      const w = new g.Worker(url, { name: `Attention Lab ${name}` });
      w.onmessage = (e) => {
        if (isFileMessage(e.data)) server.serve(e.data);
        else for (const l of listeners) l(e.data);
      };
      w.onerror = (e) => {
        e.preventDefault?.();
        lose(`The ${name} crashed: ${e.message ?? 'an error it did not describe'}`);
      };
      worker = w;
      for (const { msg, transfer } of queue.splice(0)) w.postMessage(msg, transfer);
    },
    (e: unknown) => lose(`The ${name} could not be started: ${(e as Error)?.message ?? String(e)}`),
  );
  return {
    post: (msg, transfer = []) => {
      if (worker) worker.postMessage(msg, transfer);
      else queue.push({ msg, transfer });
    },
    onMessage: (listener) => {
      listeners.push(listener);
    },
    onLost: (listener) => {
      onLost = listener;
    },
    terminate: async () => {
      ended = true;
      worker?.terminate();
      if (url) g.URL.revokeObjectURL(url);
    },
  };
}
