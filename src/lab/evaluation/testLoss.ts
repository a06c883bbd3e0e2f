/**
 * The loss of test data, batch by batch: the scoring windows of a document stream (every
 * token after the first predicted exactly once), the token-weighted mean loss with the bytes
 * its targets stand for (for bits per byte), and progress that can be cancelled between
 * batches and decodes.
 *
 * Leaves out: reading the data and building the batches (evaluateFiles.ts).
 */

import type { Batch } from '../../engine/models/inputs';
import type { Transformer } from '../../engine/models/transformer';
import type { ByteCounter } from './bitsPerByte';

/** Thrown when an evaluation's `cancelled` hook said stop. */
export class EvaluationCancelled extends Error {
  constructor() {
    super('The evaluation was cancelled.');
    this.name = 'EvaluationCancelled';
  }
}

/** One group of equally long scoring windows: starts in the token stream, inputs `length` tokens each. */
export interface WindowGroup {
  readonly starts: readonly number[];
  readonly length: number;
}

/**
 * The scoring windows of a stream of `n` tokens with context `T`, in batches of up to
 * `rows`: inputs [s, s + T) and targets [s + 1, s + T + 1) for s = 0, T, 2T, …, the last
 * window cut to the stream's end, so targets 1 … n − 1 are each scored exactly once.
 */
export function scoringWindows(n: number, T: number, rows: number): WindowGroup[] {
  const full: number[] = [];
  let s = 0;
  for (; s + T <= n - 1; s += T) full.push(s);
  const groups: WindowGroup[] = [];
  for (let i = 0; i < full.length; i += rows) groups.push({ starts: full.slice(i, i + rows), length: T });
  if (s < n - 1) groups.push({ starts: [s], length: n - 1 - s });
  return groups;
}

/** The batch of one window group of `stream`. */
export function windowBatch(stream: Int32Array, g: WindowGroup): Batch {
  const B = g.starts.length;
  const input = new Int32Array(B * g.length);
  const targets = new Int32Array(B * g.length);
  g.starts.forEach((s, b) => {
    input.set(stream.subarray(s, s + g.length), b * g.length);
    targets.set(stream.subarray(s + 1, s + g.length + 1), b * g.length);
  });
  return { B, T: g.length, input, targets };
}

/** Counts work done, reports it and stops when asked. */
export class Progress {
  private done = 0;

  constructor(
    private readonly total: number,
    private readonly hooks: {
      readonly onProgress?: (done: number, total: number) => void;
      readonly cancelled?: () => boolean;
    },
  ) {}

  /** Throws {@link EvaluationCancelled} if the caller cancelled. */
  check(): void {
    if (this.hooks.cancelled?.()) throw new EvaluationCancelled();
  }

  tick(): void {
    this.done++;
    this.hooks.onProgress?.(this.done, this.total);
  }
}

/** A loss over some text: nats per token, the tokens scored and the bytes of text they stand for. */
export interface TextLoss {
  readonly loss: number;
  readonly tokens: number;
  readonly bytes: number;
}

/** Token-weighted mean loss over `count` batches (no dropout, no label smoothing), with the bytes of their targets. */
export function meanLoss(
  model: Transformer,
  count: number,
  batch: (i: number) => Batch,
  counter: ByteCounter,
  progress: Progress,
): TextLoss {
  let sum = 0;
  let tokens = 0;
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    progress.check();
    const b = batch(i);
    const out = model.forward(b, { train: false, labelSmoothing: 0 });
    sum += out.loss * out.tokens;
    tokens += out.tokens;
    bytes += counter.bytes(b.targets, b.B * b.T);
    progress.tick();
  }
  return { loss: tokens ? sum / tokens : Number.NaN, tokens, bytes };
}
