/**
 * A quick look at a document corpus before training, for "Configure Model…" to show while
 * the glob is typed: the files training would take, their size, and which are skipped and
 * why. The plan is {@link planCorpus} itself — the function training runs — so the count
 * and the skips are the ones training will find; the checks that need a file's contents
 * (binary, not UTF-8, empty, minified, generated) run {@link readPlannedFile} on the first
 * files within a reading budget (files over 256 KiB are not read here), and the result
 * says how many were read. The files not read are still tested for being binary on their first
 * 8 KiB ({@link isBinaryFile}, the test reading them applies), so no binary file is listed as
 * one to train on (on a file system that reads only whole files, the caller may leave large ones
 * unchecked: {@link PreviewBudget.maxSniffFileBytes}). The distinct
 * characters of the files read give the character tokenizer's vocabulary size.
 *
 * Bounded and cancellable: the caller caps the number of files it passes (and says so),
 * reading stops at the budget, and an aborted signal stops the work between files.
 *
 * Leaves out: finding the files (the CLI globs, the extension asks VS Code), and tokenizing.
 */

import type { SkippedFile } from '../../protocol/data';
import type { CorpusLimits, PlannedFile } from './corpus';
import type { LabFs } from '../files/labFs';
import { limitsOf, planCorpus, readPlannedFile } from './corpus';
import { isBinaryFile } from './textFile';

/** How much of the corpus a preview reads for the checks that need contents. */
export interface PreviewBudget {
  /** Most files read (default 300). */
  readonly maxFiles?: number;
  /** Most bytes read in all (default 4 MiB); reading stops at the file that would pass it. */
  readonly maxBytes?: number;
  /** Largest file read (default 256 KiB): larger ones are listed unread, so no single file holds the thread long. */
  readonly maxFileBytes?: number;
  /** Most files not read whose first 8 KiB are checked for binary bytes (default 1000). */
  readonly maxSniffFiles?: number;
  /**
   * Largest file not read whose first 8 KiB are checked (default: any size). Where a file
   * system reads only whole files — VS Code's `workspace.fs` on the web, where the bytes travel
   * through the page — checking the start of a large file reads all of it, so the caller bounds
   * it; a larger file is kept unread, checked when training reads it.
   */
  readonly maxSniffFileBytes?: number;
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
  /** How many planned files were read for the content checks (in path order, within the budget). */
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
export async function previewCorpus(
  fs: LabFs,
  files: readonly string[],
  root: string,
  limits: CorpusLimits,
  budget: PreviewBudget = {},
  signal?: AbortSignal,
): Promise<CorpusPreview> {
  const { skipGenerated } = limitsOf(limits);
  const check = (): void => {
    if (signal?.aborted) throw new PreviewCancelled();
  };
  check();
  const plan = await planCorpus(fs, files, root, limits);
  check();
  const maxFiles = budget.maxFiles ?? 300;
  const maxBytes = budget.maxBytes ?? 4 << 20;
  const maxFileBytes = budget.maxFileBytes ?? 256 << 10;
  const kept: PlannedFile[] = [];
  const skipped: SkippedFile[] = [...plan.skipped];
  const seen = new Uint8Array(0x110000);
  let distinctChars = 0;
  let read = 0;
  let readBytes = 0;
  let sniffs = budget.maxSniffFiles ?? 1000;
  const maxSniffFileBytes = budget.maxSniffFileBytes ?? Number.POSITIVE_INFINITY;
  /** Keeps a file not read, unless its first bytes show it binary. */
  const keepUnread = async (file: PlannedFile): Promise<void> => {
    if (sniffs > 0 && file.bytes <= maxSniffFileBytes) {
      sniffs--;
      const binary = await isBinaryFile(fs, file.abs);
      check();
      if (binary) return void skipped.push({ path: file.path, reason: 'binary' });
    }
    kept.push(file);
  };
  let i = 0;
  for (; i < plan.files.length; i++) {
    const file = plan.files[i] as PlannedFile;
    if (read >= maxFiles) break;
    if (file.bytes > maxFileBytes) {
      await keepUnread(file);
      continue;
    }
    if (readBytes + file.bytes > maxBytes) break;
    const r = await readPlannedFile(fs, file, skipGenerated);
    check();
    read++;
    readBytes += file.bytes;
    if (!r.ok) {
      skipped.push({ path: file.path, reason: r.reason });
      continue;
    }
    distinctChars += markChars(r.text, seen);
    kept.push(file);
  }
  for (const file of plan.files.slice(i)) await keepUnread(file);
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    root,
    files: kept,
    bytes: kept.reduce((n, f) => n + f.bytes, 0),
    skipped,
    read,
    planned: plan.files.length,
    distinctChars,
  };
}

/**
 * Marks the code points of `text` in `seen` and returns how many were new. Lone surrogates
 * are never vocabulary entries (charTokenizer.ts), so they are not counted. A flat table and
 * charCodeAt, not a Set and the string iterator: ten times faster, which matters on the
 * extension host's thread.
 */
function markChars(text: string, seen: Uint8Array): number {
  let added = 0;
  for (let i = 0; i < text.length; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (seen[cp] === 0) {
      seen[cp] = 1;
      added++;
    }
  }
  return added;
}
