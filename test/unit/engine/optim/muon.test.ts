/**
 * Muon (optimizer type 'muon'): the Newton–Schulz orthogonalisation leaves every singular value
 * near 1, wide and tall; three steps of Muon + AdamW on a small set of matrices and vectors agree
 * with PyTorch's (test/golden/muon.safetensors, scripts/pytorch/make_muon_golden.py) to 1e-5 on
 * both backends; a step allocates no new float buffers; the config is checked.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Backend, FloatArray } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { Transformer } from '../../../../src/engine/models/transformer';
import { presetConfig } from '../../../../src/engine/config';
import { Optimizer, orthogonalize } from '../../../../src/engine/optim/optimizer';
import type { ParamSegment } from '../../../../src/engine/optim/optimizer';
import type { OptimizerConfig } from '../../../../src/engine/optim/optimizerConfig';
import { validateOptimizerConfig } from '../../../../src/engine/optim/optimizerConfig';
import { Rng } from '../../../../src/engine/rng';

const BACKENDS: [string, () => Backend][] = [
  ['reference', () => createReferenceBackend()],
  ...(createWasmBackend({ fma: false })
    ? [['wasm', () => createWasmBackend({ fma: false }) as Backend] as [string, () => Backend]]
    : []),
];

/** Singular values of a rows × cols matrix: square roots of the eigenvalues of M·Mᵀ or Mᵀ·M (Jacobi). */
function singularValues(m: ArrayLike<number>, rows: number, cols: number): number[] {
  const r = Math.min(rows, cols);
  const g = Array.from({ length: r }, () => new Array<number>(r).fill(0));
  for (let i = 0; i < r; i++)
    for (let j = 0; j < r; j++) {
      let s = 0;
      if (rows <= cols) for (let k = 0; k < cols; k++) s += (m[i * cols + k] as number) * (m[j * cols + k] as number);
      else for (let k = 0; k < rows; k++) s += (m[k * cols + i] as number) * (m[k * cols + j] as number);
      (g[i] as number[])[j] = s;
    }
  const a = g;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < r; p++) for (let q = p + 1; q < r; q++) off += (a[p]![q] as number) ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < r; p++)
      for (let q = p + 1; q < r; q++) {
        const apq = a[p]![q] as number;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = ((a[q]![q] as number) - (a[p]![p] as number)) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < r; k++) {
          const akp = a[k]![p] as number;
          const akq = a[k]![q] as number;
          a[k]![p] = c * akp - s * akq;
          a[k]![q] = s * akp + c * akq;
        }
        for (let k = 0; k < r; k++) {
          const apk = a[p]![k] as number;
          const aqk = a[q]![k] as number;
          a[p]![k] = c * apk - s * aqk;
          a[q]![k] = s * apk + c * aqk;
        }
      }
  }
  return a.map((row, i) => Math.sqrt(Math.max(0, row[i] as number)));
}

describe('Newton–Schulz orthogonalisation', () => {
  for (const [name, make] of BACKENDS) {
    it(`${name}: pushes every singular value of random wide and tall matrices into [0.65, 1.2]`, () => {
      const k = make();
      const rng = new Rng(7);
      for (const [rows, cols] of [
        [8, 32],
        [32, 8],
        [16, 48],
        [48, 16],
        [12, 20],
      ] as const) {
        const g = Float32Array.from({ length: rows * cols }, () => rng.normal() * 3);
        const before = singularValues(g, rows, cols);
        // The input's spread is wide (not orthogonal), so the test sees NS5 do its work.
        expect(Math.max(...before) / Math.min(...before)).toBeGreaterThan(2);
        const x = orthogonalize(k, g, rows, cols);
        const sv = singularValues(x, rows, cols);
        expect(Math.min(...sv), `${rows}×${cols}`).toBeGreaterThan(0.65);
        expect(Math.max(...sv), `${rows}×${cols}`).toBeLessThan(1.2);
      }
    });
  }

  it('keeps the orientation: a tall matrix gives the transpose of its transpose’s result', () => {
    const k = createReferenceBackend();
    const rng = new Rng(3);
    const [rows, cols] = [10, 4];
    const g = Float64Array.from({ length: rows * cols }, () => rng.normal());
    const gt = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) gt[j * rows + i] = g[i * cols + j] as number;
    const x = orthogonalize(k, g, rows, cols);
    const xt = orthogonalize(k, gt, cols, rows);
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) expect(x[i * cols + j]).toBeCloseTo(xt[j * rows + i] as number, 6);
  });
});

