/** PairHeap: pops in (primary, secondary) order for both directions, against a sorted copy. */

import { describe, it, expect } from 'vitest';
import { Rng } from '../../../../src/engine/rng';
import { PairHeap } from '../../../../src/engine/tokenizers/pairHeap';

function drain(heap: PairHeap): [number, number][] {
  const out: [number, number][] = [];
  while (heap.size > 0) {
    out.push([heap.peekPrimary() as number, heap.peekSecondary() as number]);
    heap.pop();
  }
  return out;
}

describe('PairHeap', () => {
  for (const maxFirst of [true, false]) {
    it(`pops ${maxFirst ? 'largest' : 'smallest'} primary first, then smallest secondary`, () => {
      const rng = new Rng(maxFirst ? 61 : 62);
      const entries: [number, number][] = [];
      const heap = new PairHeap(maxFirst);
      for (let i = 0; i < 2000; i++) {
        const e: [number, number] = [rng.int(30), rng.int(50)]; // many ties and duplicates
        entries.push(e);
        heap.push(e[0], e[1]);
      }
      const sign = maxFirst ? -1 : 1;
      entries.sort((x, y) => sign * (x[0] - y[0]) || x[1] - y[1]);
      expect(drain(heap)).toEqual(entries);
    });
  }

  it('interleaves pushes and pops correctly and is empty-safe', () => {
    const heap = new PairHeap(false);
    expect(heap.peekPrimary()).toBeUndefined();
    heap.pop();
    heap.push(5, 0);
    heap.push(3, 9);
    heap.push(3, 2);
    expect([heap.peekPrimary(), heap.peekSecondary()]).toEqual([3, 2]);
    heap.pop();
    heap.push(1, 1);
    expect(drain(heap)).toEqual([
      [1, 1],
      [3, 9],
      [5, 0],
    ]);
  });
});
