/**
 * A file system in memory, with `/` paths: what the lab's tests run on beside Node's, so
 * every reader and writer is shown not to depend on Node's `fs`. It keeps the contract of
 * labFs.ts, and can be given a capacity in bytes, past which writes fail as a full disk
 * does (`ENOSPC`), so the tests can fill it.
 *
 * It can also play VS Code's `workspace.fs` ({@link MemoryFs.wholeFileCalls}: no append, a
 * `writeFile` that a stopped writer leaves half done, a rename over a file that deletes it
 * first), under wholeFileFs.ts as the web host runs it ({@link workspaceLikeFs}). Every change
 * to the files first calls {@link MemoryFs.onChange}, so a test can stop the "process" between
 * any two changes, as a kill or a window reload would.
 *
 * Leaves out: concurrency between processes (one owner), permissions and links.
 */

import type { DirEntry, FileStat, FileWrite, LabFs } from './labFs';
import { bytesOf } from './labFs';
import { SlashPaths, basenamePath, dirnamePath, joinPath, relativePath, resolvePath } from './slashPaths';
import type { WholeFileCalls } from './wholeFileFs';
import { WholeFileFs } from './wholeFileFs';

type Node =
  { readonly kind: 'file'; data: Uint8Array; mtimeMs: number } | { readonly kind: 'directory'; mtimeMs: number };

/** An error with a Node-style code (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, ENOSPC). */
function fsError(code: string, what: string, p: string): Error {
  return Object.assign(new Error(`${code}: ${what}, '${p}'`), { code });
}

/** The in-memory file system. */
export class MemoryFs extends SlashPaths implements LabFs {
  private readonly nodes = new Map<string, Node>();
  private clock = 0;
  private tempCounter = 0;
  /** Called before each change to the files, naming it (a test's kill switch throws from here). */
  onChange: ((what: string, p: string) => void) | null = null;

  /** `capacity`: bytes all files together may hold (a full disk past it); unlimited by default. */
  constructor(private capacity = Number.POSITIVE_INFINITY) {
    super();
  }

  /** Changes the capacity (e.g. to fill the disk in the middle of a test). */
  setCapacity(bytes: number): void {
    this.capacity = bytes;
  }

  /** Bytes the files hold now. */
  get usedBytes(): number {
    let n = 0;
    for (const node of this.nodes.values()) if (node.kind === 'file') n += node.data.length;
    return n;
  }

  private now(): number {
    return Date.now() + this.clock++;
  }

  private get(p: string): Node | undefined {
    const key = resolvePath(p);
    return dirnamePath(key) === key ? { kind: 'directory', mtimeMs: 0 } : this.nodes.get(key);
  }

  async stat(p: string): Promise<FileStat | null> {
    const node = this.get(p);
    if (!node) return null;
    return { kind: node.kind, size: node.kind === 'file' ? node.data.length : 0, mtimeMs: node.mtimeMs };
  }

  private file(p: string): Uint8Array {
    const node = this.get(p);
    if (!node) throw fsError('ENOENT', 'no such file or directory', p);
    if (node.kind !== 'file') throw fsError('EISDIR', 'is a directory', p);
    return node.data;
  }

  async readFile(p: string): Promise<Uint8Array> {
    return this.file(p).slice();
  }

  async readRange(p: string, position: number, length: number): Promise<Uint8Array> {
    return this.file(p).slice(position, position + length);
  }

  async list(dir: string): Promise<DirEntry[]> {
    const node = this.get(dir);
    if (!node) throw fsError('ENOENT', 'no such file or directory', dir);
    if (node.kind !== 'directory') throw fsError('ENOTDIR', 'not a directory', dir);
    const out: DirEntry[] = [];
    for (const [key, child] of this.nodes) {
      if (relativePath(dir, key) === basenamePath(key) && key !== resolvePath(dir))
        out.push({ name: basenamePath(key), kind: child.kind });
    }
    return out;
  }

  private mkdirNow(dir: string): void {
    const key = resolvePath(dir);
    const node = this.get(key);
    if (node?.kind === 'directory') return;
    if (node) throw fsError('EEXIST', 'file already exists', dir);
    this.mkdirNow(dirnamePath(key));
    this.onChange?.('mkdir', key);
    this.nodes.set(key, { kind: 'directory', mtimeMs: this.now() });
  }

  async mkdir(dir: string): Promise<void> {
    this.mkdirNow(dir);
  }

  /** Puts `data` at `p` (its folder must exist), unless that would pass the capacity. */
  private put(p: string, data: Uint8Array): void {
    const key = resolvePath(p);
    const old = this.nodes.get(key);
    if (old?.kind === 'directory') throw fsError('EISDIR', 'is a directory', p);
    if (this.get(dirnamePath(key))?.kind !== 'directory') throw fsError('ENOENT', 'no such file or directory', p);
    if (this.usedBytes - (old?.kind === 'file' ? old.data.length : 0) + data.length > this.capacity)
      throw fsError('ENOSPC', 'no space left on device', p);
    this.onChange?.('write', key);
    this.nodes.set(key, { kind: 'file', data, mtimeMs: this.now() });
  }

