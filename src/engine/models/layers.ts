/**
 * The small layers every transformer block is made of — Linear, LayerNorm, Dropout and
 * the position-wise feed-forward network — each with its forward beside its backward.
 * Layers own their parameters (in the flat store) and the activations backward needs (in
 * the arena); they never allocate after construction. Backward accumulates into input
 * gradients, as the kernels do (see backend.ts). LayerNorm and the feed-forward network
 * also have a `step`: forward's math on the rows of one decoding step, in the caller's
 * scratch, so the activations a pending backward needs are never overwritten.
 *
 * Shape legend: N rows (B·T), I in-features, O out-features, C d_model, F d_ff.
 */

import type { Backend, FloatArray } from '../backend';
import type { Activation } from '../config';
import { drawKeepMask } from '../ops/dropout';
import type { Rng } from '../rng';
import type { Arena, ByteSlot, Param, ParamInit, ParamStore, Slot } from './plan';

/** y[N,O] = x[N,I] · Wᵀ + b, W stored [O, I] as in PyTorch's nn.Linear (overwrites y). */
export function linearForward(
  k: Backend,
  w: FloatArray,
  b: FloatArray | null,
  y: FloatArray,
  x: FloatArray,
  N: number,
  I: number,
  O: number,
): void {
  k.matmul(y, x, w, N, O, I, false, true, false);
  if (b) k.addBias(y, b, N, O);
}

/**
 * Backward of y = x Wᵀ + b: dx += dy W (unless dx is null; dx = dy W when `setDx`, which
 * spares the caller zeroing a fresh buffer first), dW += dyᵀ x, db += Σ_rows dy.
 */
export function linearBackward(
  k: Backend,
  w: Param,
  b: Param | null,
  dx: FloatArray | null,
  dy: FloatArray,
  x: FloatArray,
  N: number,
  I: number,
  O: number,
  setDx = false,
): void {
  if (dx) k.matmul(dx, dy, w.data, N, I, O, false, false, !setDx);
  k.matmul(w.grad, dy, x, O, I, N, true, false, true);
  if (b) k.biasBackward(b.grad, dy, N, O);
}

/** A linear layer that owns its weight [O, I] and optional bias [O]. */
export class Linear {
  readonly w: Param;
  readonly b: Param | null;

  constructor(
    store: ParamStore,
    name: string,
    readonly inF: number,
    readonly outF: number,
    bias: boolean,
    init: ParamInit,
  ) {
    this.w = store.add(`${name}.weight`, [outF, inF], init, true); // a hidden matrix (Muon's)
    this.b = bias ? store.add(`${name}.bias`, [outF], { kind: 'const', value: 0 }) : null;
  }

  forward(k: Backend, y: FloatArray, x: FloatArray, N: number): void {
    linearForward(k, this.w.data, this.b ? this.b.data : null, y, x, N, this.inF, this.outF);
  }

  /** See linearBackward: accumulates into dx, or overwrites it when `setDx`. */
  backward(k: Backend, dx: FloatArray | null, dy: FloatArray, x: FloatArray, N: number, setDx = false): void {
    linearBackward(k, this.w, this.b, dx, dy, x, N, this.inF, this.outF, setDx);
  }
}

/** Row statistics LayerNorm's forward writes: mean and rstd [N]. */
export interface NormScratch {
  readonly mean: FloatArray;
  readonly rstd: FloatArray;
}

/** Activations of the feed-forward network: pre- and post-activation [N, F]. */
export interface FfnScratch {
  readonly h: FloatArray;
  readonly a: FloatArray;
}

/** LayerNorm over the last dimension (Ba et al. 2016), bias optional. */
export class LayerNorm {
  readonly w: Param;
  readonly b: Param | null;
  private readonly mean: Slot;
  private readonly rstd: Slot;

  constructor(
    store: ParamStore,
    arena: Arena,
    name: string,
    readonly C: number,
    bias: boolean,
    readonly eps: number,
    maxN: number,
  ) {
    this.w = store.add(`${name}.weight`, [C], { kind: 'const', value: 1 });
    this.b = bias ? store.add(`${name}.bias`, [C], { kind: 'const', value: 0 }) : null;
    this.mean = arena.buffer(maxN);
    this.rstd = arena.buffer(maxN);
  }

  forward(k: Backend, y: FloatArray, x: FloatArray, N: number): void {
    this.apply(k, y, x, N, this.mean.data, this.rstd.data);
  }

  /** forward() on R rows of a decoding step, its statistics in `s` (backward's are kept). */
  step(k: Backend, y: FloatArray, x: FloatArray, R: number, s: NormScratch): void {
    this.apply(k, y, x, R, s.mean, s.rstd);
  }

