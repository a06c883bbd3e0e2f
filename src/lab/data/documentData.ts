/**
 * Documents → token streams for a decoder-only run, streamed: files are read one at a time
 * and cut into pieces of about a megabyte (engine/tokenizers/textPieces.ts) that tokenize exactly as the whole
 * file would, so memory grows with the ids (TokenBuffer), not with copies of the text, and
 * progress and cancellation come between pieces.
 *
 * Two passes when the tokenizer is trained here: the first counts characters (char) or
 * pre-tokenizer chunks (BPE; past {@link BPE_SAMPLE_BYTES} of training text, from a seeded
 * sample of pieces, which the run then states), the second encodes. One pass when the
 * tokenizer is given (resume, eval).
 *
 * Validation is always held out, never the training stream:
 * - many documents (≥ {@link MANY_DOCUMENTS}) whose hash split by path holds out a sensible
 *   share of the bytes: whole documents (corpus.ts `splitDocuments`);
 * - otherwise — one file, a few, or a split that would hold out almost nothing or most of the
 *   text — the last 10% of each document's text, as nanoGPT splits `input.txt` (the cut
 *   moves to the next whitespace so the tokens of both parts are the tokens of the whole);
 * - when even that leaves fewer than {@link MIN_VAL_TOKENS} tokens, nothing: the run says so,
 *   and its "validation" curve is labelled as training loss.
 * Every document is BOS + text + EOS in its stream (a tail split gives BOS to the training
 * part and EOS to the held-out part).
 *
 * Leaves out: windows and batches (dataset.ts), pairs (pairs.ts), which files (corpus.ts).
 */

import { CancelledError } from '../base/cancelled';
import { EngineError } from '../../engine/errors';
import { ChunkCounts } from '../../engine/tokenizers/bpeTrain';
import { trainBpeTokenizer } from '../../engine/tokenizers/bpeTokenizer';
import { CharCounts } from '../../engine/tokenizers/charTokenizer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { safeCut, textPieces } from '../../engine/tokenizers/textPieces';
import { formatBytes, formatCount } from '../../common/format';
import type { DataSpec, PrepareProgress, SkippedFile, TokenizerType, ValidationKind } from '../../protocol/data';
import type { LabFs } from '../files/labFs';
import { shownPath } from '../files/slashPaths';
import type { CorpusLimits, PlannedFile } from './corpus';
import { limitsOf, noDocumentsError, planCorpus, readPlannedFile, splitDocuments } from './corpus';
import { hashSeed, unitInterval } from './seededHash';
import { TokenBuffer } from './tokenBuffer';
import type { TokenIds } from './tokenBuffer';

/** Share of each document's text held out by a tail split, and of documents by a whole-document split. */
export const VAL_FRACTION = 0.1;
/** Fewest documents for which whole documents are held out. */
export const MANY_DOCUMENTS = 10;
/** Fewest held-out tokens that make a validation set. */
export const MIN_VAL_TOKENS = 8;
/** Training text past which BPE learns its merges from a seeded sample of this many bytes. */
export const BPE_SAMPLE_BYTES = 8 << 20;
/** Characters per piece. */
const PIECE_CHARS = 1 << 20;
/** Least time between two progress reports. */
const PROGRESS_MS = 100;

/** The documents kind of DataSpec. */
export type DocumentsSpec = Extract<DataSpec, { kind: 'documents' }>;

/** The tokenizer to use, or the one to train. */
export type TokenizerSource = Tokenizer | { readonly train: TokenizerType; readonly vocabSize: number };

/** Hooks for long work: progress, cancellation, and a chance for messages to arrive. */
export interface WorkHooks {
  readonly onProgress?: (p: PrepareProgress) => void;
  /** Checked between pieces; when true the work stops with a {@link CancelledError}. */
  readonly isCancelled?: () => boolean;
  /** Awaited between pieces so a worker can take in a stop command (e.g. `setImmediate`). */
  readonly yieldNow?: () => Promise<void>;
}

/** The token streams of a run's documents and what people are told about them. */
export interface DocumentData {
  readonly tok: Tokenizer;
  readonly train: TokenIds;
  readonly val: TokenIds;
  readonly validation: { readonly kind: ValidationKind; readonly text: string };
  /** "1 document (input.txt, 1.1 MB) in /home/me/shakespeare". */
  readonly description: string;
  readonly documents: number;
  readonly bytes: number;
  readonly skipped: readonly SkippedFile[];
  /** Up to three beginnings of held-out text. */
  readonly prompts: readonly string[];
  /** Things worth a log line (a BPE sample, inexact piece cuts). */
  readonly notes: readonly string[];
}

