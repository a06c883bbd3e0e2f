/**
 * A worker as the code that started it sees it, whichever kind it is: a Node
 * `worker_threads` worker (startWorker.node.ts: the CLI, desktop VS Code) or a Web Worker
 * started from a `blob:` URL (startWorker.web.ts: VS Code on the web), so the training and model
 * workers' clients (trainingClient.ts, the extension's model client) are written once.
 *
 * Leaves out: what travels over it (the protocol of each worker).
 */

/** A started worker. */
export interface HostedWorker {
  /** Posts a message (`transfer`: buffers to move instead of copy). */
  post(msg: unknown, transfer?: ArrayBuffer[]): void;
  /** Every message the worker posts, not yet validated. */
  onMessage(listener: (msg: unknown) => void): void;
  /** The worker crashed or ended by itself, said in one line; called at most once. */
  onLost(listener: (message: string) => void): void;
  /** Ends the worker (idempotent); `onLost` is not called for it. */
  terminate(): Promise<void>;
}

/** Starts one worker of a kind (training or model) on the starter's platform. */
export type StartWorker = () => HostedWorker;
