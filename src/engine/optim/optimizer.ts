/**
 * The optimizer: one Adam / AdamW update over the model's flat parameter buffer per step (or
 * Muon for the hidden matrices and AdamW for the rest), with the learning-rate schedule,
 * global gradient-norm clipping and a stop on non-finite gradients that leaves the parameters
 * untouched.
 *
 * Models keep ALL parameters in one flat FloatArray and all gradients in another of the
 * same length, cut into named `ParamSegment`s. That lets a step be three kernel calls over
 * the whole buffer (sumSquares, scale, adamStep), with the moments m, v and the weight-decay
 * mask allocated once here, so `step()` allocates no buffers (only its small result record).
 *
 * Math: Adam (Kingma & Ba 2015, Alg. 1) with bias correction; AdamW's decoupled weight decay
 * (Loshchilov & Hutter 2019) on segments marked `decay`; clipping by global L2 norm
 * (Pascanu et al. 2013; PyTorch `clip_grad_norm_`): g ← g · min(1, clip / (‖g‖ + 1e-6)).
 *
 * Muon (type 'muon'; Jordan et al. 2024, "Muon: An optimizer for hidden layers", as
 * modded-nanogpt and nanochat use it) on each segment marked `hidden`, a matrix of rows × cols:
 *   buf ← β·buf + (1−β)·g;  u = (1−β)·g + β·buf  (Nesterov);  X = NS5(u);
 *   p ← p·(1 − lr_m·λ) (decoupled decay, λ = weightDecay);  p ← p − lr_m·max(1, rows/cols)^0.5·X,
 * with lr_m = muonLr · (the schedule's rate / lr). NS5 is five Newton–Schulz iterations that push
 * every singular value of u towards 1 (into roughly [0.7, 1.2]): X ← u/(‖u‖_F + 1e-7), transposed
 * to be wide when rows > cols; five times A = X·Xᵀ, B = b·A + c·A·A, X = a·X + B·X (as (a·I + B)·X) with
 * (a, b, c) = (3.4445, −4.7750, 2.0315); transposed back. It runs in the buffers' float type
 * (float32), not bf16 as modded-nanogpt's does, with the products on the backend's `matmul` (the
 * symmetric X·Xᵀ and A·A computed above the diagonal only, the same numbers for ~5/8 of the work; the
 * products are most of a step's time at lab sizes); its buffers are allocated once here. Muon's
 * momentum buffer lives in `m` over the hidden segments (`v` stays 0 there), so checkpoints keep
 * one layout; every other segment takes AdamW with the config's rate, betas, ε and decay, one
 * `adamStep` per contiguous run of such segments.
 * Leaves out: the kernel loops (the backend's `adamStep`), the schedules (`schedule.ts`),
 * config presets and validation (`optimizerConfig.ts`), and writing state to disk (`src/lab`).
 */

import type { Backend, FloatArray } from '../backend';
import { EngineError } from '../errors';
import { validateOptimizerConfig } from './optimizerConfig';
import type { OptimizerConfig } from './optimizerConfig';
import { learningRate } from './schedule';

/** One named tensor inside the flat parameter (and gradient) buffer. */
export interface ParamSegment {
  readonly name: string;
  /** First element of this tensor in the flat buffer. */
  readonly offset: number;
  /** Number of elements; equals the product of `shape`. */
  readonly size: number;
  readonly shape: readonly number[];
  /** weight decay applies (matrices; not biases/norms/1-D) */
  readonly decay: boolean;
  /**
   * A hidden 2-D matrix of rows × cols = shape[0] × shape[1] (attention's and the feed-forward's
   * weights; not embeddings, the output projection, norms or biases): Muon updates it.
   */
  readonly hidden?: boolean;
}

/** What one optimizer step did, for logging and the dashboard. */
export interface StepInfo {
  /** The 1-based step just taken. */
  readonly step: number;
  /** Learning rate used by this step. */
  readonly lr: number;
  /** Global L2 norm of the gradients BEFORE clipping (as PyTorch's clip_grad_norm_ returns). */
  readonly gradNorm: number;
  /** True when the gradients were scaled down to `clipGradNorm`. */
  readonly clipped: boolean;
}

