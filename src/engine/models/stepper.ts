/**
 * Incremental decoding with a key/value cache: each new token costs one position — its
 * query attends to the cached keys and values of every earlier position — instead of
 * re-running the whole prefix as the tutorials' greedy loops do. For the encoder-decoder
 * the source is encoded once and each layer's cross-attention keys/values are computed once
 * and shared by every beam (batch stride 0). Implements the `DecodeStepper` contract of
 * `decode/stepper.ts`; allocates its buffers once, when created.
 *
 * Shape legend: R rows (beams), P positions fed so far, S source positions, C d_model,
 * H heads, F d_ff, V vocabulary.
 */

import type { AttentionDims, Backend, FloatArray, MaskView } from '../backend';
import type { DecodeStepper, StepAttention, StepOutput } from '../decode/stepper';
import { EngineError } from '../errors';
import type { MultiHeadAttention } from './attention';
import type { Block } from './block';
import type { FeedForward, LayerNorm } from './layers';
import { linearForward } from './layers';
import { fillPaddingMask } from './masks';
import type { Transformer } from './transformer';

interface LayerCache {
  readonly k: FloatArray; // [maxRows, maxPos, C]
  readonly v: FloatArray;
  readonly selfProbs: FloatArray; // [R, H, P]
  readonly crossK: FloatArray | null; // [S, C], shared by all rows
  readonly crossV: FloatArray | null;
  readonly crossProbs: FloatArray | null; // [R, H, S]
}

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
  private readonly layers: LayerCache[] = [];
  private readonly S: number;
  private readonly crossMask: MaskView | null;
  private readonly x: FloatArray;
  private readonly n: FloatArray;
  private readonly a: FloatArray;
  private readonly r: FloatArray;
  private readonly q: FloatArray;
  private readonly kNew: FloatArray;
  private readonly vNew: FloatArray;
  private readonly att: FloatArray;
  private readonly h: FloatArray;
  private readonly h2: FloatArray;
  private readonly mean: FloatArray;
  private readonly rstd: FloatArray;
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
    const H = cfg.nHeads;
    let memory: FloatArray | null = null;
    if (cfg.kind === 'encoder-decoder') {
      const src = opts.src;
      if (!src || src.length === 0) throw new EngineError('input/invalid', 'An encoder-decoder needs a non-empty source sequence to decode from.');
      if (src.length > model.maxSrcLen) throw new EngineError('input/invalid', `Source of ${src.length} tokens exceeds the context of ${model.maxSrcLen}; shorten it or retrain with a longer context.`);
      this.S = src.length;
      memory = model.encode(src, 1, this.S, false, null).memory;
      const pad = new Uint8Array(this.S);
      fillPaddingMask(pad, src, 1, this.S);
      this.crossMask = { data: pad, batchStride: 0, rowStride: 0 };
    } else {
      this.S = 0;
      this.crossMask = null;
    }
    for (const blk of model.decoder) {
      let crossK: FloatArray | null = null;
      let crossV: FloatArray | null = null;
      if (blk.crossAttn && memory) {
        crossK = k.alloc(this.S * C);
        crossV = k.alloc(this.S * C);
        blk.crossAttn.k.forward(k, crossK, memory, this.S);
        blk.crossAttn.v.forward(k, crossV, memory, this.S);
      }
      this.layers.push({
        k: k.alloc(R * P * C),
        v: k.alloc(R * P * C),
        selfProbs: k.alloc(R * H * P),
        crossK,
        crossV,
        crossProbs: crossK ? k.alloc(R * H * this.S) : null,
      });
    }
    const F = cfg.dFF;
    this.x = k.alloc(R * C);
    this.n = k.alloc(R * C);
    this.a = k.alloc(R * C);
    this.r = k.alloc(R * C);
    this.q = k.alloc(R * C);
    this.kNew = k.alloc(R * C);
    this.vNew = k.alloc(R * C);
    this.att = k.alloc(R * C);
    this.h = k.alloc(R * F);
    this.h2 = k.alloc(R * F);
    this.mean = k.alloc(R);
    this.rstd = k.alloc(R);
    this.logits = k.alloc(R * cfg.vocabSize);
    this.tmp = k.alloc(R * P * C);
    this.out32 = new Float32Array(R * cfg.vocabSize);
  }

  step(tokens: Int32Array, capture: boolean): StepOutput {
    const k = this.k;
    const model = this.model;
    const cfg = model.config;
    const R = tokens.length;
    const C = this.C;
    if (R !== this.rows) throw new EngineError('input/invalid', `step() got ${R} tokens but the stepper has ${this.rows} rows; call reorder() to change the number of rows.`);
    if (this.pos >= this.maxPositions) throw new EngineError('input/invalid', `The context of ${this.maxPositions} positions is full; decode fewer tokens or retrain with a longer context.`);
    for (let i = 0; i < R; i++) {
      const id = tokens[i] as number;
      if (id < 0 || id >= cfg.vocabSize) throw new EngineError('input/invalid', `Token id ${id} is outside the vocabulary of ${cfg.vocabSize}.`);
    }
    const emb = model.decEmbed;
    k.embeddingForward(this.x, tokens, emb.table.data, R, C, emb.scale);
    k.positionalForward(this.x, emb.positionTable, R, 1, C, this.pos);
    const P = this.pos + 1;
    model.decoder.forEach((blk, li) => this.layerStep(blk, this.layers[li] as LayerCache, R, P));
    let top = this.x;
    if (model.decNorm) {
      this.norm(model.decNorm, this.n, this.x, R);
      top = this.n;
    }
    linearForward(k, model.headW.data, model.headB ? model.headB.data : null, this.logits, top, R, C, cfg.vocabSize);
    this.pos = P;
    const nl = R * cfg.vocabSize;
    const logits = this.logits instanceof Float32Array ? this.logits.subarray(0, nl) : copyInto(this.out32, this.logits, nl);
    let attention: StepAttention | null = null;
    if (capture) {
      const H = this.nHeads;
      attention = {
        self: this.layers.map((l) => Float32Array.from(l.selfProbs.subarray(0, R * H * P))),
        cross: this.layers.filter((l) => l.crossProbs).map((l) => Float32Array.from((l.crossProbs as FloatArray).subarray(0, R * H * this.S))),
      };
    }
    return { logits, attention };
  }

  private norm(ln: LayerNorm, y: FloatArray, x: FloatArray, R: number): void {
    this.k.layernormForward(y, this.mean, this.rstd, x, ln.w.data, ln.b ? ln.b.data : null, R, this.C, ln.eps);
  }

  /** One decoder layer for the newest position of each row; updates this.x in place. */
  private layerStep(blk: Block, cache: LayerCache, R: number, P: number): void {
    const k = this.k;
    const n = R * this.C;
    const subs: ((y: FloatArray, x: FloatArray) => void)[] = [(y, x) => this.selfAttn(blk.selfAttn, cache, y, x, R, P)];
    if (blk.crossAttn) {
      const cross = blk.crossAttn;
      subs.push((y, x) => this.crossAttn(cross, cache, y, x, R));
    }
    subs.push((y, x) => this.ffn(blk.ffn, y, x, R));
    const norms = blk.norms;
    subs.forEach((f, i) => {
      const ln = norms[i] as LayerNorm;
      if (blk.normPlacement === 'pre') {
        this.norm(ln, this.n, this.x, R);
        f(this.a, this.n);
        k.add(this.x, this.x, this.a, n);
      } else {
        f(this.a, this.x);
        k.add(this.r, this.x, this.a, n);
        this.norm(ln, this.x, this.r, R);
      }
    });
  }

  private dims(R: number, S: number, kvStride: number): AttentionDims {
    const H = this.nHeads;
    const D = this.C / H;
    return { B: R, T: 1, S, H, D, qBatchStride: this.C, kvBatchStride: kvStride, scale: 1 / Math.sqrt(D) };
  }

  private selfAttn(m: MultiHeadAttention, cache: LayerCache, y: FloatArray, x: FloatArray, R: number, P: number): void {
    const k = this.k;
    const C = this.C;
    const maxP = this.maxPositions;
    m.q.forward(k, this.q, x, R);
    m.k.forward(k, this.kNew, x, R);
    m.v.forward(k, this.vNew, x, R);
    for (let r = 0; r < R; r++) {
      const at = (r * maxP + P - 1) * C;
      cache.k.set(this.kNew.subarray(r * C, (r + 1) * C), at);
      cache.v.set(this.vNew.subarray(r * C, (r + 1) * C), at);
    }
    k.attentionForward(this.att, cache.selfProbs, this.q, cache.k, cache.v, this.dims(R, P, maxP * C), null, null, 0);
    m.o.forward(k, y, this.att, R);
  }

  private crossAttn(m: MultiHeadAttention, cache: LayerCache, y: FloatArray, x: FloatArray, R: number): void {
    const k = this.k;
    if (!cache.crossK || !cache.crossV || !cache.crossProbs) throw new Error('cross-attention cache missing');
    m.q.forward(k, this.q, x, R);
    k.attentionForward(this.att, cache.crossProbs, this.q, cache.crossK, cache.crossV, this.dims(R, this.S, 0), this.crossMask, null, 0);
    m.o.forward(k, y, this.att, R);
  }

  private ffn(f: FeedForward, y: FloatArray, x: FloatArray, R: number): void {
    const k = this.k;
    f.fc1.forward(k, this.h, x, R);
    if (f.activation === 'relu') k.reluForward(this.h2, this.h, R * f.F);
    else k.geluForward(this.h2, this.h, R * f.F);
    f.fc2.forward(k, y, this.h2, R);
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
    for (const l of this.layers) {
      for (const buf of [l.k, l.v]) {
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
