/**
 * headDim and attnScale (issue 30) as the models build them: heads of D channels set apart from
 * dModel / nHeads (q [H·D], k and v [Hkv·D], W_o [C, H·D]) and a softmax scale other than 1/√D.
 * The parameters' shapes and PyTorch's fused c_attn, logits against the naive second implementation,
 * training, ablation, the decoding path's memory, head sizes of 256 on WebAssembly (Gemma 3), and the
 * real shapes of Qwen3-0.6B and Gemma 3 270M's attention. (Gradients, WebAssembly parity and the
 * key/value cache against the full forward of every headDim variant: transformer.test.ts and
 * stepper.test.ts, over fixtures' ATTENTION_VARIANTS.)
 */

import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import type { ModelConfig } from '../../../../src/engine/config';
import { headSize, validateConfig } from '../../../../src/engine/config';
import { estimateModel, stepperBytes } from '../../../../src/engine/models/estimate';
import type { Batch } from '../../../../src/engine/models/inputs';
import { gatherTorchTensor, torchTensors } from '../../../../src/engine/models/pytorchNames';
import { createStepper } from '../../../../src/engine/models/stepper';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Optimizer } from '../../../../src/engine/optim/optimizer';
import { Rng } from '../../../../src/engine/rng';
import { Trainer } from '../../../../src/engine/train';
import { tinyBatch, tinyConfig } from './fixtures';
import { backendMismatch, buildModel } from './modelChecks';
import { naiveLogits } from './naiveModel';

/** dModel 12, 3 heads of 8 channels (not 4), one key/value head, qk-norm, q/k/v biases. */
const WIDE = tinyConfig('decoder-only', {
  dModel: 12,
  nHeads: 3,
  nKvHeads: 1,
  headDim: 8,
  qkNorm: true,
  bias: false,
  qkvBias: true,
  attnOutBias: true,
});

function logitsOf(m: Transformer, batch: Batch): Float64Array {
  m.forward(batch, { train: false });
  return Float64Array.from(m.logits());
}