/** Everything needed to continue training exactly where it stopped. */
export interface OptimizerState {
  /** Steps taken so far (0 before the first). */
  readonly step: number;
  /** First moments, one per parameter (Muon's momentum on its hidden matrices). */
  readonly m: FloatArray;
  /** Second moments, one per parameter. */
  readonly v: FloatArray;
}

/** The moments and step count as read back from a checkpoint (any numeric array). */
export interface OptimizerStateInput {
  readonly step: number;
  readonly m: ArrayLike<number>;
  readonly v: ArrayLike<number>;
}

/** Adam(W) over one flat parameter buffer. */
export class Optimizer {
  readonly config: OptimizerConfig;
  private readonly backend: Backend;
  private readonly params: FloatArray;
  private readonly grads: FloatArray;
  private readonly segments: readonly ParamSegment[];
  private readonly n: number;
  private readonly m: FloatArray;
  private readonly v: FloatArray;
  /** 1 where decoupled decay applies; null for plain Adam (decay nowhere). */
  private readonly decayMask: Uint8Array | null;
  /** Reused for every adamStep call so a step allocates nothing. */
  private readonly adam: { lr: number; beta1: number; beta2: number; eps: number; weightDecay: number; step: number };
  /** Type muon: the hidden matrices and their Newton–Schulz buffers; null otherwise. */
  private readonly muon: MuonPart | null;
  private t = 0;

  /**
   * Validates the config and the segments (in range, size = product(shape), no overlap) and
   * allocates m, v and the decay mask once. Throws EngineError ('config/invalid' or
   * 'shape/mismatch').
   */
  constructor(
    backend: Backend,
    params: FloatArray,
    grads: FloatArray,
    segments: readonly ParamSegment[],
    cfg: OptimizerConfig,
  ) {
    this.config = validateOptimizerConfig(cfg);
    if (params.length !== grads.length) {
      throw new EngineError(
        'shape/mismatch',
        `Optimizer needs one gradient per parameter: params has ${params.length} elements but grads ` +
          `has ${grads.length}; allocate both from the same parameter plan.`,
      );
    }
    checkSegments(segments, params.length);
    this.backend = backend;
    this.params = params;
    this.grads = grads;
    this.segments = segments;
    this.n = params.length;
    this.m = backend.alloc(this.n);
    this.v = backend.alloc(this.n);
    // The decay mask lives in the backend's memory where it has its own, so adamStep reads it in place.
    const decays = cfg.type === 'adamw' || cfg.type === 'muon';
    this.decayMask = decays ? (backend.allocBytes ? backend.allocBytes(this.n) : new Uint8Array(this.n)) : null;
    if (this.decayMask) for (const s of segments) if (s.decay) this.decayMask.fill(1, s.offset, s.offset + s.size);
    this.adam = {
      lr: 0,
      beta1: cfg.beta1,
      beta2: cfg.beta2,
      eps: cfg.eps,
      weightDecay: decays ? cfg.weightDecay : 0,
      step: 0,
    };
    this.muon = cfg.type === 'muon' ? this.planMuon() : null;
  }

  /** The hidden matrices, the AdamW runs between them (as views, made once) and the Newton–Schulz buffers. */
  private planMuon(): MuonPart {
    const hidden = [...this.segments].filter((s) => s.hidden && s.shape.length === 2 && s.size > 0);
    hidden.sort((a, b) => a.offset - b.offset);
    const view = (a: FloatArray, from: number, to: number): FloatArray => a.subarray(from, to);
    const mask = this.decayMask as Uint8Array;
    const runs: AdamRun[] = [];
    let at = 0;
    const addRun = (to: number): void => {
      if (to > at)
        runs.push({
          n: to - at,
          p: view(this.params, at, to),
          g: view(this.grads, at, to),
          m: view(this.m, at, to),
          v: view(this.v, at, to),
          mask: mask.subarray(at, to),
        });
    };
    const matrices: MuonMatrix[] = hidden.map((s) => {
      addRun(s.offset);
      at = s.offset + s.size;
      const [rows, cols] = s.shape as [number, number];
      return {
        rows,
        cols,
        decay: s.decay,
        p: view(this.params, s.offset, at),
        g: view(this.grads, s.offset, at),
        buf: view(this.m, s.offset, at),
      };
    });
    addRun(this.n);
    const { most, mostSquare } = muonSizes(hidden.map((s) => s.shape));
    const b = this.backend;
    return {
      matrices,
      runs,
      x: b.alloc(most),
      y: b.alloc(most),
      a: b.alloc(mostSquare),
      bb: b.alloc(mostSquare),
      t: b.alloc(mostSquare),
    };
  }

