/**
 * Test helper (not a test file): mock decode steppers for the decoding tests.
 *
 * `HistoryStepper` keeps, per row, the whole list of tokens fed to that row (its "cache"),
 * and derives logits and attention from a seeded hash of that list. A decoder that lets the
 * cache drift from its beams (a wrong or missing `reorder`) therefore sees different logits
 * and attention than the pure functions `mockLogits` / `mockSelf` / `mockCross` give for
 * the hypothesis it reports, which the tests recompute independently. It reuses its output
 * buffers between calls (as the contract allows) and throws on every contract violation.
 *
 * `FixedStepper` returns the same logits at every step, for distribution tests.
 */

import { Rng } from '../../../../src/engine/rng';
import type { DecodeStepper, StepAttention, StepOutput } from '../../../../src/engine/decode/stepperContract';

/** Parameters of a HistoryStepper. */
export interface MockSpec {
  readonly V: number;
  readonly H: number;
  readonly nLayers: number;
  /** Source length; 0 = decoder-only (no cross-attention). */
  readonly S: number;
  readonly maxPositions: number;
  readonly maxRows: number;
  readonly seed: number;
  /** Standard deviation of the logits. */
  readonly scale: number;
  /** Token whose logit grows with the history length (-1 = none), so hypotheses end. */
  readonly eos: number;
  readonly eosBias: number;
}

/** FNV-1a over a salt and a token list. */
function hashHistory(salt: number, history: readonly number[]): number {
  let h = 2166136261;
  const mix = (x: number): void => {
    for (let b = 0; b < 4; b++) {
      h ^= (x >>> (8 * b)) & 0xff;
      h = Math.imul(h, 16777619);
    }
  };
  mix(salt);
  mix(history.length);
  for (const t of history) mix(t);
  return h | 0;
}

/** The logits a HistoryStepper returns for a row whose fed tokens are `history`. */
export function mockLogits(spec: MockSpec, history: readonly number[]): Float32Array {
  const rng = new Rng(hashHistory(spec.seed, history));
  const out = new Float32Array(spec.V);
  for (let v = 0; v < spec.V; v++) out[v] = rng.normal() * spec.scale;
  if (spec.eos >= 0) out[spec.eos] = (out[spec.eos] as number) + spec.eosBias * history.length;
  return out;
}

function normalized(rng: Rng, n: number): Float32Array {
  const out = new Float32Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    out[i] = rng.next() + 0.01;
    sum += out[i] as number;
  }
  for (let i = 0; i < n; i++) out[i] = (out[i] as number) / sum;
  return out;
}

/** Self-attention [P] of head h in layer l for the newest token of `history` (P = history.length). */
export function mockSelf(spec: MockSpec, history: readonly number[], l: number, h: number): Float32Array {
  return normalized(new Rng(hashHistory(spec.seed + 1000 + l * 37 + h, history)), history.length);
}

/** Cross-attention [S] of head h in layer l for the newest token of `history`. */
export function mockCross(spec: MockSpec, history: readonly number[], l: number, h: number): Float32Array {
  return normalized(new Rng(hashHistory(spec.seed + 5000 + l * 37 + h, history)), spec.S);
}

/** One call the decoder made. */
export type MockCall =
  | { readonly kind: 'step'; readonly tokens: number[]; readonly capture: boolean }
  | { readonly kind: 'reorder'; readonly parents: number[] }
  | { readonly kind: 'reset' };

/** A stepper whose outputs depend on each row's whole history (see the file header). */
export class HistoryStepper implements DecodeStepper {
  readonly vocabSize: number;
  readonly nHeads: number;
  readonly maxPositions: number;
  readonly maxRows: number;
  /** Tokens fed so far, per row. */
  rows: number[][] = [[]];
  readonly calls: MockCall[] = [];
  private readonly logits: Float32Array;
  private readonly selfBuf: Float32Array[];
  private readonly crossBuf: Float32Array[];

  constructor(readonly spec: MockSpec) {
    this.vocabSize = spec.V;
    this.nHeads = spec.H;
    this.maxPositions = spec.maxPositions;
    this.maxRows = spec.maxRows;
    this.logits = new Float32Array(spec.maxRows * spec.V);
    this.selfBuf = Array.from(
      { length: spec.nLayers },
      () => new Float32Array(spec.maxRows * spec.H * spec.maxPositions),
    );
    this.crossBuf =
      spec.S > 0 ? Array.from({ length: spec.nLayers }, () => new Float32Array(spec.maxRows * spec.H * spec.S)) : [];
  }

  get stepCount(): number {
    return this.calls.filter((c) => c.kind === 'step').length;
  }

  step(tokens: Int32Array, capture: boolean): StepOutput {
    const { V, H, S, nLayers } = this.spec;
    const R = this.rows.length;
    if (tokens.length !== R) throw new Error(`mock: ${tokens.length} tokens for ${R} rows`);
    this.calls.push({ kind: 'step', tokens: Array.from(tokens), capture });
    const P = (this.rows[0] as number[]).length + 1;
    if (P > this.maxPositions) throw new Error(`mock: position ${P} exceeds maxPositions ${this.maxPositions}`);
    for (let r = 0; r < R; r++) {
      const hist = this.rows[r] as number[];
      if (hist.length + 1 !== P) throw new Error('mock: rows out of step');
      const t = tokens[r] as number;
      if (!Number.isInteger(t) || t < 0 || t >= V) throw new Error(`mock: token ${t} out of range`);
      hist.push(t);
      this.logits.set(mockLogits(this.spec, hist), r * V);
      if (!capture) continue;
      for (let l = 0; l < nLayers; l++) {
        for (let h = 0; h < H; h++) {
          (this.selfBuf[l] as Float32Array).set(mockSelf(this.spec, hist, l, h), (r * H + h) * P);
          if (S > 0) (this.crossBuf[l] as Float32Array).set(mockCross(this.spec, hist, l, h), (r * H + h) * S);
        }
      }
    }
    const attention: StepAttention | null = capture
      ? {
          self: this.selfBuf.map((b) => b.subarray(0, R * H * P)),
          cross: this.crossBuf.map((b) => b.subarray(0, R * H * S)),
        }
      : null;
    return { logits: this.logits.subarray(0, R * V), attention };
  }

