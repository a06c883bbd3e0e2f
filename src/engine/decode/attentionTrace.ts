/**
 * Collects the attention a stepper emits, step by step, and assembles the maps of one
 * hypothesis in the `DecodeAttention` layout ([H, T, K] self and [H, T, S] cross per layer).
 *
 * Every recorded step keeps a copy of ALL its rows (the stepper may reuse its arrays). A
 * beam hypothesis is then assembled by following its row at each step (the backpointers of
 * beam search), so maps stay right across `reorder`: row r of step t always belongs to the
 * hypothesis that occupied row r when step t was fed.
 *
 * Leaves out: choosing which steps to record (the decoders decide) and any averaging over
 * heads or layers (the dashboard's business).
 */

import { EngineError } from '../errors';
import type { DecodeAttention, StepAttention } from './stepperContract';

interface RecordedStep {
  /** Position of the first key this step's query saw (0 unless a sliding window moved on). */
  readonly keyStart: number;
  readonly self: Float32Array[]; // per layer [rows, H, P − keyStart]
  readonly cross: Float32Array[]; // per layer [rows, H, S]
}

function mismatch(message: string): never {
  throw new EngineError('shape/mismatch', message);
}

/** The attention of consecutive query positions starting at `queryStart`. */
export class AttentionTrace {
  private readonly steps: RecordedStep[] = [];
  private nLayers = -1;
  private nCross = -1;
  private S = -1;

  /**
   * @param nHeads H of the stepper.
   * @param queryStart the position of the first query that will be recorded.
   */
  constructor(
    private readonly nHeads: number,
    readonly queryStart: number,
  ) {}

  /** Number of steps recorded so far. */
  get length(): number {
    return this.steps.length;
  }

  /**
   * Copies the attention of `rows` rows of the next query position (queryStart + length),
   * checking that self-attention is exactly [rows, H, P − keyStart] with P = that position + 1
   * (a sliding-window decode's query sees only keys keyStart..P−1), that
   * cross-attention is exactly [rows, H, S], and that every step has the same layers and S.
   */
  record(att: StepAttention | null, rows: number, keyStart = 0): void {
    if (att === null)
      mismatch(
        'The decode stepper returned no attention although capture was requested; implement capture ' +
          "in the model's stepper or decode without captureAttention.",
      );
    const H = this.nHeads;
    const P = this.queryStart + this.steps.length + 1 - keyStart;
    if (this.nLayers < 0) {
      this.nLayers = att.self.length;
      this.nCross = att.cross.length;
    }
    if (att.self.length !== this.nLayers || att.cross.length !== this.nCross) {
      mismatch(
        `The decode stepper returned attention for ${att.self.length} self / ${att.cross.length} ` +
          `cross layers; earlier steps had ${this.nLayers} / ${this.nCross}.`,
      );
    }
    const self = att.self.map((a, l) => {
      if (a.length !== rows * H * P)
        mismatch(
          `Self-attention of layer ${l} has ${a.length} values; expected [rows ${rows}, H ${H}, P ` +
            `${P}] = ${rows * H * P}.`,
        );
      return a.slice(0, rows * H * P);
    });
    const cross = att.cross.map((a, l) => {
      const S = a.length / (rows * H);
      if (!Number.isInteger(S) || (this.S >= 0 && S !== this.S)) {
        mismatch(
          `Cross-attention of layer ${l} has ${a.length} values; expected [rows ` +
            `${rows}, H ${H}, S]${this.S >= 0 ? ` with S ${this.S}` : ''}.`,
        );
      }
      this.S = S;
      return a.slice();
    });
    this.steps.push({ keyStart, self, cross });
  }

  /**
   * The maps of one hypothesis: row t of the result is row `rowAt[t]` of recorded step t,
   * for t < rowAt.length (later steps, fed for other hypotheses, are ignored).
   */
  assemble(rowAt: ArrayLike<number>): DecodeAttention {
    const H = this.nHeads;
    const T = rowAt.length;
    const K = this.queryStart + T;
    const S = Math.max(this.S, 0);
    const nLayers = Math.max(this.nLayers, 0);
    const self: Float32Array[] = [];
    const cross: Float32Array[] = [];
    for (let l = 0; l < nLayers; l++) self.push(new Float32Array(H * T * K)); // [H, T, K]
    for (let l = 0; l < Math.max(this.nCross, 0); l++) cross.push(new Float32Array(H * T * S)); // [H, T, S]
    for (let t = 0; t < T; t++) {
      const step = this.steps[t] as RecordedStep;
      const r = rowAt[t] as number;
      const P = this.queryStart + t + 1 - step.keyStart; // keys before keyStart left the window: 0
      for (let l = 0; l < self.length; l++) {
        const src = step.self[l] as Float32Array;
        const dst = self[l] as Float32Array;
        for (let h = 0; h < H; h++)
          dst.set(src.subarray((r * H + h) * P, (r * H + h + 1) * P), (h * T + t) * K + step.keyStart);
      }
      for (let l = 0; l < cross.length; l++) {
        const src = step.cross[l] as Float32Array;
        const dst = cross[l] as Float32Array;
        for (let h = 0; h < H; h++) dst.set(src.subarray((r * H + h) * S, (r * H + h + 1) * S), (h * T + t) * S);
      }
    }
    return { nLayers, nHeads: H, queryStart: this.queryStart, queries: T, selfKeys: K, self, cross, sourceLength: S };
  }
}
