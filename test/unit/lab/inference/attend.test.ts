import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { attendText } from '../../../../src/lab/inference/attend';
import { OVERVIEW_SIDE, probsOf } from '../../../../src/common/attentionCodec';
import { scoredSnapshot } from '../../../../src/lab/inference/takeSnapshot';
import type { AttentionMapData, AttentionSnapshot } from '../../../../src/protocol/model';
import { decodeText } from '../../../../src/lab/inference/decode';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

function rowSums(m: AttentionMapData): number[] {
  const [H, T, S] = m.shape;
  const p = probsOf(m.data);
  const sums: number[] = [];
  for (let h = 0; h < H; h++)
    for (let t = 0; t < T; t++) sums.push(p.subarray((h * T + t) * S, (h * T + t + 1) * S).reduce((a, b) => a + b, 0));
  return sums;
}

/** The snapshot of a text's attention (every map whole: these texts fit an overview). */
const attend = (r: OpenRun, text: string): AttentionSnapshot => attendText(r, text).snapshot;

let lm: OpenRun;
let mt: OpenRun;
let bpe: OpenRun;
beforeAll(async () => {
  lm = await trainTiny(tinySpec(await tinyDocuments()));
  bpe = await trainTiny({ ...tinySpec(await tinyDocuments()), tokenizer: { type: 'bpe', vocabSize: 300 } });
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
});

