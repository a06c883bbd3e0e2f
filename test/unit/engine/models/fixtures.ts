/**
 * Small configs and batches shared by the model tests.
 */

import type { ConfigInput, ModelConfig } from '../../../../src/engine/config';
import { validateConfig } from '../../../../src/engine/config';
import type { Batch } from '../../../../src/engine/models/inputs';
import { Rng } from '../../../../src/engine/rng';

/** A tiny config of either kind, with overrides. */
export function tinyConfig(kind: ModelConfig['kind'], over: Partial<ModelConfig> = {}): ModelConfig {
  const base: ConfigInput =
    kind === 'encoder-decoder'
      ? {
          kind,
          srcVocabSize: 9,
          vocabSize: 11,
          dModel: 8,
          nHeads: 2,
          dFF: 12,
          nEncoderLayers: 2,
          nDecoderLayers: 2,
          maxLen: 8,
          dropout: 0,
          norm: 'post',
          positional: 'sinusoidal',
          activation: 'relu',
          tieEmbeddings: false,
          bias: true,
          layerNormEps: 1e-5,
          embedScale: true,
          labelSmoothing: 0.1,
        }
      : {
          kind,
          srcVocabSize: 0,
          vocabSize: 11,
          dModel: 8,
          nHeads: 2,
          dFF: 12,
          nEncoderLayers: 0,
          nDecoderLayers: 2,
          maxLen: 8,
          dropout: 0,
          norm: 'pre',
          positional: 'learned',
          activation: 'gelu',
          tieEmbeddings: true,
          bias: true,
          layerNormEps: 1e-5,
          embedScale: false,
          labelSmoothing: 0,
        };
  return validateConfig({ ...base, ...over });
}

/** Random ids in [4, V) with PAD (0) after `lengths[b]` tokens per row. */
export function paddedIds(rng: Rng, B: number, L: number, V: number, lengths: readonly number[]): Int32Array {
  const ids = new Int32Array(B * L);
  for (let b = 0; b < B; b++) for (let t = 0; t < (lengths[b] ?? L); t++) ids[b * L + t] = 4 + rng.int(V - 4);
  return ids;
}

/** A batch with padding for a tiny config (B = 2). */
export function tinyBatch(cfg: ModelConfig, seed = 1, padded = true): Batch {
  const rng = new Rng(seed);
  const B = 2;
  const T = 5;
  const tLens = padded ? [5, 3] : [5, 5];
  const input = paddedIds(rng, B, T, cfg.vocabSize, tLens);
  if (cfg.kind === 'encoder-decoder') for (let b = 0; b < B; b++) input[b * T] = 1; // BOS
  const targets = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < (tLens[b] as number); t++)
      targets[b * T + t] = t + 1 < (tLens[b] as number) ? (input[b * T + t + 1] as number) : 2;
  }
  if (cfg.kind === 'decoder-only') return { B, T, input, targets };
  const S = 6;
  const src = paddedIds(rng, B, S, cfg.srcVocabSize, padded ? [6, 4] : [6, 6]);
  return { B, T, S, src, input, targets };
}

/**
 * Models with the attention options of today's transformers (models/attention.ts), each alone and then
 * combined, for the gradient checks, the backend comparisons and the stepper-vs-forward tests.
 */
