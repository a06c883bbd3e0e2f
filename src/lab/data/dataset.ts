/**
 * From text to batches. Everything random here is a pure function of (seed, step), so a
 * resumed run sees exactly the batches the uninterrupted run would have seen, with no
 * sampler state to save:
 * - pairs (encoder-decoder): examples sorted by length; each step takes a run of
 *   neighbours from a random start until the token budget (rows × longest) is full, so
 *   batches are padded little and the padding masks do the rest (token-budget batching);
 * - documents (decoder-only): every document is BOS + text + EOS in one token stream per
 *   split (documentData.ts); each step takes random windows of seqLen + 1 tokens.
 * Validation batches are fixed, and a probe sample (the first validation example) is what
 * the attention snapshots show.
 */

import type { Batch } from '../../engine/models/inputs';
import { Rng } from '../../engine/rng';
import type { SpecialIds, Tokenizer } from '../../engine/tokenizers/special';
import { PAD } from '../../engine/tokenizers/special';
import { stepSeed } from './seededHash';
import type { TokenIds } from './tokenBuffer';

/** Step-derived random stream: the same (seed, stream, step) always gives the same numbers. */
export function stepRng(seed: number, stream: number, step: number): Rng {
  return new Rng(stepSeed(seed, stream, step));
}

/** Random streams of a run. */
export const STREAMS = { init: 1, data: 2, dropout: 3, sample: 4, diagnostic: 5 } as const;

/** One tokenized source → target example. */
export interface PairExample {
  readonly src: Int32Array; // tokens + EOS
  readonly tgt: Int32Array; // tokens (no BOS/EOS)
  readonly srcText: string;
  readonly tgtText: string;
}

/**
 * What a port of a dataset's training sampler needs besides the run's seed: the PyTorch
 * trainer draws the same batches from these (src/lab/pytorch/trainerInputs.node.ts writes them out).
 */
export type SamplerInputs =
  | { readonly kind: 'documents'; readonly stream: TokenIds; readonly rows: number; readonly T: number }
  | {
      readonly kind: 'pairs';
      readonly sorted: readonly PairExample[];
      readonly rows: number;
      readonly maxBatch: number;
      readonly budget: number;
      readonly bos: number;
      readonly eos: number;
    }
  | {
      readonly kind: 'induction';
      readonly ids: readonly number[];
      readonly rows: number;
      readonly Lmax: number;
      readonly bos: number;
    }
  | {
      readonly kind: 'modular-addition';
      readonly p: number;
      readonly rows: number;
      /** The training pairs, a·p + b. */
      readonly train: Int32Array;
    };

/** The token ids of the modular-addition task: numbers[x] for x in Z_p, and '='. */
export interface ModularIds {
  readonly numbers: readonly number[];
  readonly equals: number;
}

/** The modular-addition task of a run (modularTask.ts): the modulus, its ids and its split (pairs a·p + b). */
export interface ModularTask {
  readonly p: number;
  readonly ids: ModularIds;
  readonly train: Int32Array;
  readonly test: Int32Array;
}

/** What the training loop needs from the data. */
export interface Dataset {
  readonly kind: 'pairs' | 'documents';
  /** Planned shapes for the model's buffers. */
  readonly maxBatch: number;
  readonly maxLen: number;
  readonly maxSrcLen: number;
  readonly trainTokens: number;
  readonly valTokens: number;
  trainBatch(step: number): Batch;
  valBatches(): readonly Batch[];
  /** The probe batch for attention snapshots (item 0 is the one whose maps are drawn). */
  probe(): Batch;
  /** Validation pairs (encoder-decoder only) for exact match and BLEU. */
  readonly valPairs: readonly PairExample[];
  /** What `trainBatch` draws from, for a port of it. */
  readonly sampler: SamplerInputs;
  /** The modular-addition task, whose progress measures each validation adds (absent for other data). */
  readonly modular?: ModularTask;
}

/** Tokenizes pairs; drops the ones longer than `maxLen` positions and says how many. */
export function tokenizePairs(
  pairs: readonly { src: string; tgt: string }[],
  tok: Tokenizer,
  maxLen: number,
): { examples: PairExample[]; dropped: number } {
  const examples: PairExample[] = [];
  let dropped = 0;
  for (const p of pairs) {
    const src = tok.encode(p.src, { eos: true });
    const tgt = tok.encode(p.tgt);
    if (src.length > maxLen || tgt.length + 1 > maxLen) {
      dropped++;
      continue;
    }
    examples.push({ src, tgt, srcText: p.src, tgtText: p.tgt });
  }
  return { examples, dropped };
}

/**
 * Pads examples into a batch: src [B,S], decoder input BOS+tgt and targets tgt+EOS [B,T],
 * with BOS and EOS the ids of the run's tokenizer (`ids`, as `src` already ends in its EOS).
 */
export function pairBatch(ex: readonly PairExample[], ids: SpecialIds): Batch {
  const B = ex.length;
  const S = Math.max(...ex.map((e) => e.src.length));
  const T = Math.max(...ex.map((e) => e.tgt.length + 1));
  const src = new Int32Array(B * S).fill(PAD);
  const input = new Int32Array(B * T).fill(PAD);
  const targets = new Int32Array(B * T).fill(PAD);
  ex.forEach((e, b) => {
    src.set(e.src, b * S);
    input[b * T] = ids.bos;
    input.set(e.tgt, b * T + 1);
    targets.set(e.tgt, b * T);
    targets[b * T + e.tgt.length] = ids.eos;
  });
  return { B, T, S, src, input, targets };
}

function len(e: PairExample): number {
  return Math.max(e.src.length, e.tgt.length + 1);
}

