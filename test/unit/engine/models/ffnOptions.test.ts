import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import type { ModelConfig } from '../../../../src/engine/config';
import { greedyDecode } from '../../../../src/engine/decode/greedy';
import { estimateModel, stepperBytes } from '../../../../src/engine/models/estimate';
import { unbuiltOptions } from '../../../../src/engine/models/modelParts';
import { gatherTorchTensor, loadTorchTensors, torchTensors } from '../../../../src/engine/models/pytorchNames';
import { createStepper } from '../../../../src/engine/models/stepper';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { tinyBatch, tinyConfig } from './fixtures';
import { backendMismatch, buildModel, finiteDifferenceCheck, nonzeroGrads } from './modelChecks';
import { naiveLogits } from './naiveModel';

/**
 * The norm, feed-forward, residual, embedding-norm and logit soft-cap options of today's
 * transformers (issue 29), each alone and together, in both kinds of model: gradients against
 * finite differences, the key/value-cache decoder against the full forward, the logit lens,
 * the WebAssembly backend against the reference, and the parameters each option adds.
 */

const D = (over: Partial<ModelConfig>): ModelConfig => tinyConfig('decoder-only', over);
const E = (over: Partial<ModelConfig>): ModelConfig => tinyConfig('encoder-decoder', over);

const VARIANTS: [string, ModelConfig][] = [
  ['decoder-only rmsnorm', D({ normType: 'rmsnorm' })],
  ['decoder-only rmsnorm without scale', D({ normType: 'rmsnorm', normScale: false })],
  ['decoder-only relu2', D({ activation: 'relu2' })],
  ['decoder-only silu', D({ activation: 'silu' })],
  ['decoder-only swiglu', D({ activation: 'swiglu' })],
  ['decoder-only geglu', D({ activation: 'geglu' })],
  ['decoder-only mlpBias false', D({ mlpBias: false })],
  ['decoder-only mlpBias alone (bias false)', D({ bias: false, mlpBias: true })],
  ['decoder-only parallelResidual', D({ parallelResidual: true })],
  ['decoder-only embedNorm', D({ embedNorm: true })],
  ['decoder-only logitSoftCap', D({ logitSoftCap: 1 })],
  [
    'decoder-only nanochat-like (rmsnorm without scale, relu2, embedNorm, soft-cap, no bias, untied)',
    D({
      normType: 'rmsnorm',
      normScale: false,
      activation: 'relu2',
      embedNorm: true,
      logitSoftCap: 1,
      bias: false,
      tieEmbeddings: false,
    }),
  ],
  [
    'decoder-only llama-like parallel (rmsnorm, swiglu, no bias, soft-cap, dropout)',
    D({
      normType: 'rmsnorm',
      activation: 'swiglu',
      bias: false,
      tieEmbeddings: false,
      parallelResidual: true,
      logitSoftCap: 1,
      dropout: 0.2,
    }),
  ],
  [
    'decoder-only post-LN (rmsnorm, geglu, embedNorm, soft-cap, sinusoidal, dropout)',
    D({
      norm: 'post',
      positional: 'sinusoidal',
      normType: 'rmsnorm',
      activation: 'geglu',
      embedNorm: true,
      logitSoftCap: 1,
      dropout: 0.2,
    }),
  ],
  [
    'encoder-decoder post-LN (rmsnorm, geglu, embedNorm, soft-cap)',
    E({ normType: 'rmsnorm', activation: 'geglu', embedNorm: true, logitSoftCap: 1 }),
  ],
  [
    'encoder-decoder pre-LN parallel (rmsnorm without scale, swiglu, mlpBias false, embedNorm, soft-cap, dropout)',
    E({
      norm: 'pre',
      parallelResidual: true,
      normType: 'rmsnorm',
      normScale: false,
      activation: 'swiglu',
      mlpBias: false,
      embedNorm: true,
      logitSoftCap: 1,
      dropout: 0.2,
    }),
  ],
  ['encoder-decoder pre-LN relu2, parallel', E({ norm: 'pre', activation: 'relu2', parallelResidual: true })],
  ['encoder-decoder silu, layernorm embedNorm', E({ activation: 'silu', embedNorm: true })],
];

/** A wasm backend, when this machine has WebAssembly SIMD. */
const wasm = createWasmBackend({ fma: false });

