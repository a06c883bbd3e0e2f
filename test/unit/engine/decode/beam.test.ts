import { describe, it, expect } from 'vitest';
import { beamSearch, lengthPenalty } from '../../../../src/engine/decode/beam';
import { greedyDecode } from '../../../../src/engine/decode/greedy';
import type { DecodeResult } from '../../../../src/engine/decode/stepperContract';
import {
  FixedStepper,
  HistoryStepper,
  MarkovStepper,
  expectedAttention,
  mockLogits,
  refLogSoftmax,
  spec,
} from './mockStepper';
import type { MockSpec } from './mockStepper';

const lp = (n: number, alpha: number): number => ((5 + n) / 6) ** alpha;

/** Every complete sequence (EOS-ended, or cut at maxLen) with its length-penalized score. */
function exhaustive(
  sp: MockSpec,
  prompt: number[],
  maxLen: number,
  eos: number,
  alpha: number,
): { tokens: number[]; score: number }[] {
  const all: { tokens: number[]; score: number }[] = [];
  const dfs = (ctx: number[], tokens: number[], raw: number): void => {
    const logp = refLogSoftmax(mockLogits(sp, ctx));
    for (let v = 0; v < sp.V; v++) {
      const next = [...tokens, v];
      const r = raw + (logp[v] as number);
      if (v === eos || next.length === maxLen) all.push({ tokens: next, score: r / lp(next.length, alpha) });
      else dfs([...ctx, v], next, r);
    }
  };
  dfs(prompt, [], 0);
  return all;
}

/** The oracle's log-probabilities of `tokens` after `prompt`. */
function oracleLogprobs(sp: MockSpec, prompt: number[], tokens: number[]): number[] {
  const ctx = [...prompt];
  return tokens.map((t) => {
    const l = refLogSoftmax(mockLogits(sp, ctx))[t] as number;
    ctx.push(t);
    return l;
  });
}

function expectConsistent(sp: MockSpec, prompt: number[], hyps: DecodeResult[], alpha: number): void {
  for (const h of hyps) {
    const ref = oracleLogprobs(sp, prompt, h.tokens);
    h.logprobs.forEach((l, i) => expect(l).toBeCloseTo(ref[i] as number, 9));
    expect(h.score).toBeCloseTo(ref.reduce((a, b) => a + b, 0) / lp(h.tokens.length, alpha), 9);
  }
  for (let i = 1; i < hyps.length; i++)
    expect((hyps[i - 1] as DecodeResult).score).toBeGreaterThanOrEqual((hyps[i] as DecodeResult).score);
}

describe('lengthPenalty', () => {
  it('is the GNMT ((5 + |Y|) / 6)^α', () => {
    expect(lengthPenalty(1, 0.6)).toBe(1);
    expect(lengthPenalty(7, 0.6)).toBeCloseTo(2 ** 0.6, 12);
    expect(lengthPenalty(13, 0)).toBe(1);
  });
});

