import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../src/engine/backend';
import { createReferenceBackend } from '../../../src/engine/backends/reference';
import { Transformer } from '../../../src/engine/models/transformer';
import { Optimizer } from '../../../src/engine/optim/optimizer';
import { Rng } from '../../../src/engine/rng';
import { Trainer } from '../../../src/engine/train';
import { tinyBatch, tinyConfig } from './models/fixtures';

describe('Trainer', () => {
  it.each(['encoder-decoder', 'decoder-only'] as const)(
    'allocates no backend buffer inside a training step (%s, dropout on)',
    (kind) => {
      const ref = createReferenceBackend();
      let allocs = 0;
      const counting: Backend = {
        ...ref,
        alloc: (n: number) => (allocs++, ref.alloc(n)),
        allocBytes: (n: number) => (allocs++, new Uint8Array(n)),
      };
      const cfg = tinyConfig(kind, { dropout: 0.1 });
      const model = new Transformer(cfg, { maxBatch: 2 }).bind(counting);
      model.initialize(new Rng(1));
      const trainer = new Trainer(
        model,
        new Optimizer(counting, model.params, model.grads, model.segments(), {
          type: 'adamw',
          lr: 1e-3,
          beta1: 0.9,
          beta2: 0.99,
          eps: 1e-8,
          weightDecay: 0.1,
          clipGradNorm: 1,
          schedule: { type: 'constant', warmup: 0 },
        }),
        new Rng(2),
      );
      const before = allocs;
      const batch = tinyBatch(cfg);
      const losses = [0, 1, 2, 3].map(() => trainer.step(batch).loss);
      expect(allocs).toBe(before);
      expect(losses.every(Number.isFinite)).toBe(true);
    },
  );

  it('stops on a non-finite loss before touching the parameters', () => {
    const cfg = tinyConfig('decoder-only');
    const model = new Transformer(cfg, { maxBatch: 2 }).bind(createReferenceBackend());
    model.initialize(new Rng(1));
    const batch = tinyBatch(cfg);
    batch.input.fill(4); // every position reads embedding row 4, poisoned below
    model.params.fill(Number.NaN, 4 * cfg.dModel, 5 * cfg.dModel);
    const trainer = new Trainer(
      model,
      new Optimizer(model.backendOrThrow(), model.params, model.grads, model.segments(), {
        type: 'adam',
        lr: 1e-3,
        beta1: 0.9,
        beta2: 0.98,
        eps: 1e-9,
        weightDecay: 0,
        clipGradNorm: 0,
        schedule: { type: 'constant', warmup: 0 },
      }),
      new Rng(2),
    );
    const snapshot = Float32Array.from(model.params);
    expect(() => trainer.step(batch)).toThrow(/loss became NaN at step 1/);
    expect(Array.from(model.params).map(String)).toEqual(Array.from(snapshot).map(String));
  });
});
