/**
 * Test helper (not a test file): the trainer the WebGPU tests run on two backends to compare them step for step —
 * a model initialised from seed 1, AdamW (clipping at 1, constant rate) unless `opt` says otherwise, dropout from
 * seed 2.
 */

import type { Backend } from '../../../../../src/engine/backend';
import type { ModelConfig } from '../../../../../src/engine/config';
import { Transformer } from '../../../../../src/engine/models/transformer';
import { Optimizer } from '../../../../../src/engine/optim/optimizer';
import type { OptimizerConfig } from '../../../../../src/engine/optim/optimizerConfig';
import { Rng } from '../../../../../src/engine/rng';
import { Trainer } from '../../../../../src/engine/train';

/** The optimizer every comparison starts from. */
const ADAMW = {
  type: 'adamw',
  lr: 3e-3,
  beta1: 0.9,
  beta2: 0.99,
  eps: 1e-8,
  weightDecay: 0.1,
  clipGradNorm: 1,
  schedule: { type: 'constant', warmup: 0 },
} as const satisfies OptimizerConfig;

/** A trainer of `cfg` on `backend` for batches of up to `maxBatch` rows, its optimizer AdamW with `opt` over it. */
export function testTrainer(
  cfg: ModelConfig,
  backend: Backend,
  { maxBatch = 2, opt = {} }: { maxBatch?: number; opt?: Partial<OptimizerConfig> } = {},
): Trainer {
  const model = new Transformer(cfg, { maxBatch }).bind(backend);
  model.initialize(new Rng(1));
  const optimizer = new Optimizer(backend, model.params, model.grads, model.segments(), {
    ...ADAMW,
    ...opt,
  } as OptimizerConfig);
  return new Trainer(model, optimizer, new Rng(2));
}
