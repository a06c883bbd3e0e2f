/**
 * The lab's file system on a file system that only writes whole files and renames: VS Code's
 * `workspace.fs` (the web host: a remote's disk, a github.dev repository's virtual files,
 * the extension's storage), and memory configured to behave like it (the tests). Such a file
 * system has no append, its `writeFile` is not atomic (a writer stopped in the middle leaves
 * part of the file), and its rename over an existing file deletes the target first, then
 * renames — so a plain "temporary file, renamed over the target" leaves, for a moment, no
 * target at all and the only copy in the temporary file.
 *
 * The contract (labFs.ts) is kept without that moment ever losing the file:
 * - a replace writes the temporary file in full, renames the target aside to its kept copy
 *   `.NAME.old` (nothing is at `.NAME.old` then, or a stale one is deleted first while the
 *   target is still there), renames the temporary file to the target (nothing is there
 *   then), and deletes the kept copy. At every instant the target holds the old or the new
 *   contents, or is missing while `.NAME.old` holds the old ones, complete;
 * - every read (`stat`, `readFile`, `readRange`) takes a missing file's kept copy in its
 *   place, so a reader at any instant sees the old or the new contents (`list` shows the
 *   folder as it is: the kept copy and a log's parts under their own names);
 * - an append to a log (`*.jsonl`) writes only its new bytes, to a part file beside it
 *   (logParts.ts: `.NAME.at-START-END`, written as a temporary file and renamed, so it is
 *   complete once it is there), and every read of the log gives its file followed by its
 *   chain of parts. Parts are merged as a binary counter merges (mergeTail): two into one
 *   (the longer part shadows the two until they are deleted), and into the log's file when
 *   they are about as long as it (compact: the safe replace, then the parts deleted; a part
 *   before the file's end is left out). So an append writes O(log N) bytes per byte, never
 *   the whole log, the log is replaced O(log N) times in all (an outside reader finds the
 *   file missing only then), and a stop between any two calls leaves every line once. A
 *   replace, rename or remove of a log deals with its parts first (merged, or deleted with it).
 *   Another file appended to is read and replaced with one line more;
 * - a file is created exclusively by renaming a temporary file onto it without overwriting,
 *   then reading it back (two racers can both pass the check before the rename).
 * What a writer stopped in the middle leaves — a kept copy, temporary files — is put right by
 * the lab when it reopens the folder (lab/runs/recovery.ts).
 *
 * Leaves out: the calls themselves (the extension's host/workspaceFs.ts over `workspace.fs`,
 * memoryFs.ts's for the tests), watching and permissions.
 */

import { DiskFullError, FileError, fitName } from './fileErrors';
import type { DirEntry, FileStat, FileWrite, LabFs } from './labFs';
import { bytesOf, keptCopyName } from './labFs';
import type { LogPart } from './logParts';
import { assembleLog, chainOf, concatBytes, isLogName, logPart, partsOf } from './logParts';
import { SlashPaths, basenamePath, dirnamePath, joinPath } from './slashPaths';

/**
 * How long an exclusive create waits before reading its file back: longer than a provider
 * takes between its "is the target there?" check and its rename, so any racer's rename has
 * landed by then.
 */
export const CREATE_SETTLE_MS = 50;

/** The calls a whole-file file system offers (the shape of `workspace.fs`), with `/` paths under a URI root. */
export interface WholeFileCalls {
  /** What `p` is, or null when nothing is there. */
  stat(p: string): Promise<FileStat | null>;
  readFile(p: string): Promise<Uint8Array>;
  list(dir: string): Promise<DirEntry[]>;
  /** Creates `dir` and its missing parents. */
  mkdir(dir: string): Promise<void>;
  /** Creates or replaces the whole file (not atomically: a writer stopped in the middle may leave part of it). */
  writeFile(p: string, data: Uint8Array): Promise<void>;
  /** Moves `from` to `to`; with `overwrite`, an existing `to` is deleted first (two steps, not one). */
  rename(from: string, to: string, overwrite: boolean): Promise<void>;
  /** Removes a file or a folder with everything in it; nothing there is fine. */
  delete(p: string): Promise<void>;
  /** True for the error a call throws when its path (or its source) is missing. */
  isMissing(e: unknown): boolean;
}

/** A failed write of temporary file `tmp` told, as every write is, by the file it replaces. */
function namingTarget(e: unknown, tmp: string, target: string): unknown {
  if (FileError.is(e) && e.file === tmp) return new FileError(target, e.problem, { cause: e });
  if (DiskFullError.is(e) && e.file === tmp) return new DiskFullError(target, { cause: e });
  return e;
}

