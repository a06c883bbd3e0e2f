/**
 * Disks that fill up, for the tests of what a full disk does to each kind of write:
 * - {@link smallMount}: a real size-limited file system (tmpfs) where the test may mount one
 *   (root on Linux, mounts allowed), else null;
 * - {@link limitedIo}: the lab's file-write layer over the real disk with only `free` bytes
 *   left: a write past it writes what fits and then fails with ENOSPC, as Linux does, and
 *   removed or replaced files give their bytes back;
 * - {@link failingIo}: fails the n-th write of the files a predicate picks (half its bytes,
 *   then ENOSPC), and nothing else, so each kind of write can be hit on its own.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FileIo } from '../../../src/lab/files/atomicFile.node';
import { NODE_IO } from '../../../src/lab/files/atomicFile.node';

function noSpace(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
}

/** A tmpfs of `kib` KiB mounted on a new folder, and how to unmount it; null where mounting is not allowed. */
export function smallMount(kib: number): { readonly dir: string; grow(kib: number): void; unmount(): void } | null {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kib}k`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return null;
  }
  return {
    dir,
    grow(size: number): void {
      execFileSync('mount', ['-o', `remount,size=${size}k`, dir], { stdio: 'ignore' });
    },
    unmount(): void {
      execFileSync('umount', [dir], { stdio: 'ignore' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The real disk with `free` bytes left for what is written through it; `free` can be raised later. */
export function limitedIo(free: number): FileIo & { free: number; readonly used: number } {
  const sizes = new Map<string, number>();
  const fileOf = new Map<number, string>();
  let used = 0;
  const resize = (file: string, size: number): void => {
    used += size - (sizes.get(file) ?? 0);
    sizes.set(file, size);
  };
  const io = {
    free,
    get used(): number {
      return used;
    },
    openSync(file: string, flags: 'w' | 'a+'): number {
      const fd = NODE_IO.openSync(file, flags);
      fileOf.set(fd, file);
      resize(file, flags === 'w' ? 0 : fs.fstatSync(fd).size);
      return fd;
    },
    writeSync(fd: number, data: Uint8Array, offset: number, length: number): number {
      const file = fileOf.get(fd) as string;
      const room = io.free - used;
      if (room <= 0) throw noSpace();
      const n = NODE_IO.writeSync(fd, data, offset, Math.min(length, room));
      resize(file, fs.fstatSync(fd).size);
      return n;
    },
    ftruncateSync(fd: number, length: number): void {
      NODE_IO.ftruncateSync(fd, length);
      resize(fileOf.get(fd) as string, length);
    },
    closeSync(fd: number): void {
      fileOf.delete(fd);
      NODE_IO.closeSync(fd);
    },
    renameSync(from: string, to: string): void {
      NODE_IO.renameSync(from, to);
      const size = sizes.get(from) ?? 0;
      resize(to, 0);
      used -= size;
      sizes.delete(from);
      resize(to, size);
    },
    rmSync(file: string): void {
      NODE_IO.rmSync(file);
      resize(file, 0);
      sizes.delete(file);
    },
    readSync: NODE_IO.readSync,
    fstatSync: NODE_IO.fstatSync,
    fsyncSync: NODE_IO.fsyncSync,
    mkdirSync: NODE_IO.mkdirSync,
  };
  return io;
}

/**
 * Node's file system, except that the `nth` (1-based) file opened for writing whose path
 * `pick` accepts fails like a disk that fills during it: its first write is short (half the
 * bytes land), the next fails with ENOSPC. `hits` counts the picked opens so far.
 */
export function failingIo(
  pick: (file: string) => boolean,
  nth: number,
): FileIo & { readonly hits: number; readonly failed: string | null } {
  let hits = 0;
  let failing: number | null = null;
  let failed: string | null = null;
  let shortDone = false;
  return {
    get hits(): number {
      return hits;
    },
    get failed(): string | null {
      return failed;
    },
    ...NODE_IO,
    openSync(file: string, flags: 'w' | 'a+'): number {
      const fd = NODE_IO.openSync(file, flags);
      if (pick(file) && ++hits === nth) {
        failing = fd;
        failed = file;
      }
      return fd;
    },
    writeSync(fd: number, data: Uint8Array, offset: number, length: number): number {
      if (fd !== failing) return NODE_IO.writeSync(fd, data, offset, length);
      // A short write first (the bytes that fit), then no room at all: what Linux does.
      const half = Math.floor(length / 2);
      if (half > 0 && !shortDone) {
        shortDone = true;
        return NODE_IO.writeSync(fd, data, offset, half);
      }
      failing = null;
      throw noSpace();
    },
  };
}

/** Every file under `dir` whose name looks like a temporary file of a write. */
export function tempFilesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => /\.tmp$|\.export-|\.importing-/.test(f));
}
