import { describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { ModelConfig } from '../../../../src/engine/config';
import type { Backend } from '../../../../src/engine/backend';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { StepperWorkspace, createStepper } from '../../../../src/engine/models/stepper';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { ATTENTION_VARIANTS, tinyConfig } from './fixtures';

const VARIANTS: [string, ModelConfig][] = [
  ['encoder-decoder post-LN', tinyConfig('encoder-decoder')],
  [
    'encoder-decoder pre-LN tied',
    tinyConfig('encoder-decoder', { norm: 'pre', tieEmbeddings: true, positional: 'learned', activation: 'gelu' }),
  ],
  ['decoder-only pre-LN', tinyConfig('decoder-only')],
  ['decoder-only post-LN sinusoidal', tinyConfig('decoder-only', { norm: 'post', positional: 'sinusoidal' })],
  [
    'decoder-only rmsnorm swiglu parallel embedNorm soft-cap',
    tinyConfig('decoder-only', {
      normType: 'rmsnorm',
      activation: 'swiglu',
      parallelResidual: true,
      embedNorm: true,
      logitSoftCap: 2,
    }),
  ],
  [
    'encoder-decoder pre-LN rmsnorm without scale, geglu, parallel, embedNorm, soft-cap',
    tinyConfig('encoder-decoder', {
      norm: 'pre',
      normType: 'rmsnorm',
      normScale: false,
      activation: 'geglu',
      parallelResidual: true,
      embedNorm: true,
      logitSoftCap: 2,
    }),
  ],
  ...ATTENTION_VARIANTS,
];

/** The combined attention variants again on WebAssembly (its kernels, the step's window row in its memory). */
const WASM_VARIANTS = ATTENTION_VARIANTS.filter(([n]) => n.includes('combined') || n.startsWith('encoder-decoder'));

describe.each([
  ...VARIANTS.map(([n, c]): [string, ModelConfig, string] => [n, c, 'reference']),
  ...WASM_VARIANTS.map(([n, c]): [string, ModelConfig, string] => [n, c, 'wasm']),
])('key/value-cache stepper: %s on %s', (_n, cfg, backendName) => {
  const backend = backendName === 'wasm' ? (createWasmBackend({ fma: false }) as Backend) : createReferenceBackend();
  const model = new Transformer(cfg, { maxBatch: 3 }).bind(backend);
  model.initialize(new Rng(11));
  const T = 6;
  const seq = Int32Array.from([1, 5, 7, 4, 9, 6]);
  const src = Int32Array.from([5, 6, 7, 8, 0]); // one PAD at the end

  function fullLogits(input: Int32Array, rows = 1): Float32Array {
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
    return Float32Array.from(model.logits());
  }

  it('gives the same logits position by position as the full forward pass', () => {
    const full = fullLogits(seq);
    const stepper = createStepper(model, backend, { maxRows: 1, ...(cfg.kind === 'encoder-decoder' ? { src } : {}) });
    const V = cfg.vocabSize;
    for (let t = 0; t < T; t++) {
      const { logits } = stepper.step(Int32Array.of(seq[t] as number), false);
      for (let v = 0; v < V; v++) expect(logits[v]).toBeCloseTo(full[t * V + v] as number, 4);
    }
  });

  it('keeps rows aligned after reorder (beam search duplicates and permutes rows)', () => {
    const other = Int32Array.from([1, 8, 8, 4, 5, 5]);
    const stepper = createStepper(model, backend, { maxRows: 3, ...(cfg.kind === 'encoder-decoder' ? { src } : {}) });
    stepper.step(Int32Array.of(1), false);
    stepper.reorder(Int32Array.of(0, 0));
    stepper.step(Int32Array.of(seq[1] as number, other[1] as number), false);
    stepper.reorder(Int32Array.of(1, 0, 1)); // rows: other, seq, other
    let out = new Float32Array(0);
    for (let t = 2; t < T; t++) {
      out = Float32Array.from(
        stepper.step(Int32Array.of(other[t] as number, seq[t] as number, other[t] as number), true).logits,
      );
    }
    const V = cfg.vocabSize;
    const fs = fullLogits(seq).subarray((T - 1) * V, T * V);
    const fo = fullLogits(other).subarray((T - 1) * V, T * V);
    for (let v = 0; v < V; v++) {
      expect(out[v]).toBeCloseTo(fo[v] as number, 4);
      expect(out[V + v]).toBeCloseTo(fs[v] as number, 4);
      expect(out[2 * V + v]).toBeCloseTo(fo[v] as number, 4);
    }
  });

  it('returns attention of the newest token that matches the full forward pass', () => {
    fullLogits(seq);
    const cap = model.captureAttention(0);
    const stepper = createStepper(model, backend, { maxRows: 1, ...(cfg.kind === 'encoder-decoder' ? { src } : {}) });
    let att = null;
    for (let t = 0; t < T; t++) att = stepper.step(Int32Array.of(seq[t] as number), true).attention;
    expect(att).not.toBeNull();
    const H = cfg.nHeads;
    const selfMaps = cap.maps.filter((m) => m.stack === 'decoder.self');
    att?.self.forEach((a, l) => {
      const map = selfMaps[l];
      for (let h = 0; h < H; h++)
        for (let s = 0; s < T; s++) expect(a[h * T + s]).toBeCloseTo(map?.data[(h * T + (T - 1)) * T + s] as number, 5);
    });
    expect(att?.cross.length).toBe(cfg.kind === 'encoder-decoder' ? cfg.nDecoderLayers : 0);
    if (cfg.kind === 'encoder-decoder') expect(att?.cross[0]?.[src.length - 1]).toBe(0); // PAD column
  });

  it('refuses to step past the context', () => {
    const stepper = createStepper(model, backend, { maxRows: 1, ...(cfg.kind === 'encoder-decoder' ? { src } : {}) });
    for (let t = 0; t < cfg.maxLen; t++) stepper.step(Int32Array.of(5), false);
    expect(() => stepper.step(Int32Array.of(5), false)).toThrow(/context of 8 positions is full/);
  });

  it('reset() empties the cache: re-fed tokens give the logits of a fresh stepper', () => {
    const opts = { maxRows: 3, ...(cfg.kind === 'encoder-decoder' ? { src } : {}) };
    const fresh = createStepper(model, backend, opts);
    const want = Array.from(seq.subarray(0, 3), (t) => Float32Array.from(fresh.step(Int32Array.of(t), false).logits));
    const used = createStepper(model, backend, opts);
    for (let t = 0; t < cfg.maxLen; t++) used.step(Int32Array.of(9), false);
    used.reorder(Int32Array.of(0, 0));
    used.reset();
    seq
      .subarray(0, 3)
      .forEach((t, i) => expect(Float32Array.from(used.step(Int32Array.of(t), false).logits)).toEqual(want[i]));
  });
});

describe.each([
  ...VARIANTS.map(([n, c]): [string, ModelConfig, string] => [n, c, 'reference']),
  ['decoder-only pre-LN', tinyConfig('decoder-only'), 'wasm'] as [string, ModelConfig, string],
  ...WASM_VARIANTS.map(([n, c]): [string, ModelConfig, string] => [n, c, 'wasm']),
])('prefill: %s on %s', (_n, cfg, backendName) => {
  const backend = backendName === 'wasm' ? (createWasmBackend({ fma: false }) as Backend) : createReferenceBackend();
  const model = new Transformer(cfg, { maxBatch: 1 }).bind(backend);
  model.initialize(new Rng(5));
  const seq = Int32Array.from([1, 5, 7, 4, 9, 6]);
  const src = Int32Array.from([5, 6, 7, 8, 0]);
  const opts = { maxRows: 1, ...(cfg.kind === 'encoder-decoder' ? { src } : {}) };
  const T = seq.length;

  it('gives the logits and attention of the last position that stepping gives, then decodes on from the same cache', () => {
    const stepped = createStepper(model, backend, opts);
    let byStep = stepped.step(seq.subarray(0, 1), true);
    for (let t = 1; t < T; t++) byStep = stepped.step(seq.subarray(t, t + 1), true);
    const wantLogits = Float32Array.from(byStep.logits);
    const wantSelf = byStep.attention?.self.map((a) => Float32Array.from(a)) ?? [];
    const next = Float32Array.from(stepped.step(Int32Array.of(3), false).logits);
    const pre = createStepper(model, backend, opts);
    const out = pre.prefill(seq, true);
    out.logits.forEach((v, i) => expect(v).toBeCloseTo(wantLogits[i] as number, 4));
    out.attention?.self.forEach((a, l) => a.forEach((v, i) => expect(v).toBeCloseTo(wantSelf[l]?.[i] as number, 5)));
    expect(out.attention?.cross.length).toBe(cfg.kind === 'encoder-decoder' ? cfg.nDecoderLayers : 0);
    Float32Array.from(pre.step(Int32Array.of(3), false).logits).forEach((v, i) =>
      expect(v).toBeCloseTo(next[i] as number, 4),
    );
  });

  it("hands out every layer's attention, equal to the full forward pass", () => {
    const batch = {
      B: 1,
      T,
      input: seq,
      targets: new Int32Array(T),
      ...(cfg.kind === 'encoder-decoder' ? { S: src.length, src } : {}),
    };
    model.forward(batch, { train: false });
    const want = model.captureAttention(0).maps;
    const got: { stack: string; layer: number; shape: readonly number[]; data: Float32Array }[] = [];
    createStepper(model, backend, opts).prefill(seq, false, (stack, layer, probs, shape) =>
      got.push({ stack, layer, shape, data: Float32Array.from(probs.subarray(0, shape[0] * shape[1] * shape[2])) }),
    );
    expect(got.map((m) => `${m.stack}.${m.layer}`).sort()).toEqual(want.map((m) => `${m.stack}.${m.layer}`).sort());
    for (const m of got) {
      const w = want.find((x) => x.stack === m.stack && x.layer === m.layer);
      expect(m.shape).toEqual(w?.shape);
      m.data.forEach((v, i) => expect(v, `${m.stack}.${m.layer}[${i}]`).toBeCloseTo(w?.data[i] as number, 5));
    }
  });

  it('refuses a stepper that has already stepped, and a prompt longer than the context', () => {
    const s = createStepper(model, backend, opts);
    s.step(Int32Array.of(1), false);
    expect(() => s.prefill(seq, false)).toThrow(/fresh or reset stepper/);
    s.reset();
    expect(() => s.prefill(new Int32Array(cfg.maxLen + 1).fill(4), false)).toThrow(/does not fit the context of 8/);
  });

  it('steppers sharing a workspace reuse its buffers and give the same numbers', () => {
    const ws = new StepperWorkspace(backend);
    const a = Float32Array.from(createStepper(model, backend, { ...opts, workspace: ws }).prefill(seq, false).logits);
    const b = Float32Array.from(
      createStepper(model, backend, { ...opts, workspace: ws }).prefill(seq.subarray(0, 3), false).logits,
    );
    const c = Float32Array.from(createStepper(model, backend, { ...opts, workspace: ws }).prefill(seq, false).logits);
    expect(c).toEqual(a);
    expect(b).not.toEqual(a);
  });
});