/** The lab's file system over {@link WholeFileCalls} (see the file comment). */
export class WholeFileFs extends SlashPaths implements LabFs {
  private tempCounter = 0;
  /** The append in flight to each file (appendLine chains the next one after it). */
  private readonly appending = new Map<string, Promise<void>>();
  /** The last file read in ranges (a checkpoint being imported piece by piece), whole. */
  private ranged: { path: string; mtime: number; data: Uint8Array } | null = null;
  /** Each log's length after this file system's last append to it, and its last byte. */
  private readonly tails = new Map<string, { length: number; last: number }>();

  constructor(private readonly calls: WholeFileCalls) {
    super();
  }

  /** Where `p`'s contents are kept while it is being replaced. */
  private kept(p: string): string {
    return joinPath(dirnamePath(p), keptCopyName(basenamePath(p)));
  }

  /** What `p` (or while it is being replaced, its kept copy) is, its parts left out. */
  private async statPlain(p: string): Promise<FileStat | null> {
    // Missing twice, with its kept copy missing between: the replace was not in its gap.
    for (let tries = 0; tries < 3; tries++) {
      const st = (await this.calls.stat(p)) ?? (await this.calls.stat(this.kept(p)));
      if (st) return st;
    }
    return null;
  }

  /** The bytes of `p` (or while it is being replaced, of its kept copy), its parts left out. */
  private async readPlain(p: string): Promise<Uint8Array> {
    let missing: unknown;
    for (let tries = 0; tries < 3; tries++) {
      for (const at of [p, this.kept(p)]) {
        try {
          return await this.calls.readFile(at);
        } catch (e) {
          if (!this.calls.isMissing(e)) throw e;
          missing ??= e;
        }
      }
    }
    throw missing;
  }

  /** The part files of `p` when it is a log (logParts.ts), in offset order; [] for any other file. */
  private async partsOf(p: string): Promise<LogPart[]> {
    if (!isLogName(basenamePath(p))) return [];
    let entries: DirEntry[];
    try {
      entries = await this.calls.list(dirnamePath(p));
    } catch (e) {
      if (this.calls.isMissing(e)) return [];
      throw e;
    }
    return partsOf(
      entries.map((e) => e.name),
      basenamePath(p),
    );
  }

  private partPath(p: string, part: LogPart): string {
    return joinPath(dirnamePath(p), part.name);
  }

  async stat(p: string): Promise<FileStat | null> {
    for (let tries = 0; ; tries++) {
      const parts = await this.partsOf(p);
      const base = await this.statPlain(p);
      if (!base || base.kind !== 'file' || parts.length === 0) return base;
      const last = chainOf(p, parts, base.size).at(-1);
      if (!last) return base;
      const st = await this.calls.stat(this.partPath(p, last));
      // Gone: a merge or compaction took it meanwhile; ask again.
      if (st || tries >= 2) return { kind: 'file', size: last.end, mtimeMs: Math.max(base.mtimeMs, st?.mtimeMs ?? 0) };
    }
  }

  async readFile(p: string): Promise<Uint8Array> {
    for (let tries = 0; ; tries++) {
      const parts = await this.partsOf(p);
      const base = await this.readPlain(p);
      try {
        // Which parts are live is told by the base read, so a compaction between the listing and the read is seen.
        return await assembleLog(p, base, parts, (part) => this.calls.readFile(this.partPath(p, part)));
      } catch (e) {
        // A compaction deleted a part after the older base was read: again.
        if (!this.calls.isMissing(e) || tries >= 2) throw e;
      }
    }
  }

  async readRange(p: string, position: number, length: number): Promise<Uint8Array> {
    const st = await this.stat(p);
    if (this.ranged?.path !== p || !st || this.ranged.mtime !== st.mtimeMs || this.ranged.data.length !== st.size) {
      this.ranged = { path: p, mtime: st?.mtimeMs ?? 0, data: await this.readFile(p) };
    }
    return this.ranged.data.slice(position, position + length);
  }

  list(dir: string): Promise<DirEntry[]> {
    return this.calls.list(dir);
  }

  mkdir(dir: string): Promise<void> {
    return this.calls.mkdir(dir);
  }

  async writeFiles(files: readonly FileWrite[]): Promise<void> {
    // A log's parts go before its base is replaced: a shorter base would bring merged parts back.
    for (const f of files) await this.settle(f.path);
    await this.writeWhole(files);
  }

