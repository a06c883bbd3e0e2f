/**
 * Multi-head attention as a layer (Vaswani et al. 2017, §3.2.2): full d_model × d_model
 * projections W_q, W_k, W_v (the per-head W_i stacked, not one d_k matrix shared by all
 * heads — a tutorial bug, see docs/ARCHITECTURE.md), the fused scaled-dot-product kernel, and W_o.
 * Self-attention passes the same input as queries and keys/values; cross-attention passes
 * the encoder output as keys/values. Decoding feeds one position per row at a time through
 * `stepSelf` / `stepCross`, which share forward's projections and attention call but read
 * earlier positions' keys and values from a cache (`KVCache`) instead of recomputing them;
 * `prefillSelf` / `prefillCross` run a whole prompt in one call (filling that cache).
 * Ablation (inference only) switches heads off: their slices of the concatenated heads are
 * zeroed before W_o, so the layer's output is W_o applied to the other heads alone (+ bias).
 *
 * Shape legend: B batch, T query positions, S key positions, C d_model, H heads, D = C/H,
 * R rows of a decoding step (beams), P positions fed so far.
 */

import type { AttentionDims, Backend, FloatArray, MaskView } from '../backend';
import { drawKeepMask } from '../ops/dropout';
import type { Rng } from '../rng';
import { Linear } from './layers';
import type { Arena, ByteSlot, ParamInit, ParamStore, Slot } from './plan';

/** Parameter names of one attention layer's four projections. */
export interface AttentionNames {
  readonly q: string;
  readonly k: string;
  readonly v: string;
  readonly o: string;
}

/**
 * One attention layer's keys and values while decoding. Self-attention: [maxRows,
 * positions, C], one position appended per step; cross-attention: the encoder's [S, C],
 * computed once and shared by every row (rowStride 0).
 */
export interface KVCache {
  readonly k: FloatArray;
  readonly v: FloatArray;
  /** [R, H, keys] post-softmax probabilities of the last step. */
  readonly probs: FloatArray;
  /** Key positions it holds at most (self) or holds (cross: S). */
  readonly positions: number;
  /** Elements between rows in k and v: positions · C, or 0 when every row shares them. */
  readonly rowStride: number;
}

/** Where a decode's buffers come from: the backend's `alloc`, or a workspace that reuses them (stepper.ts). */
export type Alloc = (n: number) => FloatArray;

/** Buffers of one decoding step (the caller's, shared by every layer): [R, C] each. */
export interface AttentionScratch {
  readonly qNew: FloatArray;
  readonly kNew: FloatArray;
  readonly vNew: FloatArray;
  readonly att: FloatArray;
}

/** Shapes of one call, remembered by forward for backward. */
interface CallShape {
  B: number;
  T: number;
  S: number;
}

export class MultiHeadAttention {
  readonly q: Linear;
  readonly k: Linear;
  readonly v: Linear;
  readonly o: Linear;
  readonly D: number;
  private readonly qb: Slot; // [B, T, C]
  private readonly kb: Slot; // [B, S, C]
  private readonly vb: Slot; // [B, S, C]
  private readonly att: Slot; // [B, T, C] heads concatenated
  /** [B, H, T, S] post-softmax probabilities of the last forward. */
  readonly probs: Slot;
  private readonly keep: ByteSlot; // [B, H, T, S] dropout keep-mask
  private readonly datt: Slot;
  private readonly dq: Slot;
  private readonly dk: Slot;
  private readonly dv: Slot;
  private readonly shape: CallShape = { B: 0, T: 0, S: 0 };
  private dropActive = false;
  /** Heads (0-based) whose output is zeroed; null, the usual case, costs one branch per call. */
  private headsOff: readonly number[] | null = null;

  constructor(
    store: ParamStore,
    arena: Arena,
    names: AttentionNames,
    readonly C: number,
    readonly H: number,
    readonly dropP: number,
    bias: boolean,
    init: { qkv: ParamInit; o: ParamInit },
    max: { B: number; T: number; S: number },
  ) {
    this.D = C / H;
    this.q = new Linear(store, names.q, C, C, bias, init.qkv);
    this.k = new Linear(store, names.k, C, C, bias, init.qkv);
    this.v = new Linear(store, names.v, C, C, bias, init.qkv);
    this.o = new Linear(store, names.o, C, C, bias, init.o);
    const nq = max.B * max.T * C;
    const nkv = max.B * max.S * C;
    const np = max.B * H * max.T * max.S;
    this.qb = arena.buffer(nq);
    this.kb = arena.buffer(nkv);
    this.vb = arena.buffer(nkv);
    this.att = arena.buffer(nq);
    this.probs = arena.buffer(np);
    this.keep = arena.bytes(dropP > 0 ? np : 0);
    this.datt = arena.scratch('attn.datt', nq);
    this.dq = arena.scratch('attn.dq', nq);
    this.dk = arena.scratch('attn.dk', nkv);
    this.dv = arena.scratch('attn.dv', nkv);
  }