  /** Steps taken so far (0 before the first). */
  get stepCount(): number {
    return this.t;
  }

  /**
   * One update from the gradients currently in `grads`. Computes the global gradient norm;
   * if it is not finite, throws EngineError('train/nonFinite') naming the step and the first
   * segment with a bad gradient, leaving params, moments and the step count unchanged.
   * Otherwise clips `grads` IN PLACE when the norm exceeds `clipGradNorm`, then applies one
   * `adamStep` over the whole buffer. Gradients are not zeroed here (the model does that).
   * `normSq`: Σ g² already read from a device (Trainer.stepAsync); absent, `sumSquares` computes it.
   */
  step(normSq?: number): StepInfo {
    const step = this.t + 1;
    const lr = learningRate(this.config, step);
    const gradNorm = Math.sqrt(normSq ?? this.backend.sumSquares(this.grads, this.n));
    if (!Number.isFinite(gradNorm)) throw this.nonFiniteGradient(step, gradNorm);
    // As PyTorch's clip_grad_norm_: g ← g · min(1, clip / (‖g‖ + 1e-6)).
    const clip = this.config.clipGradNorm;
    const coef = clip / (gradNorm + 1e-6);
    const clipped = clip > 0 && coef < 1;
    if (clipped) this.backend.scale(this.grads, this.n, coef);
    this.update(step, lr);
    return { step, lr, gradNorm, clipped };
  }

  /** The clip norm of the config (0: no clipping). */
  get clipGradNorm(): number {
    return this.config.clipGradNorm;
  }

  /**
   * `step` on a device that gates the update itself (train.ts `DeviceStats.gateUpdate`: the clip
   * factor and the non-finite guard are on the device): records the update without the norm and
   * returns the step and its rate; {@link revokeStep} takes it back when the device skipped it.
   */
  stepOnDevice(): { step: number; lr: number } {
    const step = this.t + 1;
    const lr = learningRate(this.config, step);
    this.update(step, lr);
    return { step, lr };
  }

  /** Takes back the last {@link stepOnDevice}, which the device skipped (a non-finite loss or norm). */
  revokeStep(): void {
    if (this.t > 0) this.t--;
  }

  /** Throws EngineError('train/nonFinite'), naming the first bad gradient, when Σ g² of `step` is not finite. */
  checkNorm(normSq: number, step: number): void {
    const gradNorm = Math.sqrt(normSq);
    if (!Number.isFinite(gradNorm)) throw this.nonFiniteGradient(step, gradNorm);
  }

  /** One update of every parameter at `step` with rate `lr` (Muon's matrices and AdamW's runs, or AdamW). */
  private update(step: number, lr: number): void {
    this.adam.lr = lr;
    this.adam.step = step;
    if (this.muon) this.muonStep(this.muon, lr);
    else this.backend.adamStep(this.params, this.grads, this.m, this.v, this.n, this.adam, this.decayMask);
    this.t = step;
  }