/**
 * The probe batch of attention snapshots: up to three examples of different lengths,
 * longest first, so item 0 (whose maps are drawn) is unpadded and the masks show padding.
 */
function probeExamples(val: readonly PairExample[]): PairExample[] {
  const picked: PairExample[] = [];
  for (const e of val.slice(0, 50)) {
    if (picked.length === 3) break;
    if (!picked.some((p) => len(p) === len(e) || p.src.length === e.src.length)) picked.push(e);
  }
  if (picked.length === 0 && val[0]) picked.push(val[0]);
  return picked.sort((a, b) => b.src.length - a.src.length || len(b) - len(a));
}

/** Encoder-decoder data with token-budget batching; `ids` are the tokenizer's special ids. */
export function pairDataset(
  train: PairExample[],
  val: PairExample[],
  seed: number,
  rows: number,
  ids: SpecialIds,
): Dataset {
  if (train.length === 0) throw new Error('no training pairs');
  const sorted = [...train].sort((a, b) => len(a) - len(b));
  const maxLen = Math.max(...train.concat(val).map((e) => e.tgt.length + 1));
  const maxSrcLen = Math.max(...train.concat(val).map((e) => e.src.length));
  const longest = Math.max(maxLen, maxSrcLen);
  // Budget: what `rows` sequences of the longest length would take; short ones pack more rows.
  const budget = rows * longest;
  const maxBatch = Math.min(2 * rows, sorted.length);
  const count = (xs: PairExample[]): number => xs.reduce((n, e) => n + e.tgt.length + 1, 0);
  const valSet = val.length ? val : sorted.slice(0, Math.min(8, sorted.length));
  const valBatches: Batch[] = [];
  for (let i = 0; i < valSet.length; i += rows) valBatches.push(pairBatch(valSet.slice(i, i + rows), ids));
  return {
    kind: 'pairs',
    maxBatch,
    maxLen,
    maxSrcLen,
    trainTokens: count(train),
    valTokens: count(val),
    trainBatch(step: number): Batch {
      const rng = stepRng(seed, STREAMS.data, step);
      let lo = rng.int(sorted.length);
      let hi = lo + 1; // [lo, hi)
      let longestIn = len(sorted[lo] as PairExample);
      while (hi - lo < maxBatch) {
        const next = hi < sorted.length ? hi : lo > 0 ? lo - 1 : -1;
        if (next < 0) break;
        const l = Math.max(longestIn, len(sorted[next] as PairExample));
        if ((hi - lo + 1) * l > budget) break;
        longestIn = l;
        if (next === hi) hi++;
        else lo--;
      }
      return pairBatch(sorted.slice(lo, hi), ids);
    },
    valBatches: () => valBatches,
    probe: () => pairBatch(probeExamples(valSet), ids),
    valPairs: val,
    sampler: { kind: 'pairs', sorted, rows, maxBatch, budget, bos: ids.bos, eos: ids.eos },
  };
}

/** One token stream: BOS + doc + EOS for every document. */
export function tokenStream(docs: readonly string[], tok: Tokenizer): Int32Array {
  return concatInt32(docs.map((d) => tok.encode(d, { bos: true, eos: true })));
}

/** The arrays one after another, in one Int32Array. */
export function concatInt32(parts: readonly ArrayLike<number>[]): Int32Array {
  const out = new Int32Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function windowBatch(stream: TokenIds, starts: readonly number[], T: number): Batch {
  const B = starts.length;
  const input = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  starts.forEach((s, b) => {
    input.set(stream.subarray(s, s + T), b * T);
    targets.set(stream.subarray(s + 1, s + T + 1), b * T);
  });
  return { B, T, input, targets };
}

/**
 * Starts of `n` validation windows of T + 1 tokens: every window when fewer fit, else `n`
 * spread evenly over the whole stream (not only its beginning, which in a tail split is one
 * stretch of one document).
 */
export function validationStarts(length: number, T: number, n: number): number[] {
  const fit = Math.floor((length - 1) / T);
  if (fit <= n) return Array.from({ length: Math.max(0, fit) }, (_, i) => i * T);
  const last = length - T - 1;
  return Array.from({ length: n }, (_, i) => Math.floor((i * last) / (n - 1)));
}

/**
 * Decoder-only data: random windows of the training stream; fixed windows of validation.
 * With no held-out text (`val` shorter than 2 tokens: the run's data summary says so and
 * labels the curve) the fixed windows come from the training stream.
 */
export function documentDataset(
  train: TokenIds,
  val: TokenIds,
  seed: number,
  rows: number,
  seqLen: number,
  maxEvalBatches = 8,
): Dataset {
  const T = Math.max(1, Math.min(seqLen, train.length - 1));
  if (train.length < 2) throw new Error('training stream too short');
  const valStream = val.length >= 2 ? val : train;
  const Tv = Math.max(1, Math.min(T, valStream.length - 1));
  const valBatches: Batch[] = [];
  const starts = validationStarts(valStream.length, Tv, rows * maxEvalBatches);
  for (let i = 0; i < starts.length; i += rows) valBatches.push(windowBatch(valStream, starts.slice(i, i + rows), Tv));
  const probeT = Math.min(Tv, 64);
  return {
    kind: 'documents',
    maxBatch: rows,
    maxLen: T,
    maxSrcLen: 0,
    trainTokens: train.length,
    valTokens: val.length,
    trainBatch(step: number): Batch {
      const rng = stepRng(seed, STREAMS.data, step);
      const picks = Array.from({ length: rows }, () => rng.int(train.length - T));
      return windowBatch(train, picks, T);
    },
    valBatches: () => valBatches,
    probe: () => windowBatch(valStream, [0], probeT),
    valPairs: [],
    sampler: { kind: 'documents', stream: train, rows, T },
  };
}
