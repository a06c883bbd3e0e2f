/**
 * Sizes of a model before it exists: the model is planned (every layer requests its
 * buffers) but never bound, so no float is allocated, and the numbers are exactly what
 * `bind` would allocate — not a formula that can drift from the code.
 */

import type { ModelConfig } from '../config';
import type { ModelShape } from './transformer';
import { Transformer } from './transformer';

/** Parameter count and memory of one model at one batch shape, in float32 bytes. */
export interface ModelEstimate {
  readonly params: number;
  /** Parameters per top-level module (embeddings, encoder, decoder, head...). */
  readonly paramsByModule: Readonly<Record<string, number>>;
  readonly paramBytes: number;
  readonly gradBytes: number;
  /** Adam's two moments. */
  readonly optimizerBytes: number;
  /** Activations kept for backward plus gradient scratch, at the planned batch shape. */
  readonly activationBytes: number;
  readonly totalBytes: number;
  /** Forward+backward FLOPs per target token (matmuls and attention; ≈ 6·params + attention). */
  readonly trainFlopsPerToken: number;
}

/** The module a parameter belongs to, from its name. */
function moduleOf(name: string): string {
  const m = /^(encoder_layers|decoder_layers|transformer\.h)\.(\d+)\./.exec(name);
  if (m) return `${m[1] === 'encoder_layers' ? 'encoder' : 'decoder'}.${m[2]}`;
  if (/embedding|wte|wpe|positions/.test(name)) return 'embeddings';
  if (/^(fc|lm_head)\./.test(name)) return 'output';
  return 'final norms';
}

/** Plans `config` at `shape` and reports its sizes, allocating nothing. */
export function estimateModel(config: ModelConfig, shape: ModelShape): ModelEstimate {
  const model = new Transformer(config, shape);
  const params = model.store.count;
  const byModule: Record<string, number> = {};
  for (const p of model.store.params) {
    const key = moduleOf(p.name);
    byModule[key] = (byModule[key] ?? 0) + p.size;
  }
  const f = 4;
  const activationBytes = model.arena.floats * f + model.arena.otherBytes;
  // Matmul FLOPs: 2 per multiply-add forward, 4 backward, on every weight touched per token
  // (embedding lookups are not matmuls); attention adds QKᵀ and PV: 2·2·T·C per layer forward.
  const C = config.dModel;
  const T = model.maxLen;
  const S = model.maxSrcLen || T;
  let matmulParams = 0;
  for (const p of model.store.params) if (p.shape.length === 2 && !/embedding|wte|wpe|positions/.test(p.name)) matmulParams += p.size;
  if (config.tieEmbeddings) matmulParams += config.vocabSize * C;
  const encPerTgt = config.kind === 'encoder-decoder' ? S / T : 0;
  const attn = 2 * 2 * C * (config.nDecoderLayers * (T + (config.kind === 'encoder-decoder' ? S : 0)) + config.nEncoderLayers * S * encPerTgt);
  const trainFlopsPerToken = 3 * (2 * matmulParams + attn);
  return {
    params,
    paramsByModule: byModule,
    paramBytes: params * f,
    gradBytes: params * f,
    optimizerBytes: 2 * params * f,
    activationBytes,
    totalBytes: 4 * params * f + activationBytes,
    trainFlopsPerToken,
  };
}