describe.each(VARIANTS)('%s', (_name, cfg) => {
  it('is built: the model accepts it', () => {
    expect(unbuiltOptions(cfg)).toEqual([]);
  });

  it('backward matches finite differences for every parameter (float64)', () => {
    const m = buildModel(cfg, 'f64');
    const r = finiteDifferenceCheck(m, tinyBatch(cfg), cfg.dropout > 0);
    expect(r.ok, r.at).toBe(true);
    expect(r.checked).toBe(m.params.length);
    expect(nonzeroGrads(m)).toBeGreaterThan(m.params.length * 0.5);
  });

  it.runIf(wasm !== null)('wasm backend: loss and every gradient match the float64 reference', () => {
    expect(backendMismatch(cfg, createWasmBackend({ fma: false }) as Backend, tinyBatch(cfg))).toBeNull();
  });

  describe('decoding and readouts (float64 reference)', () => {
    const backend = createReferenceBackend({ dtype: 'f64' });
    const model = new Transformer(cfg, { maxBatch: 2 }).bind(backend);
    model.initialize(new Rng(11));
    const src = Int32Array.from([5, 6, 7, 8, 0]); // one PAD at the end
    const opts = { ...(cfg.kind === 'encoder-decoder' ? { src } : {}) };
    const V = cfg.vocabSize;

    /** Logits [rows, T, V] of the full forward over `rows` sequences of T tokens. */
    function fullLogits(input: Int32Array, rows: number, T: number): Float64Array {
      const batch = {
        B: rows,
        T,
        input,
        targets: new Int32Array(rows * T),
        ...(cfg.kind === 'encoder-decoder'
          ? {
              S: src.length,
              src: Int32Array.from({ length: rows * src.length }, (_, i) => src[i % src.length] as number),
            }
          : {}),
      };
      model.forward(batch, { train: false });
      return Float64Array.from(model.logits());
    }

    const close = (got: ArrayLike<number>, want: ArrayLike<number>, at: string): void => {
      for (let i = 0; i < want.length; i++)
        expect(Math.abs((got[i] as number) - (want[i] as number)), `${at}[${i}]`).toBeLessThan(
          1e-5 * Math.max(1, Math.abs(want[i] as number)),
        );
    };

    it('the key/value-cache stepper gives the logits of the full forward, position by position, in two rows', () => {
      const a = Int32Array.from([1, 5, 7, 4, 9, 6]);
      const b = Int32Array.from([1, 8, 8, 4, 5, 5]);
      const T = a.length;
      const full = fullLogits(Int32Array.from([...a, ...b]), 2, T);
      const stepper = createStepper(model, backend, { maxRows: 2, ...opts });
      close(stepper.step(Int32Array.of(1), false).logits, full.subarray(0, V), 'position 0');
      stepper.reorder(Int32Array.of(0, 0));
      for (let t = 1; t < T; t++) {
        const { logits } = stepper.step(Int32Array.of(a[t] as number, b[t] as number), false);
        close(logits.subarray(0, V), full.subarray(t * V, (t + 1) * V), `row 0 position ${t}`);
        close(logits.subarray(V, 2 * V), full.subarray((T + t) * V, (T + t + 1) * V), `row 1 position ${t}`);
      }
    });

    it('a prefill gives the logits stepping gives, and decoding goes on from its cache', () => {
      const seq = Int32Array.from([1, 5, 7, 4, 9]);
      const stepped = createStepper(model, backend, { maxRows: 1, ...opts });
      let last = new Float32Array(0);
      for (const id of seq) last = Float32Array.from(stepped.step(Int32Array.of(id), false).logits);
      const next = Float32Array.from(stepped.step(Int32Array.of(3), false).logits);
      const pre = createStepper(model, backend, { maxRows: 1, ...opts });
      close(pre.prefill(seq, false).logits, last, 'prefill');
      close(pre.step(Int32Array.of(3), false).logits, next, 'step after prefill');
    });

    it('greedy decoding with the cache picks the tokens the full forward ranks first', () => {
      const prompt = Int32Array.from([1, 5, 7]);
      const { tokens } = greedyDecode(createStepper(model, backend, { maxRows: 1, ...opts }), prompt, {
        maxTokens: 4,
        eos: -1,
      });
      expect(tokens.length).toBe(4);
      const seq = Int32Array.from([...prompt, ...tokens]);
      const T = seq.length;
      const full = fullLogits(seq, 1, T);
      for (let t = prompt.length - 1; t < T - 1; t++) {
        const row = full.subarray(t * V, (t + 1) * V);
        let best = 0;
        for (let v = 1; v < V; v++) if ((row[v] as number) > (row[best] as number)) best = v;
        expect(seq[t + 1], `position ${t + 1}`).toBe(best);
      }
    });

    it("the logit lens's top layer is the model's logits, and every layer's are soft-capped", () => {
      const seq = Int32Array.from([1, 5, 7, 4, 9, 6]);
      const full = fullLogits(seq, 1, seq.length);
      const n = cfg.nDecoderLayers;
      close(model.residualLogits(n), full, 'top layer');
      for (let l = 0; l <= n; l++) {
        const r = model.residualLogits(l);
        expect(r.every(Number.isFinite)).toBe(true);
        if (cfg.logitSoftCap > 0) expect(r.every((v) => Math.abs(v) < cfg.logitSoftCap)).toBe(true);
      }
    });
  });
});

