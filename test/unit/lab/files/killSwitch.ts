/**
 * Stopping the lab's "process" between any two changes to the files, as SIGKILL or a window
 * reload does, for the tests that enumerate every such instant: a {@link KillSwitch} counts the
 * changes a process makes (memory's `onChange`, or the Node file calls of {@link killableIo}),
 * throws at the chosen one instead of making it, and from then on refuses every call,
 * through {@link killableFs} too, so nothing runs after the kill — not even the cleanup of a
 * failed write, which a killed process never gets to do.
 */

import type { FileIo } from '../../../../src/lab/files/atomicFile.node';
import { NODE_IO } from '../../../../src/lab/files/atomicFile.node';
import type { DirEntry, FileStat, FileWrite, LabFs } from '../../../../src/lab/files/labFs';

/** What a killed process's file calls throw. */
export class Killed extends Error {
  readonly code = 'killed';
  constructor() {
    super('the process was killed');
  }
}

/** Counts a process's changes to the files and kills it before the `cutAt`-th (never by default). */
export class KillSwitch {
  /** Changes made (and the one refused, once killed). */
  changes = 0;
  dead = false;
  /** What each change was, in order, when `trace` is on. */
  readonly trace: string[] = [];

  constructor(
    private readonly cutAt = Number.POSITIVE_INFINITY,
    private readonly tracing = false,
  ) {}

  /** Called before each change: refuses it when this is the cut or the process is dead. */
  change(what: string): void {
    this.check();
    if (this.tracing) this.trace.push(what);
    if (++this.changes >= this.cutAt) {
      this.dead = true;
      throw new Killed();
    }
  }

  /** Throws once the process is dead. */
  check(): void {
    if (this.dead) throw new Killed();
  }
}

/**
 * Node's file calls, each change counted (and refused when killed); closing a file is always
 * allowed, and flushing to the disk is skipped (a kill is not a power cut: what was written
 * reaches a restart without it, and the tests run many times faster).
 */
export function killableIo(sw: KillSwitch, io: FileIo = NODE_IO): FileIo {
  return {
    openSync: (file, flags) => (sw.change(`open ${flags} ${file}`), io.openSync(file, flags)),
    writeSync: (fd, data, offset, length) => (sw.change(`write ${fd}`), io.writeSync(fd, data, offset, length)),
    ftruncateSync: (fd, length) => (sw.change(`truncate ${fd}`), io.ftruncateSync(fd, length)),
    renameSync: (from, to) => (sw.change(`rename ${from} -> ${to}`), io.renameSync(from, to)),
    rmSync: (file) => (sw.change(`remove ${file}`), io.rmSync(file)),
    mkdirSync: (dir) => (sw.change(`mkdir ${dir}`), io.mkdirSync(dir)),
    readSync: (fd, into, offset, length, position) => (sw.check(), io.readSync(fd, into, offset, length, position)),
    fstatSync: (fd) => (sw.check(), io.fstatSync(fd)),
    fsyncSync: () => sw.check(),
    closeSync: (fd) => io.closeSync(fd),
  };
}

/** `inner` as seen by a process `sw` can kill: every call is refused once it is dead. */
export function killableFs(inner: LabFs, sw: KillSwitch): LabFs {
  const live = async <T>(call: () => Promise<T>): Promise<T> => {
    sw.check();
    return call();
  };
  return {
    join: (dir, ...names) => inner.join(dir, ...names),
    dirname: (p) => inner.dirname(p),
    basename: (p) => inner.basename(p),
    relative: (from, p) => inner.relative(from, p),
    resolve: (p, from) => inner.resolve(p, from),
    stat: (p): Promise<FileStat | null> => live(() => inner.stat(p)),
    readFile: (p) => live(() => inner.readFile(p)),
    readRange: (p, position, length) => live(() => inner.readRange(p, position, length)),
    list: (dir): Promise<DirEntry[]> => live(() => inner.list(dir)),
    mkdir: (dir) => live(() => inner.mkdir(dir)),
    writeFiles: (files: readonly FileWrite[]) => live(() => inner.writeFiles(files)),
    appendLine: (p, line) => live(() => inner.appendLine(p, line)),
    flush: () => live(() => inner.flush()),
    rename: (from, to) => live(() => inner.rename(from, to)),
    remove: (p) => live(() => inner.remove(p)),
    createExclusive: (p, data) => live(() => inner.createExclusive(p, data)),
  };
}
