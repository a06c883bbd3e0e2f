import { describe, it, expect } from 'vitest';
import { AttentionTrace } from '../../../../src/engine/decode/attentionTrace';
import { EngineError } from '../../../../src/engine/errors';

/** Attention whose value encodes (step, row, head, key): easy to trace where each cell came from. */
function stepAtt(
  step: number,
  rows: number,
  H: number,
  P: number,
  S: number,
): { self: Float32Array[]; cross: Float32Array[] } {
  const self = new Float32Array(rows * H * P).map((_, i) => 1000 * step + i);
  const cross = new Float32Array(rows * H * S).map((_, i) => -(1000 * step + i));
  return { self: [self], cross: [cross] };
}

describe('AttentionTrace', () => {
  it('assembles [H, T, K] and [H, T, S] from the chosen row of each step', () => {
    const H = 2;
    const S = 3;
    const trace = new AttentionTrace(H, 1); // queries at positions 1, 2, 3
    trace.record(stepAtt(0, 1, H, 2, S), 1);
    trace.record(stepAtt(1, 3, H, 3, S), 3);
    trace.record(stepAtt(2, 2, H, 4, S), 2);
    const rowAt = [0, 2, 1];
    const a = trace.assemble(rowAt);
    expect([a.queries, a.selfKeys, a.sourceLength, a.nLayers]).toEqual([3, 4, 3, 1]);
    for (let t = 0; t < 3; t++) {
      const P = t + 2;
      for (let h = 0; h < H; h++) {
        for (let k = 0; k < 4; k++) {
          const want = k < P ? 1000 * t + ((rowAt[t] as number) * H + h) * P + k : 0;
          expect(a.self[0]?.[(h * 3 + t) * 4 + k]).toBe(want);
        }
        for (let s = 0; s < S; s++)
          expect(a.cross[0]?.[(h * 3 + t) * S + s]).toBe(-(1000 * t + ((rowAt[t] as number) * H + h) * S + s));
      }
    }
    expect(trace.assemble([0]).queries).toBe(1); // a hypothesis that ended early uses a prefix
  });

  it('rejects attention of the wrong shape or missing attention', () => {
    const trace = new AttentionTrace(2, 0);
    const codeOf = (f: () => void): string | undefined => {
      try {
        f();
      } catch (e) {
        return EngineError.is(e) ? e.code : 'other';
      }
      return undefined;
    };
    expect(codeOf(() => trace.record(null, 1))).toBe('shape/mismatch');
    expect(codeOf(() => trace.record(stepAtt(0, 1, 2, 2, 3), 1))).toBe('shape/mismatch'); // P should be 1
    trace.record(stepAtt(0, 1, 2, 1, 3), 1);
    expect(codeOf(() => trace.record(stepAtt(1, 1, 2, 2, 4), 1))).toBe('shape/mismatch'); // S changed
    expect(codeOf(() => trace.record({ self: [], cross: [] }, 1))).toBe('shape/mismatch'); // layers changed
  });
});
