/**
 * Corpus collection for decoder-only training: turns glob patterns (the CLI's `--data`) or
 * a list of files (the VS Code extension finds its own with `workspace.findFiles`) into
 * UTF-8 documents, skipping and reporting what is not usable text, honoring `.gitignore`,
 * skipping repository clutter (codeFiles.ts), and never reading `.git/` or `node_modules/`.
 * Files are taken in path order and size limits applied in that order, so the same files
 * always give the same corpus. Training streams the files one at a time (`planCorpus` then
 * `readPlannedFile`, see documentData.ts); `collectDocuments` reads them all for callers that
 * want the texts. Also a deterministic split of whole documents by path.
 *
 * Leaves out: tokenization and windowing of the text (documentData.ts, dataset.ts),
 * encodings other than UTF-8, and following symbolic links while globbing.
 */

import { EngineError } from '../../engine/errors';
import { formatBytes } from '../../common/format';
import type { SkippedFile } from '../../protocol/data';
import { summarizeSkipped } from '../../protocol/data';
import type { LabFs } from '../files/labFs';
import { shownPath } from '../files/slashPaths';
import { skipByContent, skipByPath } from './codeFiles';
import { GitignoreFilter } from './gitignore';
import { hashString, unitInterval } from './seededHash';
import { BINARY_EXTENSIONS, readTextFile } from './textFile';
import { extensionOf } from '../files/slashPaths';

/** One text file of a corpus. */
export interface CorpusDocument {
  /** Path relative to the corpus root, with `/` separators (its name alone for a file outside the root). */
  readonly path: string;
  /** The file's own path on the file system it was read from. */
  readonly abs: string;
  /** The file's text (UTF-8 decoded, BOM dropped, CRLF turned into LF). */
  readonly text: string;
}

/** The documents of a corpus and what was left out. */
export interface Corpus {
  /** Absolute folder the document paths are relative to. */
  readonly root: string;
  /** Sorted by path. */
  readonly documents: readonly CorpusDocument[];
  /** Total size of the documents' files in bytes. */
  readonly bytes: number;
  /** Files that matched but were left out, sorted by path. */
  readonly skipped: readonly SkippedFile[];
}

/** Size limits of a corpus, and whether repository clutter is skipped. */
export interface CorpusLimits {
  /** Largest file kept, in bytes (default {@link DEFAULT_MAX_FILE_BYTES}). */
  readonly maxFileBytes?: number;
  /** Largest total kept, in bytes (default {@link DEFAULT_MAX_TOTAL_BYTES}); files past it are skipped. */
  readonly maxTotalBytes?: number;
  /** Skip lockfiles, vendored and build folders, minified and generated files (codeFiles.ts); default true. */
  readonly skipGenerated?: boolean;
}

/** Options of {@link collectDocuments}. */
export interface CollectOptions extends CorpusLimits {
  /** Folder the patterns are relative to; also the corpus root. */
  readonly cwd: string;
}

/** Default per-file limit: 64 MiB (a book collection or a large dump; raise it for more). */
export const DEFAULT_MAX_FILE_BYTES = 64 << 20;
/** Default corpus limit: 256 MiB. */
export const DEFAULT_MAX_TOTAL_BYTES = 256 << 20;

/** How people lift each limit, in the CLI and in VS Code. */
export const LIMIT_HINTS = {
  file: 'raise it with --max-file-mb N (CLI) or the attentionLab.data.maxFileSizeMB setting',
  total: 'raise it with --max-total-mb N (CLI) or the attentionLab.data.maxTotalSizeMB setting',
} as const;

/** The limits with their defaults, checked. */
export function limitsOf(opts: CorpusLimits): { maxFile: number; maxTotal: number; skipGenerated: boolean } {
  const maxFile = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxTotal = opts.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  for (const [name, v] of [
    ['maxFileBytes', maxFile],
    ['maxTotalBytes', maxTotal],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 1) {
      throw new EngineError(
        'input/invalid',
        `${name} must be a whole number of bytes ≥ 1; got ${v}. Give a positive size.`,
      );
    }
  }
  return { maxFile, maxTotal, skipGenerated: opts.skipGenerated ?? true };
}

