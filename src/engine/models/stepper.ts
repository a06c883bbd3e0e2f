/**
 * Incremental decoding with a key/value cache: each new token costs one position — its
 * query attends to the cached keys and values of every earlier position — instead of
 * re-running the whole prefix as the tutorials' greedy loops do. For the encoder-decoder
 * the source is encoded once and each layer's cross-attention keys/values are computed once
 * and shared by every beam (batch stride 0). Implements the `DecodeStepper` contract of
 * `decode/stepperContract.ts`; allocates its buffers once, when created.
 *
 * This file only orchestrates: it checks the inputs, owns the caches and scratch buffers,
 * and calls each layer's `step` (Embedder, Block, LayerNorm) and the model's `head`, which
 * sit beside their `forward` and share its math. Leaves out: any layer's math, and
 * batching several prompts (a row is a beam of one prompt).
 *
 * Shape legend: R rows (beams), P positions fed so far, S source positions, C d_model,
 * H heads, V vocabulary.
 */

import type { Backend, FloatArray, MaskView } from '../backend';
import type { DecodeStepper, StepAttention, StepOutput } from '../decode/stepperContract';
import { EngineError } from '../errors';
import type { BlockCache, BlockScratch } from './block';
import { allocBlockScratch } from './block';
import { fillPaddingMask } from './masks';
import type { Transformer } from './transformer';

/** Options of {@link createStepper}. */
export interface StepperOptions {
  /** Most rows (the beam width). */
  readonly maxRows: number;
  /** Source tokens (encoder-decoder only), one sequence. */
  readonly src?: Int32Array;
}

/** Creates a key/value-cache stepper over a bound model. */
export function createStepper(model: Transformer, backend: Backend, opts: StepperOptions): DecodeStepper {
  return new KVCacheStepper(model, backend, opts);
}

class KVCacheStepper implements DecodeStepper {
  readonly vocabSize: number;
  readonly nHeads: number;
  readonly maxPositions: number;
  readonly maxRows: number;
  private readonly C: number;
  private readonly caches: BlockCache[] = [];
  private readonly S: number;
  private readonly crossMask: MaskView | null;
  private readonly x: FloatArray; // [R, C] the residual stream of the newest position
  private readonly scratch: BlockScratch;
  private readonly logits: FloatArray;
  private readonly tmp: FloatArray;
  private readonly out32: Float32Array;
  private rows = 1;
  private pos = 0;

  constructor(private readonly model: Transformer, private readonly k: Backend, opts: StepperOptions) {
    const cfg = model.config;
    if (!Number.isInteger(opts.maxRows) || opts.maxRows < 1) throw new EngineError('input/invalid', `maxRows must be a positive integer, got ${opts.maxRows}.`);
    this.vocabSize = cfg.vocabSize;
    this.nHeads = cfg.nHeads;
    this.maxPositions = cfg.maxLen;
    this.maxRows = opts.maxRows;
    const C = (this.C = cfg.dModel);
    const R = this.maxRows;
    const P = this.maxPositions;
    let memory: { data: FloatArray; S: number } | null = null;
    if (cfg.kind === 'encoder-decoder') {
      const src = opts.src;
      if (!src || src.length === 0) throw new EngineError('input/invalid', 'An encoder-decoder needs a non-empty source sequence to decode from.');
      if (src.length > model.maxSrcLen) throw new EngineError('input/invalid', `Source of ${src.length} tokens exceeds the context of ${model.maxSrcLen}; shorten it or retrain with a longer context.`);
      this.S = src.length;
      memory = { data: model.encode(src, 1, this.S, false, null).memory, S: this.S };
      const pad = new Uint8Array(this.S);
      fillPaddingMask(pad, src, 1, this.S);
      this.crossMask = { data: pad, batchStride: 0, rowStride: 0 };
    } else {
      this.S = 0;
      this.crossMask = null;
    }
    for (const blk of model.decoder) this.caches.push(blk.createCache(k, R, P, memory));
    this.x = k.alloc(R * C);
    this.scratch = allocBlockScratch(k, R, C, cfg.dFF);
    this.logits = k.alloc(R * cfg.vocabSize);
    this.tmp = k.alloc(R * P * C);
    this.out32 = new Float32Array(R * cfg.vocabSize);
  }

  step(tokens: Int32Array, capture: boolean): StepOutput {
    const k = this.k;
    const model = this.model;
    const V = this.vocabSize;
    const R = tokens.length;
    if (R !== this.rows) throw new EngineError('input/invalid', `step() got ${R} tokens but the stepper has ${this.rows} rows; call reorder() to change the number of rows.`);
    if (this.pos >= this.maxPositions) throw new EngineError('input/invalid', `The context of ${this.maxPositions} positions is full; decode fewer tokens or retrain with a longer context.`);
    for (let i = 0; i < R; i++) {
      const id = tokens[i] as number;
      if (id < 0 || id >= V) throw new EngineError('input/invalid', `Token id ${id} is outside the vocabulary of ${V}.`);
    }
    const P = this.pos + 1;
    model.decEmbed.step(k, this.x, tokens, R, this.pos);
    model.decoder.forEach((blk, li) => blk.step(k, this.x, { R, P, cache: this.caches[li] as BlockCache, crossMask: this.crossMask, scratch: this.scratch }));
    let top = this.x;
    if (model.decNorm) {
      model.decNorm.step(k, this.scratch.mid, this.x, R, this.scratch);
      top = this.scratch.mid;
    }
    model.head(k, this.logits, top, R);
    this.pos = P;
    const nl = R * V;
    const logits = this.logits instanceof Float32Array ? this.logits.subarray(0, nl) : copyInto(this.out32, this.logits, nl);
    let attention: StepAttention | null = null;
    if (capture) {
      const H = this.nHeads;
      attention = {
        self: this.caches.map((c) => Float32Array.from(c.self.probs.subarray(0, R * H * P))),
        cross: this.caches.flatMap((c) => (c.cross ? [Float32Array.from(c.cross.probs.subarray(0, R * H * this.S))] : [])),
      };
    }
    return { logits, attention };
  }

  reset(): void {
    // The stale keys/values stay in the buffers: step() only reads positions below `pos`.
    this.pos = 0;
    this.rows = 1;
  }

  reorder(parents: Int32Array): void {
    const R = parents.length;
    if (R < 1 || R > this.maxRows) throw new EngineError('input/invalid', `reorder() needs 1 to ${this.maxRows} rows, got ${R}.`);
    for (let i = 0; i < R; i++) {
      const p = parents[i] as number;
      if (!Number.isInteger(p) || p < 0 || p >= this.rows) throw new EngineError('input/invalid', `reorder() parent ${p} is not one of the ${this.rows} current rows.`);
    }
    const row = this.maxPositions * this.C;
    const used = this.pos * this.C;
    for (const c of this.caches) {
      for (const buf of [c.self.k, c.self.v]) {
        this.tmp.set(buf.subarray(0, this.rows * row));
        for (let i = 0; i < R; i++) {
          const from = (parents[i] as number) * row;
          buf.set(this.tmp.subarray(from, from + used), i * row);
        }
      }
    }
    this.rows = R;
  }
}

function copyInto(out: Float32Array, src: FloatArray, n: number): Float32Array {
  for (let i = 0; i < n; i++) out[i] = src[i] as number;
  return out.subarray(0, n);
}
