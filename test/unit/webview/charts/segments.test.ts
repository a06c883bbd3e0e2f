import { describe, expect, it } from 'vitest';
import type { RunSegment } from '../../../../src/protocol/data';
import { segmentLabel, segmentMarkers } from '../../../../webview/charts/segments';
import { StepColumns } from '../../../../webview/charts/stepColumns';

const segments: RunSegment[] = [
  { fromStep: 0, toStep: 10, schedule: 'cosine' },
  { fromStep: 10, toStep: 30, schedule: 'restart' },
  { fromStep: 30, toStep: 35, schedule: 'restart' },
];

function steps(n: number): StepColumns {
  const s = new StepColumns();
  for (let i = 1; i <= n; i++)
    s.push({ step: i, loss: 1, lr: 1e-3, gradNorm: 1, tokens: 100, tokensPerSec: 1000, elapsedMs: 50 * i });
  return s;
}

describe('segment markers', () => {
  it('label each segment after the first with its added steps and what the rate does', () => {
    expect(segmentLabel(segments[1] as RunSegment, 1)).toBe('segment 2: +20 steps, warm restart');
    expect(segmentLabel({ fromStep: 100, toStep: 400, schedule: 'noam' }, 1)).toBe(
      "segment 2: +300 steps, paper's schedule continues",
    );
    expect(segmentLabel({ fromStep: 5, toStep: 6, schedule: 'constant' }, 3)).toBe(
      'segment 4: +1 step, constant rate continues',
    );
  });

  it('sit at the step each segment starts after, in steps, tokens seen or wall time', () => {
    const s = steps(32);
    expect(segmentMarkers(segments, s, 'step')).toEqual([
      { step: 10, x: 10, label: 'segment 2: +20 steps, warm restart' },
      { step: 30, x: 30, label: 'segment 3: +5 steps, warm restart' },
    ]);
    expect(segmentMarkers(segments, s, 'tokens').map((m) => m.x)).toEqual([1000, 3000]);
    expect(segmentMarkers(segments, s, 'time').map((m) => m.x)).toEqual([0.5, 1.5]);
  });

  it('leave out a segment the run has not reached when x is not the step, and a run never extended', () => {
    expect(segmentMarkers(segments, steps(20), 'tokens').map((m) => m.step)).toEqual([10]);
    expect(segmentMarkers(segments, steps(20), 'step').map((m) => m.step)).toEqual([10, 30]);
    expect(segmentMarkers(segments.slice(0, 1), steps(20), 'step')).toEqual([]);
  });
});
