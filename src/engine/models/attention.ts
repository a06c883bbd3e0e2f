/**
 * Multi-head attention as a layer (Vaswani et al. 2017, §3.2.2): full projections W_q, W_k,
 * W_v (the per-head W_i stacked, not one d_k matrix shared by all heads — a tutorial bug, see
 * docs/ARCHITECTURE.md), the fused scaled-dot-product kernel, and W_o. Self-attention passes
 * the same input as queries and keys/values; cross-attention passes the encoder output as
 * keys/values. Decoding feeds one position per row at a time through `stepSelf` /
 * `stepCross`, which share forward's projections and attention call but read earlier
 * positions' keys and values from a cache (`KVCache`) instead of recomputing them;
 * `prefillSelf` / `prefillCross` run a whole prompt in one call (filling that cache).
 * Ablation (inference only) switches heads off: their slices of the concatenated heads are
 * zeroed before W_o, so the layer's output is W_o applied to the other heads alone (+ bias).
 *
 * The options of today's transformers (one {@link AttentionSpec} per layer), in the order
 * they apply: the projections, with biases of q/k/v and of W_o apart and k/v only Hkv heads
 * wide (grouped-query attention: query head h reads kv head floor(h / (H / Hkv)), and the
 * cache holds Hkv heads); qk-norm (RMSNorm over each head's D channels of q and k); RoPE on
 * the queries and keys of self-attention at their absolute positions (the cache keeps
 * rotated keys); then, inside the kernel, the soft-cap of the scores and ALiBi (causal
 * self-attention); a sliding window is a mask the caller passes (masks.ts).
 *
 * Shape legend: B batch, T query positions, S key positions, C d_model, H heads, D head size
 * (headDim, or C/H when 0), A = H·D the width of the queries and of the heads concatenated,
 * Hkv key/value heads, KV = Hkv·D, R rows of a decoding step (beams), P positions fed so far.
 * W_q is [A, C], W_k and W_v [KV, C], W_o [C, A]; the scores are scaled by attnScale, or 1/√D.
 */

import type { AttentionDims, Backend, FloatArray, MaskView } from '../backend';
import { copyOn } from '../backend';
import type { ModelConfig } from '../config';
import { headSize, kvHeads } from '../config';
import { alibiSlopes } from '../ops/alibi';
import { drawKeepMask } from '../ops/dropout';
import { type RopeScaling, ropeScalingKey, ropeScalingOf, ropeTables } from '../ops/rope';
import type { Rng } from '../rng';
import type { HookPoint, LayerHook } from './hooks';
import { Linear } from './layers';
import type { Arena, ByteSlot, Param, ParamInit, ParamStore, Slot } from './plan';

/** Parameter names of one attention layer's four projections and its qk-norm weights (`.weight` added). */
export interface AttentionNames {
  readonly q: string;
  readonly k: string;
  readonly v: string;
  readonly o: string;
  readonly qNorm: string;
  readonly kNorm: string;
}

/** Where an attention layer sits: encoder self-attention, causal (decoder) self-attention, or cross-attention. */
export type AttentionRole = 'self' | 'causal' | 'cross';

/** How one attention layer is built: its sizes and the options of the config that apply to it. */
export interface AttentionSpec {
  readonly C: number;
  readonly H: number;
  /** Channels of each head (C/H unless the config's headDim sets it). */
  readonly D: number;
  /** Softmax scale of the scores (1/√D unless the config's attnScale sets it). */
  readonly scale: number;
  /** Key/value heads (divides H). */
  readonly Hkv: number;
  readonly dropP: number;
  readonly qkvBias: boolean;
  readonly outBias: boolean;
  /** RMSNorm of each head's q and k (weight [D] when `scale`), or null. */
  readonly qkNorm: { readonly eps: number; readonly scale: boolean } | null;
  /** RoPE of q and k (self-attention only): R rotated channels, tables for `positions` positions; or null. */
  readonly rope: {
    readonly theta: number;
    readonly R: number;
    readonly positions: number;
    readonly scaling: RopeScaling | null;
  } | null;
  /** ALiBi biases (causal self-attention only). */
  readonly alibi: boolean;
  /** Soft-cap of the scaled scores (0 = off). */
  readonly softCap: number;
}