export const ATTENTION_VARIANTS: [string, ModelConfig][] = [
  ['decoder-only, rope', tinyConfig('decoder-only', { positional: 'rope' })],
  [
    'decoder-only, partial rope (rotaryFraction 0.5, theta 100)',
    tinyConfig('decoder-only', { positional: 'rope', rotaryFraction: 0.5, ropeTheta: 100 }),
  ],
  [
    'decoder-only, alibi (3 heads: slopes of a non-power of two)',
    tinyConfig('decoder-only', { positional: 'alibi', dModel: 12, nHeads: 3 }),
  ],
  ['decoder-only, no positions', tinyConfig('decoder-only', { positional: 'none' })],
  ['decoder-only, qkNorm', tinyConfig('decoder-only', { qkNorm: true })],
  ['decoder-only, qkv bias without attention-output bias', tinyConfig('decoder-only', { bias: false, qkvBias: true })],
  ['decoder-only, attention-output bias alone', tinyConfig('decoder-only', { qkvBias: false, attnOutBias: true })],
  ['decoder-only, grouped-query (4 heads, 2 kv)', tinyConfig('decoder-only', { nHeads: 4, nKvHeads: 2 })],
  ['decoder-only, multi-query (1 kv head)', tinyConfig('decoder-only', { nKvHeads: 1 })],
  ['decoder-only, attention soft-cap', tinyConfig('decoder-only', { attnSoftCap: 0.05 })],
  ['decoder-only, sliding window 2', tinyConfig('decoder-only', { slidingWindow: 2 })],
  [
    'decoder-only, combined: rope + qkNorm + GQA + soft-cap + window + split biases',
    tinyConfig('decoder-only', {
      positional: 'rope',
      rotaryFraction: 0.5,
      qkNorm: true,
      nHeads: 4,
      nKvHeads: 2,
      dModel: 16,
      attnSoftCap: 0.05,
      slidingWindow: 3,
      bias: false,
      qkvBias: true,
      dropout: 0.2,
    }),
  ],
  [
    'decoder-only, combined: alibi + MQA + soft-cap + window',
    tinyConfig('decoder-only', { positional: 'alibi', nKvHeads: 1, attnSoftCap: 0.05, slidingWindow: 3 }),
  ],
  [
    'decoder-only, Llama-like: rope + RMSNorm + SwiGLU + GQA + window, no biases',
    tinyConfig('decoder-only', {
      positional: 'rope',
      normType: 'rmsnorm',
      activation: 'swiglu',
      nHeads: 4,
      nKvHeads: 2,
      slidingWindow: 3,
      bias: false,
      tieEmbeddings: false,
    }),
  ],
  [
    'decoder-only, nanochat-like: qk-norm without weights, rope, MQA, ReLU², embedNorm, logit soft-cap',
    tinyConfig('decoder-only', {
      positional: 'rope',
      normType: 'rmsnorm',
      normScale: false,
      qkNorm: true,
      activation: 'relu2',
      nKvHeads: 1,
      embedNorm: true,
      logitSoftCap: 2,
      bias: false,
      tieEmbeddings: false,
    }),
  ],
  ['decoder-only, headDim 2 (narrower than dModel / nHeads = 4)', tinyConfig('decoder-only', { headDim: 2 })],
  [
    'decoder-only, combined: headDim 8 over dModel 12 (3 heads, 1 kv) + attnScale + rope + qkNorm',
    tinyConfig('decoder-only', {
      dModel: 12,
      nHeads: 3,
      nKvHeads: 1,
      headDim: 8,
      attnScale: 0.2,
      positional: 'rope',
      rotaryFraction: 0.5,
      qkNorm: true,
      bias: false,
      qkvBias: true,
    }),
  ],
  ['decoder-only, postNorms (sandwich norms)', tinyConfig('decoder-only', { norm: 'pre', postNorms: true })],
  [
    'decoder-only, globalEvery 2: windowed layer 0 (rope θ 100), global layer 1 (θ 10000)',
    tinyConfig('decoder-only', {
      nDecoderLayers: 2,
      positional: 'rope',
      slidingWindow: 2,
      globalEvery: 2,
      ropeLocalTheta: 100,
    }),
  ],
  [
    'decoder-only, Gemma-3-like: sandwich RMSNorms, GeGLU, qkNorm, headDim 6, MQA, local/global, embedScale',
    tinyConfig('decoder-only', {
      nDecoderLayers: 2,
      norm: 'pre',
      normType: 'rmsnorm',
      postNorms: true,
      activation: 'geglu',
      qkNorm: true,
      nKvHeads: 1,
      headDim: 6,
      attnScale: 0.3,
      positional: 'rope',
      slidingWindow: 2,
      globalEvery: 2,
      ropeLocalTheta: 100,
      embedScale: true,
      bias: false,
      tieEmbeddings: true,
    }),
  ],
  [
    'encoder-decoder, pre-LN + postNorms + globalEvery 2 (2 decoder layers, window 2)',
    tinyConfig('encoder-decoder', {
      norm: 'pre',
      postNorms: true,
      nDecoderLayers: 2,
      slidingWindow: 2,
      globalEvery: 2,
    }),
  ],
  [
    'encoder-decoder, headDim 6 over dModel 8 (4 heads, 2 kv) + attnScale + rope',
    tinyConfig('encoder-decoder', { nHeads: 4, nKvHeads: 2, headDim: 6, attnScale: 0.5, positional: 'rope' }),
  ],
  [
    'encoder-decoder, rope + qkNorm + MQA + split biases',
    tinyConfig('encoder-decoder', { positional: 'rope', qkNorm: true, nKvHeads: 1, attnOutBias: false }),
  ],
  [
    'encoder-decoder, pre-LN, no positions + GQA + soft-cap + window',
    tinyConfig('encoder-decoder', {
      norm: 'pre',
      positional: 'none',
      nHeads: 4,
      nKvHeads: 2,
      attnSoftCap: 0.05,
      slidingWindow: 2,
    }),
  ],
];
