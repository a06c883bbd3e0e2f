/**
 * Corpus collection for decoder-only training: turns glob patterns (the CLI's `--data`) or
 * a list of files (the VS Code extension finds its own with `workspace.findFiles`) into
 * UTF-8 documents, skipping and reporting what is not usable text, honoring `.gitignore`,
 * and never reading `.git/` or `node_modules/`. The result is sorted by path, and size
 * limits are applied in that order, so the same files always give the same corpus. Also
 * a deterministic train/validation split of the documents.
 *
 * Leaves out: tokenization and windowing of the text (the training loop does that),
 * encodings other than UTF-8, and following symbolic links while globbing.
 */

import { statSync } from 'node:fs';
import * as path from 'node:path';
import { escapePath, glob, isDynamicPattern } from 'tinyglobby';
import { EngineError } from '../engine/errors';
import type { SkippedFile } from '../protocol';
import { summarizeSkipped } from '../protocol';
import { GitignoreFilter } from './gitignore';
import { readTextFile } from './textFile';

/** One text file of a corpus. */
export interface CorpusDocument {
  /** Path relative to the corpus root, with `/` separators. */
  readonly path: string;
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

/** Size limits of a corpus. */
export interface CorpusLimits {
  /** Largest file kept, in bytes (default 1 MiB). */
  readonly maxFileBytes?: number;
  /** Largest total kept, in bytes (default 50 MiB); files past it are skipped as too large. */
  readonly maxTotalBytes?: number;
}

/** Options of {@link collectDocuments}. */
export interface CollectOptions extends CorpusLimits {
  /** Folder the patterns are relative to; also the corpus root. */
  readonly cwd: string;
}

/** Default per-file limit: 1 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 1 << 20;
/** Default corpus limit: 50 MiB. */
export const DEFAULT_MAX_TOTAL_BYTES = 50 << 20;


function limitsOf(opts: CorpusLimits): { maxFile: number; maxTotal: number } {
  const maxFile = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxTotal = opts.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  for (const [name, v] of [['maxFileBytes', maxFile], ['maxTotalBytes', maxTotal]] as const) {
    if (!Number.isSafeInteger(v) || v < 1) {
      throw new EngineError('input/invalid', `${name} must be a whole number of bytes ≥ 1; got ${v}. Give a positive size.`);
    }
  }
  return { maxFile, maxTotal };
}

function toPosix(rel: string): string {
  return rel.split(path.sep).join('/');
}

function byPath<T extends { readonly path: string }>(a: T, b: T): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Absolute paths of the files the patterns name. A plain path (no glob characters) that
 * is a file is taken as is; one that is a folder means everything under it.
 */
async function expandPatterns(patterns: readonly string[], root: string): Promise<string[]> {
  const found = new Set<string>();
  const globs: string[] = [];
  for (const pattern of patterns) {
    if (pattern.trim() === '') throw new EngineError('input/invalid', 'A data pattern is empty; give a file, a folder or a glob such as "docs/**/*.md".');
    if (isDynamicPattern(pattern)) {
      globs.push(pattern);
      continue;
    }
    const abs = path.resolve(root, pattern);
    if (isFile(abs)) found.add(abs);
    else if (isDirectory(abs)) globs.push(`${escapePath(toPosix(path.relative(root, abs)) || '.')}/**`);
  }
  if (globs.length > 0) {
    const matches = await glob(globs, {
      cwd: root,
      absolute: true,
      dot: false,
      onlyFiles: true,
      expandDirectories: false,
      followSymbolicLinks: false,
      ignore: ['**/node_modules/**', '**/.git/**'],
    });
    for (const m of matches) found.add(path.resolve(m));
  }
  return [...found];
}


/** Reads the files in path order, applying filters and limits. */
async function readAll(files: readonly string[], root: string, limits: CorpusLimits, what: string): Promise<Corpus> {
  const { maxFile, maxTotal } = limitsOf(limits);
  const filter = new GitignoreFilter(root);
  const entries = files.map((abs) => ({ abs, path: toPosix(path.relative(root, abs)) })).sort(byPath);
  const documents: CorpusDocument[] = [];
  const skipped: SkippedFile[] = [];
  let bytes = 0;
  for (const { abs, path: rel } of entries) {
    if (filter.isIgnored(abs)) {
      skipped.push({ path: rel, reason: 'ignored' });
      continue;
    }
    const r = await readTextFile(abs, Math.min(maxFile, maxTotal - bytes));
    if (!r.ok) {
      skipped.push({ path: rel, reason: r.reason });
      continue;
    }
    documents.push({ path: rel, text: r.text.replace(/\r\n/g, '\n') });
    bytes += r.bytes;
  }
  if (documents.length === 0) {
    throw new EngineError(
      'input/invalid',
      `All ${skipped.length} ${skipped.length === 1 ? 'file' : 'files'} ${what} were skipped (${summarizeSkipped(skipped)}); ` +
        `files must be UTF-8 text of at most ${maxFile} bytes each (${maxTotal} in all), not empty and not ignored by .gitignore. ` +
        'Point the data at text files.',
    );
  }
  return { root, documents, bytes, skipped };
}

/**
 * Collects the text files matching `patterns` (globs, or plain file and folder paths,
 * relative to `opts.cwd` or absolute). Honors `.gitignore` (root and nested) and
 * `.git/info/exclude`; `.git/` and `node_modules/` are never read. Skips and reports
 * binary, non-UTF-8, too large, empty, unreadable and ignored files. Throws
 * `EngineError('input/invalid')` when nothing matches or every match was skipped.
 */
export async function collectDocuments(patterns: readonly string[], opts: CollectOptions): Promise<Corpus> {
  const root = path.resolve(opts.cwd);
  limitsOf(opts);
  const quoted = patterns.map((p) => JSON.stringify(p)).join(', ');
  if (patterns.length === 0) {
    throw new EngineError('input/invalid', 'No data patterns given; name files, folders or globs such as "docs/**/*.md".');
  }
  const files = await expandPatterns(patterns, root);
  if (files.length === 0) {
    throw new EngineError(
      'input/invalid',
      `No files match ${quoted} (relative to ${root}); check the pattern or quote it so your shell does not expand it. ` +
        '(.git/ and node_modules/ are always left out.)',
    );
  }
  return readAll(files, root, opts, `matching ${quoted}`);
}

/**
 * Reads the given files (absolute, or relative to `root`) with the same filters as
 * {@link collectDocuments} but no globbing: for callers that found the files themselves.
 * Document paths are relative to `root`.
 */
export async function collectFromPaths(paths: readonly string[], root: string, opts: CorpusLimits = {}): Promise<Corpus> {
  const absRoot = path.resolve(root);
  limitsOf(opts);
  if (paths.length === 0) {
    throw new EngineError('input/invalid', `No files given to collect under ${absRoot}; choose at least one text file.`);
  }
  const files = [...new Set(paths.map((p) => path.resolve(absRoot, p)))];
  return readAll(files, absRoot, opts, `given under ${absRoot}`);
}

/** FNV-1a over the UTF-8 bytes of `s`, then seeded and finalized with murmur3's fmix32. */
function pathHash(s: string, seed: number): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) h = Math.imul(h ^ b, 0x01000193);
  h ^= Math.imul(seed | 0, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
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
    throw new EngineError('input/invalid', `The validation fraction must be in [0, 1); got ${valFraction}. Use e.g. 0.1.`);
  }
  const scored = docs.map((doc) => ({ doc, u: pathHash(doc.path, seed) / 4294967296 }));
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