/** The spec of an attention layer of `cfg` in `role` (see the file comment for what applies where). */
export function attentionSpec(cfg: ModelConfig, role: AttentionRole): AttentionSpec {
  const D = headSize(cfg);
  return {
    C: cfg.dModel,
    H: cfg.nHeads,
    D,
    scale: cfg.attnScale > 0 ? cfg.attnScale : 1 / Math.sqrt(D),
    Hkv: kvHeads(cfg),
    dropP: cfg.dropout,
    qkvBias: cfg.qkvBias,
    outBias: cfg.attnOutBias,
    qkNorm: cfg.qkNorm ? { eps: cfg.layerNormEps, scale: cfg.normScale } : null,
    rope:
      cfg.positional === 'rope' && role !== 'cross'
        ? {
            theta: cfg.ropeTheta,
            R: Math.round(D * cfg.rotaryFraction),
            positions: cfg.maxLen,
            scaling: ropeScalingOf(cfg),
          }
        : null,
    alibi: cfg.positional === 'alibi' && role === 'causal',
    softCap: cfg.attnSoftCap,
  };
}

/**
 * One attention layer's keys and values while decoding. Self-attention: [maxRows,
 * positions, KV], one position appended per step (keys already normed and rotated);
 * cross-attention: the encoder's [S, KV], computed once and shared by every row (rowStride 0).
 */
export interface KVCache {
  readonly k: FloatArray;
  readonly v: FloatArray;
  /** [R, H, keys] post-softmax probabilities of the last step. */
  readonly probs: FloatArray;
  /** Key positions it holds at most (self) or holds (cross: S). */
  readonly positions: number;
  /** Elements of one position's keys (or values): Hkv·D. */
  readonly width: number;
  /** Elements between rows in k and v: positions · width, or 0 when every row shares them. */
  readonly rowStride: number;
}

/** Where a decode's buffers come from: the backend's `alloc`, or a workspace that reuses them (stepper.ts). */
export type Alloc = (n: number) => FloatArray;

/** Buffers of one decoding step or prefill of up to R rows (the caller's, shared by every layer). */
export interface AttentionScratch {
  /** [R, A] each (kNew and vNew use their first R·KV). */
  readonly qNew: FloatArray;
  readonly kNew: FloatArray;
  readonly vNew: FloatArray;
  readonly att: FloatArray;
  /** [R, A]: a projection before its qk-norm. */
  readonly qkRaw: FloatArray;
  /** [R, H]: the qk-norm's statistics. */
  readonly qkRstd: FloatArray;
}

/** Allocates the attention scratch of up to R rows of H heads of D channels (A = H·D; k and v fit, Hkv ≤ H). */
export function allocAttentionScratch(alloc: Alloc, R: number, H: number, D: number): AttentionScratch {
  const A = H * D;
  return {
    qNew: alloc(R * A),
    kNew: alloc(R * A),
    vNew: alloc(R * A),
    att: alloc(R * A),
    qkRaw: alloc(R * A),
    qkRstd: alloc(R * H),
  };
}

/** Shapes of one call, remembered by forward for backward. */
interface CallShape {
  B: number;
  T: number;
  S: number;
}

/** A qk-norm's buffers of one forward: the projection before the norm and the norm's statistics. */
interface NormSaved {
  readonly raw: Slot;
  readonly rstd: Slot;
  readonly dRaw: Slot;
}

