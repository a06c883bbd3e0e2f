/**
 * One optimizer step of a model on a batch — forward, loss check, backward, update — and
 * evaluation without dropout. The loop around it (data order, logging, checkpoints,
 * evaluation cadence) lives in `src/lab`; this is the part that must be identical wherever
 * training runs, so the same seed, config and batches give the same losses bit for bit.
 *
 * A backend on a device (WebGPU) cannot return the loss or the gradient norm from a kernel call;
 * it trains with `stepAsync`, which reads both back in one copy. Where the device gates its update
 * (`DeviceStats.gateUpdate`: the clip factor and the non-finite guard on the device) the update is
 * recorded before that read, else after it, decided on the host as `step` does; either way a
 * non-finite loss or norm stops with the parameters unchanged.
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
  /**
   * Optional: records Σ grads[0..n)² and the update's gate on the device — the clip factor
   * min(1, clip / (‖g‖ + 1e-6)) (1 for clip 0), or 0 when the loss or the norm is not finite —
   * which the updates recorded until `readStats` go through (the gradients scaled by it; nothing
   * changed where it is 0). `readStats` then reads the same sums back.
   */
  gateUpdate?(grads: FloatArray, n: number, clip: number): void;
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
    if (device.gateUpdate) return this.gatedStep(tokens, device, device.gateUpdate.bind(device));
    const { lossSum, normSq } = await device.readStats(grads, grads.length);
    const loss = tokens > 0 ? lossSum / tokens : 0;
    this.optimizer.checkLoss(loss, this.optimizer.stepCount + 1);
    // The optimizer names the first bad gradient from its host copy.
    if (!Number.isFinite(normSq)) await device.download(grads);
    const info = this.optimizer.step(normSq);
    return { step: info.step, loss, tokens, lr: info.lr, gradNorm: info.gradNorm, clipped: info.clipped };
  }

  /**
   * The rest of `stepAsync` on a device that gates its update: the clip factor and the guard are
   * recorded after the backward and the update after them, so the step is one submission with
   * no wait before its update; the loss and norm come back once, after it. A non-finite one
   * throws as `step` does — the device changed nothing, and the step is taken back.
   */
  private async gatedStep(
    tokens: number,
    device: DeviceStats,
    gate: NonNullable<DeviceStats['gateUpdate']>,
  ): Promise<TrainStepResult> {
    const grads = this.model.grads;
    const clip = this.optimizer.clipGradNorm;
    gate(grads, grads.length, clip);
    const { step, lr } = this.optimizer.stepOnDevice();
    const { lossSum, normSq } = await device.readStats(grads, grads.length);
    const loss = tokens > 0 ? lossSum / tokens : 0;
    const gradNorm = Math.sqrt(normSq);
    if (!Number.isFinite(loss) || !Number.isFinite(gradNorm) || !Number.isFinite(lossSum)) {
      this.optimizer.revokeStep();
      this.optimizer.checkLoss(tokens > 0 ? loss : lossSum, step);
      await device.download(grads); // the optimizer names the first bad gradient from its host copy
      this.optimizer.checkNorm(normSq, step);
    }
    return { step, loss, tokens, lr, gradNorm, clipped: clip > 0 && clip / (gradNorm + 1e-6) < 1 };
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
