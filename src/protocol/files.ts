/**
 * Web worker ⇄ extension host, for files (src/lab/files/remoteFs.ts asks,
 * fileServer.ts answers): on the web the training and model workers have no file system of
 * their own, so each call of the lab's file system travels to the extension host, which
 * answers it with VS Code's `workspace.fs`. Every request carries an id and is answered by
 * exactly one `fs/did*` message with that id: `fs/didFail` (an error's code and message)
 * or the answer of its kind. These messages share the worker's port with its own protocol
 * (trainingWorker.ts, modelWorker.ts); their `fs/` prefix tells them apart.
 *
 * Leaves out: the meaning of each call (lab/files/labFs.ts states the contract).
 */

import type { Infer } from './schema';
import { arrayOf, bool, messages, nonNegInt, nullable, num, obj, oneOf, str, u8 } from './schema';

/** The prefix of every message of this channel. */
export const FILES_PREFIX = 'fs/';

/** What a path names (labFs.ts `FileStat`). */
export const fileStatData = obj({ kind: oneOf('file', 'directory'), size: nonNegInt, mtimeMs: num });

/** Calls from a worker. */
export type FileCall = Infer<typeof fileCall>;
export const fileCall = messages({
  'fs/stat': { id: nonNegInt, path: str },
  'fs/readFile': { id: nonNegInt, path: str },
  'fs/readRange': { id: nonNegInt, path: str, position: nonNegInt, length: nonNegInt },
  'fs/list': { id: nonNegInt, path: str },
  'fs/mkdir': { id: nonNegInt, path: str },
  /** Each file replaced atomically; strings travel as UTF-8 bytes. */
  'fs/writeFiles': { id: nonNegInt, files: arrayOf(obj({ path: str, data: u8 })) },
  /** One or more whole lines appended in one piece (a worker gathers its log lines between calls). */
  'fs/append': { id: nonNegInt, path: str, text: str },
  'fs/rename': { id: nonNegInt, from: str, to: str },
  'fs/remove': { id: nonNegInt, path: str },
  /** A file created only where nothing is yet (labFs.ts `createExclusive`); answered by fs/didCreate. */
  'fs/create': { id: nonNegInt, path: str, data: u8 },
});

/** Answers from the extension host. */
export type FileAnswer = Infer<typeof fileAnswer>;
export const fileAnswer = messages({
  'fs/didStat': { id: nonNegInt, stat: nullable(fileStatData) },
  'fs/didRead': { id: nonNegInt, data: u8 },
  'fs/didList': { id: nonNegInt, entries: arrayOf(obj({ name: str, kind: oneOf('file', 'directory') })) },
  'fs/didDone': { id: nonNegInt },
  /** `created`: false when something was already at the path. */
  'fs/didCreate': { id: nonNegInt, created: bool },
  /** `code`: the file system's own (ENOENT, FileNotFound, ENOSPC …), so callers can tell a missing file. */
  'fs/didFail': { id: nonNegInt, error: obj({ code: str, message: str }) },
});

/** True for a message of this channel (either way). */
export function isFileMessage(msg: unknown): msg is { readonly type: string } {
  const type = (msg as { type?: unknown } | null)?.type;
  return typeof type === 'string' && type.startsWith(FILES_PREFIX);
}

/** Validates a call arriving at the extension host; throws ProtocolError. */
export function validateFileCall(msg: unknown): FileCall {
  return fileCall.check(msg, 'message');
}

/** Validates an answer arriving at a worker; throws ProtocolError. */
export function validateFileAnswer(msg: unknown): FileAnswer {
  return fileAnswer.check(msg, 'message');
}