describe('attendText', () => {
  it('decoder-only: causal self-attention of BOS + the text, every layer, rows summing to 1', () => {
    const s = attend(lm, 'the hand');
    expect(s.tgtTokens).toEqual(['<bos>', 't', 'h', 'e', '·', 'h', 'a', 'n', 'd']);
    expect(s.srcTokens).toEqual([]);
    expect(s.step).toBe(3);
    expect(s.maps.map((m) => `${m.stack}.${m.layer}`)).toEqual(['decoder.self.0', 'decoder.self.1']);
    for (const m of s.maps) {
      expect(m.shape).toEqual([4, 9, 9]);
      for (const x of rowSums(m)) expect(Math.abs(x - 1)).toBeLessThan(0.02); // 8-bit codes
      for (let h = 0; h < 4; h++)
        for (let t = 0; t < 9; t++) for (let k = t + 1; k < 9; k++) expect(m.data[(h * 9 + t) * 9 + k]).toBe(0); // no attention to the future
      expect(m.pool).toBeUndefined();
    }
    expect(s.masks.length).toBeGreaterThan(0);
  });

  it("carries every head's scores: positional ones of the text, induction of the run's diagnostic sequence", () => {
    const a = attend(lm, 'the hand');
    const b = attend(lm, 'a cat sat on the mat');
    expect(a.source).toBe('selection');
    const heads = a.headScores ?? [];
    expect(heads.map((x) => `${x.stack}.${x.layer}.${x.head}`)).toEqual(
      [0, 1].flatMap((l) => [0, 1, 2, 3].map((h) => `decoder.self.${l}.${h}`)),
    );
    // previousToken of layer 0, head 2, from the map itself: mean over t ≥ 1 of A[t, t−1].
    const m = a.maps[0] as AttentionMapData;
    const T = m.shape[1];
    let sum = 0;
    const p = probsOf(m.data);
    for (let t = 1; t < T; t++) sum += p[(2 * T + t) * T + t - 1] as number;
    const h2 = heads[2]?.scores;
    // Scored in float32 before the map was coded to 8 bits: equal to the coded map's within its precision.
    expect(h2 && 'previousToken' in h2 ? h2.previousToken : NaN).toBeCloseTo(sum / (T - 1), 2);
    // Induction is measured on the diagnostic sequence, not the text: the same for both texts.
    const induction = (s: typeof a): number[] =>
      (s.headScores ?? []).map((x) => ('induction' in x.scores ? x.scores.induction : NaN));
    expect(induction(a)).toEqual(induction(b));
    expect((b.headScores ?? []).map((x) => x.scores.entropy)).not.toEqual(heads.map((x) => x.scores.entropy));
    // An encoder-decoder's selection has its cross-attention alignment scored too.
    expect((attend(mt, 'abcd').headScores ?? []).filter((x) => x.stack === 'decoder.cross')).toHaveLength(2 * 4);
  });

  it('gives what the training forward gives on the same tokens: maps within their 8-bit codes, head scores exactly', () => {
    const text = 'the cat sat';
    const ids = Int32Array.of(lm.tok.specialIds.bos, ...lm.tok.encode(text));
    const batch = { B: 1, T: ids.length, input: ids, targets: Int32Array.of(...ids.subarray(1), 0) };
    const want = scoredSnapshot(lm.model, batch, lm.tok, lm.step, lm.run.spec.training.seed);
    const got = attend(lm, text);
    expect(got.tgtTokens).toEqual(want.tgtTokens);
    expect(got.masks.map((m) => m.name)).toEqual(want.masks.map((m) => m.name));
    got.maps.forEach((m, i) => {
      const w = probsOf(want.maps[i]?.data ?? new Float32Array(0));
      probsOf(m.data).forEach((p, j) => expect(Math.abs(p - (w[j] as number))).toBeLessThan(0.005));
    });
    (got.headScores ?? []).forEach((h, i) => {
      const w = want.headScores?.[i];
      expect([h.stack, h.layer, h.head]).toEqual([w?.stack, w?.layer, w?.head]);
      for (const [k, v] of Object.entries(h.scores))
        expect(v).toBeCloseTo(((w as NonNullable<typeof w>).scores as Record<string, number>)[k] as number, 5);
    });
  });

  it('sends a map longer than OVERVIEW_SIDE as its max-pooled overview, and keeps it whole in `full`', async () => {
    const long = await trainTiny(tinySpec(await tinyDocuments(), 1, 2 * OVERVIEW_SIDE));
    const { snapshot, full } = attendText(long, 'the cat sat on the mat. '.repeat(20).slice(0, OVERVIEW_SIDE + 40));
    const T = OVERVIEW_SIDE + 41;
    const whole = full[0] as AttentionMapData;
    const over = snapshot.maps[0] as AttentionMapData;
    expect(whole.shape).toEqual([4, T, T]);
    expect(over.pool).toBe(2);
    expect(over.shape).toEqual([4, Math.ceil(T / 2), Math.ceil(T / 2)]);
    // Each overview cell is the largest code of its 2 × 2 block (the code is monotonic in p).
    const [, R, C] = over.shape;
    for (const [h, r, c] of [
      [0, 0, 0],
      [1, 50, 20],
      [3, R - 1, C - 1],
      [2, 100, 99],
    ] as const) {
      let best = 0;
      for (let t = 2 * r; t < Math.min(T, 2 * r + 2); t++)
        for (let k = 2 * c; k < Math.min(T, 2 * c + 2); k++)
          best = Math.max(best, whole.data[(h * T + t) * T + k] as number);
      expect(over.data[(h * R + r) * C + c]).toBe(best);
    }
    expect(snapshot.tgtTokens).toHaveLength(T);
  });

  it('cuts a text longer than the context to fit', () => {
    const s = attend(lm, 'x'.repeat(100));
    expect(s.tgtTokens).toHaveLength(lm.model.maxLen);
    expect(s.truncation).toBe(
      'Showing the first 15 of 100 text tokens — the model\'s context is 16. 100 characters of the text ("x") are not in the run\'s vocabulary: the model reads them as bytes it never trained on.',
    );
    expect(attend(lm, 'the hand').truncation).toBeUndefined();
  });

  it('encoder-decoder: the text as source, the greedy output as target, with cross-attention', () => {
    const s = attend(mt, 'abcd');
    expect(s.srcTokens).toEqual(['a', 'b', 'c', 'd', '<eos>']);
    expect(s.tgtTokens[0]).toBe('<bos>');
    const kinds = s.maps.map((m) => m.stack);
    expect(kinds.filter((k) => k === 'encoder.self')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'decoder.cross')).toHaveLength(2);
    const cross = s.maps.find((m) => m.stack === 'decoder.cross') as AttentionMapData;
    expect(cross.shape).toEqual([4, s.tgtTokens.length, 5]);
    for (const x of rowSums(cross)) expect(Math.abs(x - 1)).toBeLessThan(0.02);
  });

  it('a BPE run shows ASCII text as text: no <0x in heatmap axes or playground tiles', () => {
    const text = 'The cat.\nA dog\tsat!';
    const s = attend(bpe, text);
    expect(s.tgtTokens.join('')).toBe('<bos>The·cat.↵A·dog→sat!');
    const { output } = decodeText(bpe, {
      input: text,
      strategy: 'greedy',
      beam: 1,
      lengthPenalty: 0.6,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: 8,
      seed: 1,
    });
    for (const t of [...s.tgtTokens, ...output.promptTokens, ...output.tokens]) expect(t).not.toContain('<0x');
  });
});