  /** Muon on every hidden matrix, AdamW on the runs between them (see the file header). */
  private muonStep(part: MuonPart, lr: number): void {
    const k = this.backend;
    for (const r of part.runs) k.adamStep(r.p, r.g, r.m, r.v, r.n, this.adam, r.mask);
    const beta = this.config.muonMomentum as number;
    const lrM = ((this.config.muonLr as number) * lr) / this.config.lr;
    const wd = this.config.weightDecay;
    for (const mat of part.matrices) {
      const { rows, cols, p, g, buf } = mat;
      const n = rows * cols;
      if (k.muonMatrix) {
        // A device (WebGPU) runs the same steps in its own memory: no host loop may read these buffers.
        const { x, y, a, bb } = part;
        const keep = mat.decay && wd > 0 ? 1 - lrM * wd : null;
        const step = lrM * Math.sqrt(Math.max(1, rows / cols));
        k.muonMatrix({ rows, cols, p, g, buf, x, y, a, bb, beta, keep, step, coeffs: NS_COEFFS, iterations: NS_STEPS });
        continue;
      }
      // Momentum, then the Nesterov blend u, written straight into x (transposed when tall):
      // element (i, j) sits at x[j·rows + i] when tall (Xᵀ), else at x[i·cols + j].
      const tall = rows > cols;
      const si = tall ? 1 : cols;
      const sj = tall ? rows : 1;
      const x = part.x;
      let sq = 0;
      for (let i = 0, e = 0; i < rows; i++) {
        for (let j = 0; j < cols; j++, e++) {
          const gi = g[e] as number;
          buf[e] = beta * (buf[e] as number) + (1 - beta) * gi;
          const at = i * si + j * sj;
          x[at] = (1 - beta) * gi + beta * (buf[e] as number);
          const u = x[at] as number; // as stored (float32)
          sq += u * u;
        }
      }
      k.scale(x, n, 1 / (Math.sqrt(sq) + 1e-7));
      const out = newtonSchulz(k, part, tall ? cols : rows, tall ? rows : cols);
      if (mat.decay && wd > 0) k.scale(p, n, 1 - lrM * wd);
      const step = lrM * Math.sqrt(Math.max(1, rows / cols));
      for (let i = 0, e = 0; i < rows; i++)
        for (let j = 0; j < cols; j++, e++) p[e] = (p[e] as number) - step * (out[i * si + j * sj] as number);
    }
  }

  /** Throws EngineError('train/nonFinite') when the loss of `step` is NaN or infinite. */
  checkLoss(loss: number, step: number): void {
    if (Number.isFinite(loss)) return;
    throw new EngineError(
      'train/nonFinite',
      `The loss became ${String(loss)} at step ${step}, so training stopped before updating the ` +
        `parameters. ${LIKELY_CAUSES}`,
    );
  }

  /** A copy of the step count and moments, for `optimizer.safetensors`. */
  state(): OptimizerState {
    return { step: this.t, m: this.m.slice(), v: this.v.slice() };
  }

  /**
   * Restores a state saved by `state()` so the following steps are identical to an
   * uninterrupted run. Throws EngineError('checkpoint/invalid') if it does not fit this model.
   */
  loadState(s: OptimizerStateInput): void {
    const bad = (msg: string): never => {
      throw new EngineError(
        'checkpoint/invalid',
        `${msg} Resume with the config the run was saved with, or start a fresh run.`,
      );
    };
    if (!Number.isInteger(s.step) || s.step < 0)
      bad(`The optimizer state's step must be a whole number ≥ 0, got ${String(s.step)}.`);
    for (const [name, arr] of [
      ['m', s.m],
      ['v', s.v],
    ] as const) {
      if (arr.length !== this.n) {
        bad(
          `The optimizer state's ${name} has ${arr.length} values but this model has ${this.n} ` +
            `parameters; it was saved for a different model config.`,
        );
      }
      for (let i = 0; i < this.n; i++) {
        const x = arr[i] as number;
        if (!Number.isFinite(x) || (name === 'v' && x < 0)) {
          bad(
            `The optimizer state's ${name}[${i}] (${this.describeIndex(i)}) is ${x}, which no Adam ` +
              `step produces; the file is corrupt.`,
          );
        }
      }
    }
    this.m.set(s.m);
    this.v.set(s.v);
    this.t = s.step;
  }

  private nonFiniteGradient(step: number, norm: number): EngineError {
    let bad = -1;
    for (let i = 0; i < this.n; i++) {
      if (!Number.isFinite(this.grads[i] as number)) {
        bad = i;
        break;
      }
    }
    const where =
      bad >= 0
        ? `the gradient of ${this.describeIndex(bad)} is ${String(this.grads[bad])}`
        : `every gradient is finite but the sum of their squares overflowed (norm ${String(norm)})`;
    return new EngineError(
      'train/nonFinite',
      `Gradient is not finite at step ${step}: ${where}. The parameters were left unchanged. ${LIKELY_CAUSES}`,
    );
  }

