/**
 * The activation arena on a backend with a largest allocation (a GPU's storage-buffer limit):
 * plan.ts packs the slots, in order, into allocations of at most that many floats — every slot's
 * view whole inside one allocation, shared scratch slots one view for all their users, the model
 * training exactly as with one allocation — and refuses a single slot over the limit in one line
 * naming it, its size, the limit and what to lower.
 *
 * Leaves out: the same on a real GPU device (test/unit/engine/backends/webgpu/webgpuLimits.test.ts).
 */

import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { presetConfig } from '../../../../src/engine/config';
import { EngineError } from '../../../../src/engine/errors';
import { Arena } from '../../../../src/engine/models/plan';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';

/** The reference backend with a largest allocation of `max` floats, recording each allocation's size. */
function capped(max: number): { backend: Backend; sizes: number[] } {
  const sizes: number[] = [];
  const ref = createReferenceBackend();
  const backend: Backend = {
    ...ref,
    maxAllocFloats: max,
    alloc: (n: number) => {
      expect(n).toBeLessThanOrEqual(max);
      sizes.push(n);
      return ref.alloc(n);
    },
  };
  return { backend, sizes };
}

describe('the activation arena under a largest allocation', () => {
  it('packs slots in order into allocations of at most the limit, each view whole', () => {
    const arena = new Arena();
    const a = arena.buffer(60);
    const b = arena.buffer(50);
    const c = arena.buffer(100);
    const s1 = arena.scratch('k', 30);
    const s2 = arena.scratch('k', 40);
    const { backend, sizes } = capped(100);
    arena.bind(backend);
    expect(sizes).toEqual([60, 50, 100, 40]);
    for (const [slot, n] of [
      [a, 60],
      [b, 50],
      [c, 100],
      [s1, 40],
    ] as const)
      expect(slot.data.length).toBe(n);
    expect(s1.data).toBe(s2.data);
    // Distinct allocations: writing one slot leaves the others as they were.
    a.data.fill(1);
    expect([b.data[0], c.data[0], s1.data[0]]).toEqual([0, 0, 0]);
    // Without a limit: one allocation, as before.
    const one = new Arena();
    one.buffer(60);
    one.buffer(50);
    const all = capped(Infinity);
    one.bind(all.backend);
    expect(all.sizes).toEqual([110]);
  });

  it('refuses one slot over the limit, naming it, its size, the limit and what to lower', () => {
    const arena = new Arena();
    arena.buffer(10);
    arena.buffer(1e9 / 4 + 1000, 'the attention probabilities of transformer.h.1.attn (batch·heads·context²)');
    const { backend, sizes } = capped(5e8 / 4);
    expect(() => arena.bind(backend)).toThrowError(
      new EngineError(
        'config/invalid',
        'The attention probabilities of transformer.h.1.attn (batch·heads·context²): 1.0 GB > this GPU ' +
          "adapter's largest storage buffer (500 MB); lower batch or context, or use --backend wasm.",
      ),
    );
    expect(sizes).toEqual([]); // refused before anything was allocated
  });

  it('a model whose arena is split trains step for step as with one allocation', () => {
    const cfg = presetConfig('decoder-only', 'tiny', 20);
    const losses = (backend: Backend): number[] => {
      const model = new Transformer(cfg, { maxBatch: 2 }).bind(backend);
      model.initialize(new Rng(3));
      const rng = new Rng(9);
      const ids = (): Int32Array => Int32Array.from({ length: 2 * 8 }, () => 1 + rng.int(cfg.vocabSize - 1));
      const out: number[] = [];
      for (let i = 0; i < 3; i++) {
        const batch = { B: 2, T: 8, input: ids(), targets: ids() };
        out.push(model.forward(batch, { train: false }).loss);
        model.backward();
        for (let j = 0; j < model.params.length; j++)
          (model.params[j] as number) -= 0.05 * (model.grads?.[j] as number);
      }
      return out;
    };
    const plain = capped(Infinity);
    const want = losses(plain.backend);
    // The largest allocation: the flat parameters (which are not split); the activations take several.
    const [params = 0, arena = 0] = plain.sizes;
    expect(arena).toBeGreaterThan(2 * params);
    const split = capped(params);
    expect(losses(split.backend)).toEqual(want);
    expect(split.sizes.length).toBeGreaterThan(plain.sizes.length + 1);
  });
});
