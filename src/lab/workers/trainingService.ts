/**
 * The training worker, on any host (its entries: trainingWorker.ts on Node,
 * webTrainingWorker.ts on the web): validates each command from its host, runs one
 * session, and posts protocol notifications back. Training never runs on the host's
 * thread, so an editor or a terminal stays responsive.
 *
 * Leaves out: starting the worker, and the session itself (training/session.ts).
 */

import type { WorkerToHost } from '../../protocol/trainingWorker';
import { ProtocolError } from '../../protocol/schema';
import { validateHostToWorker } from '../../protocol/trainingWorker';
import { SessionControl, runSession } from '../training/session';
import type { LabPlatform, WorkerChannel } from './platform';

/**
 * Serves one run's commands arriving on `channel`, training on `platform`'s files and
 * threads; `oneThread` says why the platform has no helper threads to give (logged when a
 * run starts), or is null.
 */
export function serveTraining(platform: LabPlatform, channel: WorkerChannel<WorkerToHost>, oneThread: string | null = null): void {
  const control = new SessionControl();
  let started = false;
  const post = (msg: WorkerToHost, transfer?: ArrayBuffer[]): void => channel.post(msg, transfer ?? []);
  channel.onMessage((raw: unknown) => handle(raw));
  post({ type: 'worker/ready' });

  function handle(raw: unknown): void {
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
        if (oneThread !== null && msg.spec.backend !== 'reference') post({ type: 'train/didLog', level: 'info', message: `WebAssembly runs on 1 thread: ${oneThread}.` });
        void runSession(platform, msg.runDir, msg.spec, msg.resume, control, post, msg.stopAt, msg.extendTo, msg.helpers === undefined ? {} : { helpers: msg.helpers });
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
  }
}
