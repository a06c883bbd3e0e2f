/**
 * The two front doors of an inference job, as users reach them: the built `attention-lab`
 * binary (dist/cli.js) with `--json`, and the built model worker (dist/modelWorker.js) that
 * the editor sends requests to. Both are built by `npm run build` (`npm test` builds first).
 * Tests compare what the two return for the same input.
 */

import * as os from 'node:os';
import { Worker } from 'node:worker_threads';
import * as path from 'node:path';
import type { ToModelWorker, FromModelWorker } from '../../../../src/protocol/modelWorker';
import { validateFromModelWorker } from '../../../../src/protocol/modelWorker';
import { cli } from '../../cli/cliHarness';

const WORKER = path.resolve(__dirname, '../../../../dist/modelWorker.js');

/** The CLI's `--json` object for `args` (the command must succeed). */
export function cliJson<T>(args: readonly string[]): T {
  const r = cli([...args, '--json'], os.tmpdir());
  if (r.code !== 0) throw new Error(`attention-lab ${args.join(' ')} failed (${String(r.code)}): ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** A request without its id. */
type Request = ToModelWorker extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

/** The model worker, answering one request at a time: every reply to it, the final one last. */
export interface WorkerDoor {
  request(msg: Request): Promise<FromModelWorker[]>;
  close(): Promise<void>;
}

/** Starts the built model worker and waits until it says ready. */
export async function startModelWorker(): Promise<WorkerDoor> {
  const w = new Worker(WORKER);
  const pending: { id: number; replies: FromModelWorker[]; done: (r: FromModelWorker[]) => void }[] = [];
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  w.on('message', (raw: unknown) => {
    const m = validateFromModelWorker(raw);
    if (m.type === 'worker/ready') return ready();
    const p = pending.find((x) => x.id === m.id);
    if (!p) return;
    p.replies.push(m);
    if (m.type !== 'model/didToken' && m.type !== 'model/didProgress') {
      pending.splice(pending.indexOf(p), 1);
      p.done(p.replies);
    }
  });
  await isReady;
  let next = 1;
  return {
    request: (msg) =>
      new Promise((done) => {
        const id = next++;
        pending.push({ id, replies: [], done });
        w.postMessage({ ...msg, id });
      }),
    close: async () => {
      await w.terminate();
    },
  };
}
