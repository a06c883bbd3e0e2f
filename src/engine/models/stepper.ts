/**
 * Incremental decoding with a key/value cache: each new token costs one position — its
 * query attends to the cached keys and values of every earlier position — instead of
 * re-running the whole prefix as the tutorials' greedy loops do. For the encoder-decoder
 * the source is encoded once and each layer's cross-attention keys/values are computed once
 * and shared by every beam (batch stride 0). Implements the `DecodeStepper` contract of
 * `decode/stepperContract.ts`. Its buffers are sized by the job, never by the model's context
 * alone: the key/value cache by the positions the job feeds (`StepperOptions.positions`: the
 * prompt and the tokens asked), a prefill's buffers by the longest prompt fed so far (grown on
 * demand) — a model with a context of 32768 decodes a short prompt in a few megabytes.
 *
 * A prompt can be fed in one `prefill` instead of one step per token: every layer runs its
 * T positions together (matrix products instead of matrix-vector ones) and fills the same
 * cache, with the same numbers, and can hand out every layer's attention as it goes — how
 * the attention of a whole text is taken without the training forward's per-layer buffers.
 *
 * Buffers come from a `StepperWorkspace`: the backend frees nothing, so a model that decodes
 * many times (the editor's model worker) passes one workspace to all its steppers and they
 * reuse one set instead of growing the heap by a key/value cache per decode.
 *
 * This file only orchestrates: it checks the inputs, owns the caches and scratch buffers,
 * and calls each layer's `step` / `prefill` (Embedder, Block, LayerNorm) and the model's
 * `head`, which sit beside their `forward` and share its math. Leaves out: any layer's math,
 * and batching several prompts (a row is a beam of one prompt).
 *
 * On a backend whose memory lives on a device (WebGPU: `Backend.download`), a step or prefill
 * only records work: the arrays it returns (logits, captured attention) and what it hands a
 * prefill's `onAttention` are filled by {@link ModelStepper.settle}, which reads them back in one
 * go after the call; each layer's probabilities are kept in a buffer of their own on the device
 * until then. The cache's rows move on the device too (`Backend.copy`). Steering (`residAdd`),
 * which adds on the host, is refused there.
 *
 * The cache holds each layer's key/value heads (Hkv of them under grouped-query attention,
 * so it shrinks by H / Hkv), keys already normed and rotated (RoPE at their absolute
 * positions); a sliding window masks each step's row to the last W positions.
 *
 * Shape legend: R rows (beams), P positions fed so far, S source positions, C d_model,
 * H heads, V vocabulary.
 */

import type { Backend, FloatArray, MaskView } from '../backend';
import { copyOn } from '../backend';
import type { DecodeStepper, StepAttention, StepOutput } from '../decode/stepperContract';
import { EngineError } from '../errors';
import { headSize, layerWindow } from '../config';
import type { BlockCache, BlockScratch } from './block';
import { allocBlockScratch } from './block';
import type { AttentionStack } from './heads';
import { causalView, fillCausalMask, fillPaddingMask, fillWindowRow } from './masks';
import type { Transformer } from './transformer';
import type { ResidAdd } from './steering';
import { addToRows, checkResidAdd } from './steering';

/**
 * Buffers for decode steppers, kept for the next stepper: handed out in the order a stepper
 * asks for them, and the same ones (or larger) handed to the next stepper that asks in the
 * same order. Serves one live stepper at a time: creating a stepper takes the buffers of the
 * one before it, which must no longer be used. Buffers are not cleared between steppers (a
 * stepper reads only what it wrote).
 */
export class StepperWorkspace {
  private readonly floats: FloatArray[] = [];
  private readonly bytes: Uint8Array[] = [];
  private nextFloat = 0;
  private nextBytes = 0;

  constructor(private readonly k: Backend) {}

  /** Where the next buffers would come from: {@link rewind} hands them out again (a stepper's grown prefill). */
  mark(): { readonly floats: number; readonly bytes: number } {
    return { floats: this.nextFloat, bytes: this.nextBytes };
  }

  /** Hands out the buffers from `m` on again, the same ones or larger; those handed out since `m` must be dropped. */
  rewind(m: { readonly floats: number; readonly bytes: number }): void {
    this.nextFloat = m.floats;
    this.nextBytes = m.bytes;
  }

  /** Starts over from the first buffer (a new stepper). */
  restart(): void {
    this.nextFloat = 0;
    this.nextBytes = 0;
  }

