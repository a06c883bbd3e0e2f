/**
 * The training worker, on any host (its entries: trainingWorker.node.ts on Node,
 * trainingWorker.web.ts on the web): validates each command from its host, runs one
 * session, and posts protocol notifications back. Training never runs on the host's
 * thread, so an editor or a terminal stays responsive.
 *
 * Leaves out: starting the worker, and the sessions themselves (training/session.ts for our
 * engine; the PyTorch engine's, which spawns processes, is handed in by the Node entry only).
 */

import type { FromTrainingWorker } from '../../protocol/trainingWorker';
import { ProtocolError } from '../../protocol/schema';
import { validateToTrainingWorker } from '../../protocol/trainingWorker';
import { runSession } from '../training/session';
import type { PytorchStart } from '../training/sessionSetup';
import { SessionControl } from '../training/sessionControl';
import type { LabPlatform, WorkerChannel } from '../platform/platform';

/**
 * A PyTorch session runner (src/lab/pytorch/pytorchSession.node.ts's runPytorchSession), given by a host that can start
 * processes.
 */
export type PytorchRunner = (start: PytorchStart) => Promise<void>;

/** What a host without processes (the web) says to a run asked to train on PyTorch. */
export const NO_PYTORCH =
  'The PyTorch engine needs desktop VS Code or the CLI (it starts Python processes); set ' +
  'attentionLab.training.engine to "builtin" to train here.';

/**
 * Serves one run's commands arriving on `channel`, training on `platform`'s files and
 * threads; `oneThread` says why the platform has no helper threads to give (logged when a
 * run starts), or is null; `pytorch` runs a session on the PyTorch engine (null: this host
 * refuses one in one line).
 */
export function serveTraining(
  platform: LabPlatform,
  channel: WorkerChannel<FromTrainingWorker>,
  oneThread: string | null = null,
  pytorch: PytorchRunner | null = null,
): void {
  const control = new SessionControl();
  let started = false;
  const post = (msg: FromTrainingWorker, transfer?: ArrayBuffer[]): void => channel.post(msg, transfer ?? []);
  channel.onMessage((raw: unknown) => handle(raw));
  post({ type: 'worker/ready' });

  function handle(raw: unknown): void {
    let msg;
    try {
      msg = validateToTrainingWorker(raw);
    } catch (e) {
      const message = e instanceof ProtocolError ? e.message : String(e);
      post({ type: 'train/didLog', level: 'warn', message: `Ignored an invalid command: ${message}` });
      return;
    }
    switch (msg.type) {
      case 'train/start':
        if (started) {
          post({
            type: 'train/didLog',
            level: 'warn',
            message: 'A run is already training in this worker; start ignored.',
          });
          return;
        }
        started = true;
        if (msg.pytorch) {
          // PyTorch trains in a child process this worker follows; ours trains here.
          if (pytorch) void pytorch({ request: msg, pytorch: msg.pytorch, control, emit: post });
          else post({ type: 'train/didFail', step: 0, error: { code: 'input/invalid', message: NO_PYTORCH } });
          return;
        }
        if (oneThread !== null && msg.spec.backend !== 'reference')
          post({ type: 'train/didLog', level: 'info', message: `WebAssembly runs on 1 thread: ${oneThread}.` });
        void runSession({ platform, request: msg, control, emit: post });
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
