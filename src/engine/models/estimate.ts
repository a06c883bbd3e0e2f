/**
 * Sizes of a model before it exists: the model is planned (every layer requests its
 * buffers) but never bound, so no float is allocated, and the numbers are exactly what
 * `bind` would allocate — not a formula that can drift from the code.
 */

import type { ModelConfig } from '../config';
import { headSize, kvHeads } from '../config';
import { muonBufferFloats } from '../optim/optimizer';
import type { OptimizerConfig } from '../optim/optimizerConfig';
import type { ModelShape } from './inputs';
import { Transformer } from './transformer';

/** The optimizer whose state an estimate counts: Adam(W)'s two moments, or Muon's state. */
export type EstimateOptimizer = OptimizerConfig['type'];

/** Parameter count and memory of one model at one batch shape, in float32 bytes. */
export interface ModelEstimate {
  readonly params: number;
  /** Parameters per top-level module (embeddings, encoder, decoder, head...). */
  readonly paramsByModule: Readonly<Record<string, number>>;
  readonly paramBytes: number;
  readonly gradBytes: number;
  /**
   * The optimizer's state: Adam(W)'s two moments per parameter; Muon's momentum and AdamW's
   * moments (both buffers span every parameter) plus its Newton–Schulz buffers.
   */
  readonly optimizerBytes: number;
  /** What optimizerBytes holds, in words: "Adam moments" or "Muon momentum, Adam moments and Newton–Schulz buffers". */
  readonly optimizerState: string;
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
  if (/embedding|wte|wpe|positions|ln_e\./.test(name)) return 'embeddings';
  if (/^(fc|lm_head)\./.test(name)) return 'output';
  return 'final norms';
}

/**
 * Plans `config` at `shape` and reports its sizes, allocating nothing; the optimizer state
 * counted is `optimizer`'s (default AdamW).
 */
export function estimateModel(
  config: ModelConfig,
  shape: ModelShape,
  optimizer: EstimateOptimizer = 'adamw',
): ModelEstimate {
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
  // (embedding lookups are not matmuls); attention adds QKᵀ and PV: 2·2·T·H·D per layer forward.
  const C = config.dModel;
  const A = config.nHeads * headSize(config);
  const T = model.maxLen;
  const S = model.maxSrcLen || T;
  let matmulParams = 0;
  for (const p of model.store.params)
    if (p.shape.length === 2 && !/embedding|wte|wpe|positions/.test(p.name)) matmulParams += p.size;
  if (config.tieEmbeddings) matmulParams += config.vocabSize * C;
  const encPerTgt = config.kind === 'encoder-decoder' ? S / T : 0;
  const attn =
    2 *
    2 *
    A *
    (config.nDecoderLayers * (T + (config.kind === 'encoder-decoder' ? S : 0)) + config.nEncoderLayers * S * encPerTgt);
  const trainFlopsPerToken = 3 * (2 * matmulParams + attn);
  // The Optimizer's allocations (optim/optimizer.ts): m and v over every parameter, and Muon's buffers.
  const muon = optimizer === 'muon';
  const hidden = model.store.params.filter((p) => p.hidden).map((p) => p.shape);
  const optimizerBytes = (2 * params + (muon ? muonBufferFloats(hidden) : 0)) * f;
  return {
    params,
    paramsByModule: byModule,
    paramBytes: params * f,
    gradBytes: params * f,
    optimizerBytes,
    optimizerState: muon ? 'Muon momentum, Adam moments and Newton–Schulz buffers' : 'Adam moments',
    activationBytes,
    totalBytes: 2 * params * f + optimizerBytes + activationBytes,
    trainFlopsPerToken,
  };
}

/** WebAssembly's address space (wasm32, 4 GiB): everything a model binds on the wasm backend lives in it. */
export const WASM_MEMORY_BYTES = 4 * 2 ** 30;
/** Kept free for the kernels' scratch and staging regions and the decoding caches. */
export const WASM_RESERVE_BYTES = 256 * 2 ** 20;

/**
 * Bytes the key/value-cache path (stepper.ts) takes from a model's backend for `rows` rows
 * (the beam width), a source of `srcLen` positions and a job of `positions` positions (default
 * the context): every decoder layer's cached keys and values over those positions (Hkv heads
 * each), the step buffers, and the buffers of one prefill of a prompt of `prompt` positions
 * (default all of them; its attention probabilities [H, T, T]). Decoding and the attention of a
 * text need these beside the model's own buffers.
 */
