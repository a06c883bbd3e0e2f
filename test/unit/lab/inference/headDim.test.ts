/**
 * Every lab view of a run whose heads stand apart from dModel / nHeads (issue 30: `headDim` 12
 * over dModel 32 / 4 heads, 2 key/value heads, `attnScale` 0.25): the attention of a text,
 * head scores, the logit lens, ablation and decoding (greedy, beam, the key/value cache against
 * the full forward) all run and agree with the model's own forward.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { allHeads } from '../../../../src/engine/models/heads';
import { compareHeadsOff, predictWithHeadsOff } from '../../../../src/lab/inference/ablate';
import { attendText } from '../../../../src/lab/inference/attend';
import { decodeText } from '../../../../src/lab/inference/decode';
import { headsOfText } from '../../../../src/lab/inference/heads';
import { inputBatch, logitLens } from '../../../../src/lab/inference/lens';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import type { DecodeParams } from '../../../../src/protocol/model';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

let r: OpenRun;
beforeAll(async () => {
  const spec = tinySpec(await tinyDocuments(), 4, 16);
  const over = { nHeads: 4, nKvHeads: 2, headDim: 12, attnScale: 0.25, positional: 'rope' } as const;
  r = await trainTiny({ ...spec, model: { ...spec.model, overrides: { ...spec.model.overrides, ...over } } });
}, 240_000);

const params: DecodeParams = {
  input: 'the cat',
  strategy: 'greedy',
  beam: 1,
  lengthPenalty: 0.6,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxTokens: 6,
  seed: 1,
};

describe('a run with headDim 12 over dModel 32 / 4 heads', () => {
  it('is built that way: q_proj [48, 32], W_o [32, 48]', () => {
    expect(r.model.config.headDim).toBe(12);
    expect(r.model.param('transformer.h.0.attn.c_attn_q.weight').shape).toEqual([48, 32]);
    expect(r.model.param('transformer.h.0.attn.c_attn_k.weight').shape).toEqual([24, 32]);
    expect(r.model.param('transformer.h.0.attn.c_proj.weight').shape).toEqual([32, 48]);
  });

  it('shows the attention of a text: 4 heads per layer, each kv head named', () => {
    const a = attendText(r, 'the cat sat');
    const self = a.full.filter((m) => m.stack === 'decoder.self');
    expect(self).toHaveLength(r.model.config.nDecoderLayers);
    for (const m of self) {
      expect(m.shape[0]).toBe(4);
      expect(m.kvHeads).toBe(2);
    }
  });

  it('scores every head, with the key/value head each reads', () => {
    const { heads } = headsOfText(r, 'the cat sat on the mat');
    expect(heads).toHaveLength(r.model.config.nDecoderLayers * 4);
    expect(heads.map((h) => h.kvGroup)).toEqual(heads.map((h) => Math.floor(h.head / 2)));
  });

  it("reads the lens: the top layer's next tokens are the model's", () => {
    const input = { prompt: 'the cat' };
    const lens = logitLens(r, input, { topK: 3 });
    const top = lens.layers[r.model.config.nDecoderLayers]?.positions.at(-1)?.top.map((t) => t.token);
    expect(top).toEqual(predictWithHeadsOff(r, input, [], 3).next.map((t) => t.token));
  });

  it('ablates heads: every head off changes the loss, none off changes nothing', () => {
    const input = { prompt: 'the cat sat' };
    const none = compareHeadsOff(r, input, [], { topK: 3 });
    expect(none.ablated.loss).toBe(none.base.loss);
    const all = compareHeadsOff(r, input, allHeads(r.model.config), { topK: 3 });
    expect(all.ablated.loss).not.toBeCloseTo(all.base.loss, 6);
  });

  it('decodes through the key/value cache what the full forward predicts, greedy and beam alike', () => {
    const greedy = decodeText(r, params).output;
    expect(greedy.ids.length).toBeGreaterThan(0);
    const prompt = inputBatch(r, { prompt: params.input }).input;
    const seq = [...prompt];
    for (const id of greedy.ids) {
      const T = seq.length;
      r.model.forward({ B: 1, T, input: Int32Array.from(seq), targets: new Int32Array(T) }, { train: false });
      const V = r.model.config.vocabSize;
      const row = Array.from(r.model.logits().subarray((T - 1) * V, T * V));
      expect(row.indexOf(Math.max(...row))).toBe(id);
      seq.push(id);
    }
    const beam = decodeText(r, { ...params, strategy: 'beam', beam: 3 }).output;
    expect(beam.beams[0]?.text).toBe(beam.text);
  });
});
