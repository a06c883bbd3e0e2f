/**
 * Crash-safe and full-disk-safe file writes, the only way the lab writes a file:
 * - whole files: write a temporary file beside the target (every byte: a short write is
 *   continued, never taken for done), flush it, rename it over the target, flush the
 *   directory. A process killed at any moment leaves the old file or the new one, never a
 *   half-written one; a write that fails (a full disk) removes its temporary file and leaves
 *   the old file as it was.
 * - append-only logs (metrics.jsonl, evaluations.jsonl): one line per write; a failed append
 *   cuts the file back to where it was, and an append after a torn last line (a process
 *   killed mid-line) starts on a new line, so a reader only ever skips the torn line itself.
 * A full disk (ENOSPC, or a quota: EDQUOT) surfaces as a DiskFullError (lab/files/fileErrors.ts,
 * where the web's file systems find it too), naming the file, so each caller can say in one
 * line what was being saved and what is kept.
 *
 * The file-system calls go through a {@link FileIo} (Node's by default), so tests can make a
 * disk that fills up where a size-limited mount is not available.
 *
 * Leaves out: what is written (runFolder.ts, checkpoint.ts, …) and locking (one writer per
 * run folder: the training worker, or the command that evaluates it).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileError, diskError, fitName } from './fileErrors';
export { DiskFullError, diskError, isNoSpace } from './fileErrors';
export { completeLines } from './labFs';

/** The file-system calls the writers make (a subset of Node's `fs`, synchronous). */
export interface FileIo {
  openSync(file: string, flags: 'w' | 'a+'): number;
  /** Writes up to `length` bytes of `data` from `offset`; returns how many it wrote. */
  writeSync(fd: number, data: Uint8Array, offset: number, length: number): number;
  readSync(fd: number, into: Uint8Array, offset: number, length: number, position: number): number;
  fstatSync(fd: number): { readonly size: number };
  ftruncateSync(fd: number, length: number): void;
  fsyncSync(fd: number): void;
  closeSync(fd: number): void;
  renameSync(from: string, to: string): void;
  rmSync(file: string): void;
  mkdirSync(dir: string): void;
}

/** Node's file system. */
export const NODE_IO: FileIo = {
  openSync: (file, flags) => fs.openSync(file, flags),
  writeSync: (fd, data, offset, length) => fs.writeSync(fd, data, offset, length),
  readSync: (fd, into, offset, length, position) => fs.readSync(fd, into, offset, length, position),
  fstatSync: (fd) => fs.fstatSync(fd),
  ftruncateSync: (fd, length) => fs.ftruncateSync(fd, length),
  fsyncSync: (fd) => fs.fsyncSync(fd),
  closeSync: (fd) => fs.closeSync(fd),
  renameSync: (from, to) => fs.renameSync(from, to),
  rmSync: (file) => fs.rmSync(file, { force: true }),
  mkdirSync: (dir) => fs.mkdirSync(dir, { recursive: true }),
};

/** Writes every byte of `data` at the file position, continuing after short writes. */
function writeAll(io: FileIo, fd: number, data: Uint8Array): void {
  for (let off = 0; off < data.length;) {
    const n = io.writeSync(fd, data, off, data.length - off);
    if (!(n > 0)) throw Object.assign(new Error(`no progress writing ${data.length - off} bytes`), { code: 'ENOSPC' });
    off += n;
  }
}

function bytesOf(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
}

/**
 * The temporary name a write of `file` by this process uses (labFs.ts's TEMP_FILE, which recovery.ts knows; a long name
 * is cut to fit).
 */
export function tempFileOf(file: string): string {
  return path.join(path.dirname(file), fitName('.', path.basename(file), `.${process.pid}.tmp`));
}

/**
 * Atomically replaces `file` with `data`. Throws {@link DiskFullError} (leaving `file` as it was) when the disk is
 * full.
 */
export function writeFileAtomic(file: string, data: Uint8Array | string, io: FileIo = NODE_IO): void {
  writeFilesAtomic([{ file, data }], io);
}

/**
 * Replaces several files that belong together (a model and its optimizer state): every new
 * file is written and flushed first, then they are renamed into place one after another, so a
 * process killed while writing (the slow part) leaves all the old files; a kill between the
 * renames leaves the rest of the new files complete in their temporary files, from which
 * lab/runs/recovery.ts completes the set. A failed write removes every temporary file and
 * replaces nothing; a rename that fails after another one succeeded keeps the temporary
 * files left, for the same reason.
 */
