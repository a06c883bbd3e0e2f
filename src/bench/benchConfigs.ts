/**
 * The benchmark's five model configs, the same in our engine and in
 * scripts/pytorch/bench.py: nanoGPT's architecture for the decoders (pre-LN, GELU, learned
 * positions, tied embeddings, no dropout; `small-decoder` is its shakespeare_char CPU
 * config), Llama's for `tiny-modern` (the `llama-tiny` preset: RoPE, RMSNorm, SwiGLU, 2
 * key/value heads, no biases, untied) and the paper's for the encoder-decoders (post-LN,
 * ReLU, sinusoids, dropout 0.1, label smoothing 0.1), with random token batches (no padding).
 *
 * Leaves out: measuring (benchRun.ts).
 */

import type { ModelConfig } from '../engine/config';
import { presetConfig } from '../engine/config';
import type { Batch } from '../engine/models/inputs';
import type { OptimizerConfig } from '../engine/optim/optimizerConfig';
import { nanoGptOptimizer, paperOptimizer } from '../engine/optim/optimizerConfig';
import type { Rng } from '../engine/rng';

/** Names of the benchmark configs. */
export const BENCH_CONFIG_NAMES = [
  'tiny-decoder',
  'small-decoder',
  'tiny-modern',
  'tiny-encdec',
  'base-encdec',
] as const;

/** One benchmark config name. */
export type BenchConfigName = (typeof BENCH_CONFIG_NAMES)[number];

/** A benchmark config: the model, the batch, and the optimizer it trains with. */
export interface BenchConfig {
  readonly name: BenchConfigName;
  readonly model: ModelConfig;
  readonly batch: number;
  /** Tokens per sequence (source and target for an encoder-decoder). */
  readonly seq: number;
  readonly optimizer: OptimizerConfig;
}

/** The config called `name`. */
export function benchConfig(name: BenchConfigName): BenchConfig {
  switch (name) {
    case 'tiny-decoder':
      return {
        name,
        model: presetConfig('decoder-only', 'tiny', 256),
        batch: 32,
        seq: 64,
        optimizer: nanoGptOptimizer(5000),
      };
    case 'small-decoder':
      return {
        name,
        model: presetConfig('decoder-only', 'small', 65),
        batch: 12,
        seq: 64,
        optimizer: nanoGptOptimizer(5000),
      };
    case 'tiny-modern':
      return {
        name,
        model: presetConfig('decoder-only', 'llama-tiny', 256),
        batch: 32,
        seq: 64,
        optimizer: nanoGptOptimizer(5000),
      };
    case 'tiny-encdec':
      return {
        name,
        model: presetConfig('encoder-decoder', 'tiny', 256, 256),
        batch: 32,
        seq: 64,
        optimizer: paperOptimizer(64),
      };
    case 'base-encdec':
      return {
        name,
        model: presetConfig('encoder-decoder', 'base', 5000, 5000),
        batch: 8,
        seq: 100,
        optimizer: paperOptimizer(512),
      };
  }
}

/** True when `s` names a benchmark config. */
export function isBenchConfigName(s: string): s is BenchConfigName {
  return (BENCH_CONFIG_NAMES as readonly string[]).includes(s);
}

/** A batch of random tokens (ids 4..V−1, so no PAD, BOS, EOS or UNK) for `cfg`. */
export function randomBatch(cfg: BenchConfig, rng: Rng): Batch {
  const n = cfg.batch * cfg.seq;
  const ids = (V: number): Int32Array => Int32Array.from({ length: n }, () => 4 + rng.int(V - 4));
  const V = cfg.model.vocabSize;
  if (cfg.model.kind === 'decoder-only') return { B: cfg.batch, T: cfg.seq, input: ids(V), targets: ids(V) };
  return { B: cfg.batch, T: cfg.seq, S: cfg.seq, src: ids(cfg.model.srcVocabSize), input: ids(V), targets: ids(V) };
}
