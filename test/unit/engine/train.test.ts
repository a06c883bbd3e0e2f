import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../src/engine/backend';
import { createReferenceBackend } from '../../../src/engine/backends/reference';
import { Transformer } from '../../../src/engine/models/transformer';
import { Optimizer } from '../../../src/engine/optim/optimizer';
import { Rng } from '../../../src/engine/rng';
import type { DeviceStats } from '../../../src/engine/train';
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

/**
 * A device backend played by the reference: its cross-entropy returns a NaN sum (as WebGPU's does) and
 * keeps the real one for `readStats`, as the GPU's stats buffer does.
 */
function referenceDevice(): { backend: Backend; device: DeviceStats } {
  const ref = createReferenceBackend();
  let lossSum = Number.NaN;
  const backend: Backend = {
    ...ref,
    crossEntropyForward: (...args: Parameters<Backend['crossEntropyForward']>) => {
      const r = ref.crossEntropyForward(...args);
      lossSum = r.sum;
      return { sum: Number.NaN, count: r.count };
    },
  };
  const device: DeviceStats = {
    readStats: (g, n) => Promise.resolve({ lossSum, normSq: ref.sumSquares(g, n) }),
    download: () => Promise.resolve(),
  };
  return { backend, device };
}

describe('Trainer.stepAsync (a device backend)', () => {
  const adamw = {
    type: 'adamw',
    lr: 1e-2,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.1,
    clipGradNorm: 0.5,
    schedule: { type: 'constant', warmup: 0 },
  } as const;
  const trainerOn = (backend: Backend, kind: 'decoder-only' | 'encoder-decoder'): Trainer => {
    const cfg = tinyConfig(kind, { dropout: 0.1 });
    const model = new Transformer(cfg, { maxBatch: 2 }).bind(backend);
    model.initialize(new Rng(1));
    return new Trainer(model, new Optimizer(backend, model.params, model.grads, model.segments(), adamw), new Rng(2));
  };

  it.each(['decoder-only', 'encoder-decoder'] as const)(
    'gives the synchronous step’s losses, norms and parameters bit for bit, clipping included (%s)',
    async (kind) => {
      const sync = trainerOn(createReferenceBackend(), kind);
      const { backend, device } = referenceDevice();
      const onDevice = trainerOn(backend, kind);
      const batch = tinyBatch(sync.model.config);
      for (let i = 0; i < 4; i++) {
        const a = sync.step(batch, new Rng(10 + i));
        const b = await onDevice.stepAsync(batch, device, new Rng(10 + i));
        expect(b).toEqual(a);
      }
      expect(Array.from(onDevice.model.params)).toEqual(Array.from(sync.model.params));
    },
  );

  it('stops on a non-finite loss read back, parameters untouched; a synchronous step on it stops too', async () => {
    const { backend, device } = referenceDevice();
    const trainer = trainerOn(backend, 'decoder-only');
    const cfg = trainer.model.config;
    const batch = tinyBatch(cfg);
    expect(() => trainer.step(batch)).toThrow(/loss became NaN at step 1/);
    batch.input.fill(4);
    trainer.model.params.fill(Number.NaN, 4 * cfg.dModel, 5 * cfg.dModel);
    const snapshot = Float32Array.from(trainer.model.params);
    await expect(trainer.stepAsync(batch, device)).rejects.toThrow(/loss became NaN at step 1/);
    expect(Array.from(trainer.model.params).map(String)).toEqual(Array.from(snapshot).map(String));
    expect(trainer.optimizer.stepCount).toBe(0);
  });
});
