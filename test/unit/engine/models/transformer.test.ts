import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import type { ModelConfig } from '../../../../src/engine/config';
import { EngineError } from '../../../../src/engine/errors';
import type { Batch } from '../../../../src/engine/models/inputs';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { kvHeads, layerWindow } from '../../../../src/engine/config';
import { ATTENTION_VARIANTS, tinyBatch, tinyConfig } from './fixtures';

/** float32 backends the behavioural tests run on: the reference and (where available) WebAssembly SIMD. */
const BACKENDS: [string, () => Backend][] = [
  ['reference', () => createReferenceBackend()],
  ...(createWasmBackend({ fma: false })
    ? [['wasm', () => createWasmBackend({ fma: false }) as Backend] as [string, () => Backend]]
    : []),
  ...(createWasmBackend({ fma: true })
    ? [['wasm+fma', () => createWasmBackend({ fma: true }) as Backend] as [string, () => Backend]]
    : []),
];

function build(cfg: ModelConfig, dtype: 'f32' | 'f64' = 'f32', seed = 7, backend?: Backend): Transformer {
  const m = new Transformer(cfg, { maxBatch: 2 }).bind(backend ?? createReferenceBackend({ dtype }));
  m.initialize(new Rng(seed));
  return m;
}

/** Loss with dropout drawn from a fresh stream each call, so finite differences see one function. */
function lossOf(m: Transformer, batch: Batch, train: boolean): number {
  return m.forward(batch, { train, rng: new Rng(99) }).loss;
}

const VARIANTS: [string, ModelConfig][] = [
  ['encoder-decoder, paper (post-LN, sinusoidal, ReLU, untied)', tinyConfig('encoder-decoder')],
  [
    'encoder-decoder, pre-LN, learned, GELU, tied, no bias, dropout',
    tinyConfig('encoder-decoder', {
      norm: 'pre',
      positional: 'learned',
      activation: 'gelu',
      tieEmbeddings: true,
      bias: false,
      dropout: 0.2,
    }),
  ],
  ['decoder-only, nanoGPT (pre-LN, learned, GELU, tied)', tinyConfig('decoder-only')],
  [
    'decoder-only, post-LN, sinusoidal, ReLU, untied, no bias, dropout',
    tinyConfig('decoder-only', {
      norm: 'post',
      positional: 'sinusoidal',
      activation: 'relu',
      tieEmbeddings: false,
      bias: false,
      dropout: 0.2,
    }),
  ],
  [
    'decoder-only, rmsnorm, swiglu, parallel residual, embedNorm, logit soft-cap, untied, mlp bias only',
    tinyConfig('decoder-only', {
      normType: 'rmsnorm',
      activation: 'swiglu',
      parallelResidual: true,
      embedNorm: true,
      logitSoftCap: 2,
      tieEmbeddings: false,
      bias: false,
      mlpBias: true,
    }),
  ],
  [
    'encoder-decoder, post-LN, rmsnorm without scale, relu2, embedNorm, logit soft-cap, dropout',
    tinyConfig('encoder-decoder', {
      normType: 'rmsnorm',
      normScale: false,
      activation: 'relu2',
      embedNorm: true,
      logitSoftCap: 2,
      dropout: 0.2,
    }),
  ],
  ...ATTENTION_VARIANTS,
];