const GOLDEN = decodeSafetensors(
  new Uint8Array(readFileSync(join(__dirname, '../../../golden/muon.safetensors'))),
  'muon.safetensors',
);

interface GoldenSegment {
  readonly name: string;
  readonly shape: number[];
  readonly hidden: boolean;
  readonly decay: boolean;
}

function golden(name: string): Float32Array {
  const t = GOLDEN.tensors.get(name);
  if (!t) throw new Error(`muon.safetensors lacks ${name}`);
  return t.data as Float32Array;
}

describe('Muon + AdamW against PyTorch (test/golden/muon.safetensors)', () => {
  const cfg = JSON.parse(GOLDEN.metadata.optimizer as string) as OptimizerConfig;
  const plan = JSON.parse(GOLDEN.metadata.segments as string) as GoldenSegment[];
  const lrs = JSON.parse(GOLDEN.metadata.lrs as string) as number[];
  let offset = 0;
  const segments: ParamSegment[] = plan.map((s) => {
    const size = s.shape.reduce((a, b) => a * b, 1);
    const seg = { name: s.name, offset, size, shape: s.shape, decay: s.decay, hidden: s.hidden };
    offset += size;
    return seg;
  });

  for (const [name, make] of BACKENDS) {
    it(`${name}: each of 3 steps lands on PyTorch's parameters within 1e-5 (Muon matrices and AdamW rest)`, () => {
      const k = make();
      const params = k.alloc(offset);
      const grads = k.alloc(offset);
      for (const s of segments) params.set(golden(`param.${s.name}`), s.offset);
      const opt = new Optimizer(k, params, grads, segments, cfg);
      for (let step = 1; step <= 3; step++) {
        for (const s of segments) grads.set(golden(`grad.${step}.${s.name}`), s.offset);
        const before = Float64Array.from(params);
        const info = opt.step();
        expect(info.lr).toBeCloseTo(lrs[step - 1] as number, 12);
        for (const s of segments) {
          const want = golden(`after.${step}.${s.name}`);
          let gap = 0;
          let moved = 0;
          for (let i = 0; i < s.size; i++) {
            gap = Math.max(gap, Math.abs((params[s.offset + i] as number) - (want[i] as number)));
            moved = Math.max(moved, Math.abs((params[s.offset + i] as number) - (before[s.offset + i] as number)));
          }
          expect(gap, `step ${step} ${s.name}`).toBeLessThan(1e-5);
          expect(moved, `step ${step} ${s.name} moved`).toBeGreaterThan(1e-4);
        }
      }
    });
  }

  it('Muon moves a hidden matrix by lr_m·√max(1, rows/cols)·NS5(u): AdamW on it would differ', () => {
    // The same three steps as plain AdamW leave the hidden matrices far from PyTorch's Muon result.
    const k = createReferenceBackend({ dtype: 'f32' });
    const params = k.alloc(offset);
    const grads = k.alloc(offset);
    for (const s of segments) params.set(golden(`param.${s.name}`), s.offset);
    const { muonLr: _l, muonMomentum: _m, ...adamw } = cfg;
    const opt = new Optimizer(k, params, grads, segments, { ...adamw, type: 'adamw' });
    for (const s of segments) grads.set(golden(`grad.1.${s.name}`), s.offset);
    opt.step();
    const fc = segments.find((s) => s.name === 'h.0.mlp.c_fc.weight') as ParamSegment;
    const want = golden('after.1.h.0.mlp.c_fc.weight');
    let gap = 0;
    for (let i = 0; i < fc.size; i++)
      gap = Math.max(gap, Math.abs((params[fc.offset + i] as number) - (want[i] as number)));
    expect(gap).toBeGreaterThan(1e-3);
  });

  it('keeps its momentum in m across a state round trip, so a resumed run steps the same', () => {
    const k = createReferenceBackend({ dtype: 'f32' });
    const run = (stopAfter: number | null): FloatArray => {
      const params = k.alloc(offset);
      const grads = k.alloc(offset);
      for (const s of segments) params.set(golden(`param.${s.name}`), s.offset);
      let opt = new Optimizer(k, params, grads, segments, cfg);
      for (let step = 1; step <= 3; step++) {
        if (stopAfter !== null && step === stopAfter + 1) {
          const saved = opt.state();
          opt = new Optimizer(k, params, grads, segments, cfg);
          opt.loadState(saved);
        }
        for (const s of segments) grads.set(golden(`grad.${step}.${s.name}`), s.offset);
        opt.step();
      }
      return params;
    };
    const straight = run(null);
    const resumed = run(2);
    expect(Array.from(resumed)).toEqual(Array.from(straight));
    // The momentum really is in m: a state whose m is zeroed steps differently.
    const params = k.alloc(offset);
    const grads = k.alloc(offset);
    const opt = new Optimizer(k, params, grads, segments, cfg);
    for (const s of segments) grads.set(golden(`grad.1.${s.name}`), s.offset);
    opt.step();
    const q = segments.find((s) => s.name === 'h.0.attn.c_attn_q.weight') as ParamSegment;
    const m = opt.state().m;
    expect(m[q.offset]).toBeCloseTo((1 - 0.95) * (golden('grad.1.h.0.attn.c_attn_q.weight')[0] as number), 6);
    expect(opt.state().v[q.offset]).toBe(0);
  });
});

