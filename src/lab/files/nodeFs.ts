/**
 * The lab's file system on Node (`fs`): the CLI, desktop VS Code's extension host and the
 * Node workers. Paths are the platform's own; writes and appends go through atomicFile.ts
 * (every byte checked to have landed, temporary file, flush, rename, flush the folder; a
 * full disk is a DiskFullError that leaves nothing half-written), through its injectable
 * file calls, so the tests can give it a disk that fills up. The calls are synchronous
 * inside (a training step awaits its metrics line without a trip through libuv's pool).
 *
 * Leaves out: the contract (labFs.ts) and the atomic write itself (atomicFile.ts).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FileIo } from '../runs/atomicFile';
import { NODE_IO, appendLine, makeDir, writeFilesAtomic } from '../runs/atomicFile';
import type { DirEntry, FileStat, FileWrite, LabFs } from './labFs';

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
    const b = fs.readFileSync(p);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }

  async readRange(p: string, position: number, length: number): Promise<Uint8Array> {
    const fd = fs.openSync(p, 'r');
    try {
      const out = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        const n = fs.readSync(fd, out, got, length - got, position + got);
        if (n === 0) break;
        got += n;
      }
      return got === length ? out : out.slice(0, got);
    } finally {
      fs.closeSync(fd);
    }
  }

  async list(dir: string): Promise<DirEntry[]> {
    return fs.readdirSync(dir, { withFileTypes: true }).map((e) => ({ name: e.name, kind: e.isDirectory() ? 'directory' : 'file' }));
  }

  async mkdir(dir: string): Promise<void> {
    makeDir(dir, this.io);
  }

  async writeFiles(files: readonly FileWrite[]): Promise<void> {
    for (const dir of new Set(files.map((f) => path.dirname(f.path)))) makeDir(dir, this.io);
    writeFilesAtomic(files.map((f) => ({ file: f.path, data: f.data })), this.io);
  }

  async flush(): Promise<void> {
    // Every append went straight to the disk.
  }

  async appendLine(p: string, line: string): Promise<void> {
    appendLine(p, line, this.io);
  }

  async rename(from: string, to: string): Promise<void> {
    const target = fs.statSync(to, { throwIfNoEntry: false });
    if (target?.isDirectory() && fs.statSync(from).isDirectory()) fs.rmdirSync(to); // must be empty: rmdir refuses otherwise
    this.io.renameSync(from, to);
  }

  async remove(p: string): Promise<void> {
    // A file through `io` (the tests count and stop its calls); a folder with everything in it.
    if (fs.statSync(p, { throwIfNoEntry: false })?.isDirectory()) fs.rmSync(p, { recursive: true, force: true });
    else this.io.rmSync(p);
  }
}

/** Node's file system (it holds no state, so one serves everyone). */
export const NODE_FS: LabFs = new NodeFs();
