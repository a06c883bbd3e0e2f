/**
 * One optimizer step of a model on a batch — forward, loss check, backward, update — and
 * evaluation without dropout. The loop around it (data order, logging, checkpoints,
 * evaluation cadence) lives in `src/lab`; this is the part that must be identical wherever
 * training runs, so the same seed, config and batches give the same losses bit for bit.
 *
 * A backend on a device (WebGPU) cannot return the loss or the gradient norm from a kernel call;
 * it trains with `stepAsync`, which reads both back in one copy after the backward pass and then
 * decides on the host, as `step` does: a non-finite loss or norm stops before the update.
 */

import type { FloatArray } from './backend';
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

/** A backend whose loss and gradient norm live on a device and are read back (WebGPU). */
export interface DeviceStats {
  /**
   * Records Σ grads[0..n)² on the device, runs everything recorded, and reads back the loss sum
   * of the last cross-entropy forward and that sum of squares.
   */
  readStats(grads: FloatArray, n: number): Promise<{ lossSum: number; normSq: number }>;
  /** Runs what was recorded, then copies `view` from the device to its host mirror. */
  download(view: FloatArray): Promise<void>;
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

  /**
   * `step` on a device backend: forward and backward are recorded, then the loss and the gradient
   * norm come back in one read; a non-finite loss or norm throws (EngineError 'train/nonFinite')
   * with the parameters untouched, else the optimizer updates with the norm read.
   */
  async stepAsync(batch: Batch, device: DeviceStats, rng: Rng = this.rng): Promise<TrainStepResult> {
    const { tokens } = this.model.forward(batch, { train: true, rng });
    this.model.backward();
    const grads = this.model.grads;
    const { lossSum, normSq } = await device.readStats(grads, grads.length);
    const loss = tokens > 0 ? lossSum / tokens : 0;
    this.optimizer.checkLoss(loss, this.optimizer.stepCount + 1);
    // The optimizer names the first bad gradient from its host copy.
    if (!Number.isFinite(normSq)) await device.download(grads);
    const info = this.optimizer.step(normSq);
    return { step: info.step, loss, tokens, lr: info.lr, gradNorm: info.gradNorm, clipped: info.clipped };
  }

  /** `evaluate` on a device backend: the loss read back. */
  async evaluateAsync(batch: Batch, device: DeviceStats): Promise<{ loss: number; tokens: number }> {
    const { tokens } = this.model.forward(batch, { train: false, labelSmoothing: 0 });
    const { lossSum } = await device.readStats(this.model.grads, 0);
    return { loss: tokens > 0 ? lossSum / tokens : 0, tokens };
  }

  /** Loss without dropout or label smoothing (for validation and perplexity). */
  evaluate(batch: Batch): { loss: number; tokens: number } {
    return this.model.forward(batch, { train: false, labelSmoothing: 0 });
  }
}
