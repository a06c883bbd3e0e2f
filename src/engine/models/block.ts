/**
 * One transformer layer: self-attention, optional cross-attention, and the feed-forward
 * network, each wrapped in a residual connection with a norm (LayerNorm or RMSNorm) either
 * after the sum ('post', the paper §3.1: x = LN(x + Dropout(Sublayer(x)))) or before the
 * sublayer ('pre', GPT-2: x = x + Dropout(Sublayer(LN(x)))); or, pre-norm with
 * `parallelResidual` (GPT-NeoX), every sublayer reads the same x through its own norm and
 * their outputs are summed into one residual step: x + Σ Dropout(Sublayer(LN_s(x))). An
 * encoder layer has self + ffn, a decoder layer self (causal) + cross + ffn, a GPT block
 * self (causal) + ffn.
 *
 * `forward` runs a whole batch and keeps what `backward` needs; `step` runs one new
 * position per row for key/value-cache decoding (models/stepper.ts) through the same
 * residual wiring and sublayer dispatch (`sublayer`, `apply`), with each sublayer's own step;
 * `prefill` runs positions 0..T − 1 of one sequence at once the same way, filling the cache
 * and handing out each attention's probabilities (a prompt, or the attention of a text).
 *
 * Shape legend: B batch, T positions of this stack, S encoder positions, C d_model,
 * F d_ff, R rows of a decoding step (beams), P positions fed so far.
 */

import type { Backend, FloatArray, MaskView } from '../backend';
import type { ModelConfig } from '../config';
import type { Rng } from '../rng';
import type { Alloc, AttentionNames, AttentionScratch, KVCache } from './attention';
import { MultiHeadAttention, allocAttentionScratch, attentionSpec } from './attention';
import type { LayerHook } from './hooks';
import { crossPoint, renamedHook } from './hooks';
import type { FfnScratch, NormScratch } from './layers';
import { Dropout, FeedForward, Norm } from './layers';
import type { Arena, ParamInit, ParamStore, Slot } from './plan';

/** Parameter names of one block, so each model keeps its PyTorch counterpart's names. */
export interface BlockNames {
  readonly selfAttn: AttentionNames;
  readonly crossAttn: AttentionNames | null;
  /** One norm per sublayer, in order (self, [cross,] ffn). */
  readonly norms: readonly string[];
  /** The feed-forward network's up projection, its gate (gated activations only) and its down projection. */
  readonly fc1: string;
  readonly gate: string;
  readonly fc2: string;
}

/** Initialization of a block's matrices. */
export interface BlockInit {
  readonly qkv: ParamInit;
  /** W_k and W_v ([Hkv·D, C]; the encoder-decoder's Xavier bound follows the shape). */
  readonly kv: ParamInit;
  /** Projections that write into the residual stream (W_o, fc2). */
  readonly out: ParamInit;
  /** W_o ([C, H·D]) when its init differs from `out`'s (the encoder-decoder's Xavier bound follows the shape). */
  readonly o?: ParamInit;
  /** The feed-forward network's up projection, and its gate when gated. */
  readonly fc1: ParamInit;
}

/** What a block's forward needs besides its input. */
export interface BlockInputs {
  readonly B: number;
  readonly T: number;
  readonly S: number;
  readonly selfMask: MaskView | null;
  readonly crossMask: MaskView | null;
  /** Encoder output [B, S, C] for cross-attention. */
  readonly memory: FloatArray | null;
  /** Gradient of the encoder output, accumulated by cross-attention backward. */
  readonly dMemory: FloatArray | null;
  readonly train: boolean;
  readonly rng: Rng | null;
}

/** One decoder layer's caches while decoding. */
export interface BlockCache {
  readonly self: KVCache;
  /** Keys and values of the encoder output (encoder-decoder), computed once. */
  readonly cross: KVCache | null;
}

/** Buffers of one decoding step, shared by every layer: [R, C] except the attention's [R, H·D], h, g, a [R, F] and
 * mean, rstd [R]. */
export interface BlockScratch extends AttentionScratch, FfnScratch, NormScratch {
  /** LN(x) (pre) or x + sublayer(x) before its LN (post). */
  readonly mid: FloatArray;
  /** A sublayer's output. */
  readonly y: FloatArray;
  /** The sum of the sublayers so far (parallel residual). */
  readonly acc: FloatArray;
}