function byPath<T extends { readonly path: string }>(a: T, b: T): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/** A file that passed the checks made without reading it, in path order. */
export interface PlannedFile {
  readonly abs: string;
  /** Relative to the corpus root, with `/` separators. */
  readonly path: string;
  readonly bytes: number;
}

/** The files a corpus will read, and what was left out before reading. */
export interface CorpusPlan {
  readonly root: string;
  readonly files: readonly PlannedFile[];
  readonly skipped: readonly SkippedFile[];
  /** Bytes of the planned files. */
  readonly bytes: number;
}

/**
 * Orders the files by path and applies every check that needs no reading: `.gitignore`,
 * lockfiles and vendored folders (unless `skipGenerated` is false), known binary
 * extensions, unreadable entries, and the per-file and total size limits (a file past the
 * total is skipped, and the files after it may still fit).
 */
export async function planCorpus(
  fs: LabFs,
  files: readonly string[],
  root: string,
  limits: CorpusLimits,
): Promise<CorpusPlan> {
  const { maxFile, maxTotal, skipGenerated } = limitsOf(limits);
  const filter = new GitignoreFilter(fs, root);
  const entries = files.map((abs) => ({ abs, path: fs.relative(root, abs) ?? fs.basename(abs) })).sort(byPath);
  const planned: PlannedFile[] = [];
  const skipped: SkippedFile[] = [];
  let bytes = 0;
  for (const { abs, path: rel } of entries) {
    const byPathReason = (await filter.isIgnored(abs)) ? 'ignored' : skipGenerated ? skipByPath(rel) : null;
    if (byPathReason) {
      skipped.push({ path: rel, reason: byPathReason });
      continue;
    }
    let size: number;
    try {
      const st = await fs.stat(abs);
      if (st?.kind !== 'file') throw new Error('not a file');
      size = st.size;
    } catch {
      skipped.push({ path: rel, reason: 'unreadable' });
      continue;
    }
    if (BINARY_EXTENSIONS.has(extensionOf(abs))) skipped.push({ path: rel, reason: 'binary' });
    else if (size > maxFile) skipped.push({ path: rel, reason: 'too-large', bytes: size });
    else if (bytes + size > maxTotal) skipped.push({ path: rel, reason: 'over-total', bytes: size });
    else {
      planned.push({ abs, path: rel, bytes: size });
      bytes += size;
    }
  }
  return { root, files: planned, skipped, bytes };
}

/**
 * Reads one planned file as a document, or says why it is left out once read: binary,
 * not UTF-8, empty, minified or generated (the last two unless `skipGenerated` is false).
 * CRLF becomes LF and a BOM is dropped.
 */
export async function readPlannedFile(
  fs: LabFs,
  file: PlannedFile,
  skipGenerated = true,
): Promise<{ ok: true; text: string } | { ok: false; reason: SkippedFile['reason'] }> {
  const r = await readTextFile(fs, file.abs, Number.MAX_SAFE_INTEGER);
  if (!r.ok) return r;
  const text = r.text.includes('\r') ? r.text.replace(/\r\n/g, '\n') : r.text;
  const reason = skipGenerated ? skipByContent(file.path, text) : null;
  return reason ? { ok: false, reason } : { ok: true, text };
}

/**
 * A note on skipped files for the log: counts by reason, and for files over a size limit
 * the largest one's name and size with how to lift the limit.
 */
export function skippedNote(skipped: readonly SkippedFile[], limits: CorpusLimits): string {
  const { maxFile, maxTotal } = limitsOf(limits);
  const parts = [summarizeSkipped(skipped)];
  const largest = (reason: SkippedFile['reason']): SkippedFile | undefined =>
    skipped.filter((f) => f.reason === reason).sort((a, b) => (b.bytes ?? 0) - (a.bytes ?? 0))[0];
  const big = largest('too-large');
  if (big)
    parts.push(
      `${big.path} is ${formatBytes(big.bytes ?? 0)}, over the ${formatBytes(maxFile)} limit per ` +
        `file: ${LIMIT_HINTS.file}`,
    );
  const over = largest('over-total');
  if (over)
    parts.push(
      `${over.path} (${formatBytes(over.bytes ?? 0)}) would take the corpus past its ` +
        `${formatBytes(maxTotal)} total: ${LIMIT_HINTS.total}`,
    );
  return parts.join('; ');
}