type Split = { kind: 'documents'; val: ReadonlySet<string> } | { kind: 'tail' } | { kind: 'none' };

/** Whole documents when there are many and the seeded split holds out 2–40% of the bytes; else the tail of each. */
function chooseSplit(files: readonly PlannedFile[], seed: number): Split {
  if (files.length < MANY_DOCUMENTS) return { kind: 'tail' };
  const { val } = splitDocuments(files, VAL_FRACTION, seed);
  const total = files.reduce((n, f) => n + f.bytes, 0);
  const held = val.reduce((n, f) => n + f.bytes, 0);
  if (total === 0 || held / total < 0.02 || held / total > 0.4) return { kind: 'tail' };
  return { kind: 'documents', val: new Set(val.map((f) => f.path)) };
}

/** Where a tail split cuts `text`: at the first safe cut from 90% on (or exactly there when none follows). */
export function tailCut(text: string): number {
  const at = Math.floor(text.length * (1 - VAL_FRACTION));
  const cut = safeCut(text, at);
  if (cut.index < text.length) return cut.index;
  const c = text.charCodeAt(at);
  return c >= 0xdc00 && c <= 0xdfff ? at + 1 : at;
}

/** Reads one planned file as a document (readPlannedFile, or the text a one-file corpus already read). */
type ReadDocument = (file: PlannedFile) => ReturnType<typeof readPlannedFile>;

/**
 * How the passes read the files: a corpus of one file keeps its text after the first read, so
 * the passes over it (count, encode, encode again without a split) read it once — on the web
 * each read of a large file travels through the page to the remote and back. Several files
 * are read anew in each pass, so memory holds one file's text at a time.
 */
function documentReader(fs: LabFs, files: readonly PlannedFile[], skipGenerated: boolean | undefined): ReadDocument {
  if (files.length !== 1) return (file) => readPlannedFile(fs, file, skipGenerated);
  let kept: ReturnType<typeof readPlannedFile> | null = null;
  return (file) => (kept ??= readPlannedFile(fs, file, skipGenerated));
}

/** Progress reports at most every {@link PROGRESS_MS}, plus cancellation and yielding between pieces. */
class Pacer {
  private last = 0;
  constructor(
    private readonly hooks: WorkHooks,
    private readonly total: number,
  ) {}

  async tick(phase: PrepareProgress['phase'], done: number, message: string, what: string): Promise<void> {
    if (this.hooks.yieldNow) await this.hooks.yieldNow();
    if (this.hooks.isCancelled?.()) throw new CancelledError(what);
    const now = Date.now();
    if (this.hooks.onProgress && (now - this.last >= PROGRESS_MS || done >= this.total)) {
      this.last = now;
      this.hooks.onProgress({ phase, done: Math.min(done, this.total), total: this.total, message });
    }
  }
}

/** Pass 1: learns the tokenizer from the training text (BPE from a seeded sample past BPE_SAMPLE_BYTES). */
async function learnTokenizer(
  read: ReadDocument,
  src: { train: TokenizerType; vocabSize: number },
  files: readonly PlannedFile[],
  split: Split,
  opts: LoadOptions,
  pacer: Pacer,
  notes: string[],
): Promise<Tokenizer> {
  const trainBytes = files.reduce((n, f) => n + (split.kind === 'documents' && split.val.has(f.path) ? 0 : f.bytes), 0);
  const sampleBytes = opts.bpeSampleBytes ?? BPE_SAMPLE_BYTES;
  const sampleRate = src.train === 'bpe' && trainBytes > sampleBytes ? sampleBytes / trainBytes : 1;
  const chars = new CharCounts();
  const chunks = new ChunkCounts();
  let done = 0;
  let sampled = 0;
  const verb = src.train === 'bpe' ? 'Counting words for BPE in' : 'Counting characters in';
  for (const [fileIndex, file] of files.entries()) {
    if (split.kind === 'documents' && split.val.has(file.path)) continue;
    const r = await read(file);
    if (r.ok) {
      const text = split.kind === 'tail' ? r.text.slice(0, tailCut(r.text)) : r.text;
      const scale = file.bytes / Math.max(1, r.text.length);
      let pieceIndex = 0;
      for (const { piece, start } of textPieces(text, opts.pieceChars ?? PIECE_CHARS)) {
        const take = sampleRate >= 1 || unitInterval(hashSeed(opts.seed, fileIndex, pieceIndex++)) < sampleRate;
        if (src.train === 'char') chars.add(piece);
        else if (take) {
          chunks.add(piece);
          sampled += piece.length;
        }
        await pacer.tick(
          'tokenizer',
          done + Math.round((start + piece.length) * scale),
          `${verb} ${file.path}`,
          'reading the data',
        );
      }
    }
    done += file.bytes;
  }
  if (src.train === 'char') return chars.tokenizer();
  if (sampleRate < 1)
    notes.push(
      `BPE learned its merges from a seeded sample of ${formatBytes(sampled)} of the ` +
        `${formatBytes(trainBytes)} of training text.`,
    );
  await pacer.tick('tokenizer', done, `Learning ${src.vocabSize} BPE tokens`, 'training the tokenizer');
  return trainBpeTokenizer(chunks, { vocabSize: src.vocabSize });
}