describe('forward against a naive float64 implementation of the shared semantics', () => {
  const cases: [string, ModelConfig][] = [
    ...VARIANTS.filter(([, c]) => c.activation !== 'gelu'),
    [
      'decoder-only rmsnorm, geluTanh, parallel',
      D({ normType: 'rmsnorm', activation: 'geluTanh', parallelResidual: true }),
    ],
    [
      'encoder-decoder pre-LN tied, rmsnorm, swiglu, embedNorm, parallel, soft-cap',
      E({
        norm: 'pre',
        tieEmbeddings: true,
        normType: 'rmsnorm',
        activation: 'swiglu',
        embedNorm: true,
        parallelResidual: true,
        logitSoftCap: 1,
      }),
    ],
  ];
  it.each(cases)('%s: the same logits', (_n, cfg) => {
    const m = buildModel(cfg, 'f64', 5);
    // Weights away from their initial constants, so a norm weight or bias that were read wrongly would show.
    const rng = new Rng(8);
    for (let i = 0; i < m.params.length; i++) m.params[i] = (m.params[i] as number) + 0.1 * rng.normal();
    const batch = tinyBatch(cfg, 3, false);
    m.forward(batch, { train: false });
    const got = m.logits();
    const source = { config: cfg, get: (n: string) => m.paramList.find((p) => p.name === n)?.data ?? null };
    const { T, V } = { T: batch.T, V: cfg.vocabSize };
    const S = batch.S ?? 0;
    for (let b = 0; b < batch.B; b++) {
      const want = naiveLogits(
        source,
        batch.input.subarray(b * T, (b + 1) * T),
        batch.src?.subarray(b * S, (b + 1) * S),
      );
      want.forEach((row, t) =>
        row.forEach((v, i) =>
          expect(Math.abs((got[(b * T + t) * V + i] as number) - v), `item ${b} position ${t} logit ${i}`).toBeLessThan(
            1e-10,
          ),
        ),
      );
    }
  });
});

describe('logitSoftCap', () => {
  it('caps the logits every path reads at c·tanh(z/c): forward, stepper and lens', () => {
    const plain = buildModel(D({}), 'f64');
    const capped = buildModel(D({ logitSoftCap: 0.05 }), 'f64');
    const batch = tinyBatch(plain.config);
    plain.forward(batch, { train: false });
    capped.forward(batch, { train: false });
    const z = plain.logits();
    const c = capped.logits();
    let changed = 0;
    for (let i = 0; i < z.length; i++) {
      const want = 0.05 * Math.tanh((z[i] as number) / 0.05);
      expect(Math.abs((c[i] as number) - want)).toBeLessThan(1e-12);
      if (Math.abs((c[i] as number) - (z[i] as number)) > 1e-4) changed++;
    }
    expect(changed).toBeGreaterThan(z.length / 2);
  });
});