/** Allocates the scratch of decoding steps (or a prefill) of up to R rows (H heads of D channels). */
export function allocBlockScratch(alloc: Alloc, R: number, C: number, F: number, H: number, D: number): BlockScratch {
  const rc = (): FloatArray => alloc(R * C);
  return {
    mid: rc(),
    y: rc(),
    ...allocAttentionScratch(alloc, R, H, D),
    acc: rc(),
    h: alloc(R * F),
    g: alloc(R * F),
    a: alloc(R * F),
    mean: alloc(R),
    rstd: alloc(R),
  };
}

/** What a decoding step of a block needs besides its input. */
export interface BlockStep {
  readonly R: number;
  /** Positions fed so far, this one included. */
  readonly P: number;
  readonly cache: BlockCache;
  /** The sliding window's row [1, P] of the self-attention (null: no window, or P within it). */
  readonly selfMask: MaskView | null;
  /** Padding mask of the source for cross-attention, shared by every row. */
  readonly crossMask: MaskView | null;
  readonly scratch: BlockScratch;
}

/**
 * Positions 0..T − 1 of one sequence through the decoding path at once: keys and values go to
 * row 0 of the cache, the attention probabilities to the caller's buffers.
 */
export interface BlockPrefill {
  readonly T: number;
  readonly cache: BlockCache;
  /** Causal mask [T, T] of the self-attention. */
  readonly selfMask: MaskView;
  readonly crossMask: MaskView | null;
  /** Scratch of T rows. */
  readonly scratch: BlockScratch;
  /** Receive the self-attention's [H, T, T] and the cross-attention's [H, T, S] probabilities. */
  readonly selfProbs: FloatArray;
  readonly crossProbs: FloatArray | null;
}

/** A forward of a whole batch, one decoding step, or a prefill. */
type Pass = BlockInputs | BlockStep | BlockPrefill;

/** A pass through the decoding path (cache and scratch, no dropout, nothing kept for backward). */
function isIncremental(p: Pass): p is BlockStep | BlockPrefill {
  return 'cache' in p;
}

function isPrefill(p: Pass): p is BlockPrefill {
  return 'selfProbs' in p;
}

/** A block's sublayers: self-attention, cross-attention, the feed-forward network. */
export type SublayerKind = 'self' | 'cross' | 'ffn';

interface Sublayer {
  readonly kind: SublayerKind;
  readonly norm: Norm;
  /** The norm of the sublayer's output before it joins the residual (postNorms, Gemma's sandwich); null = none. */
  readonly post: Norm | null;
  readonly yn: Slot; // post(y): the sublayer's output after its post norm (empty without one)
  readonly drop: Dropout;
  readonly y: Slot; // sublayer output before dropout
  readonly mid: Slot; // post: residual sum before LN; pre: LN output
  readonly out: Slot; // stream after this sublayer (parallel: the last sublayer's only, the block's output)
}

export class Block {
  readonly selfAttn: MultiHeadAttention;
  readonly crossAttn: MultiHeadAttention | null;
  private readonly ffn: FeedForward;
  private readonly subs: Sublayer[] = [];
  private readonly gA: Slot;
  private readonly gB: Slot;
  private readonly dmid: Slot;
  private readonly dyScratch: Slot;
  private readonly dPost: Slot;
  private readonly pre: boolean;
  private readonly parallel: boolean;
  private input: FloatArray | null = null;
  private inputs: BlockInputs | null = null;
  /**
   * Receives the gradient of each sublayer's output (before dropout; attn_out, mlp_out) during backward —
   * attribution patching (analysis/attribution.ts); null, the usual case, costs one branch per sublayer.
   */
  dyTap: ((kind: SublayerKind, dy: FloatArray) => void) | null = null;
  /** The forward's hook (hooks.ts; batch forwards only), or null, the usual case. */
  private hook: LayerHook | null = null;

