/**
 * The lab's file system on Node (`fs`): the CLI, desktop VS Code's extension host and the
 * Node workers. Paths are the platform's own; writes and appends go through atomicFile.node.ts
 * (every byte checked to have landed, temporary file, flush, rename, flush the folder; a
 * full disk is a DiskFullError that leaves nothing half-written), through its injectable
 * file calls, so the tests can give it a disk that fills up. Any other failed call (a
 * read-only disk, a folder where a file must be …) is a FileError naming the path
 * (fileErrors.ts). The calls are synchronous
 * inside (a training step awaits its metrics line without a trip through libuv's pool).
 *
 * Leaves out: the contract (labFs.ts) and the atomic write itself (atomicFile.node.ts).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { EngineError } from '../../engine/errors';
import type { FileIo } from './atomicFile.node';
import { NODE_IO, appendLine, makeDir, writeFilesAtomic } from './atomicFile.node';
import { FileError, diskError } from './fileErrors';
import type { DirEntry, FileStat, FileWrite, LabFs } from './labFs';
import { bytesOf } from './labFs';

/** Node's file system as a {@link LabFs}. */
export class NodeFs implements LabFs {
  /** `io`: the file calls writes go through (Node's; tests pass one whose disk fills up). */
  constructor(private readonly io: FileIo = NODE_IO) {}

  join(dir: string, ...names: string[]): string {
    return path.join(dir, ...names);
  }

  dirname(p: string): string {
    return path.dirname(p);
  }

  basename(p: string): string {
    return path.basename(p);
  }

  relative(from: string, p: string): string | null {
    const rel = path.relative(path.resolve(from), path.resolve(p));
    if (rel === '') return '';
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return null;
    return rel.split(path.sep).join('/');
  }

  resolve(p: string, from?: string): string {
    return from === undefined ? path.resolve(p) : path.resolve(from, p);
  }

  async stat(p: string): Promise<FileStat | null> {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      return null;
    }
    return { kind: st.isDirectory() ? 'directory' : 'file', size: st.isDirectory() ? 0 : st.size, mtimeMs: st.mtimeMs };
  }

  async readFile(p: string): Promise<Uint8Array> {
    const fd = openRegular(p);
    try {
      let b: Buffer;
      try {
        b = fs.readFileSync(fd);
      } catch (e) {
        throw diskError(e, p); // a file over 2 GiB …: one line naming it
      }
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    } finally {
      fs.closeSync(fd);
    }
  }

  async readRange(p: string, position: number, length: number): Promise<Uint8Array> {
    const fd = openRegular(p);
    try {
      const out = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        let n: number;
        try {
          n = fs.readSync(fd, out, got, length - got, position + got);
        } catch (e) {
          throw diskError(e, p); // a folder opens, and fails only here
        }
        if (n === 0) break;
        got += n;
      }
      return got === length ? out : out.slice(0, got);
    } finally {
      fs.closeSync(fd);
    }
  }

  async list(dir: string): Promise<DirEntry[]> {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      throw diskError(e, dir);
    }
    return entries.map((e) => ({ name: e.name, kind: e.isDirectory() ? 'directory' : 'file' }));
  }

  async mkdir(dir: string): Promise<void> {
    checkCreatable(dir);
    makeDir(dir, this.io);
  }

  async writeFiles(files: readonly FileWrite[]): Promise<void> {
    for (const dir of new Set(files.map((f) => path.dirname(f.path)))) {
      checkCreatable(dir);
      makeDir(dir, this.io);
    }
    writeFilesAtomic(
      files.map((f) => ({ file: f.path, data: f.data })),
      this.io,
    );
  }

  async flush(): Promise<void> {
    // Every append went straight to the disk.
  }

  async appendLine(p: string, line: string): Promise<void> {
    appendLine(p, line, this.io);
  }

  async rename(from: string, to: string): Promise<void> {
    try {
      const target = fs.statSync(to, { throwIfNoEntry: false });
      // must be empty: rmdir refuses otherwise
      if (target?.isDirectory() && fs.statSync(from).isDirectory()) fs.rmdirSync(to);
      this.io.renameSync(from, to);
    } catch (e) {
      throw diskError(e, to);
    }
  }

  async remove(p: string): Promise<void> {
    try {
      // A file through `io` (the tests count and stop its calls); a folder with everything in it.
      if (fs.statSync(p, { throwIfNoEntry: false })?.isDirectory()) fs.rmSync(p, { recursive: true, force: true });
      else this.io.rmSync(p);
    } catch (e) {
      // Nothing can be below a file (ENOTDIR): nothing there, which is fine.
      if ((e as { code?: unknown }).code !== 'ENOTDIR') throw diskError(e, p);
    }
  }

  /**
   * Exclusive create with no partial file ever visible: the bytes go to a temporary file
   * (`.NAME.N.tmp`, flushed), which is then hard-linked to `p` — `link` fails when anything is
   * at `p`, in one step, for every process (NFS included) — and removed. A session killed while
   * writing leaves only the temporary file (removed by the next session's recovery), never a short
   * `p` that reads as "being written" to the next taker. Where the file system has no hard links,
   * `open(p, 'wx')` and the bytes after it (a reader that comes between sees a short file). A failed
   * write removes what it created.
   */
  async createExclusive(p: string, data: Uint8Array | string): Promise<boolean> {
    const bytes = bytesOf(data);
    const tmp = path.join(path.dirname(p), `.${path.basename(p)}.${process.pid}${Math.floor(Math.random() * 1e6)}.tmp`);
    try {
      writeWhole(tmp, 'w', bytes);
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      throw diskError(e, p);
    }
    try {
      fs.linkSync(tmp, p);
      return true;
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === 'EEXIST') return false;
      // The temporary file was removed by the holder's recovery: someone holds `p`.
      if (code === 'ENOENT' && fs.existsSync(p)) return false;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw diskError(e, p);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
    return createOpenExclusive(p, bytes);
  }
}