  reorder(parents: Int32Array): void {
    const R = this.rows.length;
    if (parents.length < 1 || parents.length > this.maxRows)
      throw new Error(`mock: ${parents.length} rows outside [1, ${this.maxRows}]`);
    for (const p of parents) if (p < 0 || p >= R) throw new Error(`mock: parent ${p} outside [0, ${R})`);
    this.calls.push({ kind: 'reorder', parents: Array.from(parents) });
    this.rows = Array.from(parents, (p) => (this.rows[p] as number[]).slice());
  }

  reset(): void {
    this.calls.push({ kind: 'reset' });
    this.rows = [[]];
  }
}

/** A stepper that returns the same logits for every row at every step (no attention). */
export class FixedStepper implements DecodeStepper {
  readonly vocabSize: number;
  readonly nHeads = 1;
  readonly maxPositions: number;
  readonly maxRows: number;
  private rowCount = 1;
  private readonly out: Float32Array;
  /** Number of step calls so far. */
  steps = 0;

  constructor(
    private readonly row: Float32Array,
    maxPositions = 64,
    maxRows = 8,
  ) {
    this.vocabSize = row.length;
    this.maxPositions = maxPositions;
    this.maxRows = maxRows;
    this.out = new Float32Array(maxRows * row.length);
    for (let r = 0; r < maxRows; r++) this.out.set(row, r * row.length);
  }

  step(tokens: Int32Array): StepOutput {
    if (tokens.length !== this.rowCount) throw new Error('mock: token count differs from rows');
    this.steps++;
    return { logits: this.out.subarray(0, this.rowCount * this.row.length), attention: null };
  }

  reorder(parents: Int32Array): void {
    this.rowCount = parents.length;
  }

  reset(): void {
    this.rowCount = 1;
  }
}

/** log-softmax in float64, written plainly (the oracle). */
export function refLogSoftmax(logits: Float32Array): number[] {
  const xs = Array.from(logits);
  const m = Math.max(...xs);
  const lse = m + Math.log(xs.reduce((a, x) => a + Math.exp(x - m), 0));
  return xs.map((x) => x - lse);
}

/** Default spec with overrides. */
export function spec(over: Partial<MockSpec> = {}): MockSpec {
  return {
    V: 6,
    H: 2,
    nLayers: 2,
    S: 5,
    maxPositions: 32,
    maxRows: 8,
    seed: 1,
    scale: 2,
    eos: 2,
    eosBias: 0.3,
    ...over,
  };
}

/**
 * The DecodeAttention a decode should return for `context` (prompt then generated tokens),
 * built from the mock's pure attention functions: row t is the query at position
 * queryStart + t, whose history is context[0..queryStart + t].
 */
export function expectedAttention(
  sp: MockSpec,
  context: readonly number[],
  queryStart: number,
  T: number,
): { self: Float32Array[]; cross: Float32Array[] } {
  const { H, S, nLayers } = sp;
  const K = queryStart + T;
  const self: Float32Array[] = [];
  const cross: Float32Array[] = [];
  for (let l = 0; l < nLayers; l++) {
    const sl = new Float32Array(H * T * K);
    const cl = new Float32Array(H * T * S);
    for (let t = 0; t < T; t++) {
      const hist = context.slice(0, queryStart + t + 1);
      for (let h = 0; h < H; h++) {
        sl.set(mockSelf(sp, hist, l, h), (h * T + t) * K);
        if (S > 0) cl.set(mockCross(sp, hist, l, h), (h * T + t) * S);
      }
    }
    self.push(sl);
    if (S > 0) cross.push(cl);
  }
  return { self, cross };
}

/**
 * A stepper whose next-token distribution depends only on each row's last fed token:
 * probs[last] is that distribution (logits = log p). Small enough to reason about by hand.
 */
export class MarkovStepper implements DecodeStepper {
  readonly vocabSize: number;
  readonly nHeads = 1;
  readonly maxPositions = 64;
  readonly maxRows = 8;
  private last: number[] = [-1];
  private readonly logits: Float32Array;

  constructor(private readonly probs: readonly (readonly number[])[]) {
    this.vocabSize = (probs[0] as readonly number[]).length;
    this.logits = new Float32Array(this.maxRows * this.vocabSize);
  }

  step(tokens: Int32Array): StepOutput {
    if (tokens.length !== this.last.length) throw new Error('mock: token count differs from rows');
    this.last = Array.from(tokens);
    this.last.forEach((t, r) =>
      this.logits.set((this.probs[t] as readonly number[]).map(Math.log), r * this.vocabSize),
    );
    return { logits: this.logits.subarray(0, tokens.length * this.vocabSize), attention: null };
  }

  reorder(parents: Int32Array): void {
    this.last = Array.from(parents, (p) => this.last[p] as number);
  }

  reset(): void {
    this.last = [-1];
  }
}
