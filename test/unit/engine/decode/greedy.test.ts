import { describe, it, expect } from 'vitest';
import { greedyDecode } from '../../../../src/engine/decode/greedy';
import { EngineError } from '../../../../src/engine/errors';
import type { DecodeStepper, StepOutput } from '../../../../src/engine/decode/stepperContract';
import { FixedStepper, HistoryStepper, expectedAttention, mockLogits, refLogSoftmax, spec } from './mockStepper';
import type { MockSpec } from './mockStepper';

/** Greedy written out plainly from the mock's pure logits: the oracle. */
function refGreedy(
  sp: MockSpec,
  prompt: number[],
  maxTokens: number,
  eos: number,
): { tokens: number[]; logprobs: number[] } {
  const ctx = [...prompt];
  const tokens: number[] = [];
  const logprobs: number[] = [];
  const maxGen = Math.min(maxTokens, sp.maxPositions - prompt.length + 1);
  while (tokens.length < maxGen) {
    const lp = refLogSoftmax(mockLogits(sp, ctx));
    let best = 0;
    for (let v = 1; v < lp.length; v++) if ((lp[v] as number) > (lp[best] as number)) best = v;
    tokens.push(best);
    logprobs.push(lp[best] as number);
    if (best === eos) break;
    ctx.push(best);
  }
  return { tokens, logprobs };
}

