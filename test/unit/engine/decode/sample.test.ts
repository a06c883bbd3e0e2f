import { describe, it, expect } from 'vitest';
import { greedyDecode } from '../../../../src/engine/decode/greedy';
import { sampleDecode, samplingDistribution } from '../../../../src/engine/decode/sample';
import type { SamplingFilter } from '../../../../src/engine/decode/sample';
import { Rng } from '../../../../src/engine/rng';
import { FixedStepper, HistoryStepper, expectedAttention, mockLogits, refLogSoftmax, spec } from './mockStepper';

/** The filtered distribution written out plainly: temperature, sort, top-k, renormalize, top-p, renormalize. */
function refDistribution(logits: number[], f: SamplingFilter): Map<number, number> {
  const w = logits.map((x) => Math.exp(x / f.temperature));
  let items = w.map((p, id) => ({ id, p })).sort((a, b) => b.p - a.p || a.id - b.id);
  if (f.topK > 0) items = items.slice(0, f.topK);
  let z = items.reduce((a, b) => a + b.p, 0);
  items = items.map((it) => ({ id: it.id, p: it.p / z }));
  if (f.topP < 1) {
    let cum = 0;
    let n = 0;
    while (n < items.length && cum < f.topP) cum += (items[n++] as { p: number }).p;
    items = items.slice(0, n);
  }
  z = items.reduce((a, b) => a + b.p, 0);
  return new Map(items.map((it) => [it.id, it.p / z]));
}

