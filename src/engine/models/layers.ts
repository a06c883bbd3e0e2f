/**
 * The small layers every transformer block is made of — Linear, the norm (LayerNorm or
 * RMSNorm), Dropout and the position-wise feed-forward network (plain or gated) — each with
 * its forward beside its backward.
 * Layers own their parameters (in the flat store) and the activations backward needs (in
 * the arena); they never allocate after construction. Backward accumulates into input
 * gradients, as the kernels do (see backend.ts). The norm and the feed-forward network
 * also have a `step`: forward's math on the rows of one decoding step, in the caller's
 * scratch, so the activations a pending backward needs are never overwritten.
 *
 * Shape legend: N rows (B·T), I in-features, O out-features, C d_model, F d_ff.
 */

import type { Backend, FloatArray } from '../backend';
import type { Activation, ModelConfig, NormType } from '../config';
import { GATED_ACTIVATIONS } from '../config';
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

/** Row statistics a norm's forward writes: mean (LayerNorm only) and rstd [N]. */
export interface NormScratch {
  readonly mean: FloatArray;
  readonly rstd: FloatArray;
}

/**
 * Activations of the feed-forward network: up projection h, gate pre-activation g (gated
 * activations only) and the input of the down projection a, each [N, F].
 */
export interface FfnScratch {
  readonly h: FloatArray;
  readonly g: FloatArray;
  readonly a: FloatArray;
}

/** What a norm's kind and parameters follow from. */
export type NormConfig = Pick<ModelConfig, 'normType' | 'normScale' | 'bias' | 'layerNormEps'>;

/**
 * A norm over the last dimension of the model's `normType`: LayerNorm (Ba et al. 2016; weight,
 * bias when `bias`) or RMSNorm (Zhang & Sennrich 2019: y = x / sqrt(mean(x²) + eps) · w, the
 * weight only when `normScale`, never a bias).
 */
export class Norm {
  readonly type: NormType;
  readonly w: Param | null;
  readonly b: Param | null;
  readonly eps: number;
  private readonly mean: Slot;
  private readonly rstd: Slot;

  constructor(
    store: ParamStore,
    arena: Arena,
    name: string,
    readonly C: number,
    cfg: NormConfig,
    maxN: number,
  ) {
    this.type = cfg.normType;
    this.eps = cfg.layerNormEps;
    const rms = this.type === 'rmsnorm';
    if (!rms && !cfg.normScale) throw new Error('a LayerNorm always has a weight (normScale false needs rmsnorm)');
    this.w = cfg.normScale ? store.add(`${name}.weight`, [C], { kind: 'const', value: 1 }) : null;
    this.b = !rms && cfg.bias ? store.add(`${name}.bias`, [C], { kind: 'const', value: 0 }) : null;
    this.mean = arena.buffer(rms ? 0 : maxN);
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
    const w = this.w ? this.w.data : null;
    if (this.type === 'rmsnorm') k.rmsnormForward(y, rstd, x, w, N, this.C, this.eps);
    else k.layernormForward(y, mean, rstd, x, w as FloatArray, this.b ? this.b.data : null, N, this.C, this.eps);
  }