  /** The next float buffer, n long. */
  alloc(n: number): FloatArray {
    const i = this.nextFloat++;
    let b = this.floats[i];
    if (!b || b.length < n) this.floats[i] = b = this.k.alloc(n);
    return b.subarray(0, n);
  }

  /** The next byte buffer, n long (in the backend's memory where it has its own). */
  allocBytes(n: number): Uint8Array {
    const i = this.nextBytes++;
    let b = this.bytes[i];
    if (!b || b.length < n) this.bytes[i] = b = this.k.allocBytes ? this.k.allocBytes(n) : new Uint8Array(n);
    return b.subarray(0, n);
  }
}

/** Options of {@link createStepper}. */
export interface StepperOptions {
  /** Most rows (the beam width). */
  readonly maxRows: number;
  /**
   * Most positions the job feeds (the prompt and the tokens asked, 1 to the context; default the
   * context): sizes the key/value cache, and is the stepper's `maxPositions`.
   */
  readonly positions?: number;
  /** Source tokens (encoder-decoder only), one sequence. */
  readonly src?: Int32Array;
  /** Where the stepper's buffers come from (default: a workspace of its own). */
  readonly workspace?: StepperWorkspace;
  /**
   * Activation addition (steering.ts): a vector added to the decoder's stream entering layer
   * `layer` at every position fed, in prefill and in every step, on every row.
   */
  readonly residAdd?: ResidAdd;
}

/**
 * One layer's attention probabilities during a prefill: [H, rows, cols] in `probs`, valid
 * only during the call (the buffer is the next layer's): copy what you keep.
 */
export type LayerAttentionSink = (
  stack: AttentionStack,
  layer: number,
  probs: FloatArray,
  shape: readonly [number, number, number],
) => void;

/** A stepper that can also feed a whole prompt at once (see the file comment). */
export interface ModelStepper extends DecodeStepper {
  /**
   * Feeds `tokens` at positions 0..T − 1 (the stepper must be fresh or reset; rows = 1) in
   * one pass, with the numbers T steps would give; returns the last position's logits and,
   * with `capture`, its attention (as a step's). `onAttention` receives every layer's
   * probabilities: the encoder's self-attention [H, S, S] of an encoder-decoder first (its
   * source was encoded when the stepper was made), then per decoder layer self [H, T, T]
   * and cross [H, T, S].
   */
  prefill(tokens: Int32Array, capture: boolean, onAttention?: LayerAttentionSink): StepOutput;
  /**
   * Reads back what the last step or prefill returned, and calls its `onAttention`, on a
   * device backend (see the file comment); resolves at once on a host backend, whose outputs
   * are whole when the call returns.
   */
  settle(): Promise<void>;
}

/** Creates a key/value-cache stepper over a bound model. */
export function createStepper(model: Transformer, backend: Backend, opts: StepperOptions): ModelStepper {
  return new KVCacheStepper(model, backend, opts);
}

/** What a prefill needs besides the caches, for prompts of up to `T` positions (grown by a longer one). */
interface PrefillBuffers {
  readonly T: number;
  readonly x: FloatArray; // [P, C]
  readonly scratch: BlockScratch; // P rows
  readonly selfProbs: FloatArray; // [H, P, P]
  readonly crossProbs: FloatArray | null; // [H, P, S]
  readonly causal: MaskView; // [P, P]
  /** The global layers' causal mask without the window (globalEvery), else null. */
  readonly causalFull: MaskView | null;
  /** On a device: each decoder layer's self [H, P, P] and cross [H, P, S] probabilities, kept until settle. */
  readonly kept: { readonly self: FloatArray; readonly cross: FloatArray | null }[];
}

class KVCacheStepper implements ModelStepper {
  readonly deferred: boolean;
  readonly vocabSize: number;
  readonly nHeads: number;
  readonly maxPositions: number;
  readonly maxRows: number;
  private readonly C: number;
  private readonly caches: BlockCache[] = [];
  private readonly S: number;
  private readonly crossMask: MaskView | null;
  private readonly x: FloatArray; // [R, C] the residual stream of the newest position
  private readonly scratch: BlockScratch;
  private readonly logits: FloatArray;
  private readonly tmp: FloatArray;
  /** The sliding window's row of a step [P] (empty without a window). */
  private readonly windowRow: Uint8Array;
  private readonly out32: Float32Array;
  private readonly ws: StepperWorkspace;
  private readonly add: ResidAdd | null;
  private pre: PrefillBuffers | null = null;
  /** Where the prefill buffers start in the workspace (they are its last, so they can grow in place). */
  private preMark: { readonly floats: number; readonly bytes: number } | null = null;
  private rows = 1;
  private pos = 0;
  /** Host reads waiting for the device: each view is read back, then its `use` runs (see settle). */
  private reads: { readonly view: FloatArray; readonly use: () => void }[] = [];

