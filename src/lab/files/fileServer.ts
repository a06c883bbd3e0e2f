/**
 * The extension host's side of a web worker's file calls (protocol/files.ts): each call is
 * validated, carried out on the host's file system (VS Code's `workspace.fs` on the web)
 * and answered once, with its result or with the error's code and message. Calls of one
 * worker are carried out in the order they came, so an append and the read after it (or a
 * checkpoint's write and the run.json update after it) land in that order.
 *
 * Leaves out: which files a worker may touch (it is our own code, started by the host).
 */

import type { FileAnswer, FileCall } from '../../protocol/files';
import { validateFileCall } from '../../protocol/files';
import { ProtocolError } from '../../protocol/schema';
import type { LabFs } from './labFs';

/** Sends an answer back to the worker (`transfer`: buffers to move). */
export type PostAnswer = (answer: FileAnswer, transfer: ArrayBuffer[]) => void;

function codeOf(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'internal';
}

/** Carries out one call. */
async function answer(fs: LabFs, call: FileCall): Promise<FileAnswer> {
  const id = call.id;
  switch (call.type) {
    case 'fs/stat':
      return { type: 'fs/didStat', id, stat: await fs.stat(call.path) };
    case 'fs/readFile':
      return { type: 'fs/didRead', id, data: await fs.readFile(call.path) };
    case 'fs/readRange':
      return { type: 'fs/didRead', id, data: await fs.readRange(call.path, call.position, call.length) };
    case 'fs/list':
      return { type: 'fs/didList', id, entries: await fs.list(call.path) };
    case 'fs/mkdir':
      await fs.mkdir(call.path);
      return { type: 'fs/didDone', id };
    case 'fs/writeFiles':
      await fs.writeFiles(call.files);
      return { type: 'fs/didDone', id };
    case 'fs/append':
      await fs.appendLine(call.path, call.text);
      return { type: 'fs/didDone', id };
    case 'fs/rename':
      await fs.rename(call.from, call.to);
      return { type: 'fs/didDone', id };
    case 'fs/remove':
      await fs.remove(call.path);
      return { type: 'fs/didDone', id };
    case 'fs/create':
      return { type: 'fs/didCreate', id, created: await fs.createExclusive(call.path, call.data) };
    default:
      return call satisfies never;
  }
}

/** True when `data` spans its whole buffer, which may then be moved instead of copied (never a pooled buffer). */
function ownsBuffer(data: Uint8Array): boolean {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer;
}

/** Answers one worker's file calls from `fs`, in order. */
export class FileServer {
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly fs: LabFs,
    private readonly post: PostAnswer,
  ) {}

  /** Takes one `fs/` message from the worker; answers it once its turn comes. */
  serve(raw: unknown): void {
    let call: FileCall;
    try {
      call = validateFileCall(raw);
    } catch (e) {
      const id = (raw as { id?: unknown } | null)?.id;
      const message = `Invalid file call (${e instanceof ProtocolError ? e.message : String(e)}).`;
      this.post(
        { type: 'fs/didFail', id: typeof id === 'number' && id >= 0 ? id : 0, error: { code: 'protocol', message } },
        [],
      );
      return;
    }
    this.queue = this.queue.then(async () => {
      let reply: FileAnswer;
      try {
        reply = await answer(this.fs, call);
      } catch (e) {
        reply = {
          type: 'fs/didFail',
          id: call.id,
          error: { code: codeOf(e), message: (e as Error)?.message ?? String(e) },
        };
      }
      this.post(reply, reply.type === 'fs/didRead' && ownsBuffer(reply.data) ? [reply.data.buffer as ArrayBuffer] : []);
    });
  }
}