describe('beamSearch', () => {
  it('with a beam that never prunes finds the best length-penalized sequence of an exhaustive search', () => {
    for (const alpha of [0, 0.6, 1.5]) {
      for (let seed = 1; seed <= 4; seed++) {
        const sp = spec({ V: 4, eos: 3, seed: seed * 17, eosBias: 0.2 * seed, scale: 1.5, maxRows: 128 });
        const prompt = [seed % 3];
        const all = exhaustive(sp, prompt, 4, 3, alpha).sort((a, b) => b.score - a.score);
        const hyps = beamSearch(new HistoryStepper(sp), Int32Array.from(prompt), {
          beamSize: 128,
          lengthPenalty: alpha,
          maxTokens: 4,
          eos: 3,
        });
        expect(hyps[0]?.tokens).toEqual(all[0]?.tokens);
        expect(hyps[0]?.score).toBeCloseTo(all[0]?.score as number, 9);
        expectConsistent(sp, prompt, hyps, alpha);
      }
    }
  });

  it('with beam 1 equals greedy', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const sp = spec({ seed, V: 7, eos: 5, eosBias: 0.12 });
      const prompt = Int32Array.of(seed % 7, 1);
      const greedy = greedyDecode(new HistoryStepper(sp), prompt, { maxTokens: 12, eos: 5 });
      const beam = beamSearch(new HistoryStepper(sp), prompt, { beamSize: 1, lengthPenalty: 0, maxTokens: 12, eos: 5 });
      expect(beam).toHaveLength(1);
      expect(beam[0]?.tokens).toEqual(greedy.tokens);
      expect(beam[0]?.logprobs).toEqual(greedy.logprobs);
      expect(beam[0]?.stopReason).toBe(greedy.stopReason);
    }
  });

  it('keeps the cache aligned with the beams: every hypothesis scores as its own history', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const sp = spec({ seed, V: 8, eos: 2, eosBias: 0.15, scale: 1 });
      const stepper = new HistoryStepper(sp);
      const hyps = beamSearch(stepper, Int32Array.of(0, 5), { beamSize: 4, lengthPenalty: 0.6, maxTokens: 10, eos: 2 });
      expect(hyps.length).toBeGreaterThan(0);
      expect(hyps.length).toBeLessThanOrEqual(4);
      expectConsistent(sp, [0, 5], hyps, 0.6);
      expect(new Set(hyps.map((h) => h.tokens.join(','))).size).toBe(hyps.length);
      const firstReorder = stepper.calls.find((c) => c.kind === 'reorder');
      expect(firstReorder).toEqual({ kind: 'reorder', parents: [0, 0, 0, 0] });
      expect(stepper.calls.slice(0, 2).every((c) => c.kind === 'step' && c.tokens.length === 1)).toBe(true);
    }
  });

  it('returns, for every hypothesis, the attention the model emitted for its history', () => {
    for (const [S, includePrompt] of [
      [5, false],
      [0, true],
      [3, true],
    ] as const) {
      const sp = spec({ seed: 31, V: 6, eos: 2, eosBias: 0.1, S, scale: 0.8 });
      const prompt = [1, 4];
      const hyps = beamSearch(new HistoryStepper(sp), Int32Array.from(prompt), {
        beamSize: 3,
        lengthPenalty: 0.6,
        maxTokens: 7,
        eos: 2,
        captureAttention: true,
        attentionIncludesPrompt: includePrompt,
      });
      for (const h of hyps) {
        const queryStart = includePrompt ? 0 : 1;
        const T = prompt.length - 1 - queryStart + h.tokens.length;
        const exp = expectedAttention(sp, [...prompt, ...h.tokens], queryStart, T);
        expect(h.attention?.queries).toBe(T);
        expect(h.attention?.self).toEqual(exp.self);
        expect(h.attention?.cross).toEqual(exp.cross);
      }
    }
  });

  it('stops at maxTokens and at the context, ranking cut hypotheses', () => {
    const sp = spec({ eos: -1, V: 5 });
    const byTokens = beamSearch(new HistoryStepper(sp), Int32Array.of(0), {
      beamSize: 3,
      lengthPenalty: 0.6,
      maxTokens: 5,
      eos: -1,
    });
    expect(byTokens.map((h) => [h.tokens.length, h.stopReason])).toEqual([
      [5, 'maxTokens'],
      [5, 'maxTokens'],
      [5, 'maxTokens'],
    ]);
    const small = spec({ eos: -1, V: 5, maxPositions: 4 });
    const byContext = beamSearch(new HistoryStepper(small), Int32Array.of(0, 1), {
      beamSize: 2,
      lengthPenalty: 0.6,
      maxTokens: 50,
      eos: -1,
    });
    expect(byContext.map((h) => [h.tokens.length, h.stopReason])).toEqual([
      [3, 'context'],
      [3, 'context'],
    ]);
    expectConsistent(small, [0, 1], byContext, 0.6);
  });

  it('stops at EOS: finished hypotheses end with EOS and are never fed', () => {
    const sp = spec({ eosBias: 1, V: 6 });
    const hyps = beamSearch(new HistoryStepper(sp), Int32Array.of(3), {
      beamSize: 4,
      lengthPenalty: 0.6,
      maxTokens: 40,
      eos: 2,
    });
    for (const h of hyps) {
      expect(h.stopReason).toBe('eos');
      expect(h.tokens.indexOf(2)).toBe(h.tokens.length - 1);
    }
  });

  it('stops as soon as no live beam can beat the best finished hypothesis (rule b)', () => {
    // p(EOS) = 0.9: EOS finishes at step 0 and every live beam already scores below it.
    const stepper = new FixedStepper(Float32Array.from([0.9, 0.04, 0.03, 0.03], Math.log));
    const hyps = beamSearch(stepper, Int32Array.of(1), { beamSize: 3, lengthPenalty: 0, maxTokens: 10, eos: 0 });
    expect(hyps.map((h) => h.tokens)).toEqual([[0]]);
    expect(stepper.steps).toBe(1); // the prompt only
  });

  it('stops once beamSize hypotheses have finished (rule a)', () => {
    // p = 0.4 / 0.3 / 0.3, EOS = 0, α = 2 favors length so rule (b) does not fire.
    const stepper = new FixedStepper(Float32Array.from([0.4, 0.3, 0.3], Math.log));
    const hyps = beamSearch(stepper, Int32Array.of(1), { beamSize: 2, lengthPenalty: 2, maxTokens: 10, eos: 0 });
    expect(hyps.map((h) => h.tokens)).toEqual([[0], [1, 0]]);
    expect(hyps[1]?.score).toBeCloseTo(Math.log(0.3 * 0.4) / lp(2, 2), 6);
    expect(stepper.steps).toBe(2);
  });

  it('with α > 0 keeps searching while a longer beam could still win (rule b is exact)', () => {
    // After prompt 3: p(EOS) 0.7, p(1) 0.3; afterwards p(1) = 0.999 and EOS is never near the
    // top 2 (so rule (a) cannot fire). [EOS] scores log 0.7 = −0.357 and every live beam's raw
    // score is below it, but eight 1s score (log 0.3 + 7 log 0.999) / lp(8) ≈ −0.258 (α = 2).
    const later = [1e-9, 0.999, 0.0005, 0.0005 - 1e-9];
    const probs = [later, later, later, [0.7, 0.3 - 2e-6, 1e-6, 1e-6]];
    const hyps = beamSearch(new MarkovStepper(probs), Int32Array.of(3), {
      beamSize: 2,
      lengthPenalty: 2,
      maxTokens: 8,
      eos: 0,
    });
    expect(hyps[0]?.tokens).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect(hyps[0]?.stopReason).toBe('maxTokens');
    expect(hyps[0]?.score).toBeCloseTo((Math.log(0.3 - 2e-6) + 7 * Math.log(0.999)) / lp(8, 2), 5);
    expect(hyps[1]?.tokens).toEqual([0]);
  });

  it('admits an EOS candidate only when it ranks among the top beamSize candidates', () => {
    // Step 1 ranks: [1,EOS] −1.20, [2,1] −1.43, [2,EOS] −2.12 (rank 2: dropped), [1,1] −2.30.
    const probs = [
      [0.25, 0.25, 0.25, 0.25],
      [0.6, 0.2, 0.1, 0.1],
      [0.3, 0.6, 0.05, 0.05],
      [0.05, 0.5, 0.4, 0.05],
    ];
    const hyps = beamSearch(new MarkovStepper(probs), Int32Array.of(3), {
      beamSize: 2,
      lengthPenalty: 0,
      maxTokens: 10,
      eos: 0,
    });
    expect(hyps.map((h) => h.tokens)).toEqual([[1, 0]]);
    expect(hyps[0]?.score).toBeCloseTo(Math.log(0.5 * 0.6), 6);
  });
});

