/**
 * How the two models' weights start, and drawing them. Decoder-only: GPT-2's initialization
 * (normal 0.02; residual projections scaled by 1/√(2·layers), Radford et al. 2019 §2.3) as
 * nanoGPT does it. Encoder-decoder: Xavier-uniform matrices (Glorot & Bengio 2010) and
 * normal(0, d^−½) embeddings — the scale that ×√d brings to unit variance (§3.4 of the
 * paper). A gated feed-forward network's gate starts as its up projection (fc1) does; norm
 * weights start at 1.
 *
 * Leaves out: the parameters themselves (plan.ts) and loading saved weights (src/lab).
 */

import type { ModelConfig } from '../config';
import { headSize, kvHeads } from '../config';
import type { Rng } from '../rng';
import type { BlockInit } from './block';
import type { Param, ParamInit } from './plan';

/** The initialization of each kind of parameter of a model. */
export interface ModelInit {
  readonly block: BlockInit;
  readonly embed: ParamInit;
  readonly pos: ParamInit;
  readonly head: ParamInit;
}

/** The initialization of a model of config `cfg` (see the file comment). */
export function initFor(cfg: ModelConfig): ModelInit {
  const C = cfg.dModel;
  if (cfg.kind === 'decoder-only') {
    const n: ParamInit = { kind: 'normal', std: 0.02 };
    return {
      block: { qkv: n, kv: n, fc1: n, out: { kind: 'normal', std: 0.02 / Math.sqrt(2 * cfg.nDecoderLayers) } },
      embed: n,
      pos: n,
      head: n,
    };
  }
  const xavier = (i: number, o: number): ParamInit => ({ kind: 'uniform', bound: Math.sqrt(6 / (i + o)) });
  // W_q is [H·D, C], W_o [C, H·D], W_k and W_v [Hkv·D, C]: fewer rows under grouped-query attention.
  const D = headSize(cfg);
  const A = cfg.nHeads * D;
  const kv = xavier(C, D * kvHeads(cfg));
  return {
    block: { qkv: xavier(C, A), kv, out: xavier(C, C), o: xavier(A, C), fc1: xavier(C, cfg.dFF) },
    embed: { kind: 'normal', std: 1 / Math.sqrt(C) },
    pos: { kind: 'normal', std: 0.02 },
    head: xavier(C, cfg.vocabSize),
  };
}

/** Draws every parameter from `rng` by its init, in parameter order (so a seed gives the same weights). */
export function drawParams(params: readonly Param[], rng: Rng): void {
  for (const p of params) {
    const d = p.data;
    const init = p.init;
    for (let i = 0; i < p.size; i++) {
      d[i] =
        init.kind === 'const'
          ? init.value
          : init.kind === 'normal'
            ? rng.normal() * init.std
            : (rng.next() * 2 - 1) * init.bound;
    }
  }
}