describe('greedyDecode', () => {
  it('matches a plain greedy oracle over many histories', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const sp = spec({ seed, V: 7, eos: 3, eosBias: 0.15 });
      const prompt = [seed % 7, (seed * 3) % 7];
      const res = greedyDecode(new HistoryStepper(sp), Int32Array.from(prompt), { maxTokens: 20, eos: 3 });
      const ref = refGreedy(sp, prompt, 20, 3);
      expect(res.tokens).toEqual(ref.tokens);
      res.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(ref.logprobs[i] as number, 10));
      expect(res.score).toBeCloseTo(
        ref.logprobs.reduce((a, b) => a + b, 0),
        10,
      );
    }
  });

  it('stops at EOS, includes it, and never feeds it', () => {
    const sp = spec({ eosBias: 0.8 });
    const stepper = new HistoryStepper(sp);
    const res = greedyDecode(stepper, Int32Array.of(0), { maxTokens: 50, eos: 2 });
    expect(res.stopReason).toBe('eos');
    expect(res.tokens[res.tokens.length - 1]).toBe(2);
    expect(res.tokens.slice(0, -1)).not.toContain(2);
    expect(res.tokens.length).toBeLessThan(50);
    expect(stepper.stepCount).toBe(1 + res.tokens.length - 1);
  });

  it('stops after maxTokens', () => {
    const res = greedyDecode(new HistoryStepper(spec({ eos: -1 })), Int32Array.of(1, 4), { maxTokens: 7, eos: -1 });
    expect(res.tokens).toHaveLength(7);
    expect(res.stopReason).toBe('maxTokens');
  });

  it('stops when the context is full (the mock throws past maxPositions)', () => {
    const sp = spec({ eos: -1, maxPositions: 6 });
    const stepper = new HistoryStepper(sp);
    const res = greedyDecode(stepper, Int32Array.of(1, 4, 0), { maxTokens: 100, eos: -1 });
    expect(res.tokens).toHaveLength(4); // predicted by queries at positions 2, 3, 4, 5
    expect(res.stopReason).toBe('context');
    expect(stepper.rows[0]).toHaveLength(6);
    const full = greedyDecode(new HistoryStepper(sp), Int32Array.of(1, 1, 1, 1, 1, 1), { maxTokens: 100, eos: -1 });
    expect(full.tokens).toHaveLength(1);
    expect(full.stopReason).toBe('context');
  });

  describe('sliding window (slide: true)', () => {
    /** Sliding-window greedy written out plainly: the model sees `window`, re-primed with the last ceil(P/2) tokens when full. */
    function refSliding(sp: MockSpec, prompt: number[], maxTokens: number): number[] {
      const context = [...prompt];
      let window = [...prompt];
      const tokens: number[] = [];
      while (tokens.length < maxTokens) {
        const lp = refLogSoftmax(mockLogits(sp, window));
        let best = 0;
        for (let v = 1; v < lp.length; v++) if ((lp[v] as number) > (lp[best] as number)) best = v;
        tokens.push(best);
        context.push(best);
        window = window.length >= sp.maxPositions ? context.slice(-Math.ceil(sp.maxPositions / 2)) : [...window, best];
      }
      return tokens;
    }

    it('equals the plain decode while within the context', () => {
      const sp = spec({ eos: -1, maxPositions: 9, seed: 4 });
      for (const maxTokens of [1, 3, 7]) {
        const plain = greedyDecode(new HistoryStepper(sp), Int32Array.of(1, 4, 0), { maxTokens, eos: -1 });
        const stepper = new HistoryStepper(sp);
        const slid = greedyDecode(stepper, Int32Array.of(1, 4, 0), {
          maxTokens,
          eos: -1,
          slide: true,
          captureAttention: true,
        });
        expect(slid.tokens).toEqual(plain.tokens);
        expect(slid.logprobs).toEqual(plain.logprobs);
        expect(slid.slid).toBeUndefined();
        expect(stepper.calls.some((c) => c.kind === 'reset')).toBe(false);
        expect(slid.attention?.self).toEqual(expectedAttention(sp, [1, 4, 0, ...slid.tokens], 2, maxTokens).self);
      }
    });

    it('goes past the context, re-priming with the last half context', () => {
      const sp = spec({ eos: -1, maxPositions: 6, seed: 2 });
      const stepper = new HistoryStepper(sp);
      const res = greedyDecode(stepper, Int32Array.of(1, 4, 0), { maxTokens: 30, eos: -1, slide: true });
      expect(res.tokens).toHaveLength(30);
      expect(res.stopReason).toBe('maxTokens');
      expect(res.tokens).toEqual(refSliding(sp, [1, 4, 0], 30));
      expect(res.slid?.slides).toBe(stepper.calls.filter((c) => c.kind === 'reset').length);
      expect(res.slid?.slides).toBeGreaterThan(5);
      expect(stepper.rows[0]?.length).toBeLessThanOrEqual(6);
    });

    it('keeps attention rows summing to 1 at their place in the whole context', () => {
      const sp = spec({ eos: -1, maxPositions: 5, S: 0, seed: 7 });
      const res = greedyDecode(new HistoryStepper(sp), Int32Array.of(1), {
        maxTokens: 12,
        eos: -1,
        slide: true,
        captureAttention: true,
      });
      const a = res.attention;
      expect(a?.queries).toBe(12);
      expect(a?.selfKeys).toBe(12);
      const last = ((a as NonNullable<typeof a>).self[0] as Float32Array).subarray(11 * 12, 12 * 12); // head 0, last row
      expect(last.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 5);
      expect(last[0]).toBe(0); // left the window
    });
  });

  it('streams each token through onToken as it is chosen', () => {
    const seen: [number, number][] = [];
    const stepper = new HistoryStepper(spec({ seed: 5 }));
    const res = greedyDecode(stepper, Int32Array.of(0), {
      maxTokens: 12,
      eos: 2,
      onToken: (t, lp) => {
        // the stepper has been fed every earlier token but not this one yet
        expect(stepper.rows[0]).toHaveLength(1 + seen.length);
        seen.push([t, lp]);
      },
    });
    expect(seen.map((s) => s[0])).toEqual(res.tokens);
    expect(seen.map((s) => s[1])).toEqual(res.logprobs);
  });

  it('returns the attention the model emitted for each generated token, with or without the prompt', () => {
    for (const S of [5, 0]) {
      const sp = spec({ seed: 9, S, eos: -1 });
      const prompt = [1, 3, 4];
      const res = greedyDecode(new HistoryStepper(sp), Int32Array.from(prompt), {
        maxTokens: 6,
        eos: -1,
        captureAttention: true,
      });
      const att = res.attention;
      if (att === undefined) throw new Error('no attention');
      expect([att.queryStart, att.queries, att.selfKeys, att.nLayers, att.nHeads, att.sourceLength]).toEqual([
        2,
        6,
        8,
        2,
        2,
        S,
      ]);
      const exp = expectedAttention(sp, [...prompt, ...res.tokens], 2, 6);
      expect(att.self).toEqual(exp.self);
      expect(att.cross).toEqual(exp.cross);

      const withPrompt = greedyDecode(new HistoryStepper(sp), Int32Array.from(prompt), {
        maxTokens: 6,
        eos: -1,
        captureAttention: true,
        attentionIncludesPrompt: true,
      });
      const expP = expectedAttention(sp, [...prompt, ...withPrompt.tokens], 0, 8);
      expect(withPrompt.attention?.queries).toBe(8);
      expect(withPrompt.attention?.self).toEqual(expP.self);
      expect(withPrompt.attention?.cross).toEqual(expP.cross);
    }
  });

  it('asks for attention only when it is captured', () => {
    const stepper = new HistoryStepper(spec({ eos: -1 }));
    const res = greedyDecode(stepper, Int32Array.of(0, 1), { maxTokens: 3, eos: -1 });
    expect(res.attention).toBeUndefined();
    expect(stepper.calls.some((c) => c.kind === 'step' && c.capture)).toBe(false);
  });

  it('is numerically stable for huge logits', () => {
    const res = greedyDecode(new FixedStepper(Float32Array.of(3e4, 3e4 - 1, -3e4, 3e4 - 2)), Int32Array.of(0), {
      maxTokens: 2,
      eos: -1,
    });
    expect(res.tokens).toEqual([0, 0]);
    expect(res.logprobs[0]).toBeCloseTo(-Math.log(1 + Math.exp(-1) + Math.exp(-2)), 6);
  });

  it('reports non-finite logits as train/nonFinite', () => {
    let caught: unknown;
    try {
      greedyDecode(new FixedStepper(Float32Array.of(0, NaN, 1)), Int32Array.of(0), { maxTokens: 2, eos: -1 });
    } catch (e) {
      caught = e;
    }
    expect(EngineError.is(caught, 'train/nonFinite')).toBe(true);
  });

  it('rejects a stepper whose attention has the wrong shape', () => {
    const bad: DecodeStepper = {
      vocabSize: 4,
      nHeads: 2,
      maxPositions: 8,
      maxRows: 1,
      step: (): StepOutput => ({ logits: new Float32Array(4), attention: { self: [new Float32Array(3)], cross: [] } }),
      reorder: () => undefined,
      reset: () => undefined,
    };
    expect(() => greedyDecode(bad, Int32Array.of(0), { maxTokens: 2, eos: -1, captureAttention: true })).toThrow(
      /expected \[rows 1, H 2, P 1\]/,
    );
  });
});