  /** Removes `p` and everything under it. */
  private removeNow(p: string): void {
    const gone = [...this.nodes.keys()].filter((k) => relativePath(p, k) !== null);
    if (gone.length === 0) return;
    this.onChange?.('remove', resolvePath(p));
    for (const k of gone) this.nodes.delete(k);
  }

  async writeFiles(files: readonly FileWrite[]): Promise<void> {
    const temps: { tmp: string; target: string }[] = [];
    try {
      for (const f of files) {
        this.mkdirNow(dirnamePath(f.path));
        const tmp = joinPath(dirnamePath(f.path), `.${basenamePath(f.path)}.${++this.tempCounter}.tmp`);
        temps.push({ tmp, target: f.path });
        this.put(tmp, bytesOf(f.data).slice());
      }
    } catch (e) {
      for (const { tmp } of temps) this.removeNow(tmp);
      throw e;
    }
    for (const { tmp, target } of temps) this.renameNow(tmp, target);
  }

  async flush(): Promise<void> {
    // Every append went straight to the disk.
  }

  async appendLine(p: string, line: string): Promise<void> {
    const node = this.get(p);
    const old = node?.kind === 'file' ? node.data : new Uint8Array(0);
    const torn = old.length > 0 && old[old.length - 1] !== 0x0a;
    const add = bytesOf(torn ? `\n${line}` : line);
    const data = new Uint8Array(old.length + add.length);
    data.set(old);
    data.set(add, old.length);
    this.put(p, data);
  }

  private renameNow(from: string, to: string): void {
    const src = resolvePath(from);
    const dst = resolvePath(to);
    const node = this.get(src);
    if (!node) throw fsError('ENOENT', 'no such file or directory', from);
    if (src === dst) return;
    const target = this.get(dst);
    if (node.kind === 'file') {
      if (target?.kind === 'directory') throw fsError('EISDIR', 'is a directory', to);
      if (this.get(dirnamePath(dst))?.kind !== 'directory') throw fsError('ENOENT', 'no such file or directory', to);
      this.onChange?.('rename', `${src} -> ${dst}`);
      this.nodes.delete(src);
      this.nodes.set(dst, node);
      return;
    }
    if (target?.kind === 'file') throw fsError('ENOTDIR', 'not a directory', to);
    if (target && [...this.nodes.keys()].some((k) => relativePath(dst, k) && k !== dst))
      throw fsError('ENOTEMPTY', 'directory not empty', to);
    if (relativePath(src, dst) !== null) throw fsError('EINVAL', 'cannot move a folder into itself', to);
    if (this.get(dirnamePath(dst))?.kind !== 'directory') throw fsError('ENOENT', 'no such file or directory', to);
    this.onChange?.('rename', `${src} -> ${dst}`);
    const moved = [...this.nodes].filter(([k]) => relativePath(src, k) !== null);
    for (const [k] of moved) this.nodes.delete(k);
    for (const [k, v] of moved) this.nodes.set(joinPath(dst, relativePath(src, k) as string), v);
  }

  async rename(from: string, to: string): Promise<void> {
    this.renameNow(from, to);
  }

  async remove(p: string): Promise<void> {
    this.removeNow(p);
  }

  /**
   * These files as VS Code's `workspace.fs` offers them: `writeFile` lands in two changes (the
   * first half of the bytes, then all of them), and a rename over an existing file in two
   * (the target deleted, then the rename), so a stop between them leaves what `workspace.fs`
   * leaves.
   */
  wholeFileCalls(): WholeFileCalls {
    const missing = (p: string): boolean => this.get(p) === undefined;
    return {
      stat: (p) => this.stat(p),
      readFile: (p) => this.readFile(p),
      list: (dir) => this.list(dir),
      mkdir: (dir) => this.mkdir(dir),
      writeFile: async (p, data) => {
        if (this.get(dirnamePath(p))?.kind !== 'directory') throw fsError('ENOENT', 'no such file or directory', p);
        this.put(p, data.slice(0, data.length >> 1));
        this.put(p, data.slice());
      },
      rename: async (from, to, overwrite) => {
        if (missing(from)) throw fsError('ENOENT', 'no such file or directory', from);
        if (!missing(to)) {
          if (!overwrite) throw fsError('EEXIST', 'file already exists', to);
          this.removeNow(to);
        }
        this.renameNow(from, to);
      },
      delete: async (p) => this.removeNow(p),
      isMissing: (e) => (e as { code?: unknown } | null)?.code === 'ENOENT',
    };
  }

  async createExclusive(p: string, data: Uint8Array | string): Promise<boolean> {
    // One owner runs every call to the end before the next (no await inside): the check and the put are one step.
    if (this.get(p)) return false;
    this.put(p, bytesOf(data).slice());
    return true;
  }
}

/** `mem` as the web host's file system sees VS Code's `workspace.fs` (see the file comment). */
export function workspaceLikeFs(mem: MemoryFs): WholeFileFs {
  return new WholeFileFs(mem.wholeFileCalls());
}
