/**
 * The key/value-cache stepper sizes its buffers by the job, not by the model's context: a model with
 * the 32768 positions of Qwen2.5 decodes a short prompt in a small budget (the old stepper planned
 * [H, P, P] for the whole context: a RangeError), and a prefill's buffers grow for a longer prompt.
 */

import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { greedyDecode } from '../../../../src/engine/decode/greedy';
import { StepperWorkspace, createStepper } from '../../../../src/engine/models/stepper';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { tinyConfig } from './fixtures';

/** A reference backend that counts the floats and bytes allocated through it. */
function countingBackend(): { backend: Backend; used: () => number } {
  const inner = createReferenceBackend();
  let bytes = 0;
  const backend = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === 'alloc')
        return (n: number) => {
          bytes += 4 * n;
          return target.alloc(n);
        };
      if (key === 'allocBytes' && target.allocBytes) {
        const allocBytes = target.allocBytes.bind(target);
        return (n: number) => {
          bytes += n;
          return allocBytes(n);
        };
      }
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { backend, used: () => bytes };
}

const LONG = tinyConfig('decoder-only', {
  maxLen: 32768,
  positional: 'rope',
  normType: 'rmsnorm',
  activation: 'swiglu',
  nHeads: 4,
  nKvHeads: 2,
  tieEmbeddings: true,
  bias: false,
});

describe('stepper memory at a long context', () => {
  const { backend, used } = countingBackend();
  const model = new Transformer(LONG, { maxBatch: 1, maxLen: 1 }).bind(backend);
  model.initialize(new Rng(3));
  const prompt = Int32Array.from([1, 5, 7, 4, 9, 6]);

  it('decodes a short prompt of a 32768-position model within a small budget', () => {
    const before = used();
    const stepper = createStepper(model, backend, { maxRows: 1, positions: prompt.length + 8 });
    expect(stepper.maxPositions).toBe(14);
    const out = greedyDecode(stepper, prompt, { maxTokens: 8, eos: -1 });
    expect(out.tokens.length).toBe(8);
    // The whole context's prefill alone would be 4 · 32768² floats; this job takes a few kilobytes.
    expect(used() - before).toBeLessThan(64 * 1024);
  });

  it('gives the numbers of a stepper planned for the whole context', () => {
    const small = createStepper(model, backend, { maxRows: 1, positions: 8 });
    const a = Float32Array.from(small.prefill(prompt, false).logits);
    const b = Float32Array.from(small.step(Int32Array.of(3), false).logits);
    const ref = new Transformer({ ...LONG, maxLen: 64 }, { maxBatch: 1, maxLen: 1 }).bind(createReferenceBackend());
    ref.params.set(model.params.subarray(0, model.store.count));
    const full = createStepper(ref, ref.backendOrThrow(), { maxRows: 1 });
    expect(Float32Array.from(full.prefill(prompt, false).logits)).toEqual(a);
    expect(Float32Array.from(full.step(Int32Array.of(3), false).logits)).toEqual(b);
  });

  it('grows its prefill buffers for a longer prompt and gives a fresh stepper’s numbers', () => {
    const ws = new StepperWorkspace(backend);
    const grown = createStepper(model, backend, { maxRows: 1, positions: 8, workspace: ws });
    grown.prefill(prompt.subarray(0, 2), false);
    grown.reset();
    const got = Float32Array.from(grown.prefill(prompt, false).logits);
    const fresh = createStepper(model, backend, { maxRows: 1, positions: 8 });
    expect(got).toEqual(Float32Array.from(fresh.prefill(prompt, false).logits));
    // Growing reuses the prefill's slots of the workspace: a third prefill allocates nothing new.
    grown.reset();
    const before = used();
    grown.prefill(prompt.subarray(0, 4), false);
    expect(used()).toBe(before);
  });

  it('refuses positions outside 1..context and a prompt or step past them', () => {
    expect(() => createStepper(model, backend, { maxRows: 1, positions: 32769 })).toThrow(/1 to the context of 32768/);
    expect(() => createStepper(model, backend, { maxRows: 1, positions: 0 })).toThrow(/positions must be/);
    const s = createStepper(model, backend, { maxRows: 1, positions: 4 });
    expect(() => s.prefill(prompt, false)).toThrow(/does not fit the context of 4/);
    s.prefill(prompt.subarray(0, 4), false);
    expect(() => s.step(Int32Array.of(2), false)).toThrow(/context of 4 positions is full/);
  });
});
