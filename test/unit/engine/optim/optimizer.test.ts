import { describe, it, expect } from 'vitest';
import type { Backend, FloatArray } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { EngineError } from '../../../../src/engine/errors';
import { Optimizer } from '../../../../src/engine/optim/optimizer';
import type { ParamSegment } from '../../../../src/engine/optim/optimizer';
import type { OptimizerConfig } from '../../../../src/engine/optim/optimizerConfig';
import { Rng } from '../../../../src/engine/rng';

/** Two segments: a 2×3 matrix "w" (decayed) at 0 and a bias "b" [3] at 6. */
const SEGMENTS: readonly ParamSegment[] = [
  { name: 'w', offset: 0, size: 6, shape: [2, 3], decay: true },
  { name: 'b', offset: 6, size: 3, shape: [3], decay: false },
];

function config(patch: Partial<OptimizerConfig> = {}): OptimizerConfig {
  return {
    type: 'adamw',
    lr: 0.1,
    beta1: 0.9,
    beta2: 0.999,
    eps: 1e-8,
    weightDecay: 0,
    clipGradNorm: 0,
    schedule: { type: 'constant', warmup: 0 },
    ...patch,
  };
}

/** Float64 buffers by default (exact comparisons); 'f32' is what models train in. */
function setup(
  patch: Partial<OptimizerConfig> = {},
  dtype: 'f32' | 'f64' = 'f64',
): { opt: Optimizer; params: FloatArray; grads: FloatArray; backend: Backend } {
  const backend = createReferenceBackend({ dtype });
  const params = backend.alloc(9);
  params.set([1, -2, 3, -4, 5, -6, 0.5, -0.5, 2]);
  const grads = backend.alloc(params.length);
  return { opt: new Optimizer(backend, params, grads, SEGMENTS, config(patch)), params, grads, backend };
}

function norm(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += (x[i] as number) ** 2;
  return Math.sqrt(s);
}

