/**
 * The decoder-only `modular-addition` task, the grokking setup of Power et al. (2022) and Nanda
 * et al. (2023, "Progress measures for grokking via mechanistic interpretability"): every pair
 * (a, b) of Z_p written as the three tokens "a b =", whose answer (a + b) mod p is the target of
 * the '=' position only. A seeded 30% of the p² pairs are the training set, the rest the test
 * set; the training batch is the whole training set every step (full batch), unless the run asks
 * for fewer rows (then a seeded draw of that many pairs per step).
 *
 *   position  0   1   2
 *   input     a   b   =
 *   target    ·   ·   (a + b) mod p        (· = PAD: not in the loss)
 *
 * Number x is the character U+0100 + x (Ā, ā, Ă …: one token each under the run's character
 * tokenizer, which also holds its 4 special and 256 byte tokens, so the output vocabulary is
 * larger than the paper's p + 1; the extra rows are never a target). No BOS: as in the paper.
 *
 * Leaves out: the progress measures (src/lab/evaluation/grokking.ts).
 */

import type { Batch } from '../../engine/models/inputs';
import { EngineError } from '../../engine/errors';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { PAD } from '../../engine/tokenizers/special';
import { MODULAR_P, MODULAR_TRAIN_FRACTION } from '../runs/runSpec';
import type { Dataset, ModularIds, ModularTask } from './dataset';
import { STREAMS, stepRng } from './dataset';
import { seededPermutation } from './seededHash';

/** The first number's character: number x is U+0100 + x. */
const FIRST_CODE = 0x100;
/** The separator token before the answer. */
export const EQUALS = '=';

/** The characters of the task's vocabulary: the numbers 0 … p − 1, then '='. */
export function modularAlphabet(p: number = MODULAR_P): string {
  let s = '';
  for (let x = 0; x < p; x++) s += String.fromCodePoint(FIRST_CODE + x);
  return s + EQUALS;
}

/** The text of number x (one character). */
export function numberText(x: number): string {
  return String.fromCodePoint(FIRST_CODE + x);
}

/** Token ids of the numbers and '=' under `tok` (each must be one token). */
export function modularIds(tok: Tokenizer, p: number = MODULAR_P): ModularIds {
  const one = (c: string): number => {
    const ids = tok.encode(c);
    if (ids.length !== 1)
      throw new EngineError(
        'tokenizer/invalid',
        `The modular-addition task needs each number to be one token; "${c}" is ${ids.length}. Use --tokenizer char.`,
      );
    return ids[0] as number;
  };
  return { numbers: Array.from({ length: p }, (_, x) => one(numberText(x))), equals: one(EQUALS) };
}

/** The training and test pairs, as pair indices a·p + b: a seeded share `fraction` of the p² trains. */
export function splitModularPairs(
  p: number,
  fraction: number,
  seed: number,
): { readonly train: Int32Array; readonly test: Int32Array } {
  if (!Number.isInteger(p) || p < 3)
    throw new EngineError('input/invalid', `The modulus must be a whole number of at least 3; got ${p}.`);
  const N = p * p;
  const nTrain = Math.round(fraction * N);
  if (nTrain < 1 || nTrain >= N)
    throw new EngineError(
      'input/invalid',
      `A training share of ${fraction} leaves no training or no test pair of ${N}; choose one between 0 and 1.`,
    );
  const order = seededPermutation(N, seed);
  return { train: Int32Array.from(order.slice(0, nTrain)), test: Int32Array.from(order.slice(nTrain)) };
}

/** A batch of the pairs `pairs` (indices a·p + b): "a b =" → (a + b) mod p at the last position. */
export function modularBatch(pairs: ArrayLike<number>, p: number, ids: ModularIds): Batch {
  const B = pairs.length;
  const T = 3;
  const input = new Int32Array(B * T);
  const targets = new Int32Array(B * T).fill(PAD);
  for (let i = 0; i < B; i++) {
    const pair = pairs[i] as number;
    const a = Math.floor(pair / p);
    const b = pair % p;
    input[i * T] = ids.numbers[a] as number;
    input[i * T + 1] = ids.numbers[b] as number;
    input[i * T + 2] = ids.equals;
    targets[i * T + 2] = ids.numbers[(a + b) % p] as number;
  }
  return { B, T, input, targets };
}

/** The task of a run: p = 113, 30% trained, split by the run's seed. */
export function modularTask(tok: Tokenizer, seed: number, p: number = MODULAR_P): ModularTask {
  return { p, ids: modularIds(tok, p), ...splitModularPairs(p, MODULAR_TRAIN_FRACTION, seed) };
}

/**
 * The task's data: every training pair in each step's batch when `rows` ≥ their count (full
 * batch, the published setup), else `rows` pairs drawn per step from (seed, step); the test pairs
 * as the validation batches, in pieces of at most the batch's rows.
 */
export function modularDataset(task: ModularTask, seed: number, rows: number): Dataset {
  const { p, ids, train, test } = task;
  const full = rows >= train.length;
  const maxBatch = full ? train.length : rows;
  const fullBatch = full ? modularBatch(train, p, ids) : null;
  const valBatches: Batch[] = [];
  for (let i = 0; i < test.length; i += maxBatch) valBatches.push(modularBatch(test.subarray(i, i + maxBatch), p, ids));
  return {
    kind: 'documents',
    maxBatch,
    maxLen: 3,
    maxSrcLen: 0,
    trainTokens: train.length,
    valTokens: test.length,
    trainBatch(step: number): Batch {
      if (fullBatch) return fullBatch;
      const rng = stepRng(seed, STREAMS.data, step);
      return modularBatch(
        Array.from({ length: rows }, () => train[rng.int(train.length)] as number),
        p,
        ids,
      );
    },
    valBatches: () => valBatches,
    probe: () => modularBatch(test.subarray(0, 1), p, ids),
    valPairs: [],
    sampler: { kind: 'modular-addition', p, rows, train },
    modular: task,
  };
}
