/**
 * A model-worker job under a cancellable progress notification: the notification's Cancel
 * aborts the request (the worker stops at its next piece), progress reports move the bar, and
 * a cancelled job resolves to undefined instead of failing. Import and Evaluate on Files use it.
 */

import * as vscode from 'vscode';
import { RequestError } from '../workers/pendingRequests';

/** What a worker job is given: an abort signal and a progress callback (`done` of `total`). */
export interface WorkerJobHooks {
  readonly signal: AbortSignal;
  readonly onProgress: (done: number, total: number) => void;
}

/**
 * Runs `job` with a notification titled `title`; `describe(done, total)` is the message shown
 * beside the bar. Resolves to the job's result, or undefined when the user cancelled.
 */
export function withWorkerProgress<T>(
  title: string,
  describe: (done: number, total: number) => string,
  job: (hooks: WorkerJobHooks) => Promise<T>,
): Thenable<T | undefined> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    async (progress, token) => {
      const abort = new AbortController();
      const sub = token.onCancellationRequested(() => abort.abort());
      let shown = 0;
      try {
        return await job({
          signal: abort.signal,
          onProgress: (done, total) => {
            const now = total ? (100 * done) / total : 0;
            progress.report({ increment: now - shown, message: describe(done, total) });
            shown = now;
          },
        });
      } catch (e) {
        if (e instanceof RequestError && e.code === 'cancelled') return undefined;
        throw e;
      } finally {
        sub.dispose();
      }
    },
  );
}
