import { describe, expect, it } from 'vitest';
import type { HeadMap } from '../../../../src/engine/analysis/headScores';
import {
  crossHeadScores,
  headEntropy,
  inductionScore,
  selfHeadScores,
} from '../../../../src/engine/analysis/headScores';

/** One head [1, T, S] whose row t is `row(t)` (a dense probability row). */
function head(T: number, S: number, row: (t: number, s: number) => number): HeadMap {
  const probs = new Float32Array(T * S);
  for (let t = 0; t < T; t++) for (let s = 0; s < S; s++) probs[t * S + s] = row(t, s);
  return { probs, shape: [1, T, S] };
}

const T = 8;

describe('selfHeadScores', () => {
  it('a pure previous-token head scores 1 on previousToken and 0 on diagonal', () => {
    const m = head(T, T, (t, s) => (t === 0 ? (s === 0 ? 1 : 0) : s === t - 1 ? 1 : 0));
    const [sc] = selfHeadScores(m);
    expect(sc?.previousToken).toBeCloseTo(1, 6);
    expect(sc?.diagonal).toBe(0);
    expect(sc?.entropy).toBe(0);
  });

  it('a BOS sink scores 1 on firstToken; a self head 1 on diagonal', () => {
    expect(selfHeadScores(head(T, T, (_t, s) => (s === 0 ? 1 : 0)))[0]?.firstToken).toBeCloseTo(1, 6);
    expect(selfHeadScores(head(T, T, (t, s) => (s === t ? 1 : 0)))[0]?.diagonal).toBeCloseTo(1, 6);
  });

  it('a uniform (bidirectional) head scores 1/T on each position and ln T entropy', () => {
    const [sc] = selfHeadScores(head(T, T, () => 1 / T));
    expect(sc?.previousToken).toBeCloseTo(1 / T, 6);
    expect(sc?.firstToken).toBeCloseTo(1 / T, 6);
    expect(sc?.diagonal).toBeCloseTo(1 / T, 6);
    expect(sc?.entropy).toBeCloseTo(Math.log(T), 5);
  });

  it('a uniform causal head scores the mean of 1/(t+1)', () => {
    const [sc] = selfHeadScores(head(T, T, (t, s) => (s <= t ? 1 / (t + 1) : 0)));
    let want = 0;
    for (let t = 1; t < T; t++) want += 1 / (t + 1);
    expect(sc?.previousToken).toBeCloseTo(want / (T - 1), 6);
  });

  it('padding rows and keys do not count', () => {
    const m = {
      ...head(T, T, (t, s) => (t < 4 ? (s === Math.max(0, t - 1) ? 1 : 0) : s === 7 ? 1 : 0)),
      rows: 4,
      cols: 4,
    };
    expect(selfHeadScores(m)[0]?.previousToken).toBeCloseTo(1, 6);
  });
});

describe('inductionScore', () => {
  // BOS a b c d a b c d: rows 6..8 look at the token after the earlier occurrence (t − 4 + 1).
  const L = 4;
  const n = 2 * L + 1;
  const repeat = { period: L, from: L + 1, to: n };
  it('a perfect induction head scores 1, a previous-token head 0', () => {
    const ind = head(n, n, (t, s) => (t >= L + 1 ? (s === t - L + 1 ? 1 : 0) : s === 0 ? 1 : 0));
    expect(inductionScore(ind, 0, repeat)).toBeCloseTo(1, 6);
    expect(selfHeadScores(ind, repeat)[0]?.induction).toBeCloseTo(1, 6);
    const prev = head(n, n, (t, s) => (s === Math.max(0, t - 1) ? 1 : 0));
    expect(inductionScore(prev, 0, repeat)).toBe(0);
  });
  it('without a repeat it is 0', () => {
    expect(selfHeadScores(head(n, n, () => 1 / n))[0]?.induction).toBe(0);
  });
});

describe('crossHeadScores', () => {
  it('a reverse alignment scores 1 on antiDiagonal, a copy alignment 1 on diagonal', () => {
    const rev = head(5, 5, (t, s) => (s === 4 - t ? 1 : 0));
    expect(crossHeadScores(rev)[0]?.antiDiagonal).toBeCloseTo(1, 6);
    expect(crossHeadScores(rev)[0]?.diagonal).toBeCloseTo(0.2, 6); // only the middle row
    const copy = head(5, 6, (t, s) => (s === t ? 1 : 0));
    expect(crossHeadScores({ ...copy, cols: 5 })[0]?.diagonal).toBeCloseTo(1, 6);
  });
  it('reads every head of [H, T, S]', () => {
    const probs = new Float32Array(2 * 3 * 3);
    for (let t = 0; t < 3; t++) {
      probs[t * 3 + t] = 1; // head 0: diagonal
      probs[9 + t * 3 + (2 - t)] = 1; // head 1: anti-diagonal
    }
    const sc = crossHeadScores({ probs, shape: [2, 3, 3] });
    expect(sc.map((s) => s.diagonal)).toEqual([1, 1 / 3]);
    expect(sc.map((s) => s.antiDiagonal)).toEqual([1 / 3, 1]);
    expect(headEntropy({ probs, shape: [2, 3, 3] }, 1)).toBe(0);
  });
});