  constructor(
    private readonly model: Transformer,
    private readonly k: Backend,
    opts: StepperOptions,
  ) {
    const cfg = model.config;
    this.deferred = k.download !== undefined;
    if (!Number.isInteger(opts.maxRows) || opts.maxRows < 1)
      throw new EngineError('input/invalid', `maxRows must be a positive integer, got ${opts.maxRows}.`);
    this.vocabSize = cfg.vocabSize;
    this.nHeads = cfg.nHeads;
    const positions = opts.positions ?? cfg.maxLen;
    if (!Number.isInteger(positions) || positions < 1 || positions > cfg.maxLen)
      throw new EngineError(
        'input/invalid',
        `positions must be an integer from 1 to the context of ${cfg.maxLen}, got ${positions}.`,
      );
    this.maxPositions = positions;
    this.maxRows = opts.maxRows;
    const C = (this.C = cfg.dModel);
    const R = this.maxRows;
    const P = this.maxPositions;
    let memory: { data: FloatArray; S: number } | null = null;
    if (cfg.kind === 'encoder-decoder') {
      const src = opts.src;
      if (!src || src.length === 0)
        throw new EngineError('input/invalid', 'An encoder-decoder needs a non-empty source sequence to decode from.');
      if (src.length > model.maxSrcLen)
        throw new EngineError(
          'input/invalid',
          `Source of ${src.length} tokens exceeds the context of ${model.maxSrcLen}; shorten it or ` +
            `retrain with a longer context.`,
        );
      this.S = src.length;
      memory = { data: model.encode(src, 1, this.S, false, null).memory, S: this.S };
      const pad = new Uint8Array(this.S);
      fillPaddingMask(pad, src, 1, this.S);
      this.crossMask = { data: pad, batchStride: 0, rowStride: 0 };
    } else {
      this.S = 0;
      this.crossMask = null;
    }
    if (opts.residAdd) checkResidAdd(opts.residAdd, model.decoder.length, C);
    if (opts.residAdd && k.download)
      throw new EngineError(
        'input/invalid',
        `Steering is not built on the ${k.name} backend yet; open the run with backend wasm or auto to steer.`,
      );
    this.add = opts.residAdd ?? null;
    const ws = (this.ws = opts.workspace ?? new StepperWorkspace(k));
    ws.restart();
    const alloc = (n: number): FloatArray => ws.alloc(n);
    for (const blk of model.decoder) this.caches.push(blk.createCache(k, alloc, R, P, memory));
    this.x = alloc(R * C);
    this.scratch = allocBlockScratch(alloc, R, C, cfg.dFF, cfg.nHeads, headSize(cfg));
    this.logits = alloc(R * cfg.vocabSize);
    this.tmp = alloc(R * (this.caches[0]?.self.rowStride ?? 0));
    this.windowRow = ws.allocBytes(cfg.slidingWindow > 0 ? P : 0);
    this.out32 = new Float32Array(R * cfg.vocabSize);
  }

  /**
   * The prefill's buffers for a prompt of `T` positions: the ones of an earlier prefill when they are long enough;
   * with `keep`, on a device, with a buffer of every layer's probabilities (only a prefill that hands them out).
   */
  private prefillBuffers(T: number, keep: boolean): PrefillBuffers {
    const kept = keep && this.k.download !== undefined;
    if (this.pre && this.pre.T >= T && (!kept || this.pre.kept.length > 0)) return this.pre;
    if (this.preMark) this.ws.rewind(this.preMark);
    else this.preMark = this.ws.mark();
    const { C, S, nHeads: H } = this;
    const P = T;
    const alloc = (n: number): FloatArray => this.ws.alloc(n);
    const cfg = this.model.config;
    const causal = this.ws.allocBytes(P * P);
    fillCausalMask(causal, P, cfg.slidingWindow);
    // The global layers of a model with globalEvery see the whole prompt.
    const mixed = cfg.slidingWindow > 0 && cfg.globalEvery > 0;
    const full = mixed ? this.ws.allocBytes(P * P) : null;
    if (full) fillCausalMask(full, P, 0);
    this.pre = {
      T: P,
      x: alloc(P * C),
      scratch: allocBlockScratch(alloc, P, C, this.model.config.dFF, H, headSize(this.model.config)),
      selfProbs: alloc(H * P * P),
      crossProbs: S > 0 ? alloc(H * P * S) : null,
      causal: causalView(causal, P),
      causalFull: full ? causalView(full, P) : null,
      kept: kept
        ? this.model.decoder.map(() => ({ self: alloc(H * P * P), cross: S > 0 ? alloc(H * P * S) : null }))
        : [],
    };
    return this.pre;
  }

