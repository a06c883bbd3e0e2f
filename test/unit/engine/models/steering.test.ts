/**
 * Activation addition (src/engine/models/steering.ts): the stepper's `residAdd` (prefill and
 * step) gives the logits of the batch forward with the same addition through a hook, at every
 * layer a vector can enter; at the final norm's input of a model without a final norm the
 * logits move by exactly W_U·v; and bad vectors are refused. An encoder-decoder's decoder is
 * steered the same way, its stepper reading the source.
 */
import { describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { ModelConfig } from '../../../../src/engine/config';
import { residAddHook } from '../../../../src/engine/models/steering';
import { createStepper } from '../../../../src/engine/models/stepper';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { tinyConfig } from './fixtures';

const seq = Int32Array.from([1, 5, 7, 4, 9, 6]);
const T = seq.length;

function bound(cfg: ModelConfig): Transformer {
  const model = new Transformer(cfg, { maxBatch: 1 }).bind(createReferenceBackend());
  model.initialize(new Rng(5));
  return model;
}

function vectorOf(C: number, seed: number): Float32Array {
  const rng = new Rng(seed);
  return Float32Array.from({ length: C }, () => rng.normal());
}

/** The batch forward's logits [T, V] of `seq`, with `vector` added at `layer` (or none). */
function forwardLogits(model: Transformer, add: { layer: number; vector: Float32Array } | null): Float32Array {
  model.forward(
    { B: 1, T, input: seq, targets: new Int32Array(T) },
    { train: false, ...(add ? { hook: residAddHook(add) } : {}) },
  );
  return Float32Array.from(model.logits());
}

const VARIANTS: [string, ModelConfig][] = [
  ['pre-LN', tinyConfig('decoder-only')],
  ['post-LN', tinyConfig('decoder-only', { norm: 'post' })],
  [
    'rmsnorm swiglu parallel soft-cap',
    tinyConfig('decoder-only', { normType: 'rmsnorm', activation: 'swiglu', parallelResidual: true, logitSoftCap: 2 }),
  ],
];

describe.each(VARIANTS)('steering a %s model', (_, cfg) => {
  const model = bound(cfg);
  const L = cfg.nDecoderLayers;
  const V = cfg.vocabSize;
  const vector = vectorOf(cfg.dModel, 3);

  it.each(Array.from({ length: L + 1 }, (_, l) => l))(
    'at layer %i: steps and a prefill give the steered batch forward, which differs from the plain one',
    (layer) => {
      const add = { layer, vector };
      const full = forwardLogits(model, add);
      const plain = forwardLogits(model, null);
      let moved = 0;
      for (let i = 0; i < T * V; i++) moved = Math.max(moved, Math.abs((full[i] as number) - (plain[i] as number)));
      expect(moved).toBeGreaterThan(1e-3);
      const stepper = createStepper(model, model.backendOrThrow(), { maxRows: 1, residAdd: add });
      for (let t = 0; t < T; t++) {
        const { logits } = stepper.step(Int32Array.of(seq[t] as number), false);
        for (let v = 0; v < V; v++) expect(logits[v]).toBeCloseTo(full[t * V + v] as number, 5);
      }
      stepper.reset();
      const pre = stepper.prefill(seq.subarray(0, T - 1), false).logits;
      for (let v = 0; v < V; v++) expect(pre[v]).toBeCloseTo(full[(T - 2) * V + v] as number, 5);
      const last = stepper.step(seq.subarray(T - 1), false).logits;
      for (let v = 0; v < V; v++) expect(last[v]).toBeCloseTo(full[(T - 1) * V + v] as number, 5);
    },
  );
});

describe('steering at the final norm input of a post-LN model (no final norm)', () => {
  it('moves every logit by exactly (W_U·v)[token], in the stepper and the batch forward', () => {
    const cfg = tinyConfig('decoder-only', { norm: 'post' });
    const model = bound(cfg);
    const L = cfg.nDecoderLayers;
    const V = cfg.vocabSize;
    const C = cfg.dModel;
    const vector = vectorOf(C, 8);
    const W = model.headW.data; // [V, C]
    const expected = Float64Array.from({ length: V }, (_, v) => {
      let s = 0;
      for (let c = 0; c < C; c++) s += (W[v * C + c] as number) * (vector[c] as number);
      return s;
    });
    const plain = forwardLogits(model, null);
    const full = forwardLogits(model, { layer: L, vector });
    const stepper = createStepper(model, model.backendOrThrow(), { maxRows: 1, residAdd: { layer: L, vector } });
    for (let t = 0; t < T; t++) {
      const { logits } = stepper.step(Int32Array.of(seq[t] as number), false);
      for (let v = 0; v < V; v++) {
        const delta = (full[t * V + v] as number) - (plain[t * V + v] as number);
        expect(delta).toBeCloseTo(expected[v] as number, 4);
        expect((logits[v] as number) - (plain[t * V + v] as number)).toBeCloseTo(expected[v] as number, 4);
      }
    }
  });

  it('refuses a layer past the final norm, a vector of the wrong width and a non-finite one', () => {
    const cfg = tinyConfig('decoder-only');
    const model = bound(cfg);
    const k = model.backendOrThrow();
    const C = cfg.dModel;
    const L = cfg.nDecoderLayers;
    expect(() =>
      createStepper(model, k, { maxRows: 1, residAdd: { layer: L + 1, vector: new Float32Array(C) } }),
    ).toThrow(`Steering adds at the stream entering layer 0 to ${L} (${L}: the final norm's input); got ${L + 1}.`);
    expect(() =>
      createStepper(model, k, { maxRows: 1, residAdd: { layer: 0, vector: new Float32Array(C + 1) } }),
    ).toThrow(`A steering vector has d_model = ${C} numbers; got ${C + 1}.`);
    const nan = new Float32Array(C);
    nan[2] = NaN;
    expect(() => createStepper(model, k, { maxRows: 1, residAdd: { layer: 0, vector: nan } })).toThrow(
      'A steering vector must be finite numbers.',
    );
  });
});

describe("steering an encoder-decoder's decoder", () => {
  const cfg = tinyConfig('encoder-decoder');
  const model = bound(cfg);
  const V = cfg.vocabSize;
  const src = Int32Array.from([5, 7, 4, 8, 2]);
  const vector = vectorOf(cfg.dModel, 4);
  const logitsOf = (add: { layer: number; vector: Float32Array } | null): Float32Array => {
    model.forward(
      { B: 1, T, input: seq, targets: new Int32Array(T), S: src.length, src },
      { train: false, ...(add ? { hook: residAddHook(add) } : {}) },
    );
    return Float32Array.from(model.logits());
  };

  it.each(Array.from({ length: cfg.nDecoderLayers + 1 }, (_, l) => l))(
    'at decoder layer %i: the stepper gives the steered batch forward, which differs from the plain one',
    (layer) => {
      const add = { layer, vector };
      const full = logitsOf(add);
      const plain = logitsOf(null);
      let moved = 0;
      for (let i = 0; i < T * V; i++) moved = Math.max(moved, Math.abs((full[i] as number) - (plain[i] as number)));
      expect(moved).toBeGreaterThan(1e-3);
      const stepper = createStepper(model, model.backendOrThrow(), { maxRows: 1, src, residAdd: add });
      const pre = stepper.prefill(seq.subarray(0, T - 1), false).logits;
      for (let v = 0; v < V; v++) expect(pre[v]).toBeCloseTo(full[(T - 2) * V + v] as number, 5);
      const last = stepper.step(seq.subarray(T - 1), false).logits;
      for (let v = 0; v < V; v++) expect(last[v]).toBeCloseTo(full[(T - 1) * V + v] as number, 5);
    },
  );
});