describe('greedyDecode with `complete`: never ends in part of a character', () => {
  // Tokens 3, 4 and 5 stand for bytes that begin or continue a character; 0 and 1 end one.
  const whole = (tokens: readonly number[]): boolean => ![3, 4, 5].includes(tokens[tokens.length - 1] as number);

  it('goes on past maxTokens until the character is finished, at most 3 tokens, with the same tokens before', () => {
    let extended = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const sp = spec({ seed, V: 6, eos: -1, eosBias: 0 });
      const plain = greedyDecode(new HistoryStepper(sp), Int32Array.of(0), { maxTokens: 4, eos: -1 });
      const r = greedyDecode(new HistoryStepper(sp), Int32Array.of(0), { maxTokens: 4, eos: -1, complete: whole });
      const ref = refGreedy(sp, [0], 7, -1).tokens;
      expect(r.tokens.slice(0, 4)).toEqual(plain.tokens);
      const stop = [4, 5, 6].find((n) => whole(ref.slice(0, n))) ?? 7;
      expect(r.tokens).toEqual(ref.slice(0, stop));
      expect(r.stopReason).toBe('maxTokens');
      if (stop > 4) extended++;
    }
    expect(extended).toBeGreaterThan(0); // some seeds end mid-character at 4 tokens
  });

  it('stops at the context as before: finishing never goes past it without a sliding window', () => {
    const sp = spec({ seed: 3, V: 6, eos: -1, eosBias: 0, maxPositions: 5 });
    // 4 tokens fill the context exactly (the mock throws past maxPositions): nothing is added to finish a character.
    const r = greedyDecode(new HistoryStepper(sp), Int32Array.of(0, 1), {
      maxTokens: 4,
      eos: -1,
      complete: () => false,
    });
    expect(r.tokens.length).toBe(4);
  });
});
