/**
 * Naming the attention heads of a model and switching chosen ones off (ablation: Michel et
 * al. 2019, "Are Sixteen Heads Really Better than One?", zero a head's output and measure
 * the change in loss). A head is named by its stack — encoder self-attention, decoder
 * self-attention or decoder cross-attention — its 0-based layer and its 0-based head.
 *
 * Leaves out: training with heads off (backward does not mask their gradient) and head
 * masks between 0 and 1; inference only, applied by MultiHeadAttention.setHeadsOff.
 */

import type { ModelConfig } from '../config';
import { EngineError } from '../errors';
import type { MultiHeadAttention } from './attention';
import type { Block } from './block';

/**
 * Which attention a map or a head belongs to: the encoder's self-attention, the decoder's
 * self-attention, or the decoder's cross-attention over the encoder's output. The
 * protocol's AttentionStack is the same union (the engine imports nothing outside itself;
 * src/lab/runs/modelConfigShape.ts fails to compile if the two differ).
 */
export type AttentionStack = 'encoder.self' | 'decoder.self' | 'decoder.cross';

/** One attention head: 0-based layer and head. */
export interface HeadRef {
  readonly stack: AttentionStack;
  readonly layer: number;
  readonly head: number;
}

/** One attention layer of a model, by stack and 0-based layer. */
export interface AttentionLayer {
  readonly stack: AttentionStack;
  readonly layer: number;
  readonly attn: MultiHeadAttention;
}

/**
 * Every head of a model of config `cfg`, in the order encoder self, decoder self, decoder cross; by layer, then head.
 */
export function allHeads(cfg: ModelConfig): HeadRef[] {
  const stacks: [AttentionStack, number][] =
    cfg.kind === 'encoder-decoder'
      ? [
          ['encoder.self', cfg.nEncoderLayers],
          ['decoder.self', cfg.nDecoderLayers],
          ['decoder.cross', cfg.nDecoderLayers],
        ]
      : [['decoder.self', cfg.nDecoderLayers]];
  const heads: HeadRef[] = [];
  for (const [stack, n] of stacks)
    for (let layer = 0; layer < n; layer++)
      for (let head = 0; head < cfg.nHeads; head++) heads.push({ stack, layer, head });
  return heads;
}

/**
 * Sets every layer's switched-off heads to those of `off` (the rest on), after checking
 * that each names a head of the model. Throws `input/invalid` for a head it lacks.
 */
export function applyHeadsOff(layers: readonly AttentionLayer[], off: readonly HeadRef[], nHeads: number): void {
  for (const h of off) {
    const found = layers.some((l) => l.stack === h.stack && l.layer === h.layer);
    if (!found || !Number.isInteger(h.head) || h.head < 0 || h.head >= nHeads) {
      const stacks = [...new Set(layers.map((l) => l.stack))].join(', ');
      throw new EngineError(
        'input/invalid',
        `No attention head ${h.stack} layer ${h.layer} head ${h.head}; this model has ${stacks} ` +
          `with layers 0..${Math.max(...layers.map((l) => l.layer))} and heads 0..${nHeads - 1}.`,
      );
    }
  }
  for (const l of layers)
    l.attn.setHeadsOff(off.filter((h) => h.stack === l.stack && h.layer === l.layer).map((h) => h.head));
}

/** Every attention layer of a model's blocks, by stack (encoder self, decoder self, decoder cross), then layer. */
export function attentionLayersOf(encoder: readonly Block[], decoder: readonly Block[]): AttentionLayer[] {
  const layers: AttentionLayer[] = encoder.map((b, layer) => ({ stack: 'encoder.self', layer, attn: b.selfAttn }));
  decoder.forEach((b, layer) => layers.push({ stack: 'decoder.self', layer, attn: b.selfAttn }));
  decoder.forEach((b, layer) => {
    if (b.crossAttn) layers.push({ stack: 'decoder.cross', layer, attn: b.crossAttn });
  });
  return layers;
}
