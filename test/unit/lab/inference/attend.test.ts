import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenRun } from '../../../../src/lab/runs/openRun';
import { attendText } from '../../../../src/lab/inference/attend';
import type { AttentionMapData } from '../../../../src/protocol/model';
import { decodeText } from '../../../../src/lab/inference/decode';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

function rowSums(m: AttentionMapData): number[] {
  const [H, T, S] = m.shape;
  const sums: number[] = [];
  for (let h = 0; h < H; h++) for (let t = 0; t < T; t++) sums.push(m.data.subarray((h * T + t) * S, (h * T + t + 1) * S).reduce((a, b) => a + b, 0));
  return sums;
}

let lm: OpenRun;
let mt: OpenRun;
let bpe: OpenRun;
beforeAll(async () => {
  lm = await trainTiny(tinySpec(tinyDocuments()));
  bpe = await trainTiny({ ...tinySpec(tinyDocuments()), tokenizer: { type: 'bpe', vocabSize: 300 } });
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
});

describe('attendText', () => {
  it('decoder-only: causal self-attention of BOS + the text, every layer, rows summing to 1', () => {
    const s = attendText(lm, 'the hand');
    expect(s.tgtTokens).toEqual(['<bos>', 't', 'h', 'e', '·', 'h', 'a', 'n', 'd']);
    expect(s.srcTokens).toEqual([]);
    expect(s.step).toBe(3);
    expect(s.maps.map((m) => `${m.stack}.${m.layer}`)).toEqual(['decoder.self.0', 'decoder.self.1']);
    for (const m of s.maps) {
      expect(m.shape).toEqual([4, 9, 9]);
      for (const x of rowSums(m)) expect(x).toBeCloseTo(1, 5);
      for (let h = 0; h < 4; h++) for (let t = 0; t < 9; t++) for (let k = t + 1; k < 9; k++) expect(m.data[(h * 9 + t) * 9 + k]).toBe(0); // no attention to the future
    }
    expect(s.masks.length).toBeGreaterThan(0);
  });

  it('carries every head\'s scores: positional ones of the text, induction of the run\'s diagnostic sequence', () => {
    const a = attendText(lm, 'the hand');
    const b = attendText(lm, 'a cat sat on the mat');
    expect(a.source).toBe('selection');
    const heads = a.headScores ?? [];
    expect(heads.map((x) => `${x.stack}.${x.layer}.${x.head}`)).toEqual([0, 1].flatMap((l) => [0, 1, 2, 3].map((h) => `decoder.self.${l}.${h}`)));
    // previousToken of layer 0, head 2, from the map itself: mean over t ≥ 1 of A[t, t−1].
    const m = a.maps[0] as AttentionMapData;
    const T = m.shape[1];
    let sum = 0;
    for (let t = 1; t < T; t++) sum += m.data[(2 * T + t) * T + t - 1] as number;
    const h2 = heads[2]?.scores;
    expect(h2 && 'previousToken' in h2 ? h2.previousToken : NaN).toBeCloseTo(sum / (T - 1), 6);
    // Induction is measured on the diagnostic sequence, not the text: the same for both texts.
    const induction = (s: typeof a): number[] => (s.headScores ?? []).map((x) => ('induction' in x.scores ? x.scores.induction : NaN));
    expect(induction(a)).toEqual(induction(b));
    expect((b.headScores ?? []).map((x) => x.scores.entropy)).not.toEqual(heads.map((x) => x.scores.entropy));
    // An encoder-decoder's selection has its cross-attention alignment scored too.
    expect((attendText(mt, 'abcd').headScores ?? []).filter((x) => x.stack === 'decoder.cross')).toHaveLength(2 * 4);
  });

  it('cuts a text longer than the context to fit', () => {
    const s = attendText(lm, 'x'.repeat(100));
    expect(s.tgtTokens).toHaveLength(lm.model.maxLen);
    expect(s.truncation).toBe("Showing the first 15 of 100 text tokens — the model's context is 16.");
    expect(attendText(lm, 'the hand').truncation).toBeUndefined();
  });

  it('encoder-decoder: the text as source, the greedy output as target, with cross-attention', () => {
    const s = attendText(mt, 'abcd');
    expect(s.srcTokens).toEqual(['a', 'b', 'c', 'd', '<eos>']);
    expect(s.tgtTokens[0]).toBe('<bos>');
    const kinds = s.maps.map((m) => m.stack);
    expect(kinds.filter((k) => k === 'encoder.self')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'decoder.cross')).toHaveLength(2);
    const cross = s.maps.find((m) => m.stack === 'decoder.cross') as AttentionMapData;
    expect(cross.shape).toEqual([4, s.tgtTokens.length, 5]);
    for (const x of rowSums(cross)) expect(x).toBeCloseTo(1, 5);
  });

  it('a BPE run shows ASCII text as text: no <0x in heatmap axes or playground tiles', () => {
    const text = 'The cat.\nA dog\tsat!';
    const s = attendText(bpe, text);
    expect(s.tgtTokens.join('')).toBe('<bos>The·cat.↵A·dog→sat!');
    const { output } = decodeText(bpe, { input: text, strategy: 'greedy', beam: 1, lengthPenalty: 0.6, temperature: 1, topK: 0, topP: 1, maxTokens: 8, seed: 1 });
    for (const t of [...s.tgtTokens, ...output.promptTokens, ...output.tokens]) expect(t).not.toContain('<0x');
  });
});