  prefill(tokens: Int32Array, capture: boolean, onAttention?: LayerAttentionSink): StepOutput {
    const k = this.k;
    const model = this.model;
    const T = tokens.length;
    const V = this.vocabSize;
    const H = this.nHeads;
    const C = this.C;
    if (this.pos !== 0 || this.rows !== 1)
      throw new EngineError('input/invalid', 'prefill() needs a fresh or reset stepper (one row at position 0).');
    if (T < 1 || T > this.maxPositions)
      throw new EngineError(
        'input/invalid',
        `A prefill of ${T} tokens does not fit the context of ${this.maxPositions} positions; feed ` +
          `1 to ${this.maxPositions}.`,
      );
    for (const id of tokens)
      if (id < 0 || id >= V)
        throw new EngineError('input/invalid', `Token id ${id} is outside the vocabulary of ${V}.`);
    const b = this.prefillBuffers(T, capture || onAttention !== undefined);
    const S = this.S;
    if (onAttention)
      model.encoder.forEach((blk, l) => {
        const probs = blk.selfAttn.probs.data.subarray(0, H * S * S);
        this.later(probs, () => onAttention('encoder.self', l, probs, [H, S, S]));
      });
    // With `capture`, the last position's row of every layer, as a step there would return it.
    const self: Float32Array[] = [];
    const cross: Float32Array[] = [];
    const lastRow = (probs: FloatArray, cols: number): Float32Array => {
      const out = new Float32Array(H * cols);
      for (let h = 0; h < H; h++) out.set(probs.subarray((h * T + T - 1) * cols, (h * T + T) * cols), h * cols);
      return out;
    };
    /** Hands layer l's probabilities [H, T, cols] on: now, or (on a device) from a copy of their own at settle. */
    const handOut = (probs: FloatArray, keep: FloatArray | null, cols: number, use: (p: FloatArray) => void): void => {
      const n = H * T * cols;
      if (keep === null) return use(probs.subarray(0, n));
      copyOn(k, keep, probs, n);
      const view = keep.subarray(0, n);
      this.later(view, () => use(view));
    };
    const x = b.x.subarray(0, T * C);
    model.decEmbed.prefill(k, x, tokens, T, b.scratch);
    const add = this.add;
    model.decoder.forEach((blk, l) => {
      const cache = this.caches[l] as BlockCache;
      if (add?.layer === l) addToRows(x, T, add.vector);
      blk.prefill(k, x, {
        T,
        cache,
        selfMask: b.causalFull && layerWindow(model.config, l) === 0 ? b.causalFull : b.causal,
        crossMask: this.crossMask,
        scratch: b.scratch,
        selfProbs: b.selfProbs,
        crossProbs: b.crossProbs,
      });
      const kept = b.kept[l];
      if (onAttention || capture) {
        // A step's arrays are whole when it returns: the captured rows are placed as the layers come.
        const at = self.length;
        if (capture) self.push(new Float32Array(0));
        handOut(b.selfProbs, kept?.self ?? null, T, (p) => {
          onAttention?.('decoder.self', l, p, [H, T, T]);
          if (capture) self[at] = lastRow(p, T);
        });
      }
      if (cache.cross && b.crossProbs && (onAttention || capture)) {
        const at = cross.length;
        if (capture) cross.push(new Float32Array(0));
        handOut(b.crossProbs, kept?.cross ?? null, S, (p) => {
          onAttention?.('decoder.cross', l, p, [H, T, S]);
          if (capture) cross[at] = lastRow(p, S);
        });
      }
    });
    if (add?.layer === model.decoder.length) addToRows(x, T, add.vector);
    // Only the last position's logits are asked for: the output projection runs on one row.
    let top = x.subarray((T - 1) * C, T * C);
    if (model.decNorm) {
      model.decNorm.step(k, this.scratch.mid, top, 1, this.scratch);
      top = this.scratch.mid;
    }
    model.head(k, this.logits, top, 1);
    this.pos = T;
    return { logits: this.logitsOut(V), attention: capture ? { self, cross } : null };
  }