/** Options of {@link loadDocumentData}. */
export interface LoadOptions extends WorkHooks, CorpusLimits {
  readonly seed: number;
  /** 'validation' skips encoding the training part (eval). Default 'all'. */
  readonly need?: 'all' | 'validation';
  /** Training text past which BPE learns from a sample of this size (default {@link BPE_SAMPLE_BYTES}). */
  readonly bpeSampleBytes?: number;
  /** Characters per piece (default 1 MiB of text). */
  readonly pieceChars?: number;
}

/** Encodes `text` piece by piece into `into`, ticking between pieces. */
async function encodeInto(
  tok: Tokenizer,
  text: string,
  into: TokenBuffer,
  pieceChars: number,
  tick: (charsDone: number) => Promise<void>,
): Promise<number> {
  let inexact = 0;
  for (const { piece, start, exact } of textPieces(text, pieceChars)) {
    into.push(tok.encode(piece));
    if (!exact) inexact++;
    await tick(start + piece.length);
  }
  return inexact;
}

interface Encoded {
  train: TokenBuffer;
  val: TokenBuffer;
  documents: number;
  bytes: number;
  heldOutDocs: number;
  skipped: SkippedFile[];
  prompts: string[];
  folders: string[];
  inexactCuts: number;
}

/** Pass 2: reads and encodes every file into the training or validation stream as the split says. */
async function encodeAll(
  fs: LabFs,
  read: ReadDocument,
  tok: Tokenizer,
  files: readonly PlannedFile[],
  split: Split,
  opts: LoadOptions,
  pacer: Pacer,
): Promise<Encoded> {
  const out: Encoded = {
    train: new TokenBuffer(tok.vocabSize),
    val: new TokenBuffer(tok.vocabSize),
    documents: 0,
    bytes: 0,
    heldOutDocs: 0,
    skipped: [],
    prompts: [],
    folders: [],
    inexactCuts: 0,
  };
  const onlyVal = opts.need === 'validation' && split.kind !== 'none';
  const { bos, eos } = tok.specialIds; // GPT-2's <|endoftext|> (both) in its vocabulary
  let done = 0;
  for (const file of files) {
    const wholeVal = split.kind === 'documents' && split.val.has(file.path);
    if (onlyVal && split.kind !== 'tail' && !wholeVal) {
      done += file.bytes;
      continue;
    }
    const r = await read(file);
    if (!r.ok) {
      out.skipped.push({ path: file.path, reason: r.reason });
      done += file.bytes;
      continue;
    }
    out.documents++;
    out.bytes += file.bytes;
    out.folders.push(fs.dirname(file.abs));
    const scale = file.bytes / Math.max(1, r.text.length);
    const tick =
      (offset: number) =>
      (chars: number): Promise<void> =>
        pacer.tick(
          'encode',
          done + Math.round((offset + chars) * scale),
          `Encoding ${file.path} (${tok.type})`,
          'encoding the data',
        );
    const cut = split.kind === 'tail' ? tailCut(r.text) : wholeVal ? 0 : r.text.length;
    if (cut > 0 && !onlyVal) {
      out.train.pushId(bos);
      out.inexactCuts += await encodeInto(
        tok,
        r.text.slice(0, cut),
        out.train,
        opts.pieceChars ?? PIECE_CHARS,
        tick(0),
      );
    }
    if (cut < r.text.length) {
      if (cut === 0) out.val.pushId(bos);
      out.inexactCuts += await encodeInto(tok, r.text.slice(cut), out.val, opts.pieceChars ?? PIECE_CHARS, tick(cut));
      out.val.pushId(eos);
      out.heldOutDocs++;
      heldOutPrompts(r.text, cut, 3 - out.prompts.length, out.prompts);
    } else if (!onlyVal) out.train.pushId(eos);
    done += file.bytes;
  }
  return out;
}

/**
 * Adds up to `k` beginnings of the held-out text `text[from:]` to `into`: its start, then
 * line starts a third and two thirds of the way in (48 characters each, leading blanks dropped).
 */