describe('beamSearch with `complete`: never ends in part of a character', () => {
  // Tokens 1 and 2 stand for bytes that begin or continue a character (0 finishes it); 3 is EOS.
  const whole = (tokens: readonly number[]): boolean => tokens[tokens.length - 1] === 0;

  /** Every sequence the search may return: EOS-ended, or at maxLen or later when whole, or at maxLen + 3 regardless. */
  function exhaustiveWhole(sp: MockSpec, prompt: number[], maxLen: number, alpha: number) {
    const all: { tokens: number[]; score: number }[] = [];
    const dfs = (ctx: number[], tokens: number[], raw: number): void => {
      const logp = refLogSoftmax(mockLogits(sp, ctx));
      for (let v = 0; v < sp.V; v++) {
        const next = [...tokens, v];
        const r = raw + (logp[v] as number);
        const done = v === 3 || (next.length >= maxLen && (whole(next) || next.length === maxLen + 3));
        if (done) all.push({ tokens: next, score: r / lp(next.length, alpha) });
        else dfs([...ctx, v], next, r);
      }
    };
    dfs(prompt, [], 0);
    return all.sort((a, b) => b.score - a.score);
  }

  it('goes on past maxTokens until the hypothesis ends on a whole character (at most 3 tokens): an exhaustive search agrees', () => {
    let extended = 0;
    for (const alpha of [0, 0.6, 1.5]) {
      for (let seed = 1; seed <= 8; seed++) {
        const sp = spec({ V: 4, eos: 3, seed: seed * 31, eosBias: 0.1, scale: 1.5, maxRows: 128 });
        const best = exhaustiveWhole(sp, [0], 3, alpha)[0] as { tokens: number[]; score: number };
        const hyps = beamSearch(new HistoryStepper(sp), Int32Array.of(0), {
          beamSize: 128,
          lengthPenalty: alpha,
          maxTokens: 3,
          eos: 3,
          complete: whole,
        });
        expectConsistent(sp, [0], hyps, alpha);
        expect(hyps[0]?.tokens).toEqual(best.tokens);
        expect(hyps[0]?.score).toBeCloseTo(best.score, 9);
        if (best.tokens.length > 3) extended++; // the best hypothesis went on to finish a character
        for (const h of hyps) {
          if (h.stopReason === 'eos') continue;
          expect(h.stopReason).toBe('maxTokens');
          expect(whole(h.tokens) || h.tokens.length === 6).toBe(true);
        }
      }
    }
    expect(extended).toBeGreaterThan(0);
  });

  it('without `complete` still cuts at maxTokens, and never finishes past the context', () => {
    const sp = spec({ V: 4, eos: 3, seed: 5, eosBias: 0, scale: 1.5, maxRows: 16, maxPositions: 4 });
    const plain = beamSearch(new HistoryStepper(sp), Int32Array.of(0), {
      beamSize: 4,
      lengthPenalty: 0.6,
      maxTokens: 3,
      eos: 3,
    });
    for (const h of plain) expect(h.tokens.length).toBeLessThanOrEqual(3);
    // 1 prompt token + 3 generated fill a context of 4: the limit is the context, nothing is added.
    const atContext = beamSearch(new HistoryStepper(sp), Int32Array.of(0), {
      beamSize: 4,
      lengthPenalty: 0.6,
      maxTokens: 4,
      eos: 3,
      complete: () => false,
    });
    for (const h of atContext) expect(h.tokens.length).toBeLessThanOrEqual(4);
  });
});