  /** Backward of y = norm(x); accumulates dx and the parameter gradients. */
  backward(k: Backend, dx: FloatArray, dy: FloatArray, x: FloatArray, N: number): void {
    const w = this.w;
    if (this.type === 'rmsnorm') {
      k.rmsnormBackward(dx, w ? w.grad : null, dy, x, this.rstd.data, w ? w.data : null, N, this.C);
      return;
    }
    if (!w) throw new Error('LayerNorm without a weight');
    k.layernormBackward(
      dx,
      w.grad,
      this.b ? this.b.grad : null,
      dy,
      x,
      this.mean.data,
      this.rstd.data,
      w.data,
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

/** The elementwise function of an activation: a gated one's function of its gate. */
type Elementwise = 'relu' | 'gelu' | 'geluTanh' | 'relu2' | 'silu';

function elementwiseOf(a: Activation): Elementwise {
  return a === 'swiglu' ? 'silu' : a === 'geglu' ? 'geluTanh' : a;
}

/** y = f(x) over n elements. */
function activationForward(k: Backend, f: Elementwise, y: FloatArray, x: FloatArray, n: number): void {
  if (f === 'relu') k.reluForward(y, x, n);
  else if (f === 'gelu') k.geluForward(y, x, n);
  else if (f === 'geluTanh') k.geluTanhForward(y, x, n);
  else if (f === 'relu2') k.relu2Forward(y, x, n);
  else k.siluForward(y, x, n);
}

/** dx += f'(x) · dy over n elements. */
function activationBackward(
  k: Backend,
  f: Elementwise,
  dx: FloatArray,
  dy: FloatArray,
  x: FloatArray,
  n: number,
): void {
  if (f === 'relu') k.reluBackward(dx, dy, x, n);
  else if (f === 'gelu') k.geluBackward(dx, dy, x, n);
  else if (f === 'geluTanh') k.geluTanhBackward(dx, dy, x, n);
  else if (f === 'relu2') k.relu2Backward(dx, dy, x, n);
  else k.siluBackward(dx, dy, x, n);
}

/**
 * Position-wise feed-forward network: down(f(up(x))) (the paper §3.3, fc2(act(fc1(x)))), or
 * with a gated activation (Shazeer 2020) down(f(gate(x)) ⊙ up(x)): SwiGLU gates with SiLU,
 * GeGLU with the tanh GELU.
 */
export class FeedForward {
  /** The up projection (fc1, `c_fc`). */
  readonly fc1: Linear;
  /** The gate projection (gated activations only). */
  readonly gate: Linear | null;
  /** The down projection (fc2, `c_proj`). */
  readonly fc2: Linear;
  private readonly f: Elementwise;
  private readonly h: Slot; // [N, F] up(x)
  private readonly g: Slot; // [N, F] gate(x) (gated)
  private readonly ag: Slot; // [N, F] f(gate(x)) (gated)
  private readonly a: Slot; // [N, F] input of the down projection
  private readonly da: Slot; // scratch [N, F]
  private readonly dh: Slot; // scratch [N, F]

  constructor(
    store: ParamStore,
    arena: Arena,
    names: { fc1: string; gate: string; fc2: string },
    readonly C: number,
    readonly F: number,
    readonly activation: Activation,
    bias: boolean,
    init: { fc1: ParamInit; fc2: ParamInit },
    maxN: number,
  ) {
    const gated = GATED_ACTIVATIONS.includes(activation);
    this.f = elementwiseOf(activation);
    this.fc1 = new Linear(store, names.fc1, C, F, bias, init.fc1);
    this.gate = gated ? new Linear(store, names.gate, C, F, bias, init.fc1) : null;
    this.fc2 = new Linear(store, names.fc2, F, C, bias, init.fc2);
    const nF = maxN * F;
    this.h = arena.buffer(nF, `the feed-forward activations of ${names.fc1.replace(/\.[^.]+$/, '')}`);
    this.g = arena.buffer(gated ? nF : 0);
    this.ag = arena.buffer(gated ? nF : 0);
    this.a = arena.buffer(nF);
    this.da = arena.scratch('ffn.da', nF);
    this.dh = arena.scratch('ffn.dh', nF);
  }

  forward(k: Backend, y: FloatArray, x: FloatArray, N: number): void {
    this.apply(k, y, x, N, this.h.data, this.g.data, this.ag.data, this.a.data);
  }

  /** forward() on R rows of a decoding step, its activations in `s` (backward's are kept). */
  step(k: Backend, y: FloatArray, x: FloatArray, R: number, s: FfnScratch): void {
    this.apply(k, y, x, R, s.h, s.g, s.a, s.a);
  }

  /**
   * y = down(a): a = f(h) with h = up(x), or, gated, a = ag ⊙ h with ag = f(g), g = gate(x)
   * (ag may be a: the product is written over it).
   */
  private apply(
    k: Backend,
    y: FloatArray,
    x: FloatArray,
    N: number,
    h: FloatArray,
    g: FloatArray,
    ag: FloatArray,
    a: FloatArray,
  ): void {
    this.fc1.forward(k, h, x, N);
    const n = N * this.F;
    if (this.gate) {
      this.gate.forward(k, g, x, N);
      activationForward(k, this.f, ag, g, n);
      k.mul(a, ag, h, n, false);
    } else activationForward(k, this.f, a, h, n);
    this.fc2.forward(k, y, a, N);
  }

  /** Backward of forward(); accumulates dx and parameter gradients. */
  backward(k: Backend, dx: FloatArray, dy: FloatArray, x: FloatArray, N: number): void {
    const n = N * this.F;
    const da = this.da.data;
    const dh = this.dh.data;
    this.fc2.backward(k, da, dy, this.a.data, N, true);
    if (!this.gate) {
      k.fill(dh, n, 0);
      activationBackward(k, this.f, dh, da, this.h.data, n);
      this.fc1.backward(k, dx, dh, x, N);
      return;
    }
    // a = f(g) ⊙ h: dh = da ⊙ f(g); dg = f'(g) · (da ⊙ h)
    k.mul(dh, da, this.ag.data, n, false);
    this.fc1.backward(k, dx, dh, x, N);
    k.mul(da, da, this.h.data, n, false);
    k.fill(dh, n, 0);
    activationBackward(k, this.f, dh, da, this.g.data, n);
    this.gate.backward(k, dx, dh, x, N);
  }
}
