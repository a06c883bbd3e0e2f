/**
 * Activation and path patching against PyTorch forward hooks: test/golden/patching/ (written by
 * scripts/pytorch/make_patching_golden.py, in float64, one patched forward at a time) holds the
 * metric of every patched run of every sweep — residual stream, attn_out and mlp_out per (layer,
 * position), each head's output per (layer, head) and per (layer, head, position), and path
 * patching through receivers' queries (GPT, logit-diff) or keys (Llama-shaped: RoPE, RMSNorm,
 * SwiGLU, grouped-query attention; logprob) — for the weights of the `gpt` and `preset-llama`
 * golden models. Our batched sweeps (3 runs per forward, so batches are cut mid-row) must agree
 * to 1e-5 relative (|ours − PyTorch| / max(1, |PyTorch|)) on every backend, raw and normalised.
 * And the encoder-decoder sweeps (two sources, one target prefix; encdec-pre's and encdec-modern's
 * weights): each stack's resid, attn (the decoder's self and cross rows), mlp, the one heads map,
 * each stack's heads-pos, and path patching through decoder self-attention values (encdec) and
 * cross-attention keys under grouped-query attention (encdec-modern), against hooks on
 * reference.py's Transformer, likewise.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../../src/engine/config';
import { validateConfig } from '../../../../src/engine/config';
import type { SafetensorsFile } from '../../../../src/engine/io/safetensors';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { loadTorchTensors } from '../../../../src/engine/models/pytorchNames';
import { Transformer } from '../../../../src/engine/models/transformer';
import type { PatchMetric, PathInput } from '../../../../src/lab/inference/patch';
import { patchModel } from '../../../../src/lab/inference/patch';
import { PARITY_BACKENDS, goldenTensor } from '../../engine/models/goldenParity';

const GOLDEN = join(__dirname, '../../../golden');

const read = (rel: string): SafetensorsFile => decodeSafetensors(new Uint8Array(readFileSync(join(GOLDEN, rel))), rel);

const CASES = ['gpt', 'llama'].map((name) => {
  const f = read(`patching/${name}.safetensors`);
  const src = read(f.metadata.source as string);
  return { name, f, src, cfg: validateConfig(JSON.parse(src.metadata.config as string) as ModelConfig) };
});

describe.each(PARITY_BACKENDS)('patching agrees with PyTorch hooks on %s', (_, backend) => {
  it.each(CASES)('$name: resid, attn, mlp, heads, heads-pos and path', ({ f, src, cfg }) => {
    const clean = goldenTensor(f, 'input.clean').data as Int32Array;
    const corrupted = goldenTensor(f, 'input.corrupted').data as Int32Array;
    const model = new Transformer(cfg, { maxBatch: 3, maxLen: clean.length }).bind(backend());
    loadTorchTensors(model, (n) => src.tensors.get(`param.${n}`)?.data ?? null);
    const m = f.metadata;
    const receivers = (JSON.parse(m.receivers as string) as [number, number][]).map(([layer, head]) => ({
      layer,
      head,
    }));
    let last = 0;
    const res = patchModel(
      model,
      {
        clean,
        corrupted,
        answer: Number(m.answer),
        wrong: Number(m.wrong),
        metric: m.metric as PatchMetric,
      },
      {
        what: ['resid', 'attn', 'mlp', 'heads', 'heads-pos', 'path'],
        path: { receivers, input: m.input as PathInput },
        onProgress: (done, total) => {
          expect(done).toBeGreaterThan(last);
          expect(done).toBeLessThanOrEqual(total);
          last = done;
        },
      },
    );
    const wantClean = Number(m.clean);
    const wantCorrupt = Number(m.corrupted);
    expect(Math.abs(res.clean - wantClean)).toBeLessThan(1e-5 * Math.max(1, Math.abs(wantClean)));
    expect(Math.abs(res.corrupted - wantCorrupt)).toBeLessThan(1e-5 * Math.max(1, Math.abs(wantCorrupt)));
    const names: Record<string, string> = {
      resid: 'resid',
      attn: 'attn',
      mlp: 'mlp',
      heads: 'heads',
      'heads-pos': 'heads_pos',
      path: 'path',
    };
    expect(res.maps.map((x) => x.what)).toEqual(['resid', 'attn', 'mlp', 'heads', 'heads-pos', 'path']);
    for (const map of res.maps) {
      const want = goldenTensor(f, names[map.what] as string);
      expect([map.rows.length, map.cols.length], map.what).toEqual(want.shape);
      let worst = 0;
      let worstNorm = 0;
      want.data.forEach((w, i) => {
        worst = Math.max(worst, Math.abs((map.values[i] as number) - w) / Math.max(1, Math.abs(w)));
        const wn = (w - wantCorrupt) / (wantClean - wantCorrupt);
        worstNorm = Math.max(worstNorm, Math.abs((map.normalised[i] as number) - wn) / Math.max(1, Math.abs(wn)));
      });
      expect(worst, map.what).toBeLessThan(1e-5);
      expect(worstNorm, map.what).toBeLessThan(1e-5);
    }
    // the sweeps are not trivially the corrupted run: some cell of each moves the metric
    for (const map of res.maps) expect(Math.max(...map.normalised.map(Math.abs)), map.what).toBeGreaterThan(0.01);
  });
});

const ENCDEC = ['encdec', 'encdec-modern'].map((name) => {
  const f = read(`patching/${name}.safetensors`);
  const src = read(f.metadata.source as string);
  return { name, f, src, cfg: validateConfig(JSON.parse(src.metadata.config as string) as ModelConfig) };
});

describe.each(PARITY_BACKENDS)('encoder-decoder patching agrees with PyTorch hooks on %s', (_, backend) => {
  it.each(ENCDEC)('$name: both stacks, resid, attn, mlp, heads, heads-pos and path', ({ f, src, cfg }) => {
    const clean = goldenTensor(f, 'input.clean').data as Int32Array;
    const corrupted = goldenTensor(f, 'input.corrupted').data as Int32Array;
    const target = goldenTensor(f, 'input.target').data as Int32Array;
    const model = new Transformer(cfg, { maxBatch: 3, maxLen: clean.length }).bind(backend());
    loadTorchTensors(model, (n) => src.tensors.get(`param.${n}`)?.data ?? null);
    const m = f.metadata;
    let last = 0;
    let total = 0;
    const receivers = (JSON.parse(m.receivers as string) as ['self' | 'cross', number, number][]).map(
      ([attention, layer, head]) => ({ attention, layer, head }),
    );
    const res = patchModel(
      model,
      { clean, corrupted, target, answer: Number(m.answer), wrong: Number(m.wrong), metric: m.metric as PatchMetric },
      {
        what: ['resid', 'attn', 'mlp', 'heads', 'heads-pos', 'path'],
        path: { receivers, input: m.input as PathInput },
        onProgress: (done, t) => {
          expect(done).toBeGreaterThan(last);
          last = done;
          total = t;
        },
      },
    );
    expect(last).toBe(total);
    const wantClean = Number(m.clean);
    const wantCorrupt = Number(m.corrupted);
    expect(Math.abs(res.clean - wantClean)).toBeLessThan(1e-5 * Math.max(1, Math.abs(wantClean)));
    expect(Math.abs(res.corrupted - wantCorrupt)).toBeLessThan(1e-5 * Math.max(1, Math.abs(wantCorrupt)));
    const key = (x: (typeof res.maps)[number]): string =>
      `${x.what.replace('-', '_')}${x.stack === 'encoder' ? '_enc' : x.stack === 'decoder' ? '_dec' : ''}`;
    expect(res.maps.map(key)).toEqual([
      'resid_enc',
      'resid_dec',
      'attn_enc',
      'attn_dec',
      'mlp_enc',
      'mlp_dec',
      'heads',
      'heads_pos_enc',
      'heads_pos_dec',
      'path',
    ]);
    const Le = cfg.nEncoderLayers;
    const H = cfg.nHeads;
    for (const map of res.maps) {
      const want = goldenTensor(f, key(map));
      expect([map.rows.length, map.cols.length], key(map)).toEqual(want.shape);
      expect(map.cols.length, key(map)).toBe(
        map.stack === 'encoder' ? clean.length : map.stack === 'decoder' ? target.length : H,
      );
      want.data.forEach((w, i) => {
        expect(Math.abs((map.values[i] as number) - w) / Math.max(1, Math.abs(w)), `${key(map)}[${i}]`).toBeLessThan(
          1e-5,
        );
      });
    }
    // The rows name their stack and sublayer.
    const heads = res.maps.find((x) => x.what === 'heads');
    expect(heads?.rows.slice(Le, Le + 2)).toEqual(['dec L1 self', 'dec L1 cross']);
    expect(heads?.rows[0]).toBe('enc L1');
    expect(res.maps.find((x) => key(x) === 'heads_pos_dec')?.rows[H]).toBe('dec L1 cross H1');
    // A shared target: the decoder's embeddings are the same in both runs, so patching them changes nothing
    // (up to the rounding of a batched forward).
    const residDec = res.maps.find((x) => key(x) === 'resid_dec');
    for (let p = 0; p < target.length; p++) expect(Math.abs(residDec?.normalised[p] as number)).toBeLessThan(1e-5);
    // The encoder's sweeps move the metric.
    for (const map of res.maps.filter((x) => x.stack === 'encoder'))
      expect(Math.max(...map.normalised.map(Math.abs)), key(map)).toBeGreaterThan(0.01);
    // Path patching: senders are the attentions before the last receiver's, in the forward's order; with every
    // cross-attention head frozen, an encoder head reaches a decoder receiver only through cross-attention keys or
    // values, and a decoder head reaches none of those.
    const path = res.maps.find((x) => x.what === 'path');
    const cross = receivers[0]?.attention === 'cross';
    expect(path?.rows).toEqual(
      cross
        ? ['enc L1', 'enc L2', 'dec L1 self', 'dec L1 cross', 'dec L2 self']
        : ['enc L1', 'enc L2', 'dec L1 self', 'dec L1 cross'],
    );
    expect(path?.path?.receivers).toEqual(receivers);
    path?.rows.forEach((row, r) => {
      const cells = path.normalised.slice(r * H, (r + 1) * H).map(Math.abs);
      const reaches = cross ? row.startsWith('enc') : row === 'dec L1 cross';
      if (reaches) expect(Math.max(...cells), row).toBeGreaterThan(0.01);
      else expect(Math.max(...cells), row).toBeLessThan(1e-5);
    });
  });

  it('refuses a receiver past its stack and a missing target, in one line each', () => {
    const { f, src, cfg } = ENCDEC[0] as (typeof ENCDEC)[number];
    const clean = goldenTensor(f, 'input.clean').data as Int32Array;
    const model = new Transformer(cfg, { maxBatch: 3, maxLen: clean.length }).bind(backend());
    loadTorchTensors(model, (n) => src.tensors.get(`param.${n}`)?.data ?? null);
    const ids = {
      clean,
      corrupted: goldenTensor(f, 'input.corrupted').data as Int32Array,
      target: goldenTensor(f, 'input.target').data as Int32Array,
      answer: 5,
      wrong: 6,
      metric: 'logit-diff' as const,
    };
    const receivers = [{ layer: 2, head: 0, attention: 'encoder' as const }];
    expect(() => patchModel(model, ids, { what: ['path'], path: { receivers, input: 'q' } })).toThrow(
      "No receiver head enc L3 H1; this model's encoder has layers 1..2 and heads 1..2.",
    );
    const first = [{ layer: 0, head: 0, attention: 'encoder' as const }];
    expect(() => patchModel(model, ids, { what: ['path'], path: { receivers: first, input: 'q' } })).toThrow(
      /Every receiver is in the encoder's layer 1, so no head sends to them/,
    );
    const { target: _, ...noTarget } = ids;
    expect(() => patchModel(model, noTarget, { what: ['resid'] })).toThrow(/two sources and one target prefix/);
  });
});