describe.each(VARIANTS)('Transformer: %s', (_name, cfg) => {
  it('backward matches finite differences for every parameter (float64)', () => {
    const m = build(cfg, 'f64');
    const batch = tinyBatch(cfg);
    const train = cfg.dropout > 0;
    lossOf(m, batch, train);
    m.backward();
    const analytic = Float64Array.from(m.grads);
    const p = m.params;
    const eps = 1e-5;
    let worst = 0;
    let worstAt = '';
    let nonzero = 0;
    for (const seg of m.paramList) {
      for (let i = 0; i < seg.size; i++) {
        const j = seg.offset + i;
        const old = p[j] as number;
        const at = (d: number): number => {
          p[j] = old + d;
          return lossOf(m, batch, train);
        };
        // qk-norm and post norms (a norm of a sublayer's small output) are curved enough that the central difference's truncation error
        // shows at 1e-5: those models take the fourth-order one (the others keep the narrower stencil,
        // which crosses fewer ReLU kinks).
        const num =
          cfg.qkNorm || cfg.postNorms
            ? (8 * (at(eps) - at(-eps)) - (at(2 * eps) - at(-2 * eps))) / (12 * eps)
            : (at(eps) - at(-eps)) / (2 * eps);
        p[j] = old;
        const a = analytic[j] as number;
        if (Math.abs(a) > 1e-9) nonzero++;
        const err = Math.abs(a - num) / Math.max(1e-4, Math.abs(a) + Math.abs(num));
        if (err > worst) {
          worst = err;
          worstAt = `${seg.name}[${i}] analytic ${a} numeric ${num}`;
        }
      }
    }
    expect(worst, worstAt).toBeLessThan(1e-5);
    expect(nonzero).toBeGreaterThan(m.params.length * 0.5);
  });

  it.runIf(BACKENDS.length > 1)(
    'wasm backend: loss and every gradient match the float64 reference on the same weights and dropout',
    () => {
      const ref = build(cfg, 'f64');
      const wasm = build(cfg, 'f32', 7, createWasmBackend() as Backend);
      wasm.params.set(Float32Array.from(ref.params));
      const batch = tinyBatch(cfg);
      const train = cfg.dropout > 0;
      const lossRef = lossOf(ref, batch, train);
      const lossWasm = lossOf(wasm, batch, train);
      expect(Math.abs(lossWasm - lossRef)).toBeLessThan(1e-5 * Math.max(1, Math.abs(lossRef)));
      ref.backward();
      wasm.backward();
      let scale = 0;
      for (let i = 0; i < ref.grads.length; i++) scale = Math.max(scale, Math.abs(ref.grads[i] as number));
      for (const seg of ref.paramList) {
        for (let i = 0; i < seg.size; i++) {
          const j = seg.offset + i;
          const a = wasm.grads[j] as number;
          const b = ref.grads[j] as number;
          if (Math.abs(a - b) > 1e-3 * Math.abs(b) + 2e-6 * scale)
            expect.fail(`${seg.name}[${i}]: wasm ${a}, float64 reference ${b}`);
        }
      }
    },
  );

  describe.each(BACKENDS)('on the %s backend', (_b, makeBackend) => {
    it('is deterministic: same seed, same losses bit for bit', () => {
      const run = (): number[] => {
        const m = build(cfg, 'f32', 7, makeBackend());
        const batch = tinyBatch(cfg);
        return [0, 1, 2].map(() => m.forward(batch, { train: true, rng: new Rng(5) }).loss);
      };
      expect(run()).toEqual(run());
    });

    it('never lets a later token change an earlier output (causal leak test)', () => {
      const m = build(cfg, 'f32', 7, makeBackend());
      const batch = tinyBatch(cfg, 3, false);
      m.forward(batch, { train: false });
      const before = Float32Array.from(m.logits());
      const V = cfg.vocabSize;
      const j = 3;
      const input = Int32Array.from(batch.input);
      input[j] = (((input[j] as number) - 4 + 1) % (V - 4)) + 4;
      m.forward({ ...batch, input }, { train: false });
      const after = m.logits();
      for (let t = 0; t < batch.T; t++) {
        const same = before.subarray(t * V, (t + 1) * V).every((v, i) => v === after[t * V + i]);
        expect(same, `position ${t}`).toBe(t < j);
      }
    });

    it('gives the same outputs for a sequence however much padding follows it, and ignores other batch items', () => {
      const m = build(cfg, 'f32', 7, makeBackend());
      const batch = tinyBatch(cfg, 4, true);
      m.forward(batch, { train: false });
      const V = cfg.vocabSize;
      const T = batch.T;
      const row1 = Float32Array.from(m.logits().subarray(T * V, 2 * T * V));
      // Row 1 alone, without the trailing padding.
      const len = 3;
      const alone: Batch = {
        B: 1,
        T: len,
        input: batch.input.slice(T, T + len),
        targets: batch.targets.slice(T, T + len),
        ...(batch.src ? { S: 4, src: batch.src.slice(batch.S as number, (batch.S as number) + 4) } : {}),
      };
      m.forward(alone, { train: false });
      const single = m.logits();
      for (let i = 0; i < len * V; i++) expect(single[i]).toBeCloseTo(row1[i] as number, 5);
    });

    it('captures attention rows that sum to 1 with exact zeros where masked, and the masks with their shapes', () => {
      const m = build(cfg, 'f32', 7, makeBackend());
      const batch = tinyBatch(cfg, 5, true);
      m.forward(batch, { train: false });
      const cap = m.captureAttention(1);
      const layers = cfg.nEncoderLayers + cfg.nDecoderLayers * (cfg.kind === 'encoder-decoder' ? 2 : 1);
      expect(cap.maps.length).toBe(layers);
      for (const map of cap.maps) {
        const [H, Tq, Sk] = map.shape;
        expect(H).toBe(cfg.nHeads);
        expect(map.kvHeads).toBe(kvHeads(cfg));
        for (let r = 0; r < H * Tq; r++) {
          const t = r % Tq;
          let sum = 0;
          let open = 0; // keys this row may attend to
          for (let s = 0; s < Sk; s++) {
            const v = map.data[r * Sk + s] as number;
            sum += v;
            const W = map.stack === 'decoder.self' ? layerWindow(cfg, map.layer) : 0; // global layers: none
            const causalMasked = map.stack === 'decoder.self' && (s > t || (W > 0 && t - s >= W));
            const padded =
              map.stack === 'decoder.self'
                ? batch.input[batch.T + s] === 0
                : batch.src
                  ? batch.src[(batch.S as number) + s] === 0
                  : false;
            if (causalMasked || padded) expect(v).toBe(0);
            else open++;
          }
          // A padding query whose window holds only padding attends to nothing (its loss is not counted).
          expect(sum).toBeCloseTo(open > 0 ? 1 : 0, 5);
        }
      }
      const names = cap.masks.map((mk) => `${mk.name} [${mk.shape.join(',')}]`);
      const T = batch.T;
      expect(names).toContain(`decoder.causal [1,1,${T},${T}]`);
      expect(names).toContain(`target.padding [2,1,1,${T}]`);
      expect(names).toContain(`decoder.self [2,1,${T},${T}]`);
      if (cfg.kind === 'encoder-decoder') expect(names).toContain(`source.padding [2,1,1,${batch.S}]`);
    });
  });
});