describe('Optimizer.step', () => {
  it('takes the first Adam step of size lr along −sign(g), with the scheduled lr', () => {
    // Bias-corrected first step: m̂ = g, v̂ = g², so Δp = −lr·g/(|g| + eps) ≈ −lr·sign(g).
    const { opt, params, grads } = setup({
      type: 'adam',
      schedule: { type: 'noam', warmup: 4, dModel: 16, factor: 1 },
    });
    const before = Float64Array.from(params);
    grads.set([3, -1, 0.25, 7, -2, 1, 1, -4, 0.5]);
    const info = opt.step();
    const lr = (1 / 4) * (1 / 8); // 16^-0.5 · 1 · 4^-1.5
    expect(info).toMatchObject({ step: 1, clipped: false });
    expect(info.lr).toBeCloseTo(lr, 15);
    expect(info.gradNorm).toBeCloseTo(Math.sqrt(9 + 1 + 0.0625 + 49 + 4 + 1 + 1 + 16 + 0.25), 12);
    for (let i = 0; i < params.length; i++) {
      expect(params[i]).toBeCloseTo((before[i] as number) - lr * Math.sign(grads[i] as number), 6);
    }
    expect(opt.stepCount).toBe(1);
  });

  it("clips the gradients to the clip norm as PyTorch's clip_grad_norm_ does (coef = clip / (norm + 1e-6))", () => {
    const { opt, grads } = setup({ clipGradNorm: 1 });
    grads.set([3, 4, 0, 0, 0, 0, 0, 0, 12]); // norm 13
    const info = opt.step();
    expect(info.gradNorm).toBeCloseTo(13, 12);
    expect(info.clipped).toBe(true);
    const coef = 1 / (13 + 1e-6);
    expect(norm(grads)).toBeCloseTo(13 * coef, 14);
    expect(grads[0]).toBeCloseTo(3 * coef, 14);
    expect(grads[8]).toBeCloseTo(12 * coef, 14);
  });

  it('leaves gradients below the clip norm alone', () => {
    const { opt, grads } = setup({ clipGradNorm: 5.001 });
    grads.set([0, 3, 0, 4, 0, 0, 0, 0, 0]); // norm 5, below the clip
    const before = Float64Array.from(grads);
    expect(opt.step().clipped).toBe(false);
    expect(grads).toEqual(before);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'stops on a %s gradient, naming the step and segment, without touching params',
    (badValue) => {
      const { opt, params, grads } = setup({ clipGradNorm: 1 });
      grads.fill(0.5);
      opt.step();
      const params1 = Float64Array.from(params);
      const state1 = opt.state();
      grads.fill(0.5);
      grads[7] = badValue; // inside bias "b", element 1
      let err: unknown;
      try {
        opt.step();
      } catch (e) {
        err = e;
      }
      expect(EngineError.is(err, 'train/nonFinite')).toBe(true);
      const msg = (err as Error).message;
      expect(msg).toContain('step 2');
      expect(msg).toContain('"b"[1]');
      expect(msg).toMatch(/learning rate/);
      expect(msg).toMatch(/warm-up/);
      expect(msg).toMatch(/overflow/);
      expect(params).toEqual(params1);
      expect(opt.stepCount).toBe(1);
      expect(opt.state()).toEqual(state1);
      expect(grads[0]).toBe(0.5); // not clipped either
    },
  );

  it('applies decoupled weight decay only to segments marked decay, and only for adamw', () => {
    // Zero gradients: the Adam update is 0/(0 + eps) = 0, so only the decay moves params.
    const w = setup({ weightDecay: 0.5, lr: 0.1 });
    const before = Float64Array.from(w.params);
    w.opt.step();
    for (let i = 0; i < 6; i++) expect(w.params[i]).toBeCloseTo((before[i] as number) * (1 - 0.1 * 0.5), 12);
    for (let i = 6; i < 9; i++) expect(w.params[i]).toBe(before[i]);

    const a = setup({ type: 'adam', weightDecay: 0 });
    a.opt.step();
    expect(a.params).toEqual(before);
  });

  it('converges on a quadratic bowl', () => {
    // f(p) = ½ Σ a_i (p_i − c_i)², ∇f = a ⊙ (p − c), badly conditioned on purpose.
    const rng = new Rng(7);
    const n = 9;
    const a = Float64Array.from({ length: n }, (_, i) => 10 ** ((i % 3) - 1));
    const c = Float64Array.from({ length: n }, () => rng.normal());
    const { opt, params, grads } = setup({
      type: 'adam',
      lr: 0.1,
      schedule: { type: 'cosine', warmup: 20, maxSteps: 1500, minLr: 1e-4 },
    });
    const loss = (): number => {
      let f = 0;
      for (let i = 0; i < n; i++) f += 0.5 * (a[i] as number) * ((params[i] as number) - (c[i] as number)) ** 2;
      return f;
    };
    const first = loss();
    for (let t = 0; t < 1500; t++) {
      for (let i = 0; i < n; i++) grads[i] = (a[i] as number) * ((params[i] as number) - (c[i] as number));
      opt.checkLoss(loss(), t + 1);
      opt.step();
    }
    expect(loss()).toBeLessThan(first * 1e-6);
    for (let i = 0; i < n; i++) expect(Math.abs((params[i] as number) - (c[i] as number))).toBeLessThan(1e-2);
  });
});

describe('Optimizer.checkLoss', () => {
  it('throws train/nonFinite for NaN and infinite losses only', () => {
    const { opt } = setup();
    expect(() => opt.checkLoss(2.5, 3)).not.toThrow();
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
      let err: unknown;
      try {
        opt.checkLoss(bad, 42);
      } catch (e) {
        err = e;
      }
      expect(EngineError.is(err, 'train/nonFinite')).toBe(true);
      expect((err as Error).message).toContain('step 42');
    }
  });
});

