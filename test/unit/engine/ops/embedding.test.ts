import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { sinusoidalTable } from '../../../../src/engine/ops/embedding';
import { Rng } from '../../../../src/engine/rng';
import { gradCheck } from '../gradcheck';
import { backendCases, expectClose, expectGradOk, oracle, randn, toBackend, weightedSum } from './opTestUtils';

describe.each(backendCases())('embedding ($label)', ({ backend, tol, grad }) => {
  it('forward gathers rows and scales them', () => {
    // table [3, 2] = [[1,2],[3,4],[5,6]]
    const table = toBackend(backend, [1, 2, 3, 4, 5, 6]);
    const out = backend.alloc(6);
    backend.embeddingForward(out, Int32Array.from([2, 0, 2]), table, 3, 2, 2);
    expect(Array.from(out)).toEqual([10, 12, 2, 4, 10, 12]);
  });

  it('forward rejects an id outside the table with an EngineError that says what to do', () => {
    const table = backend.alloc(6);
    const out = backend.alloc(2);
    for (const bad of [3, -1]) {
      let caught: unknown;
      try {
        backend.embeddingForward(out, Int32Array.from([bad]), table, 1, 2, 1);
      } catch (e) {
        caught = e;
      }
      expect(EngineError.is(caught, 'input/invalid')).toBe(true);
      expect((caught as Error).message).toContain(`Token id ${bad}`);
      expect((caught as Error).message).toMatch(/tokenizer/);
    }
  });

  it('backward scatters scaled rows, sums repeated ids, and accumulates (twice doubles)', () => {
    const dout = toBackend(backend, [1, 2, 3, 4, 5, 6]);
    const dtable = backend.alloc(8);
    backend.embeddingBackward(dtable, dout, Int32Array.from([1, 3, 1]), 3, 2, 0.5, -1);
    expect(Array.from(dtable)).toEqual([0, 0, 3, 4, 0, 0, 1.5, 2]);
    backend.embeddingBackward(dtable, dout, Int32Array.from([1, 3, 1]), 3, 2, 0.5, -1);
    expect(Array.from(dtable)).toEqual([0, 0, 6, 8, 0, 0, 3, 4]);
  });

  it('backward gives the padding row no gradient', () => {
    const dout = toBackend(backend, [1, 1, 2, 2, 3, 3]);
    const dtable = backend.alloc(6);
    backend.embeddingBackward(dtable, dout, Int32Array.from([0, 2, 0]), 3, 2, 1, 0);
    expect(Array.from(dtable)).toEqual([0, 0, 0, 0, 2, 2]);
  });

  it('backward matches finite differences', () => {
    const rng = new Rng(31);
    const [V, N, C, s] = [5, 6, 3, 1.7];
    const ids = Int32Array.from([4, 1, 1, 0, 3, 4]);
    const table = randn(rng, V * C);
    const r = randn(rng, N * C);
    const dtable = backend.alloc(V * C);
    backend.embeddingBackward(dtable, toBackend(backend, r), ids, N, C, s, -1);
    const ref = oracle();
    const out = new Float64Array(N * C);
    const f = (): number => {
      ref.embeddingForward(out, ids, table, N, C, s);
      return weightedSum(out, r);
    };
    expectGradOk(gradCheck(f, table, dtable, grad));
  });

  it('positionalForward adds rows start..start+T to every batch item', () => {
    const [B, T, C, start] = [2, 2, 3, 1];
    const rng = new Rng(32);
    const x0 = randn(rng, B * T * C);
    const pe = randn(rng, 4 * C);
    const x = toBackend(backend, x0);
    backend.positionalForward(x, toBackend(backend, pe), B, T, C, start);
    const expected = new Float64Array(B * T * C);
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        for (let c = 0; c < C; c++) {
          const i = (b * T + t) * C + c;
          expected[i] = (x0[i] as number) + (pe[(start + t) * C + c] as number);
        }
      }
    }
    expectClose(x, expected, tol);
  });

  it('positionalBackward matches finite differences and accumulates (twice doubles)', () => {
    const [B, T, C, start, maxLen] = [3, 2, 4, 2, 5];
    const rng = new Rng(33);
    const x0 = randn(rng, B * T * C);
    const pe = randn(rng, maxLen * C);
    const r = randn(rng, B * T * C);
    const dpe = backend.alloc(maxLen * C);
    backend.positionalBackward(dpe, toBackend(backend, r), B, T, C, start);
    const ref = oracle();
    const x = new Float64Array(B * T * C);
    const f = (): number => {
      x.set(x0);
      ref.positionalForward(x, pe, B, T, C, start);
      return weightedSum(x, r);
    };
    expectGradOk(gradCheck(f, pe, dpe, grad));
    // Rows outside start..start+T get nothing.
    for (let i = 0; i < start * C; i++) expect(dpe[i]).toBe(0);
    const once = Array.from(dpe);
    backend.positionalBackward(dpe, toBackend(backend, r), B, T, C, start);
    expectClose(
      dpe,
      once.map((v) => 2 * v),
      tol,
    );
  });
});