  /** {@link writeFiles} without a look at parts. */
  private async writeWhole(files: readonly FileWrite[]): Promise<void> {
    const temps: { tmp: string; target: string }[] = [];
    try {
      for (const f of files) {
        const dir = dirnamePath(f.path);
        await this.calls.mkdir(dir);
        const tmp = joinPath(dir, fitName('.', basenamePath(f.path), `.${Date.now()}${++this.tempCounter}.tmp`));
        temps.push({ tmp, target: f.path });
        await this.calls.writeFile(tmp, bytesOf(f.data)).catch((e: unknown) => {
          throw namingTarget(e, tmp, f.path);
        });
      }
    } catch (e) {
      for (const { tmp } of temps) await this.calls.delete(tmp).catch(() => undefined);
      throw e;
    }
    // Every new file is complete before the first one replaces its target.
    for (const { tmp, target } of temps) await this.replace(tmp, target);
  }

  /**
   * Moves the complete file `from` over the file `to` so that `to`, or while it is missing
   * its kept copy, holds the old or the new contents at every instant.
   */
  private async replace(from: string, to: string): Promise<void> {
    const kept = this.kept(to);
    let aside = false;
    try {
      await this.calls.rename(to, kept, true); // a stale kept copy is deleted first, while `to` is still there
      aside = true;
    } catch (e) {
      if (!this.calls.isMissing(e)) throw e; // nothing to keep: a new file
    }
    try {
      await this.calls.rename(from, to, false);
    } catch (e) {
      if (aside) await this.calls.rename(kept, to, false).catch(() => undefined);
      throw e;
    }
    if (aside) await this.calls.delete(kept);
  }

  async flush(): Promise<void> {
    // Every append went straight to the file system (as a part: see compact).
  }

  appendLine(p: string, line: string): Promise<void> {
    // One append to a file at a time: two interleaved appends would write the same offset.
    const prev = this.appending.get(p) ?? Promise.resolve();
    const next = prev.then(() => this.appendNow(p, line));
    const settled = next.catch(() => undefined);
    this.appending.set(p, settled);
    void settled.then(() => this.appending.get(p) === settled && this.appending.delete(p));
    return next;
  }

  private async appendNow(p: string, line: string): Promise<void> {
    if (!isLogName(basenamePath(p))) return this.appendByReplacing(p, line);
    const parts = await this.partsOf(p);
    const base = await this.statPlain(p);
    if (!base) {
      // A new log (parts without a base are what a stopped remove left: nothing).
      for (const part of parts) await this.calls.delete(this.partPath(p, part));
      const data = bytesOf(line);
      await this.writeWhole([{ path: p, data }]);
      this.tails.set(p, { length: data.length, last: data[data.length - 1] ?? 0x0a });
      return;
    }
    const chain = chainOf(p, parts, base.size);
    const lastPart = chain.at(-1);
    const length = lastPart?.end ?? base.size;
    let tail = this.tails.get(p);
    if (tail?.length !== length) {
      // Once per log and file system: the last byte, to see a line torn by a stopped writer.
      const data = lastPart ? await this.calls.readFile(this.partPath(p, lastPart)) : await this.readPlain(p);
      tail = { length, last: data.length > 0 ? (data[data.length - 1] as number) : 0x0a };
    }
    const add = bytesOf(length > 0 && tail.last !== 0x0a ? `\n${line}` : line);
    if (add.length === 0) return;
    const part = logPart(basenamePath(p), length, length + add.length);
    await this.writePart(p, part, add);
    this.tails.set(p, { length: part.end, last: add[add.length - 1] as number });
    chain.push(part);
    await this.mergeTail(p, base.size, chain);
  }

  /** Writes log `p`'s part `part` holding `data`: complete the moment it appears. */
  private async writePart(p: string, part: LogPart, data: Uint8Array): Promise<void> {
    const tmp = joinPath(dirnamePath(p), fitName('.', part.name, `.${Date.now()}${++this.tempCounter}.tmp`));
    try {
      await this.calls.writeFile(tmp, data);
      await this.calls.rename(tmp, this.partPath(p, part), false);
    } catch (e) {
      await this.calls.delete(tmp).catch(() => undefined);
      throw namingTarget(e, tmp, p);
    }
  }

  /**
   * Keeps the parts of log `p` few and each byte rewritten seldom, as a binary counter does:
   * while the last part is at least half as long as the one before it, the two become one
   * part (written whole, then the two deleted: the longer part shadows them meanwhile); when
   * the one before is the base, the log is compacted. Each part is then more than twice as
   * long as the next, so a log of N appends has at most about log2(N) parts, and each byte is
   * written O(log N) times in all — never the whole log per append.
   */
  private async mergeTail(p: string, baseSize: number, chain: LogPart[]): Promise<void> {
    for (;;) {
      const last = chain.at(-1);
      if (!last) return;
      const prev = chain.at(-2);
      if ((prev ? prev.end - prev.start : baseSize) > 2 * (last.end - last.start)) return;
      if (!prev) return this.compact(p);
      const data = concatBytes([
        await this.calls.readFile(this.partPath(p, prev)),
        await this.calls.readFile(this.partPath(p, last)),
      ]);
      const merged = logPart(basenamePath(p), prev.start, last.end);
      await this.writePart(p, merged, data);
      for (const gone of [prev, last]) await this.calls.delete(this.partPath(p, gone));
      chain.splice(-2, 2, merged);
    }
  }