export function writeFilesAtomic(
  files: readonly { readonly file: string; readonly data: Uint8Array | string }[],
  io: FileIo = NODE_IO,
): void {
  for (const { file } of files) checkReplaceable(file);
  const temps: { tmp: string; file: string }[] = [];
  let current = files[0]?.file ?? '';
  let renamed = 0;
  try {
    for (const { file, data } of files) {
      current = file;
      const tmp = tempFileOf(file);
      temps.push({ tmp, file });
      const fd = io.openSync(tmp, 'w');
      try {
        writeAll(io, fd, bytesOf(data));
        io.fsyncSync(fd);
      } finally {
        io.closeSync(fd);
      }
    }
    for (const { tmp, file } of temps) {
      current = file;
      io.renameSync(tmp, file);
      renamed++;
    }
  } catch (e) {
    for (const { tmp } of renamed > 0 ? [] : temps) {
      try {
        io.rmSync(tmp);
      } catch {
        // Already renamed, or the folder is gone: nothing of ours is left either way.
      }
    }
    throw diskError(e, current);
  }
  for (const dir of new Set(files.map(({ file }) => path.dirname(file)))) syncDir(dir);
}

/**
 * Appends `line` (which must end in a newline) to the log `file` in one piece: after a torn
 * last line it starts a new line; when the write fails it cuts the file back to its old
 * length, so the log never ends in half of this line. Throws {@link DiskFullError} when full.
 */
export function appendLine(file: string, line: string, io: FileIo = NODE_IO): void {
  checkReplaceable(file, true);
  let fd: number;
  try {
    fd = io.openSync(file, 'a+');
  } catch (e) {
    throw diskError(e, file);
  }
  let size = 0;
  try {
    size = io.fstatSync(fd).size;
    let text = line;
    if (size > 0) {
      const last = new Uint8Array(1);
      io.readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) text = `\n${line}`; // a killed writer's torn line: readers skip it alone
    }
    writeAll(io, fd, Buffer.from(text, 'utf8'));
  } catch (e) {
    try {
      io.ftruncateSync(fd, size);
    } catch {
      // The log keeps a torn last line, which every reader skips.
    }
    io.closeSync(fd);
    throw diskError(e, file);
  }
  io.closeSync(fd);
}

/** Creates `dir` (and its parents); a full disk is a {@link DiskFullError}, any other refusal a FileError. */
export function makeDir(dir: string, io: FileIo = NODE_IO): void {
  try {
    io.mkdirSync(dir);
  } catch (e) {
    throw diskError(mkdirCause(e, dir), dir);
  }
}

/**
 * Why making `dir` failed: Node's recursive mkdir answers ENOENT where the disk refused (a
 * read-only disk, no permission), so the first missing folder is made on its own, whose
 * error says why (and which is removed again if it was made after all).
 */
function mkdirCause(e: unknown, dir: string): unknown {
  if ((e as { code?: unknown } | null)?.code !== 'ENOENT') return e;
  let missing = path.resolve(dir);
  while (path.dirname(missing) !== missing && !fs.existsSync(path.dirname(missing))) missing = path.dirname(missing);
  try {
    fs.mkdirSync(missing);
    fs.rmdirSync(missing);
  } catch (again) {
    return again;
  }
  return e;
}

/**
 * Refuses to write over anything but a regular file: renamed over `/dev/null` as root, a write
 * would replace the device itself; a FIFO blocks an append once nobody reads it; a folder
 * cannot take a file's place. A link is fine to replace (a rename replaces the link, never
 * follows it); an append, which writes through a link, looks at what it points to (`follow`).
 */
function checkReplaceable(file: string, follow = false): void {
  let st: fs.Stats | undefined;
  try {
    st = follow ? fs.statSync(file, { throwIfNoEntry: false }) : fs.lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return; // a path below a file, no permission …: the write meets it and says so
  }
  if (!st || st.isFile() || st.isSymbolicLink()) return;
  throw new FileError(file, st.isDirectory() ? 'isFolder' : 'special');
}

/** Flushes a directory entry (best effort: not every platform can open a directory). */
function syncDir(dir: string): void {
  let fd: number | null = null;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Windows cannot fsync a directory; the rename is still atomic there.
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}