/** The error when no document is left: what was skipped, and what to change. */
export function noDocumentsError(skipped: readonly SkippedFile[], what: string, limits: CorpusLimits): EngineError {
  const n = skipped.length;
  const sized = skipped.some((f) => f.reason === 'too-large' || f.reason === 'over-total');
  return new EngineError(
    'input/invalid',
    `${n === 1 ? `The only file ${what} was` : `All ${n} files ${what} were`}` +
      ` skipped (${skippedNote(skipped, limits)})` +
      (sized ? '.' : '; point the data at UTF-8 text files that are not empty, generated or ignored by .gitignore.'),
  );
}

/**
 * Reads every file that passes the checks (for callers that want the texts; training
 * streams instead). `what` says which files were asked for, for the error when none is left.
 */
export async function readCorpus(
  fs: LabFs,
  files: readonly string[],
  root: string,
  limits: CorpusLimits,
  what: string,
): Promise<Corpus> {
  const plan = await planCorpus(fs, files, root, limits);
  const { skipGenerated } = limitsOf(limits);
  const documents: CorpusDocument[] = [];
  const skipped: SkippedFile[] = [...plan.skipped];
  let bytes = 0;
  for (const file of plan.files) {
    const r = await readPlannedFile(fs, file, skipGenerated);
    if (!r.ok) {
      skipped.push({ path: file.path, reason: r.reason });
      continue;
    }
    documents.push({ path: file.path, abs: file.abs, text: r.text });
    bytes += file.bytes;
  }
  if (documents.length === 0) throw noDocumentsError(skipped, what, limits);
  return { root, documents, bytes, skipped: skipped.sort(byPath) };
}

/**
 * Reads the given files (absolute, or relative to `root`) with the same filters as
 * {@link collectDocuments} but no globbing: for callers that found the files themselves.
 * Document paths are relative to `root`.
 */
export async function collectFromPaths(
  fs: LabFs,
  paths: readonly string[],
  root: string,
  opts: CorpusLimits = {},
): Promise<Corpus> {
  const absRoot = fs.resolve(root);
  limitsOf(opts);
  if (paths.length === 0) {
    throw new EngineError(
      'input/invalid',
      `No files given to collect under ${shownPath(absRoot)}; choose at least one text file.`,
    );
  }
  const files = [...new Set(paths.map((p) => fs.resolve(p, absRoot)))];
  return readCorpus(fs, files, absRoot, opts, `given under ${shownPath(absRoot)}`);
}

/**
 * Splits documents into training and validation sets by a stable hash of each path with
 * the seed: a document is held out when its hash falls below `valFraction`, so adding or
 * removing one file never moves another. Guarantees ≥ 1 training document and, with
 * ≥ 2 documents, ≥ 1 validation document (moving the document whose hash is nearest the
 * threshold), even when `valFraction` is 0. Input order is kept within each set.
 */
export function splitDocuments<T extends { readonly path: string }>(
  docs: readonly T[],
  valFraction: number,
  seed: number,
): { train: T[]; val: T[] } {
  if (!(valFraction >= 0 && valFraction < 1)) {
    throw new EngineError(
      'input/invalid',
      `The validation fraction must be in [0, 1); got ${valFraction}. Use e.g. 0.1.`,
    );
  }
  const scored = docs.map((doc) => ({ doc, u: unitInterval(hashString(doc.path, seed)) }));
  const isVal = scored.map((s) => s.u < valFraction);
  const nVal = isVal.filter(Boolean).length;
  const extreme = (pick: (a: number, b: number) => boolean, want: boolean): number => {
    let best = -1;
    scored.forEach((s, i) => {
      if (isVal[i] === want && (best < 0 || pick(s.u, (scored[best] as { u: number }).u))) best = i;
    });
    return best;
  };
  if (docs.length >= 1 && nVal === docs.length) isVal[extreme((a, b) => a > b, true)] = false;
  if (docs.length >= 2 && nVal === 0) isVal[extreme((a, b) => a < b, false)] = true;
  return {
    train: scored.filter((_, i) => !isVal[i]).map((s) => s.doc),
    val: scored.filter((_, i) => isVal[i]).map((s) => s.doc),
  };
}