  /** "segment name[index]" for a flat index, or the raw offset outside every segment. */
  private describeIndex(i: number): string {
    for (const s of this.segments) if (i >= s.offset && i < s.offset + s.size) return `"${s.name}"[${i - s.offset}]`;
    return `flat element ${i} (in no named segment)`;
  }
}

/** One contiguous stretch of AdamW parameters (views into the flat buffers). */
interface AdamRun {
  readonly n: number;
  readonly p: FloatArray;
  readonly g: FloatArray;
  readonly m: FloatArray;
  readonly v: FloatArray;
  readonly mask: Uint8Array;
}

/** One hidden matrix of Muon's (views into the flat buffers; `buf` is its stretch of `m`). */
interface MuonMatrix {
  readonly rows: number;
  readonly cols: number;
  readonly decay: boolean;
  readonly p: FloatArray;
  readonly g: FloatArray;
  readonly buf: FloatArray;
}

/** Muon's plan: its matrices, the AdamW runs between them, and the Newton–Schulz buffers (sized for the largest). */
interface MuonPart {
  readonly matrices: readonly MuonMatrix[];
  readonly runs: readonly AdamRun[];
  /** X and the next X, [r·c] each. */
  readonly x: FloatArray;
  readonly y: FloatArray;
  /** A = X·Xᵀ and B = b·A + c·A·A, [r·r] each. */
  readonly a: FloatArray;
  readonly bb: FloatArray;
  /** The blocks of a symmetric product below its first rows, [< r·r]. */
  readonly t: FloatArray;
}

/** The Newton–Schulz buffers' sizes for these matrix shapes: X and the next X ([r·c]), A, B and a block ([r·r]). */
function muonSizes(shapes: readonly (readonly number[])[]): { most: number; mostSquare: number } {
  let most = 0;
  let mostSquare = 0;
  for (const [rows = 0, cols = 0] of shapes) {
    const small = Math.min(rows, cols);
    most = Math.max(most, rows * cols);
    mostSquare = Math.max(mostSquare, small * small);
  }
  return { most, mostSquare };
}

/**
 * Floats Muon keeps beside the moments for hidden matrices of these shapes (its Newton–Schulz
 * buffers), for memory estimates before a model is bound; 0 for none.
 */
export function muonBufferFloats(shapes: readonly (readonly number[])[]): number {
  const { most, mostSquare } = muonSizes(shapes);
  return 2 * most + 3 * mostSquare;
}

/** Newton–Schulz quintic coefficients (Jordan et al. 2024; modded-nanogpt's `zeropower_via_newtonschulz5`). */
export const NS_COEFFS = [3.4445, -4.775, 2.0315] as const;
/** Newton–Schulz iterations per step. */
export const NS_STEPS = 5;

/**
 * Five Newton–Schulz iterations on the r × c matrix (r ≤ c) in `part.x`, already divided by its
 * Frobenius norm; returns the buffer holding the result (`part.x` or `part.y`). A = X·Xᵀ and A·A
 * (= A·Aᵀ, A being symmetric) are symmetric, so each is computed above its diagonal only
 * (`symmetricProduct`), the same numbers as the full products for about 5/8 of their work.
 */
function newtonSchulz(k: Backend, part: MuonPart, r: number, c: number): FloatArray {
  const [qa, qb, qc] = NS_COEFFS;
  let x = part.x;
  let y = part.y;
  const { a, bb, t } = part;
  const rr = r * r;
  for (let it = 0; it < NS_STEPS; it++) {
    symmetricProduct(k, a, x, r, c, t); // A = X·Xᵀ
    symmetricProduct(k, bb, a, r, r, t); // A·A
    for (let i = 0; i < rr; i++) bb[i] = qc * (bb[i] as number) + qb * (a[i] as number); // B = b·A + c·A·A
    for (let d = 0; d < r; d++) bb[d * r + d] = (bb[d * r + d] as number) + qa; // a·I + B
    k.matmul(y, bb, x, r, c, r, false, false, false); // a·X + B·X, as (a·I + B)·X
    const swap = x;
    x = y;
    y = swap;
  }
  return x;
}

/** Rows per block of `symmetricProduct` for an r × r result: a quarter, a multiple of 8, at least 32. */
export function symmetricBlockRows(r: number): number {
  return Math.max(32, Math.ceil(r / 32) * 8);
}

