import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import type { ModelConfig } from '../../../../src/engine/config';
import { EngineError } from '../../../../src/engine/errors';
import type { HeadRef } from '../../../../src/engine/models/heads';
import { allHeads } from '../../../../src/engine/models/heads';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { tinyBatch, tinyConfig } from './fixtures';

const BACKENDS: [string, () => Backend][] = [
  ['reference', () => createReferenceBackend()],
  ...(createWasmBackend({ fma: false })
    ? [['wasm', () => createWasmBackend({ fma: false }) as Backend] as [string, () => Backend]]
    : []),
];

const VARIANTS: [string, ModelConfig][] = [
  ['encoder-decoder, post-LN', tinyConfig('encoder-decoder')],
  ['encoder-decoder, pre-LN', tinyConfig('encoder-decoder', { norm: 'pre' })],
  ['decoder-only, pre-LN', tinyConfig('decoder-only')],
  ['decoder-only, post-LN', tinyConfig('decoder-only', { norm: 'post' })],
];

const CASES = BACKENDS.flatMap(([b, mk]) => VARIANTS.map(([v, cfg]) => [`${v} on ${b}`, cfg, mk] as const));

function build(cfg: ModelConfig, backend: Backend): Transformer {
  const m = new Transformer(cfg, { maxBatch: 2 }).bind(backend);
  m.initialize(new Rng(7));
  return m;
}

function logitsOf(
  m: Transformer,
  cfg: ModelConfig,
  ablate?: readonly HeadRef[],
): { loss: number; logits: Float32Array } {
  const loss = m.forward(tinyBatch(cfg), { train: false, ...(ablate ? { ablate } : {}) }).loss;
  return { loss, logits: Float32Array.from(m.logits()) };
}

describe.each(CASES)('head ablation and logit lens: %s', (_name, cfg, backend) => {
  it('ablating no head is bit-identical to the plain forward, also right after an ablated one', () => {
    const m = build(cfg, backend());
    const plain = logitsOf(m, cfg);
    expect(logitsOf(m, cfg, []).logits).toEqual(plain.logits);
    logitsOf(m, cfg, [{ stack: 'decoder.self', layer: 0, head: 1 }]);
    const after = logitsOf(m, cfg);
    expect(after.logits).toEqual(plain.logits);
    expect(after.loss).toBe(plain.loss);
  });

  it('switching a head off equals zeroing its columns of W_o', () => {
    const heads = allHeads(cfg);
    const m = build(cfg, backend());
    const D = cfg.dModel / cfg.nHeads;
    for (const h of [heads[0] as HeadRef, heads[heads.length - 1] as HeadRef]) {
      const ablated = logitsOf(m, cfg, [h]).logits;
      const layer = m.attentionLayers().find((l) => l.stack === h.stack && l.layer === h.layer);
      const w = layer?.attn.o.w.data as Float32Array;
      const saved = Float32Array.from(w);
      for (let o = 0; o < cfg.dModel; o++) w.fill(0, o * cfg.dModel + h.head * D, o * cfg.dModel + (h.head + 1) * D);
      const zeroed = logitsOf(m, cfg).logits;
      w.set(saved);
      ablated.forEach((v, i) => expect(v).toBeCloseTo(zeroed[i] as number, 5));
      expect(ablated).not.toEqual(logitsOf(m, cfg).logits);
    }
  });

  it("the top layer of the lens is the model's logits; lower layers are finite and differ", () => {
    const m = build(cfg, backend());
    const { logits } = logitsOf(m, cfg);
    const n = cfg.nDecoderLayers;
    expect(m.residualLogits(n)).toEqual(logits);
    for (let l = 0; l < n; l++) {
      const r = m.residualLogits(l);
      expect(r.length).toBe(logits.length);
      expect(r.every(Number.isFinite)).toBe(true);
      expect(r).not.toEqual(logits);
    }
    expect(() => m.residualLogits(n + 1)).toThrow(EngineError);
  });

  it("into the forward's logits: the same numbers, layer by layer, with the backward scratch left alone", () => {
    const m = build(cfg, backend());
    logitsOf(m, cfg);
    const own = Float32Array.from(m.logits());
    const n = cfg.nDecoderLayers;
    const copies = Array.from({ length: n + 1 }, (_, l) => Float32Array.from(m.residualLogits(l)));
    for (let l = 0; l <= n; l++) expect(Float32Array.from(m.residualLogits(l, 'logits'))).toEqual(copies[l]);
    expect(copies[n]).toEqual(own); // the top layer is the model's own
    // the forward's logits were written over: logits() and backward() refuse instead of reading a lens
    expect(() => m.logits()).toThrow(/logitsAt/);
    expect(() => m.backward()).toThrow(/whole/);
  });

  it('a backward after reading the lens gives the same gradients', () => {
    const m = build(cfg, backend());
    m.forward(tinyBatch(cfg), { train: false });
    m.backward();
    const before = Float32Array.from(m.grads);
    m.forward(tinyBatch(cfg), { train: false });
    for (let l = 0; l <= cfg.nDecoderLayers; l++) m.residualLogits(l);
    m.backward();
    expect(Float32Array.from(m.grads)).toEqual(before);
  });

  it('refuses heads it lacks, ablation while training, and backward after ablation', () => {
    const m = build(cfg, backend());
    const bad = (ablate: HeadRef[]): unknown => m.forward(tinyBatch(cfg), { train: false, ablate });
    expect(() => bad([{ stack: 'decoder.self', layer: 0, head: cfg.nHeads }])).toThrow(/No attention head/);
    expect(() => bad([{ stack: 'decoder.self', layer: cfg.nDecoderLayers, head: 0 }])).toThrow(EngineError);
    if (cfg.kind === 'decoder-only')
      expect(() => bad([{ stack: 'decoder.cross', layer: 0, head: 0 }])).toThrow(EngineError);
    expect(() =>
      m.forward(tinyBatch(cfg), {
        train: true,
        rng: new Rng(1),
        ablate: [{ stack: 'decoder.self', layer: 0, head: 0 }],
      }),
    ).toThrow(/evaluation/);
    m.forward(tinyBatch(cfg), { train: false, ablate: [{ stack: 'decoder.self', layer: 0, head: 0 }] });
    expect(() => m.backward()).toThrow(/inference only/);
  });
});

describe('allHeads', () => {
  it('lists encoder self, decoder self and cross heads of an encoder-decoder, decoder self of a GPT', () => {
    const ed = allHeads(tinyConfig('encoder-decoder'));
    expect(ed.length).toBe(3 * 2 * 2);
    expect(ed.map((h) => h.stack).filter((s, i, a) => a.indexOf(s) === i)).toEqual([
      'encoder.self',
      'decoder.self',
      'decoder.cross',
    ]);
    expect(allHeads(tinyConfig('decoder-only')).every((h) => h.stack === 'decoder.self')).toBe(true);
  });
});
