/**
 * The file system the lab reads and writes through: one small interface with an
 * implementation per host — Node's `fs` (fs.node.ts: the CLI, desktop VS Code, Node
 * workers), VS Code's `workspace.fs` (wholeFileFs.ts under the extension's web host, including
 * a github.dev repository's virtual files), a worker's channel to its host (remoteFs.ts: the web's
 * nested workers) and memory (memoryFs.ts: tests) — so run folders, checkpoints, metrics,
 * snapshots, corpora, imports and exports are written once.
 *
 * Paths are strings in the file system's own spelling (a Node path, a URI, a POSIX path
 * in memory); the lab never builds one by hand but asks the file system to join, split and
 * relate them. Every method is asynchronous because `workspace.fs` is.
 *
 * The contract every implementation keeps (test/unit/lab/files/labFs.test.ts runs it on each):
 * - `writeFiles` replaces each file atomically: a temporary file (`.NAME.N.tmp`, N a number)
 *   beside it is written in full, then renamed over it; a failed write removes its
 *   temporaries and replaces nothing (when several files are given, all are written before
 *   the first rename, in the order given). Missing parent folders are created. A reader at
 *   any instant sees the old or the new contents; a writer killed in the middle leaves both
 *   (the target, or on a whole-file file system its kept copy `.NAME.old`, and the complete
 *   temporary file once the renames have begun), which lab/runs/recovery.ts puts right.
 * - `appendLine` adds one line in one piece: a torn last line (a writer killed mid-line)
 *   ends before the new one, which starts on a line of its own.
 * - `stat` answers null for a missing path; `remove` of a missing path does nothing.
 * - `createExclusive` creates a file only where nothing is: of any number of callers at once
 *   (other processes included), exactly one gets true (see each implementation for how far its
 *   file system lets it promise this).
 *
 * Leaves out: watching, permissions, symbolic links and streaming writes (the lab writes
 * whole files: its largest, a checkpoint, is built in memory anyway).
 */

import { fitName } from './fileErrors';

/** What a path names. */
export type EntryKind = 'file' | 'directory';

/** What `stat` reports. */
export interface FileStat {
  readonly kind: EntryKind;
  /** Bytes (0 for a directory). */
  readonly size: number;
  /** Last modification, in milliseconds since 1970. */
  readonly mtimeMs: number;
}

/** One entry of a directory listing. */
export interface DirEntry {
  readonly name: string;
  readonly kind: EntryKind;
}

/** One file of an atomic write: its path and its whole new contents (a string is UTF-8). */
export interface FileWrite {
  readonly path: string;
  readonly data: Uint8Array | string;
}

/** The file system the lab uses (see the file comment for the contract). */
export interface LabFs {
  /** `dir` with `names` appended (each may hold `/`). */
  join(dir: string, ...names: string[]): string;
  /** The folder holding `p` (`p` itself at a root). */
  dirname(p: string): string;
  /** The last name of `p`. */
  basename(p: string): string;
  /** `p` below `from` with `/` separators ('' for `from` itself), or null when `p` is not inside `from`. */
  relative(from: string, p: string): string | null;
  /**
   * The one spelling of `p` this file system uses for identity; a relative `p` is taken
   * from `from` (Node: from the working folder when `from` is absent).
   */
  resolve(p: string, from?: string): string;
  /** What `p` is, or null when nothing is there. */
  stat(p: string): Promise<FileStat | null>;
  /** The whole file. */
  readFile(p: string): Promise<Uint8Array>;
  /** `length` bytes from `position` (fewer only at the end of the file). */
  readRange(p: string, position: number, length: number): Promise<Uint8Array>;
  /** The entries of a directory, in no particular order. */
  list(dir: string): Promise<DirEntry[]>;
  /** Creates `dir` and its missing parents (an existing directory is fine). */
  mkdir(dir: string): Promise<void>;
  /** Replaces each file atomically (see the contract). */
  writeFiles(files: readonly FileWrite[]): Promise<void>;
  /** Appends `line` (ending in a newline) to a log in one piece (see the contract). */
  appendLine(p: string, line: string): Promise<void>;
  /**
   * Settles every earlier `appendLine` (a file system that gathers log lines sends them now,
   * throwing what a failed one threw); nothing waits in the others.
   */
  flush(): Promise<void>;
  /** Moves a file or folder; an existing target file is replaced, an existing target folder must be empty. */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file or a folder with everything in it; nothing there is fine. */
  remove(p: string): Promise<void>;
  /**
   * Creates the file `p` holding `data` only when nothing is at `p` yet: true when this call
   * created it, false when something was already there (left as it was). Its folder must exist.
   * The lock of a run folder (runs/runLock.ts) is built on it.
   */
  createExclusive(p: string, data: Uint8Array | string): Promise<boolean>;
}