export class MultiHeadAttention {
  readonly q: Linear;
  readonly k: Linear;
  readonly v: Linear;
  readonly o: Linear;
  /** qk-norm weights [D] (qkNorm with normScale), else null. */
  readonly qNorm: Param | null;
  readonly kNorm: Param | null;
  readonly C: number;
  readonly H: number;
  readonly Hkv: number;
  /** Channels of each head. */
  readonly D: number;
  /** H·D: the width of a position's queries and of its heads concatenated. */
  readonly A: number;
  /** Hkv·D: the width of a position's keys or values. */
  readonly KV: number;
  readonly dropP: number;
  private readonly spec: AttentionSpec;
  private readonly qb: Slot; // [B, T, A] queries as attended (normed, rotated)
  private readonly kb: Slot; // [B, S, KV]
  private readonly vb: Slot; // [B, S, KV]
  private readonly qSaved: NormSaved | null;
  private readonly kSaved: NormSaved | null;
  private readonly att: Slot; // [B, T, A] heads concatenated
  /** [B, H, T, S] post-softmax probabilities of the last forward. */
  readonly probs: Slot;
  private readonly keep: ByteSlot; // [B, H, T, S] dropout keep-mask
  private readonly datt: Slot;
  private readonly dq: Slot;
  private readonly dk: Slot;
  private readonly dv: Slot;
  /** RoPE tables [positions, R/2] (shared by every layer through the arena), filled at first use. */
  private readonly ropeCos: Slot | null;
  private readonly ropeSin: Slot | null;
  /** ALiBi slopes [H], filled at first use. */
  private readonly slopes: Slot | null;
  private tablesReady = false;
  private readonly shape: CallShape = { B: 0, T: 0, S: 0 };
  private dropActive = false;
  /** Heads (0-based) whose output is zeroed; null, the usual case, costs one branch per call. */
  private headsOff: readonly number[] | null = null;
  /**
   * Receives the gradient of the concatenated heads z [B·T, H·D] (before W_o) during backward — attribution
   * patching (analysis/attribution.ts); null, the usual case, costs one branch per backward.
   */
  dzTap: ((dz: FloatArray) => void) | null = null;
  /** The forward's hook at q, k, v and z (hooks.ts; batch forwards only), or null, the usual case. */
  hook: LayerHook | null = null;

  constructor(
    store: ParamStore,
    arena: Arena,
    names: AttentionNames,
    spec: AttentionSpec,
    init: { qkv: ParamInit; kv: ParamInit; o: ParamInit },
    max: { B: number; T: number; S: number },
  ) {
    const { C, H, Hkv } = spec;
    if (H % Hkv !== 0) throw new Error(`${H} heads cannot share ${Hkv} key/value heads`);
    this.spec = spec;
    this.C = C;
    this.H = H;
    this.Hkv = Hkv;
    this.dropP = spec.dropP;
    const D = (this.D = spec.D);
    const A = (this.A = H * D);
    const KV = (this.KV = Hkv * D);
    this.q = new Linear(store, names.q, C, A, spec.qkvBias, init.qkv);
    this.k = new Linear(store, names.k, C, KV, spec.qkvBias, init.kv);
    this.v = new Linear(store, names.v, C, KV, spec.qkvBias, init.kv);
    this.o = new Linear(store, names.o, A, C, spec.outBias, init.o);
    const one: ParamInit = { kind: 'const', value: 1 };
    const scaled = spec.qkNorm?.scale === true;
    this.qNorm = scaled ? store.add(`${names.qNorm}.weight`, [D], one) : null;
    this.kNorm = scaled ? store.add(`${names.kNorm}.weight`, [D], one) : null;
    const nq = max.B * max.T * A;
    const nkv = max.B * max.S * KV;
    const np = max.B * H * max.T * max.S;
    this.qb = arena.buffer(nq);
    this.kb = arena.buffer(nkv);
    this.vb = arena.buffer(nkv);
    const saved = (n: number, rows: number, key: string): NormSaved => ({
      raw: arena.buffer(n),
      rstd: arena.buffer(rows),
      dRaw: arena.scratch(key, n),
    });
    this.qSaved = spec.qkNorm ? saved(nq, max.B * max.T * H, 'attn.dqRaw') : null;
    this.kSaved = spec.qkNorm ? saved(nkv, max.B * max.S * Hkv, 'attn.dkRaw') : null;
    this.att = arena.buffer(nq);
    this.probs = arena.buffer(
      np,
      `the attention probabilities of ${names.q.replace(/\.[^.]+$/, '')} (batch·heads·context²)`,
    );
    this.keep = arena.bytes(spec.dropP > 0 ? np : 0);
    this.datt = arena.scratch('attn.datt', nq);
    this.dq = arena.scratch('attn.dq', nq);
    this.dk = arena.scratch('attn.dk', nkv);
    this.dv = arena.scratch('attn.dv', nkv);
    const rope = spec.rope;
    const tableKey = rope ? `attn.rope.${rope.theta}.${rope.R}.${rope.positions}.${ropeScalingKey(rope.scaling)}` : '';
    this.ropeCos = rope ? arena.scratch(`${tableKey}.cos`, (rope.positions * rope.R) / 2) : null;
    this.ropeSin = rope ? arena.scratch(`${tableKey}.sin`, (rope.positions * rope.R) / 2) : null;
    this.slopes = spec.alibi ? arena.buffer(H) : null;
  }