  step(tokens: Int32Array, capture: boolean): StepOutput {
    const k = this.k;
    const model = this.model;
    const V = this.vocabSize;
    const R = tokens.length;
    if (R !== this.rows)
      throw new EngineError(
        'input/invalid',
        `step() got ${R} tokens but the stepper has ${this.rows} rows; call reorder() to change the number of rows.`,
      );
    if (this.pos >= this.maxPositions)
      throw new EngineError(
        'input/invalid',
        `The context of ${this.maxPositions} positions is full; decode fewer tokens or retrain with a longer context.`,
      );
    for (let i = 0; i < R; i++) {
      const id = tokens[i] as number;
      if (id < 0 || id >= V)
        throw new EngineError('input/invalid', `Token id ${id} is outside the vocabulary of ${V}.`);
    }
    const P = this.pos + 1;
    const selfMask = fillWindowRow(this.windowRow, P, model.config.slidingWindow);
    model.decEmbed.step(k, this.x, tokens, R, this.pos, this.scratch);
    const add = this.add;
    model.decoder.forEach((blk, li) => {
      if (add?.layer === li) addToRows(this.x, R, add.vector);
      blk.step(k, this.x, {
        R,
        P,
        cache: this.caches[li] as BlockCache,
        selfMask: layerWindow(model.config, li) === 0 ? null : selfMask,
        crossMask: this.crossMask,
        scratch: this.scratch,
      });
    });
    if (add?.layer === model.decoder.length) addToRows(this.x, R, add.vector);
    let top = this.x;
    if (model.decNorm) {
      model.decNorm.step(k, this.scratch.mid, this.x, R, this.scratch);
      top = this.scratch.mid;
    }
    model.head(k, this.logits, top, R);
    this.pos = P;
    const logits = this.logitsOut(R * V);
    let attention: StepAttention | null = null;
    if (capture) {
      const H = this.nHeads;
      const copied = (probs: FloatArray, n: number): Float32Array => {
        const out = new Float32Array(n);
        const view = probs.subarray(0, n);
        this.later(view, () => out.set(view));
        return out;
      };
      attention = {
        self: this.caches.map((c) => copied(c.self.probs, R * H * P)),
        cross: this.caches.flatMap((c) => (c.cross ? [copied(c.cross.probs, R * H * this.S)] : [])),
      };
    }
    return { logits, attention };
  }

  /** The first n logits as float32: the buffer itself when it is one (read back at settle on a device). */
  private logitsOut(n: number): Float32Array {
    if (this.logits instanceof Float32Array) {
      const view = this.logits.subarray(0, n);
      this.later(view, () => undefined);
      return view;
    }
    const out = this.out32.subarray(0, n);
    this.later(this.logits.subarray(0, n), () => copyInto(this.out32, this.logits, n));
    return out;
  }

  /** Runs `use` once `view` holds the model's values: now on a host backend, at settle on a device. */
  private later(view: FloatArray, use: () => void): void {
    if (this.k.download) this.reads.push({ view, use });
    else use();
  }

  async settle(): Promise<void> {
    const reads = this.reads;
    this.reads = [];
    const download = this.k.download?.bind(this.k);
    // Every copy is submitted before the first is awaited: one round trip to the device, not one per view.
    if (download) await Promise.all(reads.map((r) => download(r.view)));
    for (const r of reads) r.use();
  }

  reset(): void {
    // The stale keys/values stay in the buffers: step() only reads positions below `pos`.
    this.pos = 0;
    this.rows = 1;
  }

  reorder(parents: Int32Array): void {
    const R = parents.length;
    if (R < 1 || R > this.maxRows)
      throw new EngineError('input/invalid', `reorder() needs 1 to ${this.maxRows} rows, got ${R}.`);
    for (let i = 0; i < R; i++) {
      const p = parents[i] as number;
      if (!Number.isInteger(p) || p < 0 || p >= this.rows)
        throw new EngineError('input/invalid', `reorder() parent ${p} is not one of the ${this.rows} current rows.`);
    }
    for (const c of this.caches) {
      const row = c.self.rowStride;
      const used = this.pos * c.self.width;
      for (const buf of [c.self.k, c.self.v]) {
        copyOn(this.k, this.tmp, buf, this.rows * row);
        for (let i = 0; i < R; i++) {
          const from = (parents[i] as number) * row;
          copyOn(this.k, buf.subarray(i * row), this.tmp.subarray(from), used);
        }
      }
    }
    this.rows = R;
  }
}

function copyInto(out: Float32Array, src: FloatArray, n: number): Float32Array {
  for (let i = 0; i < n; i++) out[i] = src[i] as number;
  return out.subarray(0, n);
}