const encoder = new TextEncoder();

/** UTF-8 bytes of a string (bytes pass through). */
export function bytesOf(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? encoder.encode(data) : data;
}

/** Atomically replaces one file. */
export function writeFile(fs: LabFs, p: string, data: Uint8Array | string): Promise<void> {
  return fs.writeFiles([{ path: p, data }]);
}

/** The file as UTF-8 text (a leading byte-order mark is kept; callers that care drop it). */
export async function readText(fs: LabFs, p: string): Promise<string> {
  return new TextDecoder('utf-8').decode(await fs.readFile(p));
}

/** True when something is at `p`. */
export async function exists(fs: LabFs, p: string): Promise<boolean> {
  return (await fs.stat(p)) !== null;
}

/** True when `p` is a file. */
export async function isFile(fs: LabFs, p: string): Promise<boolean> {
  return (await fs.stat(p))?.kind === 'file';
}

/** True when `p` is a directory. */
export async function isDirectory(fs: LabFs, p: string): Promise<boolean> {
  return (await fs.stat(p))?.kind === 'directory';
}

/** Names in `dir` ([] when it is missing). */
export async function listNames(fs: LabFs, dir: string): Promise<string[]> {
  if (!(await isDirectory(fs, dir))) return [];
  return (await fs.list(dir)).map((e) => e.name);
}

/** The temporary files `writeFiles` leaves only when its writer is killed: `.NAME.N.tmp`. */
export const TEMP_FILE = /^\..+\.\d+\.tmp$/;

/**
 * The copy of a file a whole-file file system keeps while it replaces the file (wholeFileFs.ts):
 * `.NAME.old`; the first group is NAME.
 */
export const KEPT_FILE = /^\.(.+)\.old$/;

/** The name of `name`'s kept copy (see {@link KEPT_FILE}). */
export function keptCopyName(name: string): string {
  return `.${name}.old`;
}

/**
 * Removes temporary files a killed writer may have left in `dir` (a run folder's own files
 * are put right by lab/runs/recovery.ts instead, which keeps what a temporary file may hold).
 */
export async function removeStaleTemps(fs: LabFs, dir: string): Promise<void> {
  for (const name of await listNames(fs, dir)) if (TEMP_FILE.test(name)) await fs.remove(fs.join(dir, name));
}

/**
 * A fresh folder name beside `target` for building it before it is renamed into place
 * (`.NAME.WHAT-XXXXXX`, NAME cut to fit a name's 255 bytes); the caller creates it.
 */
export async function scratchFolder(fs: LabFs, target: string, what: string): Promise<string> {
  const parent = fs.dirname(target);
  for (;;) {
    const dir = fs.join(
      parent,
      fitName('.', fs.basename(target), `.${what}-${Math.random().toString(36).slice(2, 8)}`),
    );
    if (!(await exists(fs, dir))) return dir;
  }
}

/**
 * The complete lines of an append-only log's text: a last line without its newline (a
 * writer killed mid-line) is left out, as are blank lines.
 */
export function completeLines(text: string): string[] {
  const end = text.lastIndexOf('\n');
  return end < 0
    ? []
    : text
        .slice(0, end)
        .split('\n')
        .filter((l) => l.trim() !== '');
}
