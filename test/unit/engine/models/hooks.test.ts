/**
 * The forward's hook points (src/engine/models/hooks.ts): where and in what order a hook is
 * called and with what shapes, that reading changes nothing, that a write is what the rest of
 * the forward reads (zeroing z is ablating the heads), and that hooks stay out of training.
 * An encoder-decoder's encoder and cross-attention points, and a read-only hook's forward that a
 * backward may follow.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../../src/engine/config';
import { validateConfig } from '../../../../src/engine/config';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import type { HookSite } from '../../../../src/engine/models/hooks';
import { PARITY_BACKENDS, goldenModel } from './goldenParity';

const f = decodeSafetensors(
  new Uint8Array(readFileSync(join(__dirname, '../../../golden/modern/preset-llama.safetensors'))),
  'preset-llama',
);
const cfg = validateConfig(JSON.parse(f.metadata.config as string) as ModelConfig);
const fe = decodeSafetensors(
  new Uint8Array(readFileSync(join(__dirname, '../../../golden/modern/encdec-modern.safetensors'))),
  'encdec-modern',
);
const cfgE = validateConfig(JSON.parse(fe.metadata.config as string) as ModelConfig);

describe.each(PARITY_BACKENDS)('forward hooks on %s', (_, backend) => {
  it('are called at every point in order with [B, T, heads·width] views, and reading changes no logit', () => {
    const { model, batch } = goldenModel(f, cfg, backend());
    model.forward(batch, { train: false });
    const plain = Float64Array.from(model.logits());
    const sites: HookSite[] = [];
    model.forward(batch, {
      train: false,
      hook: (site, data) => {
        sites.push(site);
        expect(data.length).toBe(site.B * site.T * site.heads * site.width);
      },
    });
    expect(Float64Array.from(model.logits())).toEqual(plain);
    const { B, T } = batch;
    const C = cfg.dModel;
    const D = C / cfg.nHeads;
    const layer = (l: number): Omit<HookSite, 'B' | 'T'>[] => [
      { point: 'resid_pre', layer: l, heads: 1, width: C },
      { point: 'q', layer: l, heads: 4, width: D },
      { point: 'k', layer: l, heads: 2, width: D },
      { point: 'v', layer: l, heads: 2, width: D },
      { point: 'z', layer: l, heads: 4, width: D },
      { point: 'attn_out', layer: l, heads: 1, width: C },
      { point: 'mlp_out', layer: l, heads: 1, width: C },
    ];
    expect(sites).toEqual(
      [...layer(0), ...layer(1), { point: 'resid_pre', layer: 2, heads: 1, width: C }].map((s) => ({ ...s, B, T })),
    );
    // a later forward without a hook calls none
    model.forward(batch, { train: false });
    expect(Float64Array.from(model.logits())).toEqual(plain);
  });

  it('a write is what the forward reads on: zeroing heads in z is switching them off', () => {
    const { model, batch } = goldenModel(f, cfg, backend());
    const off = [
      { stack: 'decoder.self' as const, layer: 1, head: 0 },
      { stack: 'decoder.self' as const, layer: 1, head: 3 },
    ];
    model.forward(batch, { train: false, ablate: off });
    const ablated = Float64Array.from(model.logits());
    model.forward(batch, {
      train: false,
      hook: (s, data) => {
        if (s.point !== 'z' || s.layer !== 1) return;
        for (let r = 0; r < s.B * s.T; r++)
          for (const h of [0, 3])
            data.fill(0, r * s.heads * s.width + h * s.width, r * s.heads * s.width + (h + 1) * s.width);
      },
    });
    expect(Float64Array.from(model.logits())).toEqual(ablated);
    // and resid_pre of the last layer + 1 moves the logits
    model.forward(batch, { train: false });
    const plain = Float64Array.from(model.logits());
    model.forward(batch, {
      train: false,
      hook: (s, data) => {
        if (s.point === 'resid_pre' && s.layer === 2) data.fill(0);
      },
    });
    expect(Float64Array.from(model.logits())).not.toEqual(plain);
  });

  it('are refused in training, and backward after a hooked forward says why', () => {
    const { model, batch } = goldenModel(f, cfg, backend());
    expect(() => model.forward(batch, { train: true, hook: () => undefined })).toThrow(/evaluation \(train: false\)/);
    model.forward(batch, { train: false, hook: () => undefined });
    expect(() => model.backward()).toThrow(/inference only/);
  });

  it("an encoder-decoder's hooks see the encoder, then each decoder layer with its cross-attention", () => {
    const { model, batch } = goldenModel(fe, cfgE, backend());
    model.forward(batch, { train: false });
    const plain = Float64Array.from(model.logits());
    const sites: HookSite[] = [];
    model.forward(batch, {
      train: false,
      hook: (site, data) => {
        sites.push(site);
        expect(data.length).toBe(site.B * site.T * site.heads * site.width);
      },
    });
    expect(Float64Array.from(model.logits())).toEqual(plain);
    const { B, T } = batch;
    const S = batch.S as number;
    const C = cfgE.dModel;
    const D = C / cfgE.nHeads;
    const encLayer = (l: number): HookSite[] =>
      [
        { point: 'enc_resid_pre', layer: l, heads: 1, width: C },
        { point: 'enc_q', layer: l, heads: 4, width: D },
        { point: 'enc_k', layer: l, heads: 2, width: D },
        { point: 'enc_v', layer: l, heads: 2, width: D },
        { point: 'enc_z', layer: l, heads: 4, width: D },
        { point: 'enc_attn_out', layer: l, heads: 1, width: C },
        { point: 'enc_mlp_out', layer: l, heads: 1, width: C },
      ].map((x) => ({ ...x, B, T: S }) as HookSite);
    const decLayer = (l: number): HookSite[] =>
      [
        { point: 'resid_pre', layer: l, heads: 1, width: C },
        { point: 'q', layer: l, heads: 4, width: D },
        { point: 'k', layer: l, heads: 2, width: D },
        { point: 'v', layer: l, heads: 2, width: D },
        { point: 'z', layer: l, heads: 4, width: D },
        { point: 'attn_out', layer: l, heads: 1, width: C },
        { point: 'cross_q', layer: l, heads: 4, width: D },
        { point: 'cross_k', layer: l, heads: 2, width: D, T: S },
        { point: 'cross_v', layer: l, heads: 2, width: D, T: S },
        { point: 'cross_z', layer: l, heads: 4, width: D },
        { point: 'cross_out', layer: l, heads: 1, width: C },
        { point: 'mlp_out', layer: l, heads: 1, width: C },
      ].map((x) => ({ B, T, ...x }) as HookSite);
    expect(sites).toEqual([
      ...encLayer(0),
      ...encLayer(1),
      { point: 'enc_resid_pre', layer: 2, B, T: S, heads: 1, width: C },
      ...decLayer(0),
      ...decLayer(1),
      { point: 'resid_pre', layer: 2, B, T, heads: 1, width: C },
    ]);
    // a write at an encoder point and at a cross-attention point is what the rest reads
    for (const point of ['enc_z', 'cross_z', 'cross_out'] as const) {
      model.forward(batch, { train: false, hook: (s, data) => void (s.point === point && data.fill(0)) });
      expect(Float64Array.from(model.logits()), point).not.toEqual(plain);
    }
  });

  it('a read-only hook lets backward follow, with the gradients of a plain forward', () => {
    for (const [file, c] of [
      [f, cfg],
      [fe, cfgE],
    ] as const) {
      const { model, batch } = goldenModel(file, c, backend());
      model.forward(batch, { train: false, labelSmoothing: 0 });
      model.backward();
      const want = Float64Array.from(model.grads.subarray(0, model.store.count));
      let calls = 0;
      model.forward(batch, { train: false, labelSmoothing: 0, hookReadsOnly: true, hook: () => void calls++ });
      model.backward();
      expect(calls).toBeGreaterThan(0);
      expect(Float64Array.from(model.grads.subarray(0, model.store.count))).toEqual(want);
    }
  });
});