  constructor(
    store: ParamStore,
    arena: Arena,
    cfg: ModelConfig,
    names: BlockNames,
    init: BlockInit,
    max: { B: number; T: number; S: number },
  ) {
    this.pre = cfg.norm === 'pre';
    this.parallel = this.pre && cfg.parallelResidual;
    const C = cfg.dModel;
    const maxN = max.B * max.T;
    const n = maxN * C;
    const attnInit = { qkv: init.qkv, kv: init.kv, o: init.o ?? init.out };
    const causal = cfg.kind === 'decoder-only' || names.crossAttn !== null;
    this.selfAttn = new MultiHeadAttention(
      store,
      arena,
      names.selfAttn,
      attentionSpec(cfg, causal ? 'causal' : 'self'),
      attnInit,
      {
        B: max.B,
        T: max.T,
        S: max.T,
      },
    );
    const kinds: SublayerKind[] = ['self'];
    this.crossAttn = null;
    if (names.crossAttn) {
      this.crossAttn = new MultiHeadAttention(
        store,
        arena,
        names.crossAttn,
        attentionSpec(cfg, 'cross'),
        attnInit,
        max,
      );
      kinds.push('cross');
    }
    kinds.push('ffn');
    this.ffn = new FeedForward(
      store,
      arena,
      { fc1: names.fc1, gate: names.gate, fc2: names.fc2 },
      C,
      cfg.dFF,
      cfg.activation,
      cfg.mlpBias,
      { fc1: init.fc1, fc2: init.out },
      maxN,
    );
    kinds.forEach((kind, i) => {
      const normName = names.norms[i];
      if (normName === undefined) throw new Error(`block needs ${kinds.length} norm names`);
      this.subs.push({
        kind,
        norm: new Norm(store, arena, normName, C, cfg, maxN),
        post: this.pre && cfg.postNorms ? new Norm(store, arena, `${normName}_post`, C, cfg, maxN) : null,
        yn: arena.buffer(this.pre && cfg.postNorms ? n : 0),
        drop: new Dropout(arena, cfg.dropout, n),
        y: arena.buffer(n),
        mid: arena.buffer(n),
        out: arena.buffer(this.parallel && i < kinds.length - 1 ? 0 : n),
      });
    });
    this.gA = arena.scratch('block.gA', n);
    this.gB = arena.scratch('block.gB', n);
    this.dmid = arena.scratch('block.dmid', n);
    this.dyScratch = arena.scratch('block.dy', n);
    this.dPost = arena.scratch('block.dPost', this.pre && cfg.postNorms ? n : 0);
  }

  /**
   * Sets the hook later batch forwards call at this layer's points (its self-attention's q, k,
   * v, z; attn_out; the cross-attention's cross_q, cross_k, cross_v, cross_z, cross_out; mlp_out);
   * null removes it. Inference only: backward ignores what it wrote.
   */
  setHook(hook: LayerHook | null): void {
    this.hook = hook;
    this.selfAttn.hook = hook;
    if (this.crossAttn) this.crossAttn.hook = hook && renamedHook(hook, crossPoint);
  }

  /** Calls the hook, if any, with sublayer s's output y [B, T, C] of a batch forward. */
  private tapOutput(s: Sublayer, y: FloatArray, p: BlockInputs): void {
    const hook = this.hook;
    if (!hook) return;
    const point = s.kind === 'self' ? 'attn_out' : s.kind === 'cross' ? 'cross_out' : 'mlp_out';
    hook({ point, B: p.B, T: p.T, heads: 1, width: this.selfAttn.C }, y);
  }

  /** The block's output stream [B, T, C] (valid after forward). */
  get output(): FloatArray {
    const last = this.subs[this.subs.length - 1];
    if (!last) throw new Error('empty block');
    return last.out.data;
  }

  /**
   * An empty cache for decoding up to maxRows rows × `positions` positions; with `memory` [S, C], cross-attention's
   * keys and values.
   */
  createCache(
    k: Backend,
    alloc: Alloc,
    maxRows: number,
    positions: number,
    memory: { readonly data: FloatArray; readonly S: number } | null,
  ): BlockCache {
    const self = this.selfAttn.createCache(alloc, maxRows, positions);
    if (!this.crossAttn) return { self, cross: null };
    if (!memory) throw new Error('a decoder layer with cross-attention needs the encoder output to decode');
    return { self, cross: this.crossAttn.createMemoryCache(k, alloc, maxRows, memory.data, memory.S) };
  }

  /** y = sublayer s of x: its forward on a batch, or its step on the rows of a decoding step or a prefill. */
  private apply(k: Backend, s: Sublayer, y: FloatArray, x: FloatArray, p: Pass): void {
    if (isIncremental(p)) {
      const rows = isPrefill(p) ? p.T : p.R;
      if (s.kind === 'self') {
        if (isPrefill(p)) this.selfAttn.prefillSelf(k, y, x, p.T, p.cache.self, p.selfMask, p.scratch, p.selfProbs);
        else this.selfAttn.stepSelf(k, y, x, p.R, p.P, p.cache.self, p.selfMask, p.scratch);
      } else if (s.kind === 'cross') {
        if (!this.crossAttn || !p.cache.cross) throw new Error('cross-attention needs the encoder output');
        if (isPrefill(p) && p.crossProbs)
          this.crossAttn.prefillCross(k, y, x, p.T, p.cache.cross, p.crossMask, p.scratch, p.crossProbs);
        else if (isPrefill(p)) throw new Error('a prefill with cross-attention needs crossProbs');
        else this.crossAttn.stepCross(k, y, x, p.R, p.cache.cross, p.crossMask, p.scratch);
      } else this.ffn.step(k, y, x, rows, p.scratch);
      return;
    }
    const { B, T, S } = p;
    if (s.kind === 'self') this.selfAttn.forward(k, y, x, x, B, T, T, p.selfMask, p.train, p.rng);
    else if (s.kind === 'cross') {
      if (!this.crossAttn || !p.memory) throw new Error('cross-attention needs the encoder output');
      this.crossAttn.forward(k, y, x, p.memory, B, T, S, p.crossMask, p.train, p.rng);
    } else this.ffn.forward(k, y, x, B * T);
  }

