/**
 * Source→target pairs from the user's files, for the encoder-decoder: two parallel line
 * files (line i of SRC goes with line i of TGT, the layout of WMT and Multi30k), one
 * `.tsv` (SRC<TAB>TGT per line) or one `.jsonl` (an object with string `src` and `tgt` per
 * line, https://jsonlines.org). Files must be UTF-8; CRLF line ends and trailing blank
 * lines are accepted. Every problem is an `EngineError('input/invalid')` naming the file,
 * the line and what to change. Also finds likely pairs in a folder for the extension's
 * configure step.
 *
 * Leaves out: CSV quoting (a tab is the only separator), multiple references per source,
 * compressed files, and streaming (files are read whole).
 */

import { EngineError } from '../../engine/errors';
import type { LabFs } from '../files/labFs';
import { decodeUtf8, firstInvalidUtf8Line, looksBinary } from './textFile';
import { extensionOf } from '../files/slashPaths';
import { readCapped } from '../files/fileCaps';

/** One source → target example read from a file. */
export interface Pair {
  readonly src: string;
  readonly tgt: string;
}

/** Likely pairs found in a folder: arguments for {@link readPairs}. */
export interface PairsCandidate {
  /** Absolute path of the source file (or of the single .tsv / .jsonl file). */
  readonly source: string;
  /** Absolute path of the target file; null for a single .tsv / .jsonl file. */
  readonly target: string | null;
  /** Number of pairs (non-blank lines up to the last). */
  readonly pairs: number;
  /** For people, e.g. "train.de → train.en (29000 pairs)". */
  readonly label: string;
}

function invalid(message: string): EngineError {
  return new EngineError('input/invalid', message);
}

/** Reads a whole file as UTF-8 text or throws an error that says what to do. */
async function readUtf8(fs: LabFs, file: string, role: string): Promise<string> {
  let bytes: Uint8Array;
  try {
    const st = await fs.stat(file);
    if (st === null) throw invalid(`The ${role} ${file} does not exist; check the path.`);
    if (st.kind === 'directory') throw invalid(`The ${role} ${file} is a folder; give a file with one pair per line.`);
    bytes = await readCapped(fs, file, 'pairs file');
  } catch (e) {
    if (EngineError.is(e)) throw e;
    const code = (e as { code?: unknown }).code;
    throw new EngineError(
      'input/invalid',
      `Cannot read the ${role} ${file} (${String(code ?? e)}); check its permissions.`,
      { cause: e },
    );
  }
  if (looksBinary(bytes))
    throw invalid(`The ${role} ${file} looks binary (it holds NUL bytes); give a UTF-8 text file.`);
  const text = decodeUtf8(bytes);
  if (text === null) {
    throw invalid(`The ${role} ${file} is not valid UTF-8 (line ${firstInvalidUtf8Line(bytes)}); save it as UTF-8.`);
  }
  if (text.trim() === '') throw invalid(`The ${role} ${file} is empty; it needs one pair per line.`);
  return text;
}

/** Lines of `text` split on LF or CRLF, without the trailing blank lines. */
export function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  while (lines.length > 0 && (lines[lines.length - 1] as string).trim() === '') lines.pop();
  return lines;
}

function checkNotBlank(line: string, lineNo: number, file: string, what: string): void {
  if (line.trim() === '') {
    throw invalid(
      `Line ${lineNo} of ${file} has an empty ${what}; every line needs one (remove the line or fill it in).`,
    );
  }
}

function readParallel(srcText: string, tgtText: string, source: string, target: string): Pair[] {
  const src = splitLines(srcText);
  const tgt = splitLines(tgtText);
  if (src.length !== tgt.length) {
    throw invalid(
      `The pairs files have different line counts: ${source} has ${src.length}, ${target} has ${tgt.length}; ` +
        'line i of the source must translate line i of the target.',
    );
  }
  return src.map((s, i) => {
    const t = tgt[i] as string;
    checkNotBlank(s, i + 1, source, 'source');
    checkNotBlank(t, i + 1, target, 'target');
    return { src: s, tgt: t };
  });
}

function readTsv(text: string, file: string): Pair[] {
  return splitLines(text).map((line, i) => {
    const fields = line.split('\t');
    if (fields.length !== 2) {
      const found = fields.length === 1 ? 'no tab' : `${fields.length - 1} tabs`;
      throw invalid(`Line ${i + 1} of ${file} has ${found}; each line must be SOURCE<TAB>TARGET with exactly one tab.`);
    }
    const [src, tgt] = fields as [string, string];
    checkNotBlank(src, i + 1, file, 'source');
    checkNotBlank(tgt, i + 1, file, 'target');
    return { src, tgt };
  });
}

function kindOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function readJsonl(text: string, file: string): Pair[] {
  return splitLines(text).map((line, i) => {
    const where = `Line ${i + 1} of ${file}`;
    if (line.trim() === '')
      throw invalid(`${where} is blank; each line must be a JSON object like {"src": "…", "tgt": "…"}.`);
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      throw invalid(
        `${where} is not valid JSON (${(e as Error).message}); each line must be one object like ` +
          `{"src": "…", "tgt": "…"}.`,
      );
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      throw invalid(`${where} is ${kindOf(v)}, not an object; each line must be like {"src": "…", "tgt": "…"}.`);
    }
    const o = v as { src?: unknown; tgt?: unknown };
    for (const key of ['src', 'tgt'] as const) {
      if (!(key in o)) throw invalid(`${where} has no "${key}" field; each line needs string "src" and "tgt" fields.`);
      if (typeof o[key] !== 'string') throw invalid(`${where}: "${key}" is ${kindOf(o[key])}; it must be a string.`);
    }
    const src = o.src as string;
    const tgt = o.tgt as string;
    checkNotBlank(src, i + 1, file, 'source');
    checkNotBlank(tgt, i + 1, file, 'target');
    return { src, tgt };
  });
}