describe('parameters of each option (names as PyTorch has them, counts, estimate, export)', () => {
  const names = (cfg: ModelConfig): string[] => new Transformer(cfg, { maxBatch: 1 }).paramList.map((p) => p.name);

  it('decoder-only llama-like: gated MLP c_fc (up), c_gate, c_proj (down); RMSNorm weights only; no biases', () => {
    const cfg = D({ normType: 'rmsnorm', activation: 'swiglu', bias: false, tieEmbeddings: false });
    const n = names(cfg);
    expect(n.filter((x) => x.startsWith('transformer.h.0.'))).toEqual([
      'transformer.h.0.attn.c_attn_q.weight',
      'transformer.h.0.attn.c_attn_k.weight',
      'transformer.h.0.attn.c_attn_v.weight',
      'transformer.h.0.attn.c_proj.weight',
      'transformer.h.0.mlp.c_fc.weight',
      'transformer.h.0.mlp.c_gate.weight',
      'transformer.h.0.mlp.c_proj.weight',
      'transformer.h.0.ln_1.weight',
      'transformer.h.0.ln_2.weight',
    ]);
    expect(n.filter((x) => !x.startsWith('transformer.h.'))).toEqual([
      'transformer.wte.weight',
      'transformer.wpe.weight',
      'transformer.ln_f.weight',
      'lm_head.weight',
    ]);
    const m = new Transformer(cfg, { maxBatch: 1 });
    const { dModel: C, dFF: F, vocabSize: V, maxLen: L } = cfg;
    const block = 4 * C * C + 3 * C * F + 2 * C;
    expect(m.store.count).toBe(cfg.nDecoderLayers * block + 2 * V * C + L * C + C);
    expect(m.param('transformer.h.1.mlp.c_gate.weight').shape).toEqual([F, C]);
    expect(estimateModel(cfg, { maxBatch: 1 }).params).toBe(m.store.count);
  });

  it('decoder-only nanochat-like: no norm weights at all, ln_e only with a scale; biases by mlpBias', () => {
    const none = names(D({ normType: 'rmsnorm', normScale: false, embedNorm: true, bias: false }));
    expect(none.filter((x) => /ln_/.test(x))).toEqual([]);
    const scaled = names(D({ normType: 'rmsnorm', embedNorm: true, bias: true }));
    expect(scaled.filter((x) => /ln_/.test(x))).toEqual([
      'transformer.ln_e.weight',
      'transformer.h.0.ln_1.weight',
      'transformer.h.0.ln_2.weight',
      'transformer.h.1.ln_1.weight',
      'transformer.h.1.ln_2.weight',
      'transformer.ln_f.weight',
    ]);
    const layerNorm = names(D({ embedNorm: true, bias: true }));
    expect(layerNorm.filter((x) => x.startsWith('transformer.ln_e'))).toEqual([
      'transformer.ln_e.weight',
      'transformer.ln_e.bias',
    ]);
    const mlpOnly = names(D({ bias: false, mlpBias: true, activation: 'geglu' }));
    expect(mlpOnly.filter((x) => x.endsWith('.bias'))).toEqual(
      [0, 1].flatMap((i) => ['c_fc', 'c_gate', 'c_proj'].map((p) => `transformer.h.${i}.mlp.${p}.bias`)),
    );
    const est = estimateModel(D({ normType: 'rmsnorm', embedNorm: true }), { maxBatch: 1 });
    expect(est.paramsByModule['embeddings']).toBe(11 * 8 + 8 * 8 + 8); // wte, wpe, ln_e
  });

  it('encoder-decoder: feed_forward.gate and the embedding norms of both stacks', () => {
    const n = names(E({ activation: 'swiglu', embedNorm: true, normType: 'rmsnorm' }));
    expect(n.filter((x) => /gate|embedding_norm/.test(x))).toEqual([
      'encoder_embedding_norm.weight',
      'encoder_layers.0.feed_forward.gate.weight',
      'encoder_layers.0.feed_forward.gate.bias',
      'encoder_layers.1.feed_forward.gate.weight',
      'encoder_layers.1.feed_forward.gate.bias',
      'decoder_embedding_norm.weight',
      'decoder_layers.0.feed_forward.gate.weight',
      'decoder_layers.0.feed_forward.gate.bias',
      'decoder_layers.1.feed_forward.gate.weight',
      'decoder_layers.1.feed_forward.gate.bias',
    ]);
    expect(n.some((x) => /norm\d?\.bias$/.test(x))).toBe(false); // RMSNorm has no bias
  });

  it.each([
    ['decoder-only', D({ normType: 'rmsnorm', activation: 'swiglu', embedNorm: true, bias: false })],
    ['encoder-decoder', E({ activation: 'geglu', embedNorm: true, mlpBias: false })],
  ])('%s: the PyTorch tensors load back into a fresh model exactly', (_k, cfg) => {
    const from = buildModel(cfg, 'f32', 3);
    const tensors = new Map(torchTensors(from).map((t) => [t.name, gatherTorchTensor(t)]));
    expect(
      tensors.has(cfg.kind === 'decoder-only' ? 'transformer.h.0.mlp.c_gate.weight' : 'encoder_embedding_norm.weight'),
    ).toBe(true);
    const to = buildModel(cfg, 'f32', 4);
    expect(Float32Array.from(to.params)).not.toEqual(Float32Array.from(from.params));
    loadTorchTensors(to, (name) => tensors.get(name) ?? null);
    expect(Float32Array.from(to.params)).toEqual(Float32Array.from(from.params));
  });

  it.each([
    ['decoder-only', D({ activation: 'swiglu', parallelResidual: true })],
    ['encoder-decoder', E({ activation: 'geglu', embedNorm: true })],
  ])('%s: stepperBytes is exactly what a stepper and its prefill allocate', (_k, cfg) => {
    let floats = 0;
    const counting = createReferenceBackend();
    const alloc = counting.alloc.bind(counting);
    counting.alloc = (n: number) => {
      floats += n;
      return alloc(n);
    };
    const m = new Transformer(cfg, { maxBatch: 1 }).bind(createReferenceBackend());
    m.initialize(new Rng(1));
    const src = Int32Array.of(5, 6, 7);
    const stepper = createStepper(m, counting, { maxRows: 2, ...(cfg.kind === 'encoder-decoder' ? { src } : {}) });
    stepper.prefill(Int32Array.of(1, 4), false);
    const T = 2; // the prefill is sized by its prompt (its causal mask T × T bytes), the cache by the context
    expect(4 * floats + T * T).toBe(
      stepperBytes(cfg, 2, cfg.kind === 'encoder-decoder' ? src.length : 0, cfg.maxLen, T),
    );
  });
});
