/**
 * Patching's top tokens (lab/inference/patch.ts, `top`) on the `gpt` golden model: the clean and
 * corrupted runs' top tokens are the softmax of a plain forward's last logits, most likely first;
 * every cell of a sweep carries its patched run's, where the answer's log-probability is the cell's
 * logprob metric; the residual patch that makes the corrupted run the clean one predicts
 * as the clean run; a sweep past the cell cap keeps none; more than ten is refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../../src/engine/config';
import { validateConfig } from '../../../../src/engine/config';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { loadTorchTensors } from '../../../../src/engine/models/pytorchNames';
import { Transformer } from '../../../../src/engine/models/transformer';
import type { PatchIds } from '../../../../src/lab/inference/patch';
import { patchModel } from '../../../../src/lab/inference/patch';
import { PARITY_BACKENDS, goldenTensor } from '../../engine/models/goldenParity';

const GOLDEN = join(__dirname, '../../../golden');
const read = (rel: string) => decodeSafetensors(new Uint8Array(readFileSync(join(GOLDEN, rel))), rel);
const f = read('patching/gpt.safetensors');
const src = read(f.metadata.source as string);
const cfg = validateConfig(JSON.parse(src.metadata.config as string) as ModelConfig);
const [, backend] = PARITY_BACKENDS[0] as (typeof PARITY_BACKENDS)[number];

function model(): Transformer {
  const T = (goldenTensor(f, 'input.clean').data as Int32Array).length;
  const m = new Transformer(cfg, { maxBatch: 3, maxLen: T }).bind(backend());
  loadTorchTensors(m, (n) => src.tensors.get(`param.${n}`)?.data ?? null);
  return m;
}

const ids: PatchIds = {
  clean: goldenTensor(f, 'input.clean').data as Int32Array,
  corrupted: goldenTensor(f, 'input.corrupted').data as Int32Array,
  answer: Number(f.metadata.answer),
  wrong: Number(f.metadata.wrong),
  metric: 'logit-diff',
};

/** The softmax of the last position's logits of a plain forward of `input`. */
function probsOf(m: Transformer, input: Int32Array): number[] {
  const T = input.length;
  m.forward({ B: 1, T, input, targets: input }, { train: false, labelSmoothing: 0 });
  const V = cfg.vocabSize;
  const row = Array.from(m.logits().subarray((T - 1) * V, T * V), Number);
  const max = Math.max(...row);
  const sum = row.reduce((s, x) => s + Math.exp(x - max), 0);
  return row.map((x) => Math.exp(x - max) / sum);
}

describe('patching keeps each run’s top tokens', () => {
  it('clean, corrupted and every patched run: the softmax of the logits the metric reads', () => {
    const m = model();
    const res = patchModel(
      m,
      { ...ids, metric: 'logprob' },
      {
        what: ['resid', 'heads', 'path'],
        path: { receivers: [{ layer: 1, head: 0 }], input: 'v' },
        top: 10,
        tokenLabel: (id) => `t${id}`,
      },
    );
    for (const [which, input] of [
      ['clean', ids.clean],
      ['corrupted', ids.corrupted],
    ] as const) {
      const p = probsOf(m, input);
      const want = p
        .map((x, id) => ({ token: `t${id}`, p: x }))
        .sort((a, b) => b.p - a.p)
        .slice(0, 10);
      const got = res.top?.[which] ?? [];
      expect(got.map((t) => t.token)).toEqual(want.map((t) => t.token));
      for (const [i, t] of got.entries()) expect(t.p).toBeCloseTo(want[i]?.p ?? NaN, 6);
    }
    let both = 0; // cells whose top tokens hold the answer
    for (const map of res.maps) {
      expect(map.top).toHaveLength(map.values.length);
      for (const [i, top] of (map.top ?? []).entries()) {
        expect(top).toHaveLength(10);
        for (let j = 1; j < top.length; j++) expect(top[j]?.p).toBeLessThanOrEqual(top[j - 1]?.p ?? 0);
        const a = top.find((t) => t.token === `t${ids.answer}`);
        if (a) {
          both++;
          expect(Math.log(a.p)).toBeCloseTo(map.values[i] ?? NaN, 6);
        }
      }
    }
    expect(both).toBeGreaterThan(0);
    // Prompts one token apart: the clean residual stream entering layer 1 there makes the corrupted run the clean.
    const d = ids.clean.findIndex((t, i) => t !== ids.corrupted[i]);
    const one = Int32Array.from(ids.clean);
    one[d] = ids.corrupted[d] as number;
    const near = patchModel(m, { ...ids, corrupted: one }, { what: ['resid'], top: 5 });
    expect(near.top?.corrupted).not.toEqual(near.top?.clean);
    expect(near.maps[0]?.top?.[d]).toEqual(near.top?.clean);
  });

  it('keeps none past the cell cap, none unasked, and refuses more than ten', () => {
    const m = model();
    const capped = patchModel(m, ids, { what: ['heads', 'resid'], top: 2, maxTopCells: 4 });
    expect(capped.maps[0]?.top).toHaveLength(4); // L·H = 4 cells
    expect(capped.maps[1]?.top).toBeUndefined(); // L·T > 4
    expect(capped.top?.clean).toHaveLength(2);
    const none = patchModel(m, ids, { what: ['heads'] });
    expect(none.top).toBeUndefined();
    expect(none.maps[0]?.top).toBeUndefined();
    expect(() => patchModel(m, ids, { what: ['heads'], top: 11 })).toThrow(
      /Ask for 0 to 10 top tokens per run, not 11/,
    );
  });
});
