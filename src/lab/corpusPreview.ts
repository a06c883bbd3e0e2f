/**
 * A quick look at a document corpus before training, for "Configure Model…" to show while
 * the glob is typed: the files training would take, their size, and which are skipped and
 * why. The plan is {@link planCorpus} itself — the function training runs — so the count
 * and the skips are the ones training will find; the checks that need a file's contents
 * (binary, not UTF-8, empty, minified, generated) run {@link readPlannedFile} on the first
 * files within a reading budget, and the result says how many were read. The distinct
 * characters of the files read give the character tokenizer's vocabulary size.
 *
 * Bounded and cancellable: the caller caps the number of files it passes (and says so),
 * reading stops at the budget, and an aborted signal stops the work between files.
 *
 * Leaves out: finding the files (the CLI globs, the extension asks VS Code), and tokenizing.
 */

import type { SkippedFile } from '../protocol/data';
import type { CorpusLimits, PlannedFile } from './corpus';
import { limitsOf, planCorpus, readPlannedFile } from './corpus';

/** How much of the corpus a preview reads for the checks that need contents. */
export interface PreviewBudget {
  /** Most files read (default 300). */
  readonly maxFiles?: number;
  /** Most bytes read in all (default 8 MiB); a file that would pass it is not read. */
  readonly maxBytes?: number;
}

/** What a preview found. */
export interface CorpusPreview {
  readonly root: string;
  /** Files training would take (planned and, where read, usable text), in path order. */
  readonly files: readonly PlannedFile[];
  /** Bytes of `files`. */
  readonly bytes: number;
  /** Files left out, with why, in path order. */
  readonly skipped: readonly SkippedFile[];
  /** How many planned files were read for the content checks (the first ones, in path order). */
  readonly read: number;
  /** How many planned files there were before reading (`read` of them were read). */
  readonly planned: number;
  /** Distinct characters (code points) in the files read. */
  readonly distinctChars: number;
}

/** Thrown when the signal aborts a preview. */
export class PreviewCancelled extends Error {
  constructor() {
    super('The preview was cancelled.');
    this.name = 'PreviewCancelled';
  }
}

/**
 * Plans the corpus of `files` (absolute paths) under `root` exactly as training does, then
 * reads the first planned files within `budget` for the content checks.
 */
export async function previewCorpus(files: readonly string[], root: string, limits: CorpusLimits, budget: PreviewBudget = {}, signal?: AbortSignal): Promise<CorpusPreview> {
  const { skipGenerated } = limitsOf(limits);
  const check = (): void => {
    if (signal?.aborted) throw new PreviewCancelled();
  };
  check();
  const plan = await planCorpus(files, root, limits);
  check();
  const maxFiles = budget.maxFiles ?? 300;
  const maxBytes = budget.maxBytes ?? 8 << 20;
  const kept: PlannedFile[] = [];
  const skipped: SkippedFile[] = [...plan.skipped];
  const chars = new Set<number>();
  let read = 0;
  let readBytes = 0;
  let i = 0;
  for (; i < plan.files.length; i++) {
    const file = plan.files[i] as PlannedFile;
    if (read >= maxFiles || readBytes + file.bytes > maxBytes) break;
    const r = await readPlannedFile(file, skipGenerated);
    check();
    read++;
    readBytes += file.bytes;
    if (!r.ok) {
      skipped.push({ path: file.path, reason: r.reason });
      continue;
    }
    for (const ch of r.text) {
      const cp = ch.codePointAt(0) as number;
      if (cp < 0xd800 || cp > 0xdfff) chars.add(cp); // lone surrogates are never vocabulary entries (charTokenizer.ts)
    }
    kept.push(file);
  }
  kept.push(...plan.files.slice(i));
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { root, files: kept, bytes: kept.reduce((n, f) => n + f.bytes, 0), skipped, read, planned: plan.files.length, distinctChars: chars.size };
}
