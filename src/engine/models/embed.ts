/**
 * Input embedding of one stack: token embedding (optionally × √d_model, the paper §3.4),
 * plus positional encoding (the paper's fixed sinusoids, §3.5, or a learned table as in
 * GPT; nothing for rope, alibi and none, whose positions live in the attention), then, with
 * `embedNorm`, a norm of the model's normType (nanochat), then dropout. The token table
 * doubles as the output projection when embeddings are tied. The padding token's row
 * receives no gradient. `step` embeds the one new token per row of a decoding step with the
 * same math, without dropout.
 *
 * Shape legend: B batch, T positions, C d_model, V vocabulary.
 */

import type { Backend, FloatArray } from '../backend';
import type { ModelConfig } from '../config';
import { sinusoidalTable } from '../ops/embedding';
import type { Rng } from '../rng';
import { PAD } from '../tokenizers/special';
import type { NormScratch } from './layers';
import { Dropout, Norm } from './layers';
import type { Arena, Param, ParamInit, ParamStore, Slot } from './plan';

/** The caller's scratch of a decoding step or prefill: the embeddings before the norm, and its statistics. */
export interface EmbedScratch extends NormScratch {
  /** [R, C] */
  readonly mid: FloatArray;
}

export class Embedder {
  readonly table: Param;
  readonly positions: Param | null;
  /** Fixed sinusoidal table [maxLen, C] (null when positions are learned). */
  private readonly pe: Slot | null;
  readonly scale: number;
  private readonly sum: Slot; // [B, T, C] embedding + position
  /** The norm after the embeddings (embedNorm), else null. */
  readonly norm: Norm | null;
  private readonly normed: Slot; // [B, T, C] norm(sum) (embedNorm)
  private readonly drop: Dropout;
  private readonly dsum: Slot;
  private readonly dnormed: Slot;
  private ids: Int32Array = new Int32Array(0);
  private B = 0;
  private T = 0;
  private start = 0;

  constructor(
    store: ParamStore,
    arena: Arena,
    cfg: ModelConfig,
    names: { table: string; positions: string; norm: string },
    vocab: number,
    init: { table: ParamInit; positions: ParamInit },
    maxN: number,
  ) {
    const C = cfg.dModel;
    this.table = store.add(names.table, [vocab, C], init.table);
    this.positions = cfg.positional === 'learned' ? store.add(names.positions, [cfg.maxLen, C], init.positions) : null;
    this.pe = cfg.positional === 'sinusoidal' ? arena.buffer(cfg.maxLen * C) : null;
    this.scale = cfg.embedScale ? Math.sqrt(C) : 1;
    this.sum = arena.buffer(maxN * C);
    this.norm = cfg.embedNorm ? new Norm(store, arena, names.norm, C, cfg, maxN) : null;
    this.normed = arena.buffer(cfg.embedNorm ? maxN * C : 0);
    this.drop = new Dropout(arena, cfg.dropout, maxN * C);
    this.dsum = arena.scratch('embed.dsum', maxN * C);
    this.dnormed = arena.scratch('embed.dnormed', cfg.embedNorm ? maxN * C : 0);
  }

  /** Fills the fixed sinusoidal table; call once after the arena is bound. */
  bind(): void {
    if (this.pe) this.pe.data.set(sinusoidalTable(this.pe.size / this.table.shape[1]!, this.table.shape[1]!));
  }

  get C(): number {
    return this.table.shape[1] as number;
  }

  /** The positional table the kernels add (fixed or learned); throws for rope, alibi and none, which add none. */
  get positionTable(): FloatArray {
    if (this.positions) return this.positions.data;
    if (this.pe) return this.pe.data;
    throw new Error('no positional table');
  }

  /** x[b,t] = E[ids[b,t]]·scale + P[start + t], then the norm (embedNorm), then dropout. Returns [B, T, C]. */
  forward(
    k: Backend,
    ids: Int32Array,
    B: number,
    T: number,
    start: number,
    train: boolean,
    rng: Rng | null,
  ): FloatArray {
    this.ids = ids;
    this.B = B;
    this.T = T;
    this.start = start;
    this.embed(k, this.sum.data, ids, B, T, start);
    let x = this.sum.data;
    if (this.norm) {
      this.norm.forward(k, this.normed.data, x, B * T);
      x = this.normed.data;
    }
    return this.drop.forward(k, x, B * T * this.C, train, rng);
  }

  /**
   * x[r] = E[ids[r]]·scale + P[position] for the R rows of a decoding step, then the norm
   * (no dropout); `s` holds what the norm needs.
   */
  step(k: Backend, x: FloatArray, ids: Int32Array, R: number, position: number, s: EmbedScratch): void {
    this.stepRows(k, x, ids, 1, R, position, s);
  }

  /** x[t] = E[ids[t]]·scale + P[t] for positions 0..T − 1 of one sequence, then the norm (a prefill; no dropout). */
  prefill(k: Backend, x: FloatArray, ids: Int32Array, T: number, s: EmbedScratch): void {
    this.stepRows(k, x, ids, T, 1, 0, s);
  }

  private stepRows(
    k: Backend,
    x: FloatArray,
    ids: Int32Array,
    T: number,
    R: number,
    start: number,
    s: EmbedScratch,
  ): void {
    if (!this.norm) {
      this.embed(k, x, ids, R, T, start);
      return;
    }
    this.embed(k, s.mid, ids, R, T, start);
    this.norm.step(k, x, s.mid, R * T, s);
  }

  private embed(k: Backend, out: FloatArray, ids: Int32Array, B: number, T: number, start: number): void {
    k.embeddingForward(out, ids, this.table.data, B * T, this.C, this.scale);
    if (this.positions || this.pe) k.positionalForward(out, this.positionTable, B, T, this.C, start);
  }

  /**
   * Backward of forward(): accumulates into the table (not the `pad` row; −1: every row), learned positions and
   * the norm's weight.
   */
  backward(k: Backend, dx: FloatArray, pad = PAD): void {
    const { B, T } = this;
    const C = this.C;
    let ds = this.drop.backward(k, dx, B * T * C, this.dsum.data);
    if (this.norm) {
      const d = this.dnormed.data;
      k.fill(d, B * T * C, 0);
      this.norm.backward(k, d, ds, this.sum.data, B * T);
      ds = d;
    }
    k.embeddingBackward(this.table.grad, ds, this.ids, B * T, C, this.scale, pad);
    if (this.positions) k.positionalBackward(this.positions.grad, ds, B, T, C, this.start);
  }
}
