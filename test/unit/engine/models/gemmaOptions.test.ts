/**
 * The options Gemma 3 adds (issue 30) as the models build them: postNorms (a norm on each sublayer's output
 * before the residual, "sandwich" norms), globalEvery (every n-th layer global, the others windowed) and
 * ropeLocalTheta (the windowed layers' own RoPE θ). Logits against the naive second implementation, what a
 * global layer sees, the per-layer θ, and the refusals. (Gradients, WebAssembly parity and the key/value
 * cache against the full forward: transformer.test.ts and stepper.test.ts over fixtures' ATTENTION_VARIANTS.)
 */

import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../../src/engine/config';
import { layerRopeTheta, layerWindow, validateConfig } from '../../../../src/engine/config';
import { EngineError } from '../../../../src/engine/errors';
import { layerConfig } from '../../../../src/engine/models/modelParts';
import { createStepper } from '../../../../src/engine/models/stepper';
import type { Transformer } from '../../../../src/engine/models/transformer';
import { tinyBatch, tinyConfig } from './fixtures';
import { buildModel } from './modelChecks';
import { naiveLogits } from './naiveModel';

function lastLogits(m: Transformer, ids: number[]): Float64Array {
  const T = ids.length;
  const input = Int32Array.from(ids);
  m.forward({ B: 1, T, input, targets: new Int32Array(T) }, { train: false });
  const V = m.config.vocabSize;
  return Float64Array.from(m.logits().subarray((T - 1) * V, T * V));
}

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs((a[i] as number) - (b[i] as number)));
  return d;
};

describe('postNorms (sandwich norms)', () => {
  it.each([
    ['LayerNorm with biases', tinyConfig('decoder-only', { norm: 'pre', postNorms: true, activation: 'relu' })],
    [
      'RMSNorm, GeGLU, headDim 6, untied',
      tinyConfig('decoder-only', {
        norm: 'pre',
        postNorms: true,
        normType: 'rmsnorm',
        activation: 'geglu',
        headDim: 6,
        bias: false,
        tieEmbeddings: false,
      }),
    ],
    ['encoder-decoder, pre-LN', tinyConfig('encoder-decoder', { norm: 'pre', postNorms: true, activation: 'relu' })],
  ] as [string, ModelConfig][])('%s: logits equal the naive implementation', (_n, cfg) => {
    const m = buildModel(validateConfig(cfg), 'f64', 5);
    for (const p of m.paramList)
      if (p.name.endsWith('_post.weight')) for (let i = 0; i < p.size; i++) p.data[i] = 0.5 + 0.1 * i; // not all 1
    const batch = tinyBatch(m.config, 4, false);
    m.forward(batch, { train: false });
    const got = Float64Array.from(m.logits());
    const source = { config: m.config, get: (n: string) => m.paramList.find((p) => p.name === n)?.data ?? null };
    const { T } = batch;
    const S = batch.S ?? 0;
    const V = cfg.vocabSize;
    for (let b = 0; b < batch.B; b++) {
      const want = naiveLogits(
        source,
        batch.input.subarray(b * T, (b + 1) * T),
        batch.src?.subarray(b * S, (b + 1) * S),
      );
      want.forEach((row, t) =>
        row.forEach((v, i) => expect(Math.abs((got[(b * T + t) * V + i] as number) - v)).toBeLessThan(1e-10)),
      );
    }
  });

  it("names the post norms after their sublayer's norm, one per sublayer", () => {
    const m = buildModel(tinyConfig('decoder-only', { norm: 'pre', postNorms: true }), 'f32');
    const names = m.paramList.map((p) => p.name).filter((n) => n.includes('_post'));
    expect(names).toEqual([
      'transformer.h.0.ln_1_post.weight',
      'transformer.h.0.ln_1_post.bias',
      'transformer.h.0.ln_2_post.weight',
      'transformer.h.0.ln_2_post.bias',
      'transformer.h.1.ln_1_post.weight',
      'transformer.h.1.ln_1_post.bias',
      'transformer.h.1.ln_2_post.weight',
      'transformer.h.1.ln_2_post.bias',
    ]);
  });

  it('is refused with post-norm and with the parallel residual, saying what to set', () => {
    const refuse = (over: Partial<ModelConfig>): string => {
      try {
        validateConfig(tinyConfig('decoder-only', over));
      } catch (e) {
        if (EngineError.is(e, 'config/invalid')) return e.message;
        throw e;
      }
      return 'accepted';
    };
    expect(refuse({ norm: 'post', postNorms: true })).toMatch(/needs norm pre/);
    expect(refuse({ norm: 'pre', postNorms: true, parallelResidual: true })).toMatch(/set one of them false/);
  });
});

