/**
 * The decoder-only `induction` task. Half of the training sequences are BOS, P random filler
 * letters, then L random letters, then the same L letters again (all letters distinct while
 * the alphabet allows); the loss counts only the repeat (from its second token on), whose
 * tokens no bigram statistic can predict but copying from the first occurrence can. L varies
 * per sequence (from Lmax/3 to Lmax, with P = 2·(Lmax − L) filling the context), so no fixed
 * positional offset finds the earlier occurrence: the model must find it by content. A
 * two-layer model does so by growing a previous-token head in layer 1 and an induction
 * head in layer 2 that composes with it, with a visible phase change in the loss (Olsson
 * et al. 2022, "In-context Learning and Induction Heads"); one layer cannot compose the two.
 *
 *   position  0    1 … P   P+1 … P+L   P+L+1 … T−1
 *   input     BOS  f … f   r1  … rL    r1    … r(L−1)
 *   target    ·    · … ·   ·   … ·  r2 … rL                (· = PAD: not in the loss)
 *
 * The other half are letter chains whose rule changes with every sequence: 4 to 10 letters,
 * each given a random successor that the chain follows with probability 0.9 (else it jumps
 * to a random letter of the set); the loss counts every token. Predicting them is in-context
 * bigram counting — the statistical induction head of Edelman et al. (2024, "The Evolution
 * of Statistical Induction Heads") — and since letters recur all the time, every position's
 * previous token is needed exactly: a layer-1 head that also looks two back or at itself
 * predicts the wrong successor. Without the chains the repeat alone is solved with a layer-1
 * head spread over 1–3 back (previous-token ≈ 0.5–0.8; the repeat's distinct letters match
 * either way), with them it ends ≈ 0.9 (measured in inductionLearning.test.ts). Validation
 * and the probe are repeat sequences only, so the held-out loss is the repeat's.
 *
 * Training sequences are drawn afresh for every step from (seed, step), so a resumed run
 * sees the same batches; validation sequences come from their own stream.
 *
 * Leaves out: the head scores (lab/inference/headScores.ts measures induction on the same repeat
 * layout).
 */

import { EngineError } from '../../engine/errors';
import type { Batch } from '../../engine/models/inputs';
import type { Rng } from '../../engine/rng';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { PAD } from '../../engine/tokenizers/special';
import type { Dataset } from './dataset';
import { STREAMS, stepRng } from './dataset';

/** The letters sequences are drawn from: one token each under any tokenizer trained on them. */
export const INDUCTION_ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

/** Validation sequences (a fixed set). */
const VAL_SEQUENCES = 256;

/** Longest random segment Lmax for a context of `seqLen` positions (the input is 2·Lmax long). */
export function segmentLength(seqLen: number): number {
  const L = Math.floor(seqLen / 2);
  if (L < 3)
    throw new EngineError(
      'input/invalid',
      `The induction task needs a context of at least 6 positions; got --seq ${seqLen}. Raise --seq.`,
    );
  return L;
}

/**
 * L symbol indices in [0, n): distinct when L ≤ n (so each token occurs once per copy and
 * the token after it is unambiguous), else drawn with replacement.
 */
export function randomSegment(rng: Rng, L: number, n: number): number[] {
  if (L > n) return Array.from({ length: L }, () => rng.int(n));
  const pool = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < L; i++) {
    const j = i + rng.int(n - i); // partial Fisher–Yates
    [pool[i], pool[j]] = [pool[j] as number, pool[i] as number];
  }
  return pool.slice(0, L);
}

/** One sequence: filler letters, then the segment that repeats. */
export interface RepeatRow {
  readonly filler: readonly number[];
  readonly segment: readonly number[];
}

/** Fills row b of a [B, T] batch with `seq` (from BOS): inputs seq[i], targets seq[i+1] from row `firstLoss` on. */
function fillSequence(
  input: Int32Array,
  targets: Int32Array,
  b: number,
  T: number,
  seq: readonly number[],
  firstLoss: number,
): void {
  for (let i = 0; i < T; i++) {
    input[b * T + i] = seq[i] ?? PAD;
    targets[b * T + i] = i >= firstLoss ? (seq[i + 1] ?? PAD) : PAD;
  }
}

/**
 * Fills row b of a [B, T] batch: BOS (the tokenizer's id `bos`) + filler + seg + seg (input), the repeat's next tokens
 * (targets).
 */
function fillRow(input: Int32Array, targets: Int32Array, b: number, T: number, r: RepeatRow, bos: number): void {
  // The first loss row predicts the repeat's second token.
  fillSequence(
    input,
    targets,
    b,
    T,
    [bos, ...r.filler, ...r.segment, ...r.segment],
    1 + r.filler.length + r.segment.length,
  );
}

/** A batch of sequences (all 1 + filler + 2·segment − 1 = T tokens long), each from the tokenizer's BOS id `bos`. */
export function repeatBatch(rows: readonly RepeatRow[], bos: number): Batch {
  const B = rows.length;
  const r0 = rows[0];
  const T = r0 ? r0.filler.length + 2 * r0.segment.length : 0;
  const input = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  rows.forEach((r, b) => fillRow(input, targets, b, T, r, bos));
  return { B, T, input, targets };
}