  private dims(B: number, T: number, S: number, kvBatchStride: number): AttentionDims {
    return { B, T, S, H: this.H, D: this.D, qBatchStride: T * this.C, kvBatchStride, scale: 1 / Math.sqrt(this.D) };
  }

  /** kOut[N,C] = W_k x, vOut[N,C] = W_v x. */
  private projectKV(k: Backend, kOut: FloatArray, vOut: FloatArray, x: FloatArray, N: number): void {
    this.k.forward(k, kOut, x, N);
    this.v.forward(k, vOut, x, N);
  }

  /** out[rows, C] = W_o · Attention(q, kb, vb) with the probabilities in probs. */
  private attend(
    k: Backend,
    out: FloatArray,
    att: FloatArray,
    probs: FloatArray,
    q: FloatArray,
    kb: FloatArray,
    vb: FloatArray,
    dims: AttentionDims,
    mask: MaskView | null,
    keep: Uint8Array | null,
    dropP: number,
  ): void {
    k.attentionForward(att, probs, q, kb, vb, dims, mask, keep, dropP);
    if (this.headsOff) this.zeroHeads(k, att, dims.B * dims.T);
    this.o.forward(k, out, att, dims.B * dims.T);
  }

  /**
   * Switches heads off (0-based; empty or null: all on) for every later forward and step:
   * inference only, since backward does not mask the gradient of the heads it zeroed.
   */
  setHeadsOff(heads: readonly number[] | null): void {
    for (const h of heads ?? [])
      if (!Number.isInteger(h) || h < 0 || h >= this.H) throw new Error(`head ${h} outside 0..${this.H - 1}`);
    this.headsOff = heads && heads.length ? [...heads] : null;
  }

  /** att[rows, C]: each switched-off head's D channels of every row set to 0 (the fill kernel on slices). */
  private zeroHeads(k: Backend, att: FloatArray, rows: number): void {
    const { C, D } = this;
    for (const h of this.headsOff ?? []) {
      for (let r = 0; r < rows; r++) k.fill(att.subarray(r * C + h * D, r * C + (h + 1) * D), D, 0);
    }
  }

  /** out[B,T,C] = MultiHead(xq, xkv, xkv) under `mask` (null = attend everywhere). */
  forward(
    k: Backend,
    out: FloatArray,
    xq: FloatArray,
    xkv: FloatArray,
    B: number,
    T: number,
    S: number,
    mask: MaskView | null,
    train: boolean,
    rng: Rng | null,
  ): void {
    this.shape.B = B;
    this.shape.T = T;
    this.shape.S = S;
    this.q.forward(k, this.qb.data, xq, B * T);
    this.projectKV(k, this.kb.data, this.vb.data, xkv, B * S);
    this.dropActive = train && this.dropP > 0;
    if (this.dropActive) {
      if (!rng) throw new Error('attention dropout in training mode needs an rng');
      drawKeepMask(this.keep.data, B * this.H * T * S, this.dropP, rng, k);
    }
    const keep = this.dropActive ? this.keep.data : null;
    this.attend(
      k,
      out,
      this.att.data,
      this.probs.data,
      this.qb.data,
      this.kb.data,
      this.vb.data,
      this.dims(B, T, S, S * this.C),
      mask,
      keep,
      this.dropActive ? this.dropP : 0,
    );
  }

  /** An empty self-attention cache for up to maxRows rows × `positions` positions (buffers from `alloc`). */
  createCache(alloc: Alloc, maxRows: number, positions: number): KVCache {
    const rowStride = positions * this.C;
    return {
      k: alloc(maxRows * rowStride),
      v: alloc(maxRows * rowStride),
      probs: alloc(maxRows * this.H * positions),
      positions,
      rowStride,
    };
  }

  /** A cross-attention cache: the keys and values of the encoder output memory [S, C], once. */
  createMemoryCache(k: Backend, alloc: Alloc, maxRows: number, memory: FloatArray, S: number): KVCache {
    const cache = {
      k: alloc(S * this.C),
      v: alloc(S * this.C),
      probs: alloc(maxRows * this.H * S),
      positions: S,
      rowStride: 0,
    };
    this.projectKV(k, cache.k, cache.v, memory, S);
    return cache;
  }