describe('globalEvery and ropeLocalTheta (local and global layers)', () => {
  const GEMMA_LIKE = {
    nDecoderLayers: 4,
    maxLen: 8,
    positional: 'rope',
    slidingWindow: 1,
    globalEvery: 2,
    ropeLocalTheta: 100,
  } as const;

  it('makes every globalEvery-th layer global with θ = ropeTheta, the others windowed with ropeLocalTheta', () => {
    const cfg = tinyConfig('decoder-only', GEMMA_LIKE);
    expect([0, 1, 2, 3].map((i) => layerWindow(cfg, i))).toEqual([1, 0, 1, 0]);
    expect([0, 1, 2, 3].map((i) => layerRopeTheta(cfg, i))).toEqual([100, 10000, 100, 10000]);
    expect([0, 1, 2, 3].map((i) => layerConfig(cfg, i).ropeTheta)).toEqual([100, 10000, 100, 10000]);
    const mistral = tinyConfig('decoder-only', { slidingWindow: 3 });
    expect([0, 1].map((i) => layerWindow(mistral, i))).toEqual([3, 3]);
    expect(layerRopeTheta({ ...mistral, ropeLocalTheta: 5 }, 0)).toBe(mistral.ropeTheta); // no globalEvery: unused
  });

  it('lets a global layer see past the window: the first token reaches the last position only through it', () => {
    // Window 1: a windowed layer sees only its own position. With every layer windowed, the last
    // position's logits cannot depend on the first token; with a global layer they do.
    const ids = [5, 6, 7, 8, 9];
    const changed = [4, 6, 7, 8, 9];
    const allLocal = buildModel(tinyConfig('decoder-only', { ...GEMMA_LIKE, globalEvery: 0 }), 'f64', 3);
    expect(maxDiff(lastLogits(allLocal, ids), lastLogits(allLocal, changed))).toBe(0);
    const mixed = buildModel(tinyConfig('decoder-only', GEMMA_LIKE), 'f64', 3);
    expect(maxDiff(lastLogits(mixed, ids), lastLogits(mixed, changed))).toBeGreaterThan(1e-6);
  });

  it('rotates the windowed layers by ropeLocalTheta: the same weights give other logits under another θ', () => {
    const a = buildModel(tinyConfig('decoder-only', { ...GEMMA_LIKE, slidingWindow: 3 }), 'f64', 3);
    const b = buildModel(tinyConfig('decoder-only', { ...GEMMA_LIKE, slidingWindow: 3, ropeLocalTheta: 7 }), 'f64', 3);
    b.params.set(a.params);
    const ids = [5, 6, 7, 8, 9, 4];
    expect(maxDiff(lastLogits(a, ids), lastLogits(b, ids))).toBeGreaterThan(1e-6);
    const c = buildModel(
      tinyConfig('decoder-only', { ...GEMMA_LIKE, slidingWindow: 3, ropeLocalTheta: 100 }),
      'f64',
      3,
    );
    c.params.set(a.params);
    expect(maxDiff(lastLogits(a, ids), lastLogits(c, ids))).toBe(0);
  });

  it('decodes through the key/value cache with the global layers unwindowed: steps equal the full forward', () => {
    const m = buildModel(tinyConfig('decoder-only', GEMMA_LIKE), 'f64', 3);
    const ids = [5, 6, 7, 8, 9, 4, 6];
    const st = createStepper(m, m.backendOrThrow(), { maxRows: 1 });
    st.prefill(Int32Array.from(ids.slice(0, 2)), false);
    let logits: Float32Array | null = null;
    for (let t = 2; t < ids.length; t++) logits = st.step(Int32Array.of(ids[t] as number), false).logits;
    const want = lastLogits(m, ids);
    expect(maxDiff(logits as Float32Array, want)).toBeLessThan(1e-5);
  });
});