/**
 * Reads source→target pairs: two parallel line files when `target` is given, else one
 * `.tsv` or `.jsonl` file. Throws `EngineError('input/invalid')` for a missing, empty,
 * binary or non-UTF-8 file, mismatched line counts, a malformed line or an empty side.
 */
export async function readPairs(fs: LabFs, source: string, target: string | null): Promise<Pair[]> {
  if (target !== null) {
    const [srcText, tgtText] = await Promise.all([
      readUtf8(fs, source, 'source file'),
      readUtf8(fs, target, 'target file'),
    ]);
    return readParallel(srcText, tgtText, source, target);
  }
  const ext = extensionOf(source);
  if (ext !== 'tsv' && ext !== 'jsonl') {
    throw invalid(
      `A single pairs file must end in .tsv (SOURCE<TAB>TARGET) or .jsonl ({"src","tgt"} per line); got ${source}. ` +
        'For parallel line files give both: SRC TGT.',
    );
  }
  const text = await readUtf8(fs, source, 'pairs file');
  return ext === 'tsv' ? readTsv(text, source) : readJsonl(text, source);
}

/** Extensions that name a document type, never one side of a parallel corpus. */
const NOT_A_SIDE = new Set([
  'md',
  'txt',
  'rst',
  'json',
  'jsonl',
  'tsv',
  'csv',
  'xml',
  'html',
  'htm',
  'yml',
  'yaml',
  'toml',
  'ini',
  'cfg',
  'log',
  'py',
  'js',
  'ts',
  'mjs',
  'cjs',
  'sh',
  'c',
  'h',
  'cc',
  'cpp',
  'go',
  'rs',
  'rb',
  'pl',
  'java',
  'lock',
  'pdf',
  'zip',
  'gz',
]);

/** Orders the two sides: `src`/`source` first, `tgt`/`target` second, else alphabetical. */
function sideRank(ext: string): number {
  return ext === 'src' || ext === 'source' ? 0 : ext === 'tgt' || ext === 'target' ? 2 : 1;
}

function plural(n: number): string {
  return n === 1 ? '1 pair' : `${n} pairs`;
}

async function pairCount(fs: LabFs, file: string): Promise<number | null> {
  try {
    const bytes = await readCapped(fs, file, 'pairs file');
    if (looksBinary(bytes)) return null;
    const text = decodeUtf8(bytes);
    return text === null ? null : splitLines(text).length;
  } catch {
    return null;
  }
}

/**
 * Likely pairs files directly inside `dir` (not its subfolders): every non-empty `.tsv` and
 * `.jsonl` file, and every two files `X.a` / `X.b` with the same stem, a short language-
 * like extension (e.g. `train.de` / `train.en`) and equal line counts. A parallel pair is
 * ordered `src`/`source` before `tgt`/`target`, else alphabetically by extension; callers
 * may offer to swap. Training data first (a picker preselects the first), then the held-out
 * splits (test, val, dev, …), each by label; an unreadable folder gives an empty list.
 */
export async function detectPairsFiles(fs: LabFs, dir: string): Promise<PairsCandidate[]> {
  const root = fs.resolve(dir);
  let names: string[];
  try {
    names = (await fs.list(root)).filter((e) => e.kind === 'file').map((e) => e.name);
  } catch {
    return [];
  }
  const out: PairsCandidate[] = [];
  const byStem = new Map<string, string[]>();
  for (const name of names) {
    const ext = extensionOf(name);
    if (ext === 'tsv' || ext === 'jsonl') {
      const n = await pairCount(fs, fs.join(root, name));
      if (n) out.push({ source: fs.join(root, name), target: null, pairs: n, label: `${name} (${plural(n)})` });
    } else if (/^[a-z]{2,3}(?:[-_][a-z]{2,4})?$|^(?:src|tgt|source|target)$/.test(ext) && !NOT_A_SIDE.has(ext)) {
      const stem = name.slice(0, -(ext.length + 1));
      if (stem !== '') byStem.set(stem, [...(byStem.get(stem) ?? []), name]);
    }
  }
  for (const files of byStem.values()) {
    const sides = files.sort(
      (a, b) => sideRank(extensionOf(a)) - sideRank(extensionOf(b)) || (a < b ? -1 : a > b ? 1 : 0),
    );
    const counts = await Promise.all(sides.map((f) => pairCount(fs, fs.join(root, f))));
    for (let i = 0; i < sides.length; i++) {
      for (let j = i + 1; j < sides.length; j++) {
        const n = counts[i];
        if (!n || n !== counts[j]) continue;
        const [a, b] = [sides[i] as string, sides[j] as string];
        out.push({ source: fs.join(root, a), target: fs.join(root, b), pairs: n, label: `${a} → ${b} (${plural(n)})` });
      }
    }
  }
  return out.sort(trainingFirst);
}

/** A file name that says it holds a held-out split: test, val(id)(ation), dev, eval, heldout, as a word. */
const HELD_OUT = /(?:^|[^a-z])(?:test|tst|val|valid|validation|dev|eval|heldout|held-out)(?:[^a-z]|$)/i;

/** Orders pairs candidates: training data before held-out splits, then by label. */
export function trainingFirst(x: PairsCandidate, y: PairsCandidate): number {
  const held = (c: PairsCandidate): number => (HELD_OUT.test(c.label.split(' ')[0] as string) ? 1 : 0);
  return held(x) - held(y) || (x.label < y.label ? -1 : x.label > y.label ? 1 : 0);
}