export function stepperBytes(
  config: ModelConfig,
  rows: number,
  srcLen = 0,
  positions = config.maxLen,
  prompt = positions,
): number {
  const { dModel: C, dFF: F, nHeads: H, vocabSize: V } = config;
  const A = H * headSize(config); // a position's queries: H heads of D
  const KV = headSize(config) * kvHeads(config); // a position's keys: Hkv heads of D
  const P = Math.min(positions, config.maxLen);
  const S = config.kind === 'encoder-decoder' ? srcLen : 0;
  // A row of the step buffers: mid, y, acc [C]; the attention's q, k, v, heads and pre-norm projection [A];
  // the feed-forward network's three [F]; the norm's mean and rstd; the qk-norm's statistics [H].
  const scratch = (R: number): number => R * (3 * C + 5 * A + 3 * F + 2 + H);
  // Per layer: self-attention keys and values (Hkv heads) of every row and their probabilities; the
  // encoder's keys and values, shared by every row, and each row's cross-attention probabilities.
  // With qk-norm, the encoder's keys before their norm and its statistics, once per layer.
  const crossKeys = S > 0 ? 2 * S * KV + rows * H * S + (config.qkNorm ? S * KV + S * kvHeads(config) : 0) : 0;
  const caches = config.nDecoderLayers * (2 * rows * P * KV + rows * H * P + crossKeys);
  const step = rows * C + scratch(rows) + rows * V + rows * P * KV;
  const T = Math.min(prompt, P);
  const prefill = T * C + scratch(T) + H * T * (T + S);
  const windowRow = config.slidingWindow > 0 ? P : 0; // bytes: a step's mask row
  return 4 * (caches + step + prefill) + T * T + windowRow;
}

/** What the memory check weighs besides the model planned at its shape. */
export interface MemoryOptions {
  /** Bytes WebAssembly has (default WASM_MEMORY_BYTES). */
  readonly limit?: number;
  /** Rows of the key/value-cache path to count (stepperBytes): the beam width; none when absent. */
  readonly decodeRows?: number;
  /** Positions the key/value-cache path is sized for (stepperBytes; default the context). */
  readonly decodePositions?: number;
  /** The longest prompt it prefills (stepperBytes; default decodePositions). */
  readonly decodePrompt?: number;
  /**
   * Whether gradients are counted (default: for training only — a model that only runs allocates none until a
   * backward, see ModelParts.grads).
   */
  readonly gradients?: boolean;
  /**
   * What the person can lower from where they asked, when the activations are what does not
   * fit ("shorten the text (1000 tokens)"); default: the batch size and sequence length of
   * training, which the CLI's flags and Configure Model both set.
   */
  readonly lower?: string;
  /** The optimizer whose state training counts (default AdamW). */
  readonly optimizer?: EstimateOptimizer;
}

/**
 * Why `config` planned at `shape` cannot fit in WebAssembly memory, or null when it fits:
 * parameters, gradients when it trains (or `opts.gradients`), activations at that shape, the decoding
 * path's buffers when asked, and for training the optimizer's state. Computed before anything
 * is allocated; the message names what takes the room and only what the person can lower
 * (`opts.lower`): an opened model is never retrained, so running it names no model setting.
 */
export function memoryProblem(
  config: ModelConfig,
  shape: ModelShape,
  use: 'inference' | 'training',
  opts: MemoryOptions = {},
): string | null {
  const limit = opts.limit ?? WASM_MEMORY_BYTES;
  const e = estimateModel(config, shape, opts.optimizer);
  const optimizer = use === 'training' ? e.optimizerBytes : 0;
  const grads = (opts.gradients ?? use === 'training') ? e.gradBytes : 0;
  const T = shape.maxLen ?? config.maxLen;
  const src = shape.maxSrcLen ?? (config.kind === 'encoder-decoder' ? config.maxLen : 0);
  const P = Math.min(opts.decodePositions ?? config.maxLen, config.maxLen);
  const decode = opts.decodeRows ? stepperBytes(config, opts.decodeRows, src, P, opts.decodePrompt ?? P) : 0;
  const need = e.paramBytes + grads + e.activationBytes + decode + optimizer + WASM_RESERVE_BYTES;
  if (need <= limit) return null;
  const gib = (b: number): string => `${(b / 2 ** 30).toFixed(2)} GiB`;
  const parts =
    `parameters ${gib(e.paramBytes)}${grads ? `, gradients ${gib(grads)}` : ''}, ` +
    `activations ${gib(e.activationBytes)} for ${shape.maxBatch} × ${T} ` +
    `positions` +
    `${decode ? `, decoding ${gib(decode)} for ${opts.decodeRows} row${opts.decodeRows === 1 ? '' : 's'}` : ''}` +
    `${decode ? ` × ${P} positions` : ''}` +
    `${optimizer ? `, ${e.optimizerState} ${gib(optimizer)}` : ''}`;
  const fixed = e.paramBytes + grads + optimizer + WASM_RESERVE_BYTES;
  const lower =
    opts.lower ??
    (use === 'training' ? `lower the batch size (${shape.maxBatch}) or the sequence length (${T})` : null);
  const fix =
    fixed >= limit || lower === null
      ? use === 'training'
        ? `the model itself is too large for it: use fewer layers (nDecoderLayers ` +
          `${config.nDecoderLayers}) or a smaller dModel (${config.dModel}), or only run it ` +
          `(decode, score) instead of training it`
        : 'the model itself is too large to run in WebAssembly; it needs a model with fewer parameters'
      : `${lower} until the rest fits in ${gib(limit - fixed)}`;
  return (
    `${config.kind} model of ${e.params} parameters needs ${gib(need)} of WebAssembly memory ` +
    `(${parts}), more than the ${gib(limit)} it has; ${fix}.`
  );
}