  private apply(k: Backend, y: FloatArray, x: FloatArray, N: number, mean: FloatArray, rstd: FloatArray): void {
    k.layernormForward(y, mean, rstd, x, this.w.data, this.b ? this.b.data : null, N, this.C, this.eps);
  }

  /** Backward of y = LN(x); accumulates dx, dw, db. */
  backward(k: Backend, dx: FloatArray, dy: FloatArray, x: FloatArray, N: number): void {
    k.layernormBackward(
      dx,
      this.w.grad,
      this.b ? this.b.grad : null,
      dy,
      x,
      this.mean.data,
      this.rstd.data,
      this.w.data,
      N,
      this.C,
    );
  }
}

/**
 * Inverted dropout with a seeded keep-mask (the backend's counter-based mask kernel under
 * a key of two words from `rng` per forward). When inactive (eval, or p = 0) forward
 * hands back its input and backward its upstream gradient: no copies.
 */
export class Dropout {
  private readonly out: Slot;
  private readonly keep: ByteSlot;
  private active = false;

  constructor(
    arena: Arena,
    readonly p: number,
    maxSize: number,
  ) {
    this.out = arena.buffer(p > 0 ? maxSize : 0);
    this.keep = arena.bytes(p > 0 ? maxSize : 0);
  }

  forward(k: Backend, x: FloatArray, n: number, train: boolean, rng: Rng | null): FloatArray {
    this.active = train && this.p > 0;
    if (!this.active) return x;
    if (!rng) throw new Error('Dropout in training mode needs an rng');
    drawKeepMask(this.keep.data, n, this.p, rng, k);
    k.dropoutForward(this.out.data, x, this.keep.data, n, this.p);
    return this.out.data;
  }

  /** Gradient w.r.t. the input: dy itself when inactive, else written into `scratch`. */
  backward(k: Backend, dy: FloatArray, n: number, scratch: FloatArray): FloatArray {
    if (!this.active) return dy;
    k.fill(scratch, n, 0);
    k.dropoutBackward(scratch, dy, this.keep.data, n, this.p);
    return scratch;
  }
}

/** Position-wise feed-forward network: fc2(act(fc1(x))) (the paper §3.3). */
export class FeedForward {
  readonly fc1: Linear;
  readonly fc2: Linear;
  private readonly h: Slot; // [N, F] pre-activation
  private readonly a: Slot; // [N, F] post-activation
  private readonly da: Slot; // scratch [N, F]
  private readonly dh: Slot; // scratch [N, F]

  constructor(
    store: ParamStore,
    arena: Arena,
    names: { fc1: string; fc2: string },
    readonly C: number,
    readonly F: number,
    readonly activation: Activation,
    bias: boolean,
    init: { fc1: ParamInit; fc2: ParamInit },
    maxN: number,
  ) {
    this.fc1 = new Linear(store, names.fc1, C, F, bias, init.fc1);
    this.fc2 = new Linear(store, names.fc2, F, C, bias, init.fc2);
    this.h = arena.buffer(maxN * F);
    this.a = arena.buffer(maxN * F);
    this.da = arena.scratch('ffn.da', maxN * F);
    this.dh = arena.scratch('ffn.dh', maxN * F);
  }

  forward(k: Backend, y: FloatArray, x: FloatArray, N: number): void {
    this.apply(k, y, x, N, this.h.data, this.a.data);
  }

  /** forward() on R rows of a decoding step, its activations in `s` (backward's are kept). */
  step(k: Backend, y: FloatArray, x: FloatArray, R: number, s: FfnScratch): void {
    this.apply(k, y, x, R, s.h, s.a);
  }

  /** y = fc2(act(fc1(x))) with h = fc1(x) and a = act(h). */
  private apply(k: Backend, y: FloatArray, x: FloatArray, N: number, h: FloatArray, a: FloatArray): void {
    this.fc1.forward(k, h, x, N);
    const n = N * this.F;
    if (this.activation === 'relu') k.reluForward(a, h, n);
    else if (this.activation === 'gelu') k.geluForward(a, h, n);
    else k.geluTanhForward(a, h, n);
    this.fc2.forward(k, y, a, N);
  }

  /** Backward of y = fc2(act(fc1(x))); accumulates dx and parameter gradients. */
  backward(k: Backend, dx: FloatArray, dy: FloatArray, x: FloatArray, N: number): void {
    const n = N * this.F;
    const da = this.da.data;
    const dh = this.dh.data;
    this.fc2.backward(k, da, dy, this.a.data, N, true);
    k.fill(dh, n, 0);
    if (this.activation === 'relu') k.reluBackward(dh, da, this.h.data, n);
    else if (this.activation === 'gelu') k.geluBackward(dh, da, this.h.data, n);
    else k.geluTanhBackward(dh, da, this.h.data, n);
    this.fc1.backward(k, dx, dh, x, N);
  }
}
