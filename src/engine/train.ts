/**
 * One optimizer step of a model on a batch — forward, loss check, backward, update — and
 * evaluation without dropout. The loop around it (data order, logging, checkpoints,
 * evaluation cadence) lives in `src/lab`; this is the part that must be identical wherever
 * training runs, so the same seed, config and batches give the same losses bit for bit.
 */

import type { Optimizer } from './optim/optimizer';
import type { Rng } from './rng';
import type { Batch } from './models/inputs';
import type { Transformer } from './models/transformer';

/** What one training step measured. */
export interface TrainStepResult {
  /** 1-based optimizer step just taken. */
  readonly step: number;
  /** Mean loss of the batch (with label smoothing, before the update). */
  readonly loss: number;
  /** Target tokens the loss counted. */
  readonly tokens: number;
  readonly lr: number;
  /** Global gradient norm before clipping. */
  readonly gradNorm: number;
  readonly clipped: boolean;
}

/** Runs training steps of one model with one optimizer and one dropout stream. */
export class Trainer {
  constructor(
    readonly model: Transformer,
    readonly optimizer: Optimizer,
    /** Default dropout stream (a caller may pass a step-derived one to `step`). */
    readonly rng: Rng,
  ) {}

  /**
   * forward (dropout drawn from `rng`) → stop on a non-finite loss (EngineError 'train/nonFinite',
   * parameters untouched) → backward → optimizer update.
   */
  step(batch: Batch, rng: Rng = this.rng): TrainStepResult {
    const { loss, tokens } = this.model.forward(batch, { train: true, rng });
    this.optimizer.checkLoss(loss, this.optimizer.stepCount + 1);
    this.model.backward();
    const info = this.optimizer.step();
    return { step: info.step, loss, tokens, lr: info.lr, gradNorm: info.gradNorm, clipped: info.clipped };
  }

  /** Loss without dropout or label smoothing (for validation and perplexity). */
  evaluate(batch: Batch): { loss: number; tokens: number } {
    return this.model.forward(batch, { train: false, labelSmoothing: 0 });
  }
}