describe('samplingDistribution', () => {
  // probabilities 0.05, 0.4, 0.1, 0.3, 0.15 → sorted ids 1, 3, 4, 2, 0
  const logits = Float32Array.from([0.05, 0.4, 0.1, 0.3, 0.15], Math.log);
  const keep = (f: Partial<SamplingFilter>): number[] =>
    samplingDistribution(logits, { temperature: 1, topK: 0, topP: 1, ...f }).ids;

  it('top-p keeps the smallest prefix whose mass reaches p', () => {
    expect(keep({ topP: 0.3 })).toEqual([1]);
    expect(keep({ topP: 0.5 })).toEqual([1, 3]);
    expect(keep({ topP: 0.72 })).toEqual([1, 3, 4]);
    expect(keep({ topP: 0.9 })).toEqual([1, 3, 4, 2]);
    expect(keep({ topP: 1 }).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(keep({ topP: 1e-9 })).toEqual([1]); // always at least one token
    // exact mass: four equal weights of exactly 1, so p = 0.5 is reached by two tokens
    const uniform = new Float32Array(4);
    expect(samplingDistribution(uniform, { temperature: 1, topK: 0, topP: 0.5 }).ids).toEqual([0, 1]);
    expect(samplingDistribution(uniform, { temperature: 1, topK: 0, topP: 0.25 }).ids).toEqual([0]);
  });

  it('top-k then top-p measures p on the renormalized top-k', () => {
    // top-2 renormalized: 0.4/0.7 = 0.571, 0.3/0.7 = 0.429
    expect(keep({ topK: 2, topP: 0.5 })).toEqual([1]);
    expect(keep({ topK: 2, topP: 0.6 })).toEqual([1, 3]);
    const d = samplingDistribution(logits, { temperature: 1, topK: 2, topP: 1 });
    expect(d.probs[0]).toBeCloseTo(0.4 / 0.7, 6);
    expect(d.probs[1]).toBeCloseTo(0.3 / 0.7, 6);
  });

  it('temperature sharpens and flattens; 0 is the argmax', () => {
    const d = samplingDistribution(logits, { temperature: 0.5, topK: 0, topP: 1 });
    const z = [0.05, 0.4, 0.1, 0.3, 0.15].reduce((a, p) => a + p * p, 0);
    d.ids.forEach((id, i) => expect(d.probs[i]).toBeCloseTo([0.05, 0.4, 0.1, 0.3, 0.15][id] ** 2 / z, 6));
    expect(samplingDistribution(logits, { temperature: 0, topK: 0, topP: 1 })).toEqual({ ids: [1], probs: [1] });
  });

  it('is numerically stable for huge logits and tiny temperatures', () => {
    const big = Float32Array.of(3e4, 3e4 - 1, 3e4 - 2);
    const d = samplingDistribution(big, { temperature: 1, topK: 0, topP: 1 });
    const z = 1 + Math.exp(-1) + Math.exp(-2);
    d.probs.forEach((p, i) => expect(p).toBeCloseTo(([1, Math.exp(-1), Math.exp(-2)][i] as number) / z, 9));
    const cold = samplingDistribution(Float32Array.of(0.5, 0.2, 0.1), { temperature: 1e-6, topK: 0, topP: 1 });
    expect(cold.probs[0]).toBe(1);
    expect(cold.probs.slice(1)).toEqual([0, 0]);
  });

  it('breaks top-k ties toward the lower id, with a short list and a full sort', () => {
    const flat = new Float32Array(100);
    expect(samplingDistribution(flat, { temperature: 1, topK: 3, topP: 1 }).ids).toEqual([0, 1, 2]);
    expect(samplingDistribution(flat, { temperature: 1, topK: 80, topP: 1 }).ids).toEqual(
      Array.from({ length: 80 }, (_, i) => i),
    );
  });
});

describe('sampleDecode', () => {
  it('temperature 0 and top-k 1 both equal greedy', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const sp = spec({ seed, V: 9, eos: 4, eosBias: 0.1 });
      const greedy = greedyDecode(new HistoryStepper(sp), Int32Array.of(0), { maxTokens: 15, eos: 4 });
      const t0 = sampleDecode(new HistoryStepper(sp), Int32Array.of(0), {
        maxTokens: 15,
        eos: 4,
        temperature: 0,
        topK: 0,
        topP: 1,
        rng: new Rng(seed),
      });
      const k1 = sampleDecode(new HistoryStepper(sp), Int32Array.of(0), {
        maxTokens: 15,
        eos: 4,
        temperature: 1.7,
        topK: 1,
        topP: 1,
        rng: new Rng(seed),
      });
      expect(t0.tokens).toEqual(greedy.tokens);
      expect(k1.tokens).toEqual(greedy.tokens);
      expect(k1.logprobs).toEqual(greedy.logprobs);
    }
  });

  it('same seed gives the same output; another seed another one', () => {
    const sp = spec({ V: 12, eos: -1, scale: 0.5 });
    const run = (seed: number): number[] =>
      sampleDecode(new HistoryStepper(sp), Int32Array.of(3), {
        maxTokens: 25,
        eos: -1,
        temperature: 1.2,
        topK: 0,
        topP: 0.95,
        rng: new Rng(seed),
      }).tokens;
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
  });

  it('reports untempered log-probabilities under the model', () => {
    const sp = spec({ V: 8, eos: 2, seed: 3 });
    const res = sampleDecode(new HistoryStepper(sp), Int32Array.of(1), {
      maxTokens: 10,
      eos: 2,
      temperature: 2.5,
      topK: 5,
      topP: 0.9,
      rng: new Rng(11),
    });
    const ctx = [1];
    res.tokens.forEach((t, i) => {
      expect(res.logprobs[i]).toBeCloseTo(refLogSoftmax(mockLogits(sp, ctx))[t] as number, 10);
      ctx.push(t);
    });
  });

  it('draws with the frequencies of the tempered, truncated distribution', () => {
    const logits = [1.2, -0.4, 0.3, 2.0, 0.0, -1.5, 0.9, 0.5];
    const stepper = new FixedStepper(Float32Array.from(logits));
    const filters: SamplingFilter[] = [
      { temperature: 1, topK: 0, topP: 1 },
      { temperature: 0.7, topK: 3, topP: 1 },
      { temperature: 1.3, topK: 0, topP: 0.8 },
      { temperature: 1, topK: 5, topP: 0.7 },
    ];
    const N = 12000;
    for (const f of filters) {
      const expected = refDistribution(logits, f);
      const counts = new Array<number>(logits.length).fill(0);
      const rng = new Rng(1234);
      for (let i = 0; i < N; i++) {
        const t = sampleDecode(stepper, Int32Array.of(0), { maxTokens: 1, eos: -1, ...f, rng }).tokens[0] as number;
        counts[t] = (counts[t] as number) + 1;
      }
      let chi2 = 0;
      counts.forEach((c, id) => {
        const p = expected.get(id) ?? 0;
        if (p === 0) expect(c).toBe(0);
        else chi2 += (c - N * p) ** 2 / (N * p);
      });
      const df = expected.size - 1;
      expect(chi2).toBeLessThan(df + 6 * Math.sqrt(2 * df) + 4); // loose: ~5σ above the mean
    }
  });

  it('returns the attention of the sampled history', () => {
    const sp = spec({ seed: 21, eos: -1 });
    const res = sampleDecode(new HistoryStepper(sp), Int32Array.of(4, 0), {
      maxTokens: 5,
      eos: -1,
      temperature: 1,
      topK: 0,
      topP: 1,
      rng: new Rng(5),
      captureAttention: true,
    });
    const exp = expectedAttention(sp, [4, 0, ...res.tokens], 1, 5);
    expect(res.attention?.self).toEqual(exp.self);
    expect(res.attention?.cross).toEqual(exp.cross);
  });

  it('stops at EOS, maxTokens and the context', () => {
    const opts = { temperature: 1, topK: 0, topP: 1 };
    const eos = sampleDecode(new HistoryStepper(spec({ eosBias: 1.5 })), Int32Array.of(0), {
      maxTokens: 60,
      eos: 2,
      ...opts,
      rng: new Rng(1),
    });
    expect(eos.stopReason).toBe('eos');
    expect(eos.tokens.indexOf(2)).toBe(eos.tokens.length - 1);
    const max = sampleDecode(new HistoryStepper(spec({ eos: -1 })), Int32Array.of(0), {
      maxTokens: 9,
      eos: -1,
      ...opts,
      rng: new Rng(1),
    });
    expect([max.tokens.length, max.stopReason]).toEqual([9, 'maxTokens']);
    const ctx = sampleDecode(new HistoryStepper(spec({ eos: -1, maxPositions: 5 })), Int32Array.of(0, 1), {
      maxTokens: 9,
      eos: -1,
      ...opts,
      rng: new Rng(1),
    });
    expect([ctx.tokens.length, ctx.stopReason]).toEqual([4, 'context']);
    const slid = sampleDecode(new HistoryStepper(spec({ eos: -1, maxPositions: 5 })), Int32Array.of(0, 1), {
      maxTokens: 40,
      eos: -1,
      slide: true,
      ...opts,
      rng: new Rng(1),
    });
    expect([slid.tokens.length, slid.stopReason]).toEqual([40, 'maxTokens']);
  });

  it('samples the same tokens with and without slide while within the context', () => {
    const opts = { temperature: 1.3, topK: 4, topP: 0.9, eos: -1 };
    const sp = spec({ eos: -1, maxPositions: 12 });
    const plain = sampleDecode(new HistoryStepper(sp), Int32Array.of(0, 1), {
      maxTokens: 11,
      ...opts,
      rng: new Rng(5),
    });
    const slid = sampleDecode(new HistoryStepper(sp), Int32Array.of(0, 1), {
      maxTokens: 11,
      slide: true,
      ...opts,
      rng: new Rng(5),
    });
    expect(slid.tokens).toEqual(plain.tokens);
    expect(slid.logprobs).toEqual(plain.logprobs);
  });
});
