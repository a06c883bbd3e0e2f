/**
 * A log (an append-only `.jsonl` file) kept as a base file and part files beside it, as a
 * whole-file file system appends (wholeFileFs.ts): an append writes only its new bytes, to
 * `.NAME.at-START-END` (START and END: twelve digits each, the bytes of the log the part
 * holds, END excluded). The log's contents are the base followed by a chain of parts: from
 * the base's end, at each offset the part starting there that reaches furthest, until no part
 * starts where the chain ends. A part starting before the chain's position is already in the
 * base or in a longer part (a merge was stopped before deleting it) and is left out. The lab's
 * recovery (lab/runs/recovery.ts) merges the parts into the base on any file system, so a
 * folder a web session left is read whole on Node too.
 *
 * Leaves out: writing, merging and compacting the parts as they are appended (wholeFileFs.ts).
 */

import type { LabFs } from './labFs';
import { listNames, writeFile } from './labFs';

/** A part file of a log: `.NAME.at-START-END`; the groups are NAME, START and END. */
export const LOG_PART = /^\.(.+)\.at-(\d{12})-(\d{12})$/;

/** True for the names of the files kept as a base and parts (the lab's logs, `*.jsonl`). */
export function isLogName(name: string): boolean {
  return name.endsWith('.jsonl');
}

/** One part of a log: its file name and the bytes of the log it holds. */
export interface LogPart {
  readonly name: string;
  readonly start: number;
  /** The byte after its last. */
  readonly end: number;
}

/** The part of log `name` holding its bytes from `start` up to `end`. */
export function logPart(name: string, start: number, end: number): LogPart {
  const digits = (n: number): string => String(n).padStart(12, '0');
  return { name: `.${name}.at-${digits(start)}-${digits(end)}`, start, end };
}

/** The parts of log `log` among the names of its folder, in no particular order. */
export function partsOf(names: readonly string[], log: string): LogPart[] {
  const out: LogPart[] = [];
  for (const name of names) {
    const m = LOG_PART.exec(name);
    if (m && m[1] === log && Number(m[3]) > Number(m[2])) out.push({ name, start: Number(m[2]), end: Number(m[3]) });
  }
  return out;
}

/**
 * The parts that follow a base of `baseLength` bytes, in order (see the file comment). A part
 * starting past the chain's end is a gap and throws: one writer per run never leaves one.
 */
export function chainOf(log: string, parts: readonly LogPart[], baseLength: number): LogPart[] {
  const chain: LogPart[] = [];
  let at = baseLength;
  for (;;) {
    let next: LogPart | null = null;
    for (const p of parts) if (p.start === at && (next === null || p.end > next.end)) next = p;
    if (next === null) break;
    chain.push(next);
    at = next.end;
  }
  const gap = parts.find((p) => p.start > at);
  if (gap)
    throw new Error(
      `${log}: its part ${gap.name} starts at byte ${gap.start}, past its end at ${at}; ` +
        'keep a copy of the run folder and report this.',
    );
  return chain;
}

/** The bytes of `chunks` one after another. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** The log's contents: `base` followed by its chain of parts (`read` gives a part's bytes). */
export async function assembleLog(
  log: string,
  base: Uint8Array,
  parts: readonly LogPart[],
  read: (part: LogPart) => Promise<Uint8Array>,
): Promise<Uint8Array> {
  const chain = chainOf(log, parts, base.length);
  if (chain.length === 0) return base;
  const chunks = [base];
  for (const part of chain) {
    const data = await read(part);
    if (data.length !== part.end - part.start)
      throw new Error(
        `${log}: its part ${part.name} holds ${data.length} bytes, not ${part.end - part.start}; ` +
          'keep a copy of the run folder and report this.',
      );
    chunks.push(data);
  }
  return concatBytes(chunks);
}

/**
 * Merges the part files beside every log in `dir` into the log, on any file system (Node's
 * reads a log's file alone): the log is replaced by its whole contents, then its parts are
 * removed; parts without their log are what a stopped remove left, and are removed. Run on
 * reopen (lab/runs/recovery.ts) and when a session ends (runs/runLock.ts).
 */
export async function mergeLogParts(fs: LabFs, dir: string): Promise<void> {
  const names = await listNames(fs, dir);
  const logs = new Set(names.flatMap((n) => LOG_PART.exec(n)?.[1] ?? []));
  for (const log of logs) {
    const parts = partsOf(names, log);
    const file = fs.join(dir, log);
    if (names.includes(log)) {
      const base = await fs.readFile(file);
      await writeFile(fs, file, await assembleLog(log, base, parts, (p) => fs.readFile(fs.join(dir, p.name))));
    }
    for (const part of parts) await fs.remove(fs.join(dir, part.name));
  }
}