describe('Transformer: validation', () => {
  it('rejects a sequence longer than the context with a message that says what to do', () => {
    const cfg = tinyConfig('decoder-only');
    const m = build(cfg);
    const T = cfg.maxLen + 1;
    const batch: Batch = { B: 1, T, input: new Int32Array(T).fill(5), targets: new Int32Array(T).fill(5) };
    expect(() => m.forward(batch, { train: false })).toThrow(/exceeds the context of 8; shorten/);
  });

  it('rejects token ids outside the vocabulary', () => {
    const cfg = tinyConfig('decoder-only');
    const m = build(cfg);
    const batch: Batch = { B: 1, T: 2, input: Int32Array.from([5, 99]), targets: Int32Array.from([5, 5]) };
    expect(() => m.forward(batch, { train: false })).toThrow(EngineError);
  });

  it('rejects a planned batch of zero', () => {
    expect(() => new Transformer(tinyConfig('decoder-only'), { maxBatch: 0 })).toThrow(/positive integer/);
  });
});

describe('Transformer: padId', () => {
  const cfg = tinyConfig('decoder-only');
  const build = (padId?: number): Transformer => {
    const m = new Transformer(cfg, padId === undefined ? { maxBatch: 1 } : { maxBatch: 1, padId }).bind(
      createReferenceBackend(),
    );
    m.initialize(new Rng(4));
    return m;
  };
  // Id 0 is a real token in a vocabulary without PAD (GPT-2's "!").
  const batch: Batch = { B: 1, T: 4, input: Int32Array.of(5, 0, 7, 0), targets: Int32Array.of(0, 7, 0, 6) };

  it('−1 hides no token: id 0 is attended to and scored', () => {
    const none = build(-1);
    const pad = build();
    const a = none.forward(batch, { train: false });
    const b = pad.forward(batch, { train: false });
    expect(a.tokens).toBe(4);
    expect(b.tokens).toBe(2);
    // Position 2 attends to position 1 (id 0) only when 0 is not padding.
    const row = (m: Transformer): number[] => Array.from(m.logits().subarray(2 * cfg.vocabSize, 3 * cfg.vocabSize));
    expect(row(none)).not.toEqual(row(pad));
    // The first position sees only itself either way.
    expect(Array.from(none.logits().subarray(0, cfg.vocabSize))).toEqual(
      Array.from(pad.logits().subarray(0, cfg.vocabSize)),
    );
    none.backward();
    expect(Array.from(none.decEmbed.table.grad.subarray(0, cfg.dModel)).some((g) => g !== 0)).toBe(true);
  });

  it('is refused for an encoder-decoder and for other ids', () => {
    expect(() => new Transformer(tinyConfig('encoder-decoder'), { maxBatch: 1, padId: -1 })).toThrow(
      /padId -1 is not supported/,
    );
    expect(() => new Transformer(cfg, { maxBatch: 1, padId: 3 })).toThrow(/padId 3 is not supported/);
  });
});
