/**
 * The attention options of today's transformers as the models build them (models/attention.ts):
 * parameter shapes and counts under grouped-query attention, the key/value cache's size, the
 * sliding window's masks and reach, RoPE and ALiBi acting only past position 0, the fused
 * PyTorch c_attn tensor, qk-norm's parameter names, and ablating a query head that shares its
 * keys. (Gradients and cache-vs-forward equality of every option: transformer.test.ts and
 * stepper.test.ts, over fixtures' ATTENTION_VARIANTS.)
 */

import { describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { ModelConfig } from '../../../../src/engine/config';
import { MODERN_PRESETS, kvHeads, validateConfig } from '../../../../src/engine/config';
import { createStepper } from '../../../../src/engine/models/stepper';
import { beamSearch } from '../../../../src/engine/decode/beam';
import { sampleDecode } from '../../../../src/engine/decode/sample';
import type { DecodeResult } from '../../../../src/engine/decode/stepperContract';
import { stepperBytes } from '../../../../src/engine/models/estimate';
import type { Batch } from '../../../../src/engine/models/inputs';
import {
  causalView,
  fillCausalMask,
  fillCombinedMask,
  fillWindowRow,
  snapshotMask,
} from '../../../../src/engine/models/masks';
import { gatherTorchTensor, setTorchTensor, torchTensors } from '../../../../src/engine/models/pytorchNames';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { ATTENTION_VARIANTS, tinyConfig } from './fixtures';

function build(cfg: ModelConfig, seed = 3): Transformer {
  const m = new Transformer(cfg, { maxBatch: 2 }).bind(createReferenceBackend({ dtype: 'f64' }));
  m.initialize(new Rng(seed));
  return m;
}

/** Logits [T, V] of one unpadded sequence. */
function logitsOf(m: Transformer, input: Int32Array): Float64Array {
  const batch: Batch = { B: 1, T: input.length, input, targets: new Int32Array(input.length) };
  m.forward(batch, { train: false });
  return Float64Array.from(m.logits());
}

function rowsDiffer(a: Float64Array, b: Float64Array, t: number, V: number): boolean {
  for (let v = 0; v < V; v++) if (Math.abs((a[t * V + v] as number) - (b[t * V + v] as number)) > 1e-12) return true;
  return false;
}

describe('grouped-query attention', () => {
  const cfg = tinyConfig('decoder-only', {
    dModel: 16,
    nHeads: 4,
    nKvHeads: 2,
    qkNorm: true,
    bias: false,
    qkvBias: true,
    attnOutBias: true,
    tieEmbeddings: true,
  });

  it('has the parameter count the formula gives: q and W_o C×C, k and v (Hkv·D)×C, biases, qk-norm [D] each', () => {
    const m = build(cfg);
    const C = 16;
    const D = 4;
    const KV = 2 * D;
    const attn = C * C + 2 * KV * C + C * C + (C + 2 * KV) + C + 2 * D;
    const ffn = C * cfg.dFF + cfg.dFF * C; // no mlp bias (bias false)
    const norms = 2 * C; // ln_1, ln_2 weights (no bias)
    const perLayer = attn + ffn + norms;
    const outside = cfg.vocabSize * C + cfg.maxLen * C + C; // wte (tied), wpe, ln_f
    expect(m.store.count).toBe(cfg.nDecoderLayers * perLayer + outside);
    expect(m.param('transformer.h.0.attn.c_attn_k.weight').shape).toEqual([KV, C]);
    expect(m.param('transformer.h.0.attn.c_attn_v.bias').shape).toEqual([KV]);
    expect(m.param('transformer.h.1.attn.q_norm.weight').shape).toEqual([D]);
    expect(m.param('transformer.h.1.attn.k_norm.weight').shape).toEqual([D]);
    expect(() => m.param('transformer.h.0.attn.c_proj.bias')).not.toThrow();
  });

  it("draws an encoder-decoder's W_k and W_v from the Xavier bound of their own [Hkv·D, C] shape", () => {
    const cfg = tinyConfig('encoder-decoder', { nKvHeads: 1, dModel: 16, nHeads: 4 });
    const m = build(cfg, 9);
    const bound = Math.sqrt(6 / (16 + 4)); // the square [C, C] one would be √(6/32)
    for (const name of ['encoder_layers.0.self_attn.W_k.weight', 'decoder_layers.1.cross_attn.W_v.weight']) {
      const w = Array.from(m.param(name).data, Math.abs);
      expect(Math.max(...w)).toBeLessThanOrEqual(bound);
      expect(Math.max(...w)).toBeGreaterThan(Math.sqrt(6 / 32));
    }
  });

  it("stacks PyTorch's fused c_attn as [(H + 2·Hkv)·D, C], q rows first, and loads it back", () => {
    const m = build(cfg);
    const fused = torchTensors(m).filter((t) => t.name.endsWith('.c_attn.weight'));
    expect(fused.map((t) => t.shape)).toEqual([
      [(4 + 2 * 2) * 4, 16],
      [(4 + 2 * 2) * 4, 16],
    ]);
    const bias = torchTensors(m).find((t) => t.name === 'transformer.h.0.attn.c_attn.bias');
    expect(bias?.shape).toEqual([32]);
    const t = fused[0]!;
    const data = gatherTorchTensor(t);
    expect(data[16 * 16]).toBe(Math.fround(m.param('transformer.h.0.attn.c_attn_k.weight').data[0] as number));
    const changed = data.map((_, i) => i);
    setTorchTensor(t, changed);
    expect(m.param('transformer.h.0.attn.c_attn_v.weight').data[0]).toBe(16 * 16 + 8 * 16);
  });

  it('caches Hkv heads: the key/value cache and the planned decode memory shrink by H / Hkv', () => {
    const m = build(cfg);
    const cache = m.decoder[0]!.createCache(m.backendOrThrow(), (n) => new Float64Array(n), 2, cfg.maxLen, null);
    expect(cache.self.width).toBe(kvHeads(cfg) * 4);
    expect(cache.self.k.length).toBe(2 * cfg.maxLen * 8);
    const mha = { ...cfg, nKvHeads: 0 };
    const perLayerKV = (c: ModelConfig): number => 2 * 3 * c.maxLen * (c.dModel / c.nHeads) * kvHeads(c) * 4;
    expect(stepperBytes(mha, 3) - stepperBytes(cfg, 3)).toBeGreaterThanOrEqual(
      cfg.nDecoderLayers * (perLayerKV(mha) - perLayerKV(cfg)),
    );
  });

  it('switching off one query head equals zeroing its columns of W_o, though it shares keys and values', () => {
    const mq = tinyConfig('decoder-only', { nKvHeads: 1, positional: 'rope' });
    const m = build(mq);
    const input = Int32Array.from([4, 7, 5, 9, 6]);
    const batch: Batch = { B: 1, T: 5, input, targets: Int32Array.from([7, 5, 9, 6, 2]) };
    const ablated = m.forward(batch, { train: false, ablate: [{ stack: 'decoder.self', layer: 1, head: 1 }] }).loss;
    const before = m.forward(batch, { train: false }).loss;
    const w = m.param('transformer.h.1.attn.c_proj.weight');
    const C = mq.dModel;
    const D = C / mq.nHeads;
    for (let o = 0; o < C; o++) for (let c = D; c < 2 * D; c++) w.data[o * C + c] = 0;
    const zeroed = m.forward(batch, { train: false }).loss;
    expect(ablated).not.toBeCloseTo(before, 8);
    expect(ablated).toBeCloseTo(zeroed, 12);
  });
});

describe('stepperBytes with the attention options', () => {
  it.each([
    [
      'decoder-only, GQA + qk-norm + window',
      tinyConfig('decoder-only', { nHeads: 4, nKvHeads: 2, qkNorm: true, slidingWindow: 3 }),
    ],
    [
      'encoder-decoder, MQA + qk-norm + rope',
      tinyConfig('encoder-decoder', { nKvHeads: 1, qkNorm: true, positional: 'rope' }),
    ],
  ])('%s: is exactly what a stepper and its prefill allocate', (_n, cfg) => {
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
    const m = new Transformer(cfg, { maxBatch: 1 }).bind(createReferenceBackend());
    m.initialize(new Rng(1));
    const src = Int32Array.of(5, 6, 7);
    const stepper = createStepper(m, counting, { maxRows: 2, ...(cfg.kind === 'encoder-decoder' ? { src } : {}) });
    stepper.prefill(Int32Array.of(1, 4), false);
    expect(4 * floats + bytes).toBe(
      stepperBytes(cfg, 2, cfg.kind === 'encoder-decoder' ? src.length : 0, cfg.maxLen, 2),
    );
  });
});

describe('sliding window masks', () => {
  it('allow key s for query t iff s ≤ t and t − s < W', () => {
    const T = 5;
    const causal = new Uint8Array(T * T);
    fillCausalMask(causal, T, 2);
    expect(Array.from(causal)).toEqual([
      ...[1, 0, 0, 0, 0],
      ...[1, 1, 0, 0, 0],
      ...[0, 1, 1, 0, 0],
      ...[0, 0, 1, 1, 0],
      ...[0, 0, 0, 1, 1],
    ]);
    fillCausalMask(causal, T, 0);
    expect(causal[4 * T]).toBe(1);
    const pad = Uint8Array.from([1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
    const combined = new Uint8Array(2 * T * T);
    fillCombinedMask(combined, pad, 2, T, 3);
    expect(Array.from(combined.subarray(T * T + 4 * T, T * T + 5 * T))).toEqual([0, 0, 1, 0, 0]);
    expect(Array.from(combined.subarray(4 * T, 5 * T))).toEqual([0, 0, 1, 1, 1]);
    expect(snapshotMask('decoder.causal', causalView(causal, T), 1, 2, 2).data).toEqual(Uint8Array.from([1, 0, 1, 1]));
  });

  it("gives a decoding step the newest position's row, and none while the window covers every position", () => {
    const row = new Uint8Array(8);
    expect(fillWindowRow(row, 3, 3)).toBeNull();
    expect(fillWindowRow(row, 3, 0)).toBeNull();
    const view = fillWindowRow(row, 6, 3);
    expect(view).toEqual({ data: row, batchStride: 0, rowStride: 0 });
    expect(Array.from(row.subarray(0, 6))).toEqual([0, 0, 0, 1, 1, 1]);
  });

  it('limits how far back a token reaches: L layers of window W see W − 1 positions back each', () => {
    const cfg = tinyConfig('decoder-only', { slidingWindow: 2, maxLen: 8 });
    const m = build(cfg);
    const a = Int32Array.from([4, 7, 5, 9, 6, 8, 5]);
    const b = Int32Array.from([10, 7, 5, 9, 6, 8, 5]);
    const la = logitsOf(m, a);
    const lb = logitsOf(m, b);
    const V = cfg.vocabSize;
    // Token 0 reaches positions 0..L·(W − 1) = 0..2, and no further.
    for (let t = 0; t < 7; t++) expect(rowsDiffer(la, lb, t, V), `position ${t}`).toBe(t <= 2);
    const full = build({ ...cfg, slidingWindow: 0 });
    expect(rowsDiffer(logitsOf(full, a), logitsOf(full, b), 6, V)).toBe(true);
  });
});

describe('positions inside the attention', () => {
  it.each(['rope', 'alibi'] as const)(
    '%s leaves position 0 as a model without positions has it, and changes every later one',
    (positional) => {
      const cfg = tinyConfig('decoder-only', { positional });
      const withPos = build(cfg);
      const none = build({ ...cfg, positional: 'none' });
      expect(none.store.count).toBe(withPos.store.count);
      none.params.set(withPos.params);
      const input = Int32Array.from([4, 7, 5, 9, 6]);
      const a = logitsOf(withPos, input);
      const b = logitsOf(none, input);
      const V = cfg.vocabSize;
      expect(rowsDiffer(a, b, 0, V)).toBe(false);
      for (let t = 1; t < 5; t++) expect(rowsDiffer(a, b, t, V), `position ${t}`).toBe(true);
    },
  );

  it('rope without absolute positions makes attention scores depend on distance: a shifted repeat attends alike', () => {
    // Same tokens at positions 0..2 and 3..5 with a one-layer model: the self-attention among the
    // second copy of the first copy's layout differs only by where it starts, which rope ignores.
    const cfg = tinyConfig('decoder-only', { positional: 'rope', nDecoderLayers: 1, slidingWindow: 3 });
    const m = build(cfg);
    const input = Int32Array.from([4, 7, 5, 4, 7, 5]);
    const l = logitsOf(m, input);
    const V = cfg.vocabSize;
    // Window 3: position 5 sees 3..5 as position 2 sees 0..2 (same tokens, same distances).
    for (let v = 0; v < V; v++) expect(l[5 * V + v]).toBeCloseTo(l[2 * V + v] as number, 10);
    const learned = build({ ...cfg, positional: 'learned' });
    const ll = logitsOf(learned, input);
    expect(Math.abs((ll[5 * V] as number) - (ll[2 * V] as number))).toBeGreaterThan(1e-9);
  });

  it('names qk-norm weights in both stacks of an encoder-decoder, cross-attention included', () => {
    const m = build(tinyConfig('encoder-decoder', { positional: 'rope', qkNorm: true, nKvHeads: 1 }));
    for (const n of [
      'encoder_layers.0.self_attn.q_norm.weight',
      'decoder_layers.1.self_attn.k_norm.weight',
      'decoder_layers.0.cross_attn.q_norm.weight',
    ])
      expect(m.param(n).shape).toEqual([4]);
    expect(m.param('decoder_layers.0.cross_attn.W_k.weight').shape).toEqual([4, 8]);
  });
});

describe.each(Object.keys(MODERN_PRESETS))('the %s preset', (name) => {
  it('builds, and its key/value-cache decoding gives the logits of the full forward pass', () => {
    const p = MODERN_PRESETS[name]!;
    const cfg = validateConfig({ ...p.arch, ...p.size, vocabSize: 40, srcVocabSize: 0, nEncoderLayers: 0 });
    const m = new Transformer(cfg, { maxBatch: 1, maxLen: 12 }).bind(createReferenceBackend());
    m.initialize(new Rng(1));
    const input = Int32Array.from({ length: 12 }, (_, i) => 4 + ((i * 7) % 36));
    m.forward({ B: 1, T: 12, input, targets: new Int32Array(12) }, { train: false });
    const full = Float32Array.from(m.logits());
    const stepper = createStepper(m, m.backendOrThrow(), { maxRows: 1 });
    let worst = 0;
    for (let t = 0; t < 12; t++) {
      const { logits } = stepper.step(input.subarray(t, t + 1), false);
      for (let v = 0; v < 40; v++)
        worst = Math.max(worst, Math.abs((logits[v] as number) - (full[t * 40 + v] as number)));
    }
    expect(worst).toBeLessThan(1e-4);
  });
});

describe.each(ATTENTION_VARIANTS.filter(([n]) => n.startsWith('decoder-only') && /combined|like/.test(n)))(
  'decoding %s',
  (_n, cfg) => {
    // padId −1: a sampled id 0 is a token here, as it is to the stepper (which masks no padding).
    const m = new Transformer(cfg, { maxBatch: 1, padId: -1 }).bind(createReferenceBackend({ dtype: 'f64' }));
    m.initialize(new Rng(21));
    const V = cfg.vocabSize;
    const prompt = Int32Array.from([1, 6, 9]);

    /** Each generated token's log-probability under the uncached forward of prompt + tokens. */
    function expectForwardLogprobs(r: DecodeResult): void {
      const seq = Int32Array.from([...prompt, ...r.tokens]);
      const logits = logitsOf(m, seq);
      r.tokens.forEach((tok, i) => {
        const row = logits.subarray((prompt.length - 1 + i) * V, (prompt.length + i) * V);
        const max = Math.max(...row);
        const lse = max + Math.log(row.reduce((a, x) => a + Math.exp(x - max), 0));
        expect(r.logprobs[i]).toBeCloseTo((row[tok] as number) - lse, 5);
      });
    }

    it('beam search: every hypothesis scores its tokens as the uncached forward does', () => {
      const stepper = createStepper(m, m.backendOrThrow(), { maxRows: 3 });
      const results = beamSearch(stepper, prompt, { maxTokens: 4, eos: -1, beamSize: 3, lengthPenalty: 0 });
      expect(results.length).toBeGreaterThan(1);
      for (const r of results) {
        expect(r.tokens.length).toBe(4);
        expectForwardLogprobs(r);
      }
    });

    it('sampling: every drawn token has the log-probability of the uncached forward', () => {
      const stepper = createStepper(m, m.backendOrThrow(), { maxRows: 1 });
      const r = sampleDecode(stepper, prompt, {
        maxTokens: 4,
        eos: -1,
        temperature: 1,
        topK: 0,
        topP: 1,
        rng: new Rng(4),
      });
      expect(r.tokens.length).toBe(4);
      expectForwardLogprobs(r);
    });
  },
);