describe('Optimizer state', () => {
  const gradAt = (grads: FloatArray, params: FloatArray, t: number): void => {
    for (let i = 0; i < grads.length; i++) grads[i] = Math.sin(t + i) + 0.3 * (params[i] as number);
  };

  it.each(['f32', 'f64'] as const)('round trip gives bit-identical subsequent steps (%s)', (dtype) => {
    const cfg = {
      type: 'adamw',
      weightDecay: 0.1,
      clipGradNorm: 0.5,
      schedule: { type: 'cosine', warmup: 3, maxSteps: 10, minLr: 0.01 },
    } as const;
    const run = setup(cfg, dtype);
    for (let t = 1; t <= 5; t++) {
      gradAt(run.grads, run.params, t);
      run.opt.step();
    }
    const saved = run.opt.state();
    const resumed = setup(cfg, dtype);
    resumed.params.set(run.params);
    resumed.opt.loadState({ step: saved.step, m: Array.from(saved.m), v: Array.from(saved.v) });
    expect(resumed.opt.stepCount).toBe(5);
    for (let t = 6; t <= 10; t++) {
      gradAt(run.grads, run.params, t);
      gradAt(resumed.grads, resumed.params, t);
      expect(resumed.opt.step()).toEqual(run.opt.step());
    }
    expect(resumed.params).toEqual(run.params);
    expect(resumed.opt.state()).toEqual(run.opt.state());
  });

  it('state() returns copies', () => {
    const { opt, grads } = setup();
    grads.fill(1);
    opt.step();
    const s = opt.state();
    s.m.fill(99);
    expect(opt.state().m[0]).not.toBe(99);
  });

  it('rejects a state of the wrong size or with impossible values', () => {
    const { opt } = setup();
    const z = (n: number): Float64Array => new Float64Array(n);
    const bad: [Parameters<Optimizer['loadState']>[0], RegExp][] = [
      [{ step: 1, m: z(8), v: z(9) }, /m has 8 values but this model has 9/],
      [{ step: 1, m: z(9), v: z(10) }, /v has 10 values/],
      [{ step: -1, m: z(9), v: z(9) }, /step/],
      [{ step: 0.5, m: z(9), v: z(9) }, /step/],
      [{ step: 1, m: z(9), v: Float64Array.from({ length: 9 }, (_, i) => (i === 7 ? -1 : 0)) }, /"b"\[1\]/],
      [{ step: 1, m: Float64Array.from({ length: 9 }, () => Number.NaN), v: z(9) }, /"w"\[0\]/],
    ];
    for (const [state, pattern] of bad) {
      let err: unknown;
      try {
        opt.loadState(state);
      } catch (e) {
        err = e;
      }
      expect(EngineError.is(err, 'checkpoint/invalid')).toBe(true);
      expect((err as Error).message).toMatch(pattern);
    }
    expect(opt.stepCount).toBe(0);
  });
});

describe('Optimizer construction', () => {
  it('rejects mismatched buffers and inconsistent segments', () => {
    const b = createReferenceBackend({ dtype: 'f64' });
    const cfg = config();
    const p = new Float64Array(9);
    expect(() => new Optimizer(b, p, new Float64Array(8), SEGMENTS, cfg)).toThrow(/grads has 8/);
    const overlap: ParamSegment[] = [
      SEGMENTS[0] as ParamSegment,
      { name: 'b', offset: 5, size: 3, shape: [3], decay: false },
    ];
    expect(() => new Optimizer(b, p, new Float64Array(9), overlap, cfg)).toThrow(/overlap/);
    const outside: ParamSegment[] = [{ name: 'x', offset: 7, size: 3, shape: [3], decay: false }];
    expect(() => new Optimizer(b, p, new Float64Array(9), outside, cfg)).toThrow(/outside/);
    const wrongShape: ParamSegment[] = [{ name: 'x', offset: 0, size: 6, shape: [4, 2], decay: true }];
    expect(() => new Optimizer(b, p, new Float64Array(9), wrongShape, cfg)).toThrow(/shape \[4, 2\]/);
    expect(() => new Optimizer(b, p, new Float64Array(9), SEGMENTS, config({ lr: -1 }))).toThrow(EngineError);
  });
});