  /**
   * Self-attention for the newest position P − 1 of each of R rows: forward() with T = 1,
   * whose key and value are appended to the cache, attending to the rows' positions
   * 0..P − 1 (causal by construction, so no mask). out [R, C].
   */
  stepSelf(
    k: Backend,
    out: FloatArray,
    x: FloatArray,
    R: number,
    P: number,
    cache: KVCache,
    s: AttentionScratch,
  ): void {
    const C = this.C;
    this.q.forward(k, s.qNew, x, R);
    this.projectKV(k, s.kNew, s.vNew, x, R);
    for (let r = 0; r < R; r++) {
      const at = r * cache.rowStride + (P - 1) * C;
      cache.k.set(s.kNew.subarray(r * C, (r + 1) * C), at);
      cache.v.set(s.vNew.subarray(r * C, (r + 1) * C), at);
    }
    this.attend(
      k,
      out,
      s.att,
      cache.probs,
      s.qNew,
      cache.k,
      cache.v,
      this.dims(R, 1, P, cache.rowStride),
      null,
      null,
      0,
    );
  }

  /** Cross-attention of R new queries x [R, C] over the cached encoder positions, under `mask`. out [R, C]. */
  stepCross(
    k: Backend,
    out: FloatArray,
    x: FloatArray,
    R: number,
    cache: KVCache,
    mask: MaskView | null,
    s: AttentionScratch,
  ): void {
    this.q.forward(k, s.qNew, x, R);
    this.attend(
      k,
      out,
      s.att,
      cache.probs,
      s.qNew,
      cache.k,
      cache.v,
      this.dims(R, 1, cache.positions, cache.rowStride),
      mask,
      null,
      0,
    );
  }

  /**
   * Self-attention of positions 0..T − 1 of one sequence at once (a prefill): forward() of a
   * batch of one, whose keys and values are written to row 0 of the cache (so decoding steps
   * can follow), every query attending to the positions up to its own under the causal
   * `mask` [T, T]. out [T, C]; probabilities [H, T, T] in `probs`.
   */
  prefillSelf(
    k: Backend,
    out: FloatArray,
    x: FloatArray,
    T: number,
    cache: KVCache,
    mask: MaskView,
    s: AttentionScratch,
    probs: FloatArray,
  ): void {
    const n = T * this.C;
    this.q.forward(k, s.qNew, x, T);
    this.projectKV(k, cache.k.subarray(0, n), cache.v.subarray(0, n), x, T);
    this.attend(k, out, s.att, probs, s.qNew, cache.k, cache.v, this.dims(1, T, T, cache.rowStride), mask, null, 0);
  }

  /**
   * Cross-attention of T positions of one sequence x [T, C] at once (a prefill), under `mask`. out [T, C];
   * probabilities [H, T, S] in `probs`.
   */
  prefillCross(
    k: Backend,
    out: FloatArray,
    x: FloatArray,
    T: number,
    cache: KVCache,
    mask: MaskView | null,
    s: AttentionScratch,
    probs: FloatArray,
  ): void {
    this.q.forward(k, s.qNew, x, T);
    this.attend(
      k,
      out,
      s.att,
      probs,
      s.qNew,
      cache.k,
      cache.v,
      this.dims(1, T, cache.positions, cache.rowStride),
      mask,
      null,
      0,
    );
  }

  /**
   * Backward of forward(): accumulates dxq (queries' input) and dxkv (keys/values' input;
   * the same buffer as dxq for self-attention) and every parameter gradient.
   */
  backward(k: Backend, dxq: FloatArray, dxkv: FloatArray, dout: FloatArray, xq: FloatArray, xkv: FloatArray): void {
    const { B, T, S } = this.shape;
    const C = this.C;
    const datt = this.datt.data;
    this.o.backward(k, datt, dout, this.att.data, B * T, true);
    k.fill(this.dq.data, B * T * C, 0);
    k.fill(this.dk.data, B * S * C, 0);
    k.fill(this.dv.data, B * S * C, 0);
    const keep = this.dropActive ? this.keep.data : null;
    k.attentionBackward(
      this.dq.data,
      this.dk.data,
      this.dv.data,
      datt,
      this.probs.data,
      this.qb.data,
      this.kb.data,
      this.vb.data,
      this.dims(B, T, S, S * C),
      keep,
      this.dropActive ? this.dropP : 0,
    );
    this.q.backward(k, dxq, this.dq.data, xq, B * T);
    this.k.backward(k, dxkv, this.dk.data, xkv, B * S);
    this.v.backward(k, dxkv, this.dv.data, xkv, B * S);
  }
}