  /** Fills the RoPE tables and ALiBi slopes once the arena is bound (every layer writes the same numbers). */
  private tables(): void {
    if (this.tablesReady) return;
    const rope = this.spec.rope;
    if (rope && this.ropeCos && this.ropeSin) {
      const t = ropeTables(rope.theta, rope.R, rope.positions, (n) => new Float64Array(n), rope.scaling);
      this.ropeCos.data.set(t.cos);
      this.ropeSin.data.set(t.sin);
    }
    if (this.slopes) this.slopes.data.set(alibiSlopes(this.H));
    this.tablesReady = true;
  }

  /** The kernel's dims; `qStart` is the absolute position of query row 0 (ALiBi's distances use it). */
  private dims(B: number, T: number, S: number, kvBatchStride: number, qStart: number): AttentionDims {
    return {
      B,
      T,
      S,
      H: this.H,
      D: this.D,
      qBatchStride: T * this.A,
      kvBatchStride,
      scale: this.spec.scale,
      Hkv: this.Hkv,
      softCap: this.spec.softCap,
      alibi: this.slopes ? this.slopes.data : null,
      qStart,
    };
  }

  /**
   * The heads of x [N, heads·D] made ready to attend, in place in `out`: RMSNorm over each head's D channels
   * (from `raw`, the projection, into `out`, statistics in `rstd`) when qk-norm is on, then RoPE at positions
   * start + t of B sequences of T rows.
   */
  private shapeHeads(
    k: Backend,
    out: FloatArray,
    raw: FloatArray,
    rstd: FloatArray,
    w: Param | null,
    heads: number,
    B: number,
    T: number,
    start: number,
  ): void {
    const D = this.D;
    const qk = this.spec.qkNorm;
    if (qk) k.rmsnormForward(out, rstd, raw, w ? w.data : null, B * T * heads, D, qk.eps);
    const rope = this.spec.rope;
    if (rope && this.ropeCos && this.ropeSin)
      k.rope(out, this.ropeCos.data, this.ropeSin.data, B, T, heads, D, rope.R, start, T * heads * D, heads * D, false);
  }

  /** q [B, T, A] of x: the projection, then qk-norm and RoPE (positions start..). */
  private queries(
    k: Backend,
    out: FloatArray,
    raw: FloatArray,
    rstd: FloatArray,
    x: FloatArray,
    B: number,
    T: number,
    start: number,
    hook: LayerHook | null = null,
  ): void {
    this.q.forward(k, this.spec.qkNorm ? raw : out, x, B * T);
    if (hook) this.tap(hook, 'q', this.spec.qkNorm ? raw : out, B, T, this.H);
    this.shapeHeads(k, out, raw, rstd, this.qNorm, this.H, B, T, start);
  }

  /** k, v [B, S, KV] of x: the projections, then qk-norm and RoPE of the keys (positions start..). */
  private keysValues(
    k: Backend,
    kOut: FloatArray,
    vOut: FloatArray,
    raw: FloatArray,
    rstd: FloatArray,
    x: FloatArray,
    B: number,
    S: number,
    start: number,
    hook: LayerHook | null = null,
  ): void {
    this.k.forward(k, this.spec.qkNorm ? raw : kOut, x, B * S);
    this.v.forward(k, vOut, x, B * S);
    if (hook) {
      this.tap(hook, 'k', this.spec.qkNorm ? raw : kOut, B, S, this.Hkv);
      this.tap(hook, 'v', vOut, B, S, this.Hkv);
    }
    this.shapeHeads(k, kOut, raw, rstd, this.kNorm, this.Hkv, B, S, start);
  }

  /** Calls `hook` at `point` with x [B, T, heads·D]. */
  private tap(hook: LayerHook, point: HookPoint, x: FloatArray, B: number, T: number, heads: number): void {
    hook({ point, B, T, heads, width: this.D }, x);
  }