  /**
   * out = sublayer s of x with its residual connection and norm — where the sequential norm
   * placements are written (the parallel residual's is {@link parallelStep}):
   *   pre:  out = x + Dropout(f(LN(x)))   (GPT-2; mid = LN(x))
   *         out = x + Dropout(LN'(f(LN(x))))   with postNorms (Gemma 2 and 3's sandwich; yn = LN'(f(..)))
   *   post: out = LN(x + Dropout(f(x)))   (the paper §3.1; mid = x + Dropout(f(x)))
   * over N rows, y receiving f's output. A decoding step or prefill has no dropout, keeps
   * its norm statistics in its scratch, and may pass out = x.
   */
  private sublayer(
    k: Backend,
    s: Sublayer,
    out: FloatArray,
    x: FloatArray,
    mid: FloatArray,
    y: FloatArray,
    N: number,
    p: Pass,
  ): void {
    const n = N * this.selfAttn.C;
    if (this.pre) {
      this.norm(k, s, mid, x, N, p);
      this.apply(k, s, y, mid, p);
      let f = y;
      if (s.post) {
        // A step or prefill: its own norm statistics are spent, so the post norm reuses them; `acc` is free
        // outside the parallel residual.
        f = isIncremental(p) ? p.scratch.acc : s.yn.data;
        if (isIncremental(p)) s.post.step(k, f, y, N, p.scratch);
        else s.post.forward(k, f, y, N);
      }
      // attn_out / mlp_out are what joins the residual: after the post norm if any (as TransformerLens's Gemma).
      if (this.hook && !isIncremental(p)) this.tapOutput(s, f, p);
      k.add(out, x, isIncremental(p) ? f : s.drop.forward(k, f, n, p.train, p.rng), n);
    } else {
      this.apply(k, s, y, x, p);
      if (this.hook && !isIncremental(p)) this.tapOutput(s, y, p);
      k.add(mid, x, isIncremental(p) ? y : s.drop.forward(k, y, n, p.train, p.rng), n);
      this.norm(k, s, out, mid, N, p);
    }
  }

  private norm(k: Backend, s: Sublayer, y: FloatArray, x: FloatArray, N: number, p: Pass): void {
    if (isIncremental(p)) s.norm.step(k, y, x, N, p.scratch);
    else s.norm.forward(k, y, x, N);
  }

  private backSublayer(k: Backend, s: Sublayer, dx: FloatArray, dy: FloatArray, x: FloatArray, io: BlockInputs): void {
    if (s.kind === 'self') this.selfAttn.backward(k, dx, dx, dy, x, x);
    else if (s.kind === 'cross') {
      if (!this.crossAttn || !io.memory || !io.dMemory)
        throw new Error('cross-attention backward needs the encoder output');
      this.crossAttn.backward(k, dx, io.dMemory, dy, x, io.memory);
    } else this.ffn.backward(k, dx, dy, x, io.B * io.T);
  }

  /**
   * The parallel residual step over N rows: out = x + Σ_s Dropout(f_s(LN_s(x))), each sublayer's
   * norm output in its `mid` and its output in its `y` (a batch: the sublayer's own buffers; a
   * decoding step or prefill: the shared scratch, with `acc` holding the sum so far, so out may be x).
   */
  private parallelStep(k: Backend, out: FloatArray, x: FloatArray, N: number, p: Pass): void {
    const n = N * this.selfAttn.C;
    const last = this.subs.length - 1;
    this.subs.forEach((s, i) => {
      if (isIncremental(p)) {
        const { mid, y, acc } = p.scratch;
        this.norm(k, s, mid, x, N, p);
        this.apply(k, s, y, mid, p);
        k.add(i === last ? out : acc, i === 0 ? x : acc, y, n);
        return;
      }
      this.norm(k, s, s.mid.data, x, N, p);
      this.apply(k, s, s.y.data, s.mid.data, p);
      if (this.hook) this.tapOutput(s, s.y.data, p);
      k.add(out, i === 0 ? x : out, s.drop.forward(k, s.y.data, n, p.train, p.rng), n);
    });
  }