describe('Muon on a model', () => {
  it('marks attention and feed-forward weights hidden, and not embeddings, the head, norms or biases', () => {
    const cfg = { ...presetConfig('decoder-only', 'tiny', 30), nDecoderLayers: 1 };
    const model = new Transformer(cfg, { maxBatch: 1, maxLen: 8 });
    const hidden = model
      .segments()
      .filter((s) => s.hidden)
      .map((s) => s.name);
    expect(hidden.sort()).toEqual(
      [
        'transformer.h.0.attn.c_attn_q.weight',
        'transformer.h.0.attn.c_attn_k.weight',
        'transformer.h.0.attn.c_attn_v.weight',
        'transformer.h.0.attn.c_proj.weight',
        'transformer.h.0.mlp.c_fc.weight',
        'transformer.h.0.mlp.c_proj.weight',
      ].sort(),
    );
    for (const s of model.segments()) if (s.hidden) expect(s.shape.length).toBe(2);
  });

  it('a step allocates no float buffer after the first', () => {
    const k = createReferenceBackend({ dtype: 'f32' });
    let allocs = 0;
    const counting: Backend = {
      ...k,
      alloc: (n: number) => {
        allocs++;
        return k.alloc(n);
      },
    };
    const cfg = { ...presetConfig('decoder-only', 'tiny', 30), nDecoderLayers: 1 };
    const model = new Transformer(cfg, { maxBatch: 1, maxLen: 8 }).bind(k);
    const opt = new Optimizer(counting, model.params, model.grads, model.segments(), {
      type: 'muon',
      lr: 1e-3,
      beta1: 0.9,
      beta2: 0.99,
      eps: 1e-8,
      weightDecay: 0.1,
      clipGradNorm: 1,
      schedule: { type: 'constant', warmup: 0 },
      muonLr: 0.02,
      muonMomentum: 0.95,
    });
    const rng = new Rng(1);
    for (let i = 0; i < model.grads.length; i++) model.grads[i] = rng.normal();
    const before = allocs;
    opt.step();
    opt.step();
    expect(allocs).toBe(before);
  });
});

describe('Muon config', () => {
  const base: OptimizerConfig = {
    type: 'muon',
    lr: 1e-3,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.1,
    clipGradNorm: 1,
    schedule: { type: 'constant', warmup: 0 },
    muonLr: 0.02,
    muonMomentum: 0.95,
  };
  it('accepts type muon with muonLr and muonMomentum', () => {
    expect(validateOptimizerConfig(base)).toBe(base);
  });
  it.each([
    [{ muonLr: 0 }, /muonLr must be greater than 0.*0\.02/],
    [{ muonLr: undefined }, /muonLr must be a finite number/],
    [{ muonMomentum: 1 }, /muonMomentum must be in \[0, 1\).*0\.95/],
    [{ type: 'adamw' as const }, /muonLr and muonMomentum apply only to type muon/],
    [{ weightDecay: 60 }, /weightDecay 60 × peak learning rate 0\.02/],
  ])('refuses %j', (patch, msg) => {
    expect(() => validateOptimizerConfig({ ...base, ...patch })).toThrow(msg);
  });
});
