/**
 * The lab's file system inside a web worker: each call travels to the extension host
 * (protocol/files.ts), which answers it from its own file system (fileServer.ts over VS
 * Code's `workspace.fs`). Paths are the host's, spelled with `/` under a URI root
 * (slashPaths.ts), so joining and splitting them needs no trip.
 *
 * Appended log lines are gathered and sent together — before any other call (so a read
 * sees them), when {@link APPEND_DELAY_MS} have passed, or when {@link APPEND_BYTES} are
 * waiting — since a round trip per training step would cost more than the step. A failed
 * send is reported by the next call. A worker ended in between loses the lines gathered
 * since the last send, which a resume would drop anyway (it keeps the metrics up to its
 * checkpoint, and every checkpoint sends first).
 *
 * Leaves out: timeouts (the host answers every call, or the worker is ended with it).
 */

import type { FileAnswer, FileCall } from '../../protocol/files';
import { validateFileAnswer } from '../../protocol/files';
import { ProtocolError } from '../../protocol/schema';
import type { DirEntry, FileStat, FileWrite, LabFs } from './labFs';
import { bytesOf } from './labFs';
import { SlashPaths } from './slashPaths';

/** Longest a log line waits before it is sent. */
export const APPEND_DELAY_MS = 250;
/** Waiting log text that is sent at once. */
export const APPEND_BYTES = 64 << 10;

/** Sends a call to the host (`transfer`: buffers to move). */
export type PostCall = (call: FileCall, transfer: ArrayBuffer[]) => void;

type Waiting = { resolve: (a: FileAnswer) => void; reject: (e: Error) => void };

/** A call's `id` is filled in when it is sent. */
type CallWithoutId = FileCall extends infer C ? (C extends { id: number } ? Omit<C, 'id'> : never) : never;

/** An error as the host's file system raised it (with its code, e.g. ENOENT or FileNotFound). */
function hostError(error: { code: string; message: string }): Error {
  return Object.assign(new Error(error.message), { code: error.code });
}

/** The worker's side of the host's file system. */
export class RemoteFs extends SlashPaths implements LabFs {
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private readonly pending = new Map<string, string>();
  private pendingBytes = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private failure: Error | null = null;

  constructor(private readonly post: PostCall) {
    super();
  }

  /** Hands an answer from the host to its call (the worker's message handler calls this for `fs/` messages). */
  receive(raw: unknown): void {
    let answer: FileAnswer;
    try {
      answer = validateFileAnswer(raw);
    } catch (e) {
      const id = (raw as { id?: unknown } | null)?.id;
      const w = typeof id === 'number' ? this.waiting.get(id) : undefined;
      if (w) {
        this.waiting.delete(id as number);
        w.reject(
          new Error(
            `The extension host answered a file call wrongly (${e instanceof ProtocolError ? e.message : String(e)}).`,
          ),
        );
      }
      return;
    }
    const w = this.waiting.get(answer.id);
    if (!w) return;
    this.waiting.delete(answer.id);
    if (answer.type === 'fs/didFail') w.reject(hostError(answer.error));
    else w.resolve(answer);
  }

  private send(call: CallWithoutId, transfer: ArrayBuffer[] = []): Promise<FileAnswer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.post({ ...call, id } as FileCall, transfer);
    });
  }

  /** Sends the gathered log lines (every call but an append does this first). */
  async flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const lines = [...this.pending];
    this.pending.clear();
    this.pendingBytes = 0;
    for (const [path, text] of lines) {
      try {
        await this.send({ type: 'fs/append', path, text });
      } catch (e) {
        this.failure ??= e as Error;
      }
    }
    if (this.failure) {
      const e = this.failure;
      this.failure = null;
      throw e;
    }
  }

  private async call(call: CallWithoutId, transfer: ArrayBuffer[] = []): Promise<FileAnswer> {
    await this.flush();
    return this.send(call, transfer);
  }

  async stat(path: string): Promise<FileStat | null> {
    const a = await this.call({ type: 'fs/stat', path });
    return a.type === 'fs/didStat' ? a.stat : unexpected(a);
  }

  async readFile(path: string): Promise<Uint8Array> {
    const a = await this.call({ type: 'fs/readFile', path });
    return a.type === 'fs/didRead' ? a.data : unexpected(a);
  }

  async readRange(path: string, position: number, length: number): Promise<Uint8Array> {
    const a = await this.call({ type: 'fs/readRange', path, position, length });
    return a.type === 'fs/didRead' ? a.data : unexpected(a);
  }

  async list(path: string): Promise<DirEntry[]> {
    const a = await this.call({ type: 'fs/list', path });
    return a.type === 'fs/didList' ? [...a.entries] : unexpected(a);
  }

  async mkdir(path: string): Promise<void> {
    done(await this.call({ type: 'fs/mkdir', path }));
  }

  async writeFiles(files: readonly FileWrite[]): Promise<void> {
    const sent = files.map((f) => ({ path: f.path, data: bytesOf(f.data) }));
    done(await this.call({ type: 'fs/writeFiles', files: sent }));
  }

  async appendLine(path: string, line: string): Promise<void> {
    if (this.failure) return this.flush();
    this.pending.set(path, (this.pending.get(path) ?? '') + line);
    this.pendingBytes += line.length;
    if (this.pendingBytes >= APPEND_BYTES) return this.flush();
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.flush().catch((e: unknown) => {
        this.failure ??= e as Error;
      });
    }, APPEND_DELAY_MS);
  }

  async rename(from: string, to: string): Promise<void> {
    done(await this.call({ type: 'fs/rename', from, to }));
  }

  async remove(path: string): Promise<void> {
    done(await this.call({ type: 'fs/remove', path }));
  }

  /** Forwarded: the host's file system decides, as exclusively as it can (fileServer.ts). */
  async createExclusive(path: string, data: Uint8Array | string): Promise<boolean> {
    const a = await this.call({ type: 'fs/create', path, data: bytesOf(data) });
    return a.type === 'fs/didCreate' ? a.created : unexpected(a);
  }
}

function unexpected(a: FileAnswer): never {
  throw new Error(`The extension host answered a file call with ${a.type}.`);
}

function done(a: FileAnswer): void {
  if (a.type !== 'fs/didDone') unexpected(a);
}
