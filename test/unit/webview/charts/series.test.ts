import { describe, expect, it } from 'vitest';
import {
  bitsPerByteColumn,
  countFinite,
  decimateRows,
  evalOnRows,
  evalRows,
  finiteRange,
  gather,
  gatherSparse,
  smoothEma,
  stepRows,
  xColumnName,
} from '../../../../webview/charts/series';
import { StepColumns } from '../../../../webview/charts/stepColumns';

describe('bits per byte and values at steps', () => {
  it("turns each step's loss into loss · tokens / (bytes · ln 2), NaN where a step has no byte count", () => {
    const out = bitsPerByteColumn([2, 3, 1], [10, 20, 5], [40, Number.NaN, 0]);
    expect(out[0]).toBeCloseTo((2 * 10) / (40 * Math.LN2), 12);
    expect([Number.isNaN(out[1]), Number.isNaN(out[2])]).toEqual([true, true]);
  });

  it('keeps bytes through the step columns, NaN for steps logged without them', () => {
    const cols = new StepColumns(4);
    cols.push({ step: 1, loss: 2, lr: 0.1, gradNorm: 1, tokens: 10, tokensPerSec: 1, elapsedMs: 1, bytes: 37 });
    cols.push({ step: 2, loss: 2, lr: 0.1, gradNorm: 1, tokens: 10, tokensPerSec: 1, elapsedMs: 2 });
    expect(cols.at('bytes', 0)).toBe(37);
    expect(Number.isNaN(cols.at('bytes', 1))).toBe(true);
    expect(cols.toMetrics().map((m) => m.bytes)).toEqual([37, undefined]);
  });

  it('places items on the row of their step and leaves out values that are not finite', () => {
    const cols = new StepColumns(4);
    for (const s of [10, 20, 30])
      cols.push({ step: s, loss: 1, lr: 0.1, gradNorm: 1, tokens: 1, tokensPerSec: 1, elapsedMs: s });
    const rows = stepRows(
      cols,
      [
        { step: 15, v: 1 },
        { step: 20, v: null },
        { step: 30, v: 3 },
        { step: 99, v: 4 },
      ],
      (e) => e.v,
    );
    expect([...rows]).toEqual([
      [1, 1],
      [2, 3],
    ]);
  });
});

describe('series', () => {
  it('debiased EMA: the first value is kept, then the recurrence holds', () => {
    const v = [4, 2, 6, 1];
    const w = 0.5;
    const s = smoothEma(v, w);
    expect(s[0]).toBe(4); // (0.5·4)/(0.5) — no pull toward 0
    let m = 0;
    let n = 0;
    v.forEach((x, i) => {
      m = w * m + (1 - w) * x;
      n = w * n + (1 - w);
      expect(s[i]).toBeCloseTo(m / n, 12);
    });
    expect(Array.from(smoothEma(v, 0))).toEqual(v);
  });

  it('EMA skips non-finite values without poisoning the average', () => {
    const s = smoothEma([1, Number.NaN, 1], 0.9);
    expect(Number.isNaN(s[1])).toBe(true);
    expect(s[2]).toBeCloseTo(1, 12);
  });

  it('places evaluations on the row of their step (or the next logged one)', () => {
    const c = new StepColumns();
    for (const step of [10, 20, 30])
      c.push({ step, loss: 1, lr: 1, gradNorm: 1, tokens: 1, tokensPerSec: 1, elapsedMs: step });
    const rows = evalOnRows(c, [
      { step: 20, loss: 0.5, ppl: 1, exactMatch: null, bleu: null },
      { step: 25, loss: 0.4, ppl: 1, exactMatch: null, bleu: null },
      { step: 99, loss: 0.1, ppl: 1, exactMatch: null, bleu: null },
    ]);
    expect(rows).toEqual([null, 0.5, 0.4]);
    expect(countFinite(rows)).toBe(2);
  });

  it('ranges and x columns', () => {
    expect(finiteRange([null, 3, Number.NaN, -1, Number.POSITIVE_INFINITY])).toEqual({ min: -1, max: 3 });
    expect(finiteRange([null])).toBeNull();
    expect([xColumnName('step'), xColumnName('tokens'), xColumnName('time')]).toEqual([
      'step',
      'tokensSeen',
      'wallSec',
    ]);
  });

  it("decimation keeps every bucket's extremes, the last row and the rows asked for", () => {
    const n = 10_000;
    const y = Float64Array.from({ length: n }, (_, i) => Math.sin(i / 50));
    y[1234] = 99;
    y[5678] = -99;
    const rows = decimateRows(y, 100, [4321]);
    expect(rows.length).toBeLessThanOrEqual(3 * 100 + 2);
    for (const r of [0, 1234, 5678, 4321, n - 1]) expect(Array.from(rows)).toContain(r);
    expect(Array.from(rows)).toEqual([...rows].sort((a, b) => a - b));
    expect(new Set(rows).size).toBe(rows.length);
    const g = gather(y, rows);
    expect(Math.max(...g)).toBe(99);
    expect(Math.min(...g)).toBe(-99);
    // Few points: all rows, untouched.
    expect(Array.from(decimateRows([3, 1, 2], 100))).toEqual([0, 1, 2]);
  });

  it('gathers sparse evaluation values onto decimated rows', () => {
    const c = new StepColumns();
    for (let s = 1; s <= 6; s++)
      c.push({ step: s, loss: 1, lr: 1, gradNorm: 1, tokens: 1, tokensPerSec: 1, elapsedMs: s });
    const ev = evalRows(c, [{ step: 3, loss: 0.7, ppl: 1, exactMatch: null, bleu: null }]);
    expect(gatherSparse(ev, Uint32Array.of(0, 2, 5))).toEqual([null, 0.7, null]);
  });
});