function heldOutPrompts(text: string, from: number, k: number, into: string[]): void {
  const len = text.length - from;
  for (let i = 0; i < k && i < 3; i++) {
    let at = from + Math.floor((i * len) / 3);
    if (i > 0) {
      const nl = text.indexOf('\n', at);
      if (nl < 0) break;
      at = nl + 1;
    }
    const start = text.slice(at, at + 200).trimStart();
    if (start) into.push(Array.from(start).slice(0, 48).join(''));
  }
}

/** The deepest folder holding every path. */
function commonFolder(fs: LabFs, folders: readonly string[]): string {
  if (folders.length === 0) return '';
  let common = folders[0] as string;
  for (const f of folders) {
    while (common !== fs.dirname(common) && fs.relative(common, f) === null) common = fs.dirname(common);
  }
  return common;
}

const count = formatCount;
const docs = (n: number): string => `${count(n)} ${n === 1 ? 'document' : 'documents'}`;

/** What validation is, in a line. */
function validationText(split: Split, e: Encoded, trainTokens: number): string {
  if (split.kind === 'documents')
    return `${count(e.heldOutDocs)} of ${docs(e.documents)} held out whole, ${count(e.val.length)} tokens`;
  if (split.kind === 'tail')
    return (
      `last 10% of ` +
      `${e.documents === 1 ? '1 document' : `each of ${docs(e.documents)}`}, ` +
      `${count(e.val.length)} tokens`
    );
  return (
    `none: too little text to hold any out (${count(trainTokens)} tokens; ` +
    `${MIN_VAL_TOKENS * 10} or more are needed) — the validation curve shows training loss`
  );
}

/**
 * Reads, tokenizes and splits the documents of `spec` (training the tokenizer when `source`
 * says which to train). Throws `EngineError('input/invalid')` when no document is usable,
 * {@link CancelledError} when cancelled.
 */
export async function loadDocumentData(
  fs: LabFs,
  spec: DocumentsSpec,
  source: TokenizerSource,
  opts: LoadOptions,
): Promise<DocumentData> {
  const limits: CorpusLimits = {
    maxFileBytes: spec.maxFileBytes,
    maxTotalBytes: spec.maxTotalBytes,
    skipGenerated: spec.skipGenerated,
  };
  const skipGenerated = limitsOf(limits).skipGenerated;
  const o: LoadOptions = { ...opts, skipGenerated };
  const plan = await planCorpus(fs, spec.files, spec.root, limits);
  if (plan.files.length === 0) throw noDocumentsError(plan.skipped, `given under ${shownPath(plan.root)}`, limits);
  let split = chooseSplit(plan.files, opts.seed);
  const notes: string[] = [];
  const pacer = new Pacer(opts, plan.bytes);
  const read = documentReader(fs, plan.files, skipGenerated);
  const tok = 'train' in source ? await learnTokenizer(read, source, plan.files, split, o, pacer, notes) : source;
  let e = await encodeAll(fs, read, tok, plan.files, split, o, pacer);
  if (e.documents === 0)
    throw noDocumentsError([...plan.skipped, ...e.skipped], `given under ${shownPath(plan.root)}`, limits);
  if (e.val.length < MIN_VAL_TOKENS) {
    split = { kind: 'none' };
    e = await encodeAll(fs, read, tok, plan.files, split, o, pacer);
  }
  if (e.train.length + e.val.length < 3 && opts.need !== 'validation') {
    throw new EngineError(
      'input/invalid',
      'The documents hold too little text to train on (fewer than 3 tokens); add more files.',
    );
  }
  if (e.inexactCuts > 0 && tok.type === 'bpe')
    notes.push(
      `${count(e.inexactCuts)} piece(s) of text with no whitespace for 64K characters were cut ` +
        `mid-word for encoding; a word there may take one token more.`,
    );
  const skipped = [...plan.skipped, ...e.skipped].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const folder = shownPath(commonFolder(fs, e.folders));
  const only = e.documents === 1 ? plan.files.find((f) => !skipped.some((s) => s.path === f.path)) : undefined;
  const description = only
    ? `1 document (${fs.basename(only.abs)}, ${formatBytes(only.bytes)}) in ${folder}`
    : `${docs(e.documents)} (${formatBytes(e.bytes)}) in ${folder}`;
  const train = e.train.ids();
  return {
    tok,
    train,
    val: e.val.ids(),
    validation: { kind: split.kind, text: validationText(split, e, train.length) },
    description,
    documents: e.documents,
    bytes: e.bytes,
    skipped,
    prompts: e.prompts,
    notes,
  };
}