describe('sinusoidalTable (Vaswani et al. §3.5)', () => {
  it('matches PE(pos,2i) = sin(pos/10000^(2i/d)), PE(pos,2i+1) = cos(pos/10000^(2i/d))', () => {
    const [maxLen, d] = [50, 16];
    const pe = sinusoidalTable(maxLen, d);
    expect(pe).toBeInstanceOf(Float32Array);
    expect(pe.length).toBe(maxLen * d);
    for (let pos = 0; pos < maxLen; pos++) {
      for (let i = 0; i < d / 2; i++) {
        const angle = pos / Math.pow(10000, (2 * i) / d);
        expect(pe[pos * d + 2 * i]).toBeCloseTo(Math.sin(angle), 6);
        expect(pe[pos * d + 2 * i + 1]).toBeCloseTo(Math.cos(angle), 6);
      }
    }
  });

  it('has hand-checkable values: row 0 alternates 0,1; channel pair 0 has frequency 1', () => {
    const pe = sinusoidalTable(3, 4);
    expect(Array.from(pe.subarray(0, 4))).toEqual([0, 1, 0, 1]);
    expect(pe[4]).toBeCloseTo(Math.sin(1), 6); // pos 1, channel 0
    expect(pe[5]).toBeCloseTo(Math.cos(1), 6); // pos 1, channel 1: cos, not sin
    expect(pe[6]).toBeCloseTo(Math.sin(1 / 100), 6); // pos 1, channel 2: 10000^(2/4) = 100
    expect(pe[7]).toBeCloseTo(Math.cos(1 / 100), 6);
  });

  it('avoids the seed-notebook bugs: channel 1 is cos, base is 10000, exponent is 2i/d (not 4i/d)', () => {
    const d = 8;
    const pe = sinusoidalTable(10, d);
    // sin in both halves would make channel 1 equal to sin(pos).
    expect(pe[1 * d + 1]).toBeCloseTo(Math.cos(1), 6);
    expect(Math.abs((pe[1 * d + 1] as number) - Math.sin(1))).toBeGreaterThan(0.2);
    // Channel 2 (i = 1): 10000^(2/8) = 10; base 1000 would give 1000^(2/8) ≈ 5.62,
    // and a doubled exponent 10000^(4/8) = 100.
    const pos = 9;
    expect(pe[pos * d + 2]).toBeCloseTo(Math.sin(pos / 10), 6);
    expect(Math.abs((pe[pos * d + 2] as number) - Math.sin(pos / Math.pow(1000, 2 / 8)))).toBeGreaterThan(0.2);
    expect(Math.abs((pe[pos * d + 2] as number) - Math.sin(pos / 100))).toBeGreaterThan(0.2);
  });

  it('ends an odd d_model on a lone sin channel', () => {
    const pe = sinusoidalTable(4, 3);
    expect(pe[3 * 3 + 2]).toBeCloseTo(Math.sin(3 / Math.pow(10000, 2 / 3)), 6);
  });

  it('rejects non-positive or fractional sizes with a config error', () => {
    expect(() => sinusoidalTable(0, 8)).toThrow(/positive integer/);
    expect(() => sinusoidalTable(8, 2.5)).toThrow(EngineError);
  });
});
