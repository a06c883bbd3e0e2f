import { describe, it, expect } from 'vitest';
import { TopK } from '../../../../src/engine/decode/topK';
import { Rng } from '../../../../src/engine/rng';

describe('TopK', () => {
  it('keeps the k largest, sorted, against a full sort', () => {
    const rng = new Rng(3);
    const top = new TopK(10);
    for (const k of [1, 3, 10]) {
      const values = Array.from({ length: 200 }, () => Math.round(rng.normal() * 5)); // many ties
      top.reset(k);
      values.forEach((v, i) => top.push(v, i));
      const ref = values
        .map((v, i) => ({ v, i }))
        .sort((a, b) => b.v - a.v || a.i - b.i)
        .slice(0, k);
      expect(top.count).toBe(k);
      expect(Array.from(top.ids.subarray(0, k))).toEqual(ref.map((r) => r.i));
      expect(Array.from(top.values.subarray(0, k))).toEqual(ref.map((r) => r.v));
    }
  });

  it('holds fewer than k when fewer were offered, and handles -Infinity', () => {
    const top = new TopK(4);
    top.reset(4);
    top.push(-Infinity, 7);
    top.push(2, 8);
    expect(top.count).toBe(2);
    expect(Array.from(top.ids.subarray(0, 2))).toEqual([8, 7]);
  });

  it('rejects k outside [1, capacity]', () => {
    expect(() => new TopK(2).reset(3)).toThrow(RangeError);
    expect(() => new TopK(2).reset(0)).toThrow(RangeError);
  });
});