/** Writes `bytes` to a new file `p` opened with `flags` and flushes it; removes `p` when the write fails. */
function writeWhole(p: string, flags: 'w' | 'wx', bytes: Uint8Array): void {
  const fd = fs.openSync(p, flags);
  try {
    for (let off = 0; off < bytes.length;) {
      const n = fs.writeSync(fd, bytes, off, bytes.length - off);
      if (!(n > 0)) throw Object.assign(new Error(`no progress writing ${p}`), { code: 'ENOSPC' });
      off += n;
    }
    fs.fsyncSync(fd);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(p, { force: true });
    throw e;
  }
  fs.closeSync(fd);
}

/** `open(p, 'wx')` and the bytes: the exclusive create of a file system without hard links. */
function createOpenExclusive(p: string, bytes: Uint8Array): boolean {
  try {
    writeWhole(p, 'wx', bytes);
  } catch (e) {
    if ((e as { code?: unknown }).code === 'EEXIST') return false;
    throw diskError(e, p);
  }
  return true;
}

/** What a path that is not a regular file or a folder is, for people. */
function specialKind(st: fs.Stats): string {
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return st.isDirectory() ? 'a folder' : 'not a regular file';
}

/**
 * Opens `p` for reading only when it is a regular file (after following links): a FIFO
 * would block the read forever and /dev/zero never ends. Opened non-blocking so a FIFO with
 * no writer does not block the open itself; a regular file ignores the flag.
 */
function openRegular(p: string): number {
  let fd: number;
  try {
    fd = fs.openSync(p, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    throw diskError(e, p); // missing, not a folder above it, no permission …: one line naming it
  }
  let st: fs.Stats;
  try {
    st = fs.fstatSync(fd);
  } catch (e) {
    fs.closeSync(fd);
    throw diskError(e, p);
  }
  if (st.isFile()) return fd;
  fs.closeSync(fd);
  if (st.isDirectory()) throw diskError(Object.assign(new Error(`EISDIR: ${p}`), { code: 'EISDIR' }), p);
  throw new EngineError(
    'input/invalid',
    `${p} is ${specialKind(st)}, not a regular file; Attention Lab reads only regular files — pass a file on disk.`,
  );
}

/**
 * Refuses, in one line, a folder that cannot be created because the deepest existing folder
 * above it takes no new folders (/proc, /sys): there Node's recursive mkdir answers ENOENT
 * for a parent that exists and retries without end. Creates the first missing level itself
 * (without recursion) to find out; the rest is left to the caller's mkdir.
 */
function checkCreatable(dir: string): void {
  let first = path.resolve(dir);
  let parent = path.dirname(first);
  if (fs.existsSync(first)) return;
  while (parent !== first && !fs.existsSync(parent)) {
    first = parent;
    parent = path.dirname(parent);
  }
  if (!fs.statSync(parent).isDirectory()) throw new FileError(dir, 'notFolder');
  try {
    fs.mkdirSync(first);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new EngineError(
        'input/invalid',
        `Cannot create ${dir}: ${parent} takes no new folders (a virtual file system such as /proc ` +
          `or /sys); choose a folder on a disk.`,
      );
    // Anything else (no space, no permission, read-only) the caller's mkdir meets again and reports.
  }
}

/** Node's file system (it holds no state, so one serves everyone). */
export const NODE_FS: LabFs = new NodeFs();