  /** out[rows, C] = W_o · Attention(q, kb, vb) with the probabilities in probs; `hook` sees z. */
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
    hook: LayerHook | null = null,
  ): void {
    k.attentionForward(att, probs, q, kb, vb, dims, mask, keep, dropP);
    if (this.headsOff) this.zeroHeads(k, att, dims.B * dims.T);
    if (hook) this.tap(hook, 'z', att, dims.B, dims.T, this.H);
    this.o.forward(k, out, att, dims.B * dims.T);
  }

  /**
   * Switches query heads off (0-based; empty or null: all on) for every later forward and step:
   * inference only, since backward does not mask the gradient of the heads it zeroed. With
   * grouped-query attention the other heads of the group still read the shared keys and values.
   */
  setHeadsOff(heads: readonly number[] | null): void {
    for (const h of heads ?? [])
      if (!Number.isInteger(h) || h < 0 || h >= this.H) throw new Error(`head ${h} outside 0..${this.H - 1}`);
    this.headsOff = heads && heads.length ? [...heads] : null;
  }

  /** The key/value head query head `h` reads: floor(h / (H / Hkv)). */
  kvGroup(h: number): number {
    return Math.floor(h / (this.H / this.Hkv));
  }

  /** att[rows, A]: each switched-off head's D channels of every row set to 0 (the fill kernel on slices). */
  private zeroHeads(k: Backend, att: FloatArray, rows: number): void {
    const { A, D } = this;
    for (const h of this.headsOff ?? []) {
      for (let r = 0; r < rows; r++) k.fill(att.subarray(r * A + h * D, r * A + (h + 1) * D), D, 0);
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
    this.tables();
    this.shape.B = B;
    this.shape.T = T;
    this.shape.S = S;
    const qs = this.qSaved;
    const ks = this.kSaved;
    const hook = this.hook;
    this.queries(k, this.qb.data, qs ? qs.raw.data : this.qb.data, qs ? qs.rstd.data : this.qb.data, xq, B, T, 0, hook);
    this.keysValues(
      k,
      this.kb.data,
      this.vb.data,
      ks ? ks.raw.data : this.kb.data,
      ks ? ks.rstd.data : this.kb.data,
      xkv,
      B,
      S,
      0,
      hook,
    );
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
      this.dims(B, T, S, S * this.KV, 0),
      mask,
      keep,
      this.dropActive ? this.dropP : 0,
      hook,
    );
  }

  /** An empty self-attention cache for up to maxRows rows × `positions` positions (buffers from `alloc`). */
  createCache(alloc: Alloc, maxRows: number, positions: number): KVCache {
    const rowStride = positions * this.KV;
    return {
      k: alloc(maxRows * rowStride),
      v: alloc(maxRows * rowStride),
      probs: alloc(maxRows * this.H * positions),
      positions,
      width: this.KV,
      rowStride,
    };
  }

  /** A cross-attention cache: the keys and values of the encoder output memory [S, C], once. */
  createMemoryCache(k: Backend, alloc: Alloc, maxRows: number, memory: FloatArray, S: number): KVCache {
    this.tables();
    const cache = {
      k: alloc(S * this.KV),
      v: alloc(S * this.KV),
      probs: alloc(maxRows * this.H * S),
      positions: S,
      width: this.KV,
      rowStride: 0,
    };
    const norm = this.spec.qkNorm !== null;
    this.keysValues(
      k,
      cache.k,
      cache.v,
      norm ? alloc(S * this.KV) : cache.k,
      norm ? alloc(S * this.Hkv) : cache.k,
      memory,
      1,
      S,
      0,
    );
    return cache;
  }

  /**
   * Self-attention for the newest position P − 1 of each of R rows: forward() with T = 1,
   * whose key and value (normed and rotated at P − 1) are appended to the cache, attending to
   * the rows' positions 0..P − 1 (causal by construction) under `mask` (a sliding window's row
   * [1, P], or null). out [R, C].
   */
  stepSelf(
    k: Backend,
    out: FloatArray,
    x: FloatArray,
    R: number,
    P: number,
    cache: KVCache,
    mask: MaskView | null,
    s: AttentionScratch,
  ): void {
    this.tables();
    const KV = this.KV;
    this.queries(k, s.qNew, s.qkRaw, s.qkRstd, x, R, 1, P - 1);
    this.keysValues(k, s.kNew, s.vNew, s.qkRaw, s.qkRstd, x, R, 1, P - 1);
    for (let r = 0; r < R; r++) {
      const at = r * cache.rowStride + (P - 1) * KV;
      copyOn(k, cache.k.subarray(at), s.kNew.subarray(r * KV), KV);
      copyOn(k, cache.v.subarray(at), s.vNew.subarray(r * KV), KV);
    }
    this.attend(
      k,
      out,
      s.att,
      cache.probs,
      s.qNew,
      cache.k,
      cache.v,
      this.dims(R, 1, P, cache.rowStride, P - 1),
      mask,
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
    this.tables();
    this.queries(k, s.qNew, s.qkRaw, s.qkRstd, x, R, 1, 0);
    this.attend(
      k,
      out,
      s.att,
      cache.probs,
      s.qNew,
      cache.k,
      cache.v,
      this.dims(R, 1, cache.positions, cache.rowStride, 0),
      mask,
      null,
      0,
    );
  }

  /**
   * Self-attention of positions 0..T − 1 of one sequence at once (a prefill): forward() of a
   * batch of one, whose keys and values are written to row 0 of the cache (so decoding steps
   * can follow), every query attending to the positions up to its own under the causal
   * `mask` [T, T] (windowed when the model has a sliding window). out [T, C]; probabilities
   * [H, T, T] in `probs`.
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
    this.tables();
    const n = T * this.KV;
    this.queries(k, s.qNew, s.qkRaw, s.qkRstd, x, 1, T, 0);
    this.keysValues(k, cache.k.subarray(0, n), cache.v.subarray(0, n), s.qkRaw, s.qkRstd, x, 1, T, 0);
    this.attend(k, out, s.att, probs, s.qNew, cache.k, cache.v, this.dims(1, T, T, cache.rowStride, 0), mask, null, 0);
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
    this.tables();
    this.queries(k, s.qNew, s.qkRaw, s.qkRstd, x, 1, T, 0);
    this.attend(
      k,
      out,
      s.att,
      probs,
      s.qNew,
      cache.k,
      cache.v,
      this.dims(1, T, cache.positions, cache.rowStride, 0),
      mask,
      null,
      0,
    );
  }

  /**
   * Backward of the qk-norm and RoPE of `heads` heads of N = B·T rows: `d` (the gradient of the
   * attended q or k) is rotated back in place, then, with qk-norm, taken through the norm into the
   * gradient of the projection. Returns the gradient of the projection.
   */
  private unshapeHeads(
    k: Backend,
    d: FloatArray,
    saved: NormSaved | null,
    w: Param | null,
    heads: number,
    B: number,
    T: number,
  ): FloatArray {
    const D = this.D;
    const rope = this.spec.rope;
    if (rope && this.ropeCos && this.ropeSin)
      k.rope(d, this.ropeCos.data, this.ropeSin.data, B, T, heads, D, rope.R, 0, T * heads * D, heads * D, true);
    if (!saved) return d;
    const dRaw = saved.dRaw.data;
    k.fill(dRaw, B * T * heads * D, 0);
    k.rmsnormBackward(dRaw, w ? w.grad : null, d, saved.raw.data, saved.rstd.data, w ? w.data : null, B * T * heads, D);
    return dRaw;
  }

  /**
   * Backward of forward(): accumulates dxq (queries' input) and dxkv (keys/values' input;
   * the same buffer as dxq for self-attention) and every parameter gradient.
   */
  backward(k: Backend, dxq: FloatArray, dxkv: FloatArray, dout: FloatArray, xq: FloatArray, xkv: FloatArray): void {
    const { B, T, S } = this.shape;
    const { A, KV } = this;
    const datt = this.datt.data;
    this.o.backward(k, datt, dout, this.att.data, B * T, true);
    if (this.dzTap) this.dzTap(datt.subarray(0, B * T * this.o.inF));
    k.fill(this.dq.data, B * T * A, 0);
    k.fill(this.dk.data, B * S * KV, 0);
    k.fill(this.dv.data, B * S * KV, 0);
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
      this.dims(B, T, S, S * KV, 0),
      keep,
      this.dropActive ? this.dropP : 0,
    );
    const dq = this.unshapeHeads(k, this.dq.data, this.qSaved, this.qNorm, this.H, B, T);
    const dk = this.unshapeHeads(k, this.dk.data, this.kSaved, this.kNorm, this.Hkv, B, S);
    this.q.backward(k, dxq, dq, xq, B * T);
    this.k.backward(k, dxkv, dk, xkv, B * S);
    this.v.backward(k, dxkv, this.dv.data, xkv, B * S);
  }
}