/** A training sequence for a context of 2·Lmax: L from Lmax/3 to Lmax, filler 2·(Lmax − L). */
function randomRow(rng: Rng, Lmax: number, ids: readonly number[]): RepeatRow {
  const Lmin = Math.max(2, Math.floor(Lmax / 3));
  const L = Lmin + rng.int(Lmax - Lmin + 1);
  const P = 2 * (Lmax - L);
  const picked = randomSegment(rng, P + L, ids.length).map((i) => ids[i] as number);
  return { filler: picked.slice(0, P), segment: picked.slice(P) };
}

/** Share of training sequences that are letter chains (the rest repeat a segment). */
const CHAIN_SHARE = 0.5;
/** Letters of one chain: from 4 to 10. */
const CHAIN_MIN_LETTERS = 4;
const CHAIN_MAX_LETTERS = 10;
/** Probability that a chain follows its letter's successor rather than jumping to a random letter of its set. */
const CHAIN_FOLLOW = 0.9;

/** BOS + `T` letters of a chain with a fresh rule (see the header): its input and every next token as target. */
function chainSequence(rng: Rng, T: number, ids: readonly number[], bos: number): number[] {
  const k = CHAIN_MIN_LETTERS + rng.int(CHAIN_MAX_LETTERS - CHAIN_MIN_LETTERS + 1);
  const letters = randomSegment(rng, k, ids.length);
  const successor = Array.from({ length: k }, () => rng.int(k));
  const xs = [rng.int(k)];
  while (xs.length < T)
    xs.push(rng.next() < CHAIN_FOLLOW ? (successor[xs[xs.length - 1] as number] as number) : rng.int(k));
  return [bos, ...xs.map((i) => ids[letters[i] as number] as number)];
}

/** A training batch for a context of 2·Lmax: chains and repeats, drawn row by row. */
function trainingBatch(rng: Rng, rows: number, Lmax: number, ids: readonly number[], bos: number): Batch {
  const T = 2 * Lmax;
  const input = new Int32Array(rows * T);
  const targets = new Int32Array(rows * T);
  for (let b = 0; b < rows; b++) {
    if (rng.next() < CHAIN_SHARE) fillSequence(input, targets, b, T, chainSequence(rng, T, ids, bos), 1);
    else fillRow(input, targets, b, T, randomRow(rng, Lmax, ids), bos);
  }
  return { B: rows, T, input, targets };
}

/**
 * Where the input of a {@link repeatBatch} of one segment of L tokens after P filler tokens
 * repeats: rows [P+L+1, P+2L) look back L positions (the second copy, BOS at row 0).
 */
export function repeatOf(L: number, P = 0): { period: number; from: number; to: number } {
  return { period: L, from: P + L + 1, to: P + 2 * L };
}

/** Token ids of the alphabet under `tok` (each letter must be one token). */
export function alphabetIds(tok: Tokenizer): number[] {
  return [...INDUCTION_ALPHABET].map((c) => {
    const ids = tok.encode(c);
    if (ids.length !== 1)
      throw new EngineError(
        'tokenizer/invalid',
        `The induction task needs each letter to be one token; "${c}" is ${ids.length}. Use --tokenizer char.`,
      );
    return ids[0] as number;
  });
}

/** The fixed held-out sequences (their own stream, so they do not depend on the batch size). */
function validationRows(ids: readonly number[], seed: number, Lmax: number): RepeatRow[] {
  const rng = stepRng(seed, STREAMS.data, -1);
  return Array.from({ length: VAL_SEQUENCES }, () => randomRow(rng, Lmax, ids));
}

/** Beginnings of `n` held-out sequences, up to two tokens into the repeat: samples to continue. */
export function inductionPrompts(tok: Tokenizer, seed: number, seqLen: number, n: number): string[] {
  return validationRows(alphabetIds(tok), seed, segmentLength(seqLen))
    .slice(0, n)
    .map((r) => tok.decode([...r.filler, ...r.segment, ...r.segment.slice(0, 2)]));
}

/** The induction task's data: fresh sequences each step, a fixed validation set. */
export function inductionDataset(tok: Tokenizer, seed: number, rows: number, seqLen: number): Dataset {
  const L = segmentLength(seqLen);
  const ids = alphabetIds(tok);
  const { bos } = tok.specialIds;
  const val = validationRows(ids, seed, L);
  const valBatches: Batch[] = [];
  for (let i = 0; i < val.length; i += rows) valBatches.push(repeatBatch(val.slice(i, i + rows), bos));
  return {
    kind: 'documents',
    maxBatch: rows,
    maxLen: 2 * L,
    maxSrcLen: 0,
    trainTokens: 0, // drawn afresh every step
    valTokens: val.reduce((n, r) => n + r.segment.length - 1, 0),
    trainBatch(step: number): Batch {
      const rng = stepRng(seed, STREAMS.data, step);
      return trainingBatch(rng, rows, L, ids, bos);
    },
    valBatches: () => valBatches,
    probe: () => repeatBatch([val[0] as RepeatRow], bos),
    valPairs: [],
    sampler: { kind: 'induction', ids, rows, Lmax: L, bos },
  };
}
