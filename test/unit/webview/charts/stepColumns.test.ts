import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../../../src/protocol/data';
import { StepColumns } from '../../../../webview/charts/stepColumns';

const m = (step: number, elapsedMs: number, tokens = 10): StepMetrics => ({
  step,
  loss: 1 / step,
  lr: 0.1,
  gradNorm: 1,
  tokens,
  tokensPerSec: 100,
  elapsedMs,
});

describe('StepColumns', () => {
  it('grows past its capacity and keeps every value', () => {
    const c = new StepColumns(16);
    for (let i = 1; i <= 1000; i++) c.push(m(i, i * 5));
    expect(c.length).toBe(1000);
    expect(c.lastStep).toBe(1000);
    expect(c.column('loss')[499]).toBeCloseTo(1 / 500, 12);
    expect(c.column('step').length).toBe(1000);
  });

  it('sums tokens and keeps wall time monotonic when a resumed worker restarts its clock', () => {
    const c = new StepColumns();
    c.push(m(1, 100, 5));
    c.push(m(2, 200, 7));
    c.push(m(3, 50, 3)); // resumed: clock restarted
    c.push(m(4, 150, 1));
    expect(Array.from(c.column('tokensSeen'))).toEqual([5, 12, 15, 16]);
    expect(Array.from(c.column('wallSec'))).toEqual([0.1, 0.2, 0.25, 0.35]);
  });

  it('truncates after a step and continues the clock from the kept end', () => {
    const c = new StepColumns();
    for (let i = 1; i <= 10; i++) c.push(m(i, i * 100));
    expect(c.truncateAfter(6)).toBe(4);
    expect(c.lastStep).toBe(6);
    c.push(m(7, 40));
    expect(c.at('wallSec', 6)).toBeCloseTo(0.64, 12);
  });

  it('finds the row of a step by binary search', () => {
    const c = new StepColumns();
    for (const s of [2, 4, 6, 8]) c.push(m(s, s));
    expect(c.indexOfStep(6)).toBe(2);
    expect(c.indexOfStep(5)).toBe(2);
    expect(c.indexOfStep(1)).toBe(0);
    expect(c.indexOfStep(9)).toBe(4);
  });
});