  /** Runs the block on x [B, T, C]; the result is in {@link output}. */
  forward(k: Backend, x: FloatArray, io: BlockInputs): void {
    this.input = x;
    this.inputs = io;
    const N = io.B * io.T;
    if (this.parallel) {
      this.parallelStep(k, this.output, x, N, io);
      return;
    }
    let cur = x;
    for (const s of this.subs) {
      this.sublayer(k, s, s.out.data, cur, s.mid.data, s.y.data, N, io);
      cur = s.out.data;
    }
  }

  /**
   * One decoding step: x [R, C], the newest position of each row, becomes this block's
   * output in place. Reads and extends `st.cache`; leaves forward's activations alone.
   */
  step(k: Backend, x: FloatArray, st: BlockStep): void {
    if (this.parallel) this.parallelStep(k, x, x, st.R, st);
    else for (const s of this.subs) this.sublayer(k, s, x, x, st.scratch.mid, st.scratch.y, st.R, st);
  }

  /**
   * Positions 0..T − 1 of one sequence, x [T, C], become this block's output in place; their
   * keys and values fill row 0 of `p.cache`, the attention probabilities `p.selfProbs` and
   * `p.crossProbs`. Leaves forward's activations alone.
   */
  prefill(k: Backend, x: FloatArray, p: BlockPrefill): void {
    if (this.parallel) this.parallelStep(k, x, x, p.T, p);
    else for (const s of this.subs) this.sublayer(k, s, x, x, p.scratch.mid, p.scratch.y, p.T, p);
  }

  /** Accumulates dIn (gradient of the block input) from dOut; dIn must not alias dOut. */
  backward(k: Backend, dIn: FloatArray, dOut: FloatArray): void {
    const io = this.inputs;
    const input = this.input;
    if (!io || !input) throw new Error('Block.backward called before forward');
    const n = io.B * io.T * this.selfAttn.C;
    const N = io.B * io.T;
    if (this.parallel) {
      // x' = x + Σ_s Dropout(f_s(LN_s(x))): dx += dx'; dx += LN_s'(f_s'(Dropout_s'(dx'))) for each s
      k.add(dIn, dIn, dOut, n);
      const dmid = this.dmid.data;
      for (const s of this.subs) {
        const dy = s.drop.backward(k, dOut, n, this.dyScratch.data);
        if (this.dyTap) this.dyTap(s.kind, dy.subarray(0, n));
        k.fill(dmid, n, 0);
        this.backSublayer(k, s, dmid, dy, s.mid.data, io);
        s.norm.backward(k, dIn, dmid, input, N);
      }
      return;
    }
    let dCur = dOut;
    for (let i = this.subs.length - 1; i >= 0; i--) {
      const s = this.subs[i] as Sublayer;
      const x = i === 0 ? input : (this.subs[i - 1] as Sublayer).out.data;
      const dx = i === 0 ? dIn : (this.subs.length - 1 - i) % 2 === 0 ? this.gA.data : this.gB.data;
      if (i !== 0) k.fill(dx, n, 0);
      if (this.pre) {
        // x' = x + Dropout(f(LN(x))): dx += dx'; dLN = f'(Dropout'(dx')); dx += LN'(dLN)
        // (postNorms: x' = x + Dropout(LN'(f(LN(x)))), so Dropout'(dx') first goes back through LN')
        k.add(dx, dx, dCur, n);
        let dy = s.drop.backward(k, dCur, n, this.dyScratch.data);
        if (this.dyTap) this.dyTap(s.kind, dy.subarray(0, n)); // the gradient of what joins the residual
        if (s.post) {
          k.fill(this.dPost.data, n, 0);
          s.post.backward(k, this.dPost.data, dy, s.y.data, N);
          dy = this.dPost.data;
        }
        const dmid = this.dmid.data;
        k.fill(dmid, n, 0);
        this.backSublayer(k, s, dmid, dy, s.mid.data, io);
        s.norm.backward(k, dx, dmid, x, N);
      } else {
        // x' = LN(r), r = x + Dropout(f(x)): dr = LN'(dx'); dx += dr; dx += f'(Dropout'(dr))
        const dr = this.dmid.data;
        k.fill(dr, n, 0);
        s.norm.backward(k, dr, dCur, s.mid.data, N);
        k.add(dx, dx, dr, n);
        const dy = s.drop.backward(k, dr, n, this.dyScratch.data);
        if (this.dyTap) this.dyTap(s.kind, dy.subarray(0, n));
        this.backSublayer(k, s, dx, dy, x, io);
      }
      dCur = dx;
    }
  }
}