describe('headDim', () => {
  it('sizes q as H·D, k and v as Hkv·D, W_o as [C, H·D] and the qk-norm weights as [D]', () => {
    const m = buildModel(WIDE, 'f64');
    const [C, H, D, KV] = [12, 3, 8, 8];
    expect(headSize(WIDE)).toBe(D);
    expect(m.param('transformer.h.0.attn.c_attn_q.weight').shape).toEqual([H * D, C]);
    expect(m.param('transformer.h.0.attn.c_attn_q.bias').shape).toEqual([H * D]);
    expect(m.param('transformer.h.0.attn.c_attn_k.weight').shape).toEqual([KV, C]);
    expect(m.param('transformer.h.1.attn.c_attn_v.weight').shape).toEqual([KV, C]);
    expect(m.param('transformer.h.1.attn.c_proj.weight').shape).toEqual([C, H * D]);
    expect(m.param('transformer.h.1.attn.c_proj.bias').shape).toEqual([C]);
    expect(m.param('transformer.h.0.attn.q_norm.weight').shape).toEqual([D]);
    const attn = H * D * C + 2 * KV * C + C * H * D + (H * D + 2 * KV) + C + 2 * D;
    const perLayer = attn + 2 * C * WIDE.dFF + 2 * C;
    expect(m.store.count).toBe(2 * perLayer + WIDE.vocabSize * C + WIDE.maxLen * C + C);
  });

  it("stacks PyTorch's fused c_attn as [(H + 2·Hkv)·D, C] with the k rows after H·D q rows", () => {
    const m = buildModel(WIDE, 'f64');
    const t = torchTensors(m).find((x) => x.name === 'transformer.h.0.attn.c_attn.weight');
    expect(t?.shape).toEqual([(3 + 2) * 8, 12]);
    const data = gatherTorchTensor(t!);
    expect(data[24 * 12]).toBe(Math.fround(m.param('transformer.h.0.attn.c_attn_k.weight').data[0] as number));
    expect(data[32 * 12]).toBe(Math.fround(m.param('transformer.h.0.attn.c_attn_v.weight').data[0] as number));
  });

  it.each([
    [
      'decoder-only, D 8 over dModel 12, GQA, attnScale',
      { ...WIDE, qkNorm: false, attnScale: 0.15, activation: 'relu' },
    ],
    ['decoder-only, D 2 under dModel 8 / 2 heads', tinyConfig('decoder-only', { headDim: 2, activation: 'relu' })],
    [
      'encoder-decoder, D 6 over dModel 8, 4 heads, 2 kv, attnScale',
      tinyConfig('encoder-decoder', { nHeads: 4, nKvHeads: 2, headDim: 6, attnScale: 0.5 }),
    ],
  ] as [string, ModelConfig][])('%s: logits equal the naive implementation', (_n, cfg) => {
    const m = buildModel(validateConfig(cfg), 'f64');
    const batch = tinyBatch(m.config, 4, false);
    const got = logitsOf(m, batch);
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

  it('trains: a model of 3 heads of 8 over dModel 12 lowers its loss on one batch with AdamW', () => {
    const model = buildModel(WIDE, 'f32', 3);
    const trainer = new Trainer(
      model,
      new Optimizer(model.backendOrThrow(), model.params, model.grads, model.segments(), {
        type: 'adamw',
        lr: 1e-2,
        beta1: 0.9,
        beta2: 0.99,
        eps: 1e-8,
        weightDecay: 0,
        clipGradNorm: 1,
        schedule: { type: 'constant', warmup: 0 },
      }),
      new Rng(2),
    );
    const batch = tinyBatch(WIDE);
    const first = trainer.step(batch).loss;
    let last = first;
    for (let i = 0; i < 40; i++) last = trainer.step(batch).loss;
    expect(Number.isFinite(last)).toBe(true);
    expect(last).toBeLessThan(first * 0.5);
  });

  it("switching off head 1 equals zeroing W_o's columns D..2D of [C, H·D]", () => {
    const cfg = validateConfig({ ...WIDE, positional: 'rope' });
    const m = buildModel(cfg, 'f64');
    const batch = tinyBatch(cfg, 2, false);
    const ablated = m.forward(batch, { train: false, ablate: [{ stack: 'decoder.self', layer: 1, head: 1 }] }).loss;
    const before = m.forward(batch, { train: false }).loss;
    const w = m.param('transformer.h.1.attn.c_proj.weight');
    const A = 24;
    for (let o = 0; o < 12; o++) for (let c = 8; c < 16; c++) w.data[o * A + c] = 0;
    const zeroed = m.forward(batch, { train: false }).loss;
    expect(ablated).not.toBeCloseTo(before, 8);
    expect(ablated).toBeCloseTo(zeroed, 12);
  });
});

describe('attnScale', () => {
  it('scales the scores: 1/√D gives the default model, another scale other logits', () => {
    const cfg = tinyConfig('decoder-only', { headDim: 6, positional: 'rope' });
    const batch = tinyBatch(cfg, 5, false);
    const base = logitsOf(buildModel(cfg, 'f64'), batch);
    const same = logitsOf(buildModel(validateConfig({ ...cfg, attnScale: 1 / Math.sqrt(6) }), 'f64'), batch);
    const other = logitsOf(buildModel(validateConfig({ ...cfg, attnScale: 100 }), 'f64'), batch);
    let same1 = 0;
    let diff = 0;
    for (let i = 0; i < base.length; i++) {
      same1 = Math.max(same1, Math.abs((base[i] as number) - (same[i] as number)));
      diff = Math.max(diff, Math.abs((base[i] as number) - (other[i] as number)));
    }
    expect(same1).toBeLessThan(1e-12);
    expect(diff).toBeGreaterThan(1e-5);
  });
});

describe('the decoding path with headDim', () => {
  it.each([
    ['decoder-only, D 8 over dModel 12, qk-norm', WIDE],
    [
      'encoder-decoder, D 6, GQA, qk-norm, rope',
      tinyConfig('encoder-decoder', { nHeads: 4, nKvHeads: 2, headDim: 6, qkNorm: true, positional: 'rope' }),
    ],
  ] as [string, ModelConfig][])('%s: stepperBytes is exactly what a stepper and its prefill allocate', (_n, cfg) => {
    let floats = 0;
    let bytes = 0;
    const counting = createReferenceBackend();
    const alloc = counting.alloc.bind(counting);
    counting.alloc = (n: number) => {
      floats += n;
      return alloc(n);
    };
    counting.allocBytes = (n: number) => {
      bytes += n;
      return new Uint8Array(n);
    };
    const m = buildModel(cfg);
    const src = Int32Array.of(5, 6, 7);
    const stepper = createStepper(m, counting, { maxRows: 2, ...(cfg.kind === 'encoder-decoder' ? { src } : {}) });
    stepper.prefill(Int32Array.of(1, 4, 6, 5), false);
    expect(4 * floats + bytes).toBe(
      stepperBytes(cfg, 2, cfg.kind === 'encoder-decoder' ? src.length : 0, cfg.maxLen, 4),
    );
  });
});

describe('head size 256 (Gemma 3) on WebAssembly', () => {
  const cfg = tinyConfig('decoder-only', {
    dModel: 16,
    nHeads: 2,
    nKvHeads: 1,
    headDim: 256,
    attnScale: 1 / 16,
    positional: 'rope',
    qkNorm: true,
    normType: 'rmsnorm',
    bias: false,
    dFF: 16,
    nDecoderLayers: 1,
  });

  it('loss and every gradient match the float64 reference', () => {
    expect(backendMismatch(cfg, createWasmBackend() as Backend, tinyBatch(cfg))).toBeNull();
  });

  it('the key/value cache gives the full forward pass its logits position by position', () => {
    const backend = createWasmBackend({ fma: false }) as Backend;
    const m = buildModel(cfg, 'f32', 7, backend);
    const seq = Int32Array.of(1, 5, 7, 4, 9, 6);
    const full = Float32Array.from(
      (m.forward({ B: 1, T: 6, input: seq, targets: new Int32Array(6) }, { train: false }), m.logits()),
    );
    const stepper = createStepper(m, backend, { maxRows: 1 });
    const V = cfg.vocabSize;
    for (let t = 0; t < 6; t++) {
      const { logits } = stepper.step(Int32Array.of(seq[t] as number), false);
      for (let v = 0; v < V; v++) expect(logits[v]).toBeCloseTo(full[t * V + v] as number, 4);
    }
  });
});

describe('real shapes', () => {
  it('Qwen3-0.6B (hidden 1024, 16 heads of 128, 8 kv): 596,049,920 parameters, planned without allocating', () => {
    const qwen3 = tinyConfig('decoder-only', {
      vocabSize: 151936,
      dModel: 1024,
      nHeads: 16,
      nKvHeads: 8,
      headDim: 128,
      dFF: 3072,
      nDecoderLayers: 28,
      maxLen: 64,
      norm: 'pre',
      normType: 'rmsnorm',
      positional: 'rope',
      ropeTheta: 1000000,
      qkNorm: true,
      activation: 'swiglu',
      bias: false,
      tieEmbeddings: true,
      layerNormEps: 1e-6,
    });
    const e = estimateModel(qwen3, { maxBatch: 1 });
    expect(e.params).toBe(596049920);
  });

  it("Gemma 3 270M's attention (hidden 640, 4 heads of 256, 1 kv head, scale 256^−½)", () => {
    const gemma = tinyConfig('decoder-only', {
      vocabSize: 64,
      dModel: 640,
      nHeads: 4,
      nKvHeads: 1,
      headDim: 256,
      attnScale: 256 ** -0.5,
      dFF: 2048,
      nDecoderLayers: 1,
      maxLen: 16,
      norm: 'pre',
      normType: 'rmsnorm',
      positional: 'rope',
      qkNorm: true,
      activation: 'geglu',
      bias: false,
    });
    const m = new Transformer(gemma, { maxBatch: 1 });
    expect(m.param('transformer.h.0.attn.c_attn_q.weight').shape).toEqual([1024, 640]);
    expect(m.param('transformer.h.0.attn.c_attn_k.weight').shape).toEqual([256, 640]);
    expect(m.param('transformer.h.0.attn.c_proj.weight').shape).toEqual([640, 1024]);
    expect(m.param('transformer.h.0.attn.k_norm.weight').shape).toEqual([256]);
  });
});