/**
 * out (r × r) = x·xᵀ for x of r rows × kk (row-major), computing only what lies on and above the
 * diagonal: the first block of rows whole, straight into `out`, then each later block of rows
 * [b0, b1) against rows [b0, r) into `tmp` (copied into out's rows), then the lower triangle
 * mirrored from the upper. The kernels sum each element in k order however the product is cut,
 * and x_i·x_j = x_j·x_i term by term, so this is exactly the full product.
 */
export function symmetricProduct(
  k: Backend,
  out: FloatArray,
  x: FloatArray,
  r: number,
  kk: number,
  tmp: FloatArray,
): void {
  const s = symmetricBlockRows(r);
  k.matmul(out, x, x, Math.min(s, r), r, kk, false, true, false);
  for (let b0 = s; b0 < r; b0 += s) {
    const m = Math.min(s, r - b0);
    const n = r - b0;
    const rows = x.subarray(b0 * kk, r * kk);
    k.matmul(tmp, rows, rows, m, n, kk, false, true, false);
    for (let i = 0; i < m; i++) {
      const from = i * n;
      const to = (b0 + i) * r + b0;
      for (let j = 0; j < n; j++) out[to + j] = tmp[from + j] as number;
    }
  }
  for (let i = 1; i < r; i++) for (let j = 0; j < i; j++) out[i * r + j] = out[j * r + i] as number;
}

/**
 * The Newton–Schulz orthogonalisation Muon applies, on its own for tests and pictures: a new
 * rows × cols matrix whose singular values lie near 1 (roughly in [0.7, 1.2]), from `g`.
 */
export function orthogonalize(k: Backend, g: ArrayLike<number>, rows: number, cols: number): FloatArray {
  const r = Math.min(rows, cols);
  const c = Math.max(rows, cols);
  const part: MuonPart = {
    matrices: [],
    runs: [],
    x: k.alloc(r * c),
    y: k.alloc(r * c),
    a: k.alloc(r * r),
    bb: k.alloc(r * r),
    t: k.alloc(r * r),
  };
  let sq = 0;
  for (let i = 0; i < rows * cols; i++) sq += (g[i] as number) ** 2;
  const inv = 1 / (Math.sqrt(sq) + 1e-7);
  for (let i = 0; i < rows * cols; i++) {
    const at = rows > cols ? (i % cols) * rows + Math.floor(i / cols) : i;
    part.x[at] = (g[i] as number) * inv;
  }
  const x = newtonSchulz(k, part, r, c);
  const out = k.alloc(rows * cols);
  for (let i = 0; i < rows * cols; i++)
    out[i] = x[rows > cols ? (i % cols) * rows + Math.floor(i / cols) : i] as number;
  return out;
}

const LIKELY_CAUSES =
  'Likely causes: the learning rate is too high (lower lr or factor), there is no warm-up (set schedule.warmup), ' +
  'or floating-point overflow (enable clipGradNorm, e.g. 1.0). Resume from the last good checkpoint ' +
  'after changing the config.';

/** Each segment lies inside [0, n), its size is its shape's product, and none overlap. */
function checkSegments(segments: readonly ParamSegment[], n: number): void {
  const bad = (msg: string): never => {
    throw new EngineError(
      'shape/mismatch',
      `${msg} The model's parameter plan is inconsistent; this is a bug in the model code.`,
    );
  };
  for (const s of segments) {
    if (
      !Number.isInteger(s.offset) ||
      !Number.isInteger(s.size) ||
      s.offset < 0 ||
      s.size < 0 ||
      s.offset + s.size > n
    ) {
      bad(`Parameter segment "${s.name}" spans [${s.offset}, ${s.offset + s.size}), outside the ${n}-element buffer.`);
    }
    const product = s.shape.reduce((a, d) => a * d, 1);
    if (product !== s.size)
      bad(`Parameter segment "${s.name}" has shape [${s.shape.join(', ')}] (${product} elements) but size ${s.size}.`);
  }
  const sorted = [...segments].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1] as ParamSegment;
    const cur = sorted[i] as ParamSegment;
    if (cur.offset < prev.offset + prev.size)
      bad(`Parameter segments "${prev.name}" and "${cur.name}" overlap at element ${cur.offset}.`);
  }
}