  /** The old way, for a file that is not a log: read it and replace it with one line more. */
  private async appendByReplacing(p: string, line: string): Promise<void> {
    let old: Uint8Array;
    try {
      old = await this.readFile(p);
    } catch (e) {
      if (!this.calls.isMissing(e)) throw e;
      old = new Uint8Array(0);
    }
    const torn = old.length > 0 && old[old.length - 1] !== 0x0a;
    const add = bytesOf(torn ? `\n${line}` : line);
    const data = new Uint8Array(old.length + add.length);
    data.set(old);
    data.set(add, old.length);
    await this.writeWhole([{ path: p, data }]);
  }

  /**
   * Merges log `p`'s parts into its base: the whole log replaces the base (safely, as any
   * replace), then the parts, all now before the base's end, are deleted. Stopped between any
   * two steps, the folder holds the old base and every part, or the new base and parts it
   * leaves out.
   */
  private async compact(p: string): Promise<void> {
    const parts = await this.partsOf(p);
    if (parts.length === 0) return;
    const data = await this.readFile(p);
    if (chainOf(p, parts, (await this.statPlain(p))?.size ?? 0).length > 0) await this.writeWhole([{ path: p, data }]);
    for (const part of parts) if (part.start < data.length) await this.calls.delete(this.partPath(p, part));
  }

  /** Leaves log `p` without parts (merged into its base, or deleted where the base is gone). */
  private async settle(p: string): Promise<void> {
    const parts = await this.partsOf(p);
    if (parts.length === 0) return;
    if (await this.statPlain(p)) await this.compact(p);
    for (const part of await this.partsOf(p)) await this.calls.delete(this.partPath(p, part));
    this.tails.delete(p);
  }

  async rename(from: string, to: string): Promise<void> {
    await this.settle(from);
    await this.settle(to);
    const [src, dst] = await Promise.all([this.calls.stat(from), this.calls.stat(to)]);
    if (src?.kind === 'file' && dst?.kind === 'file') return this.replace(from, to);
    if (src?.kind === 'directory' && dst?.kind === 'directory') {
      if ((await this.calls.list(to)).length > 0)
        throw Object.assign(new Error(`${to} is not empty`), { code: 'ENOTEMPTY' });
      await this.calls.delete(to);
    }
    await this.calls.rename(from, to, false);
  }

  async remove(p: string): Promise<void> {
    const parts = await this.partsOf(p);
    // The base first: parts without a base are nothing (see appendNow).
    await this.calls.delete(p);
    await this.calls.delete(this.kept(p));
    for (const part of parts) await this.calls.delete(this.partPath(p, part));
    this.tails.delete(p);
  }

  /**
   * A temporary file holding `data`, renamed onto `p` without overwriting (the call refuses
   * when something is there). Such a file system checks and renames in two steps, so two
   * racers can both pass the check and the later rename replace the earlier; after
   * {@link CREATE_SETTLE_MS} the file holds the last one's bytes, and only the caller whose
   * bytes they are gets true. (Callers put something of their own in `data`: the run lock
   * writes a random token.)
   */
  async createExclusive(p: string, data: Uint8Array | string): Promise<boolean> {
    if (await this.stat(p)) return false;
    const bytes = bytesOf(data);
    const tmp = joinPath(dirnamePath(p), fitName('.', basenamePath(p), `.${Date.now()}${++this.tempCounter}.tmp`));
    await this.calls.writeFile(tmp, bytes);
    try {
      await this.calls.rename(tmp, p, false);
    } catch (e) {
      await this.calls.delete(tmp).catch(() => undefined);
      if (await this.calls.stat(p)) return false; // another racer's rename landed first
      throw e;
    }
    await new Promise((resolve) => setTimeout(resolve, CREATE_SETTLE_MS));
    let now: Uint8Array;
    try {
      now = await this.calls.readFile(p);
    } catch (e) {
      if (this.calls.isMissing(e)) return false; // replaced, then removed by whoever won
      throw e;
    }
    return now.length === bytes.length && now.every((b, i) => b === bytes[i]);
  }
}
