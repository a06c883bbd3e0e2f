/**
 * What reaches a running training session from its host, and how it speaks back: stop, pause
 * and resume between steps (SessionControl), the options it runs with, and the notifications
 * it emits. Shared by both
 * engines' sessions (session.ts, ours; src/lab/pytorch/pytorchSession.node.ts, PyTorch's).
 */

import type { AttentionSnapshot } from '../../protocol/model';
import type { FromTrainingWorker } from '../../protocol/trainingWorker';

/** Commands that reach a running session between steps. */
export class SessionControl {
  private paused = false;
  private stopped = false;
  private wake: (() => void) | null = null;
  private readonly aborter = new AbortController();

  /** Aborted by {@link stop}: for what a session awaits outside its steps (a Python's probe). */
  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.aborter.abort();
    this.wake?.();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get isPaused(): boolean {
    return this.paused && !this.stopped;
  }

  /** Resolves when resumed or stopped. */
  waitWhilePaused(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = null;
        resolve();
      };
      if (!this.isPaused) this.wake();
    });
  }
}

/** How a session of either engine runs beyond its request (the train/start command's fields). */
export interface SessionOptions {
  /**
   * Score every head at each snapshot (default true). Only the benchmark turns this off, to
   * measure what the scores cost (`attention-lab bench`): every run a user starts has them.
   */
  readonly headScores?: boolean;
}

/** Sends one notification; `transfer` lists buffers that may be moved instead of copied. */
export type Emit = (msg: FromTrainingWorker, transfer?: ArrayBuffer[]) => void;

/** Sends a snapshot as train/didSnapshot, its maps' and masks' buffers moved, not copied (the snapshot is spent). */
export function emitSnapshot(emit: Emit, snap: AttentionSnapshot): void {
  emit({ type: 'train/didSnapshot', ...snap }, [
    ...snap.maps.map((m) => m.data.buffer as ArrayBuffer),
    ...snap.masks.map((m) => m.data.buffer as ArrayBuffer),
  ]);
}
