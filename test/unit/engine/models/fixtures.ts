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
