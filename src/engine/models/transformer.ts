/**
 * The two models: the paper's encoder-decoder (Vaswani et al. 2017) and the decoder-only
 * GPT (nanoGPT's `GPT`), one class since they share every part: forward(batch) → loss, then
 * backward() → gradients in the flat `grads` buffer, over the parts and buffers planned at
 * construction (modelParts.ts), so neither allocates. Decoding uses a separate
 * key/value-cache stepper (`stepper.ts`), which runs each layer's `step`. Heads can be
 * switched off for one forward (`ForwardOptions.ablate`, heads.ts; inference only), and a hook
 * can read or replace the decoder's activations mid-forward (`ForwardOptions.hook`, hooks.ts;
 * inference only).
 *
 * Leaves out: planning the parts and buffers, their PyTorch names and initialization
 * (modelParts.ts, pytorchNames.ts, init.ts), batches and forward options (inputs.ts), and
 * what a forward is read for besides its loss — attention maps, masks, the logit lens
 * (readouts.ts).
 *
 * Shape legend: B batch, S source positions, T target positions, C d_model, V vocabulary.
 */

import type { Backend, FloatArray, MaskView } from '../backend';
import { copyOn } from '../backend';
import { layerWindow } from '../config';
import { EngineError } from '../errors';
import type { Rng } from '../rng';
import type { Block } from './block';
import type { AttentionLayer } from './heads';
import { applyHeadsOff, attentionLayersOf } from './heads';
import type { ForwardHook } from './hooks';
import { encoderPoint, layerHook, renamedHook } from './hooks';
import type { Batch, ForwardOptions } from './inputs';
import { checkBatch } from './inputs';
import { linearBackward, linearForward } from './layers';
import type { MaskSnapshot } from './masks';
import { causalView, combinedView, fillCombinedMask, fillPaddingMask, paddingView } from './masks';
import { ModelParts } from './modelParts';
import type { AttentionCapture } from './readouts';
import { attentionMaps, forwardMasks, lensLogits } from './readouts';

/** The hook points whose gradients a {@link GradientTap} receives. */
export type TappedPoint =
  | 'resid_pre'
  | 'z'
  | 'attn_out'
  | 'mlp_out'
  | 'cross_z'
  | 'cross_out'
  | 'enc_resid_pre'
  | 'enc_z'
  | 'enc_attn_out'
  | 'enc_mlp_out';

/**
 * Receives, during backward, the gradient at a hook point (hooks.ts) of layer `layer` of its stack: resid_pre,
 * z, attn_out, mlp_out (and an encoder-decoder's cross_z, cross_out and enc_* points), a view
 * [B·rows, heads·width] of scratch (use or copy it during the call).
 */
export type GradientTap = (point: TappedPoint, layer: number, grad: FloatArray) => void;

/** What backward and the readouts need of the last forward. */
interface LastForward {
  B: number;
  T: number;
  S: number;
  count: number;
  smoothing: number;
  targets: Int32Array;
  headInput: FloatArray;
  decTop: FloatArray;
  encTop: FloatArray | null;
  selfMask: MaskView;
  srcMask: MaskView | null;
  /** The decoder's residual stream entering its first block (the embeddings) [B, T, C]. */
  decIn: FloatArray;
  /** Heads were switched off or a hook ran: backward would be wrong. */
  ablated: boolean;
  /**
   * Whether the logits buffer holds the logits of every row [B·T, V] of this forward: false after a forward
   * without loss, one over more rows than ModelShape.logitRows (its loss computed in chunks), or once logitsAt or
   * residualLogits wrote over them.
   */
  whole: boolean;
}

/** The model (see the file comment): its parts (ModelParts) run forward and backward. */
export class Transformer extends ModelParts {
  private last: LastForward | null = null;
  private gradTap: GradientTap | null = null;

  /**
   * Logits [B, T, V] of the last forward; throws when that forward did not keep them whole (see ModelShape.logitRows
   * and ForwardOptions.loss): read rows with {@link logitsAt} instead.
   */
  logits(): FloatArray {
    const l = this.last;
    if (l && !l.whole)
      throw new Error(
        `logits() needs the last forward's logits whole: its ${l.B * l.T} rows were not kept (the model holds ` +
          `${this.logitRows} rows of logits, or the forward ran without loss); read rows with logitsAt()`,
      );
    return this.logitsSlot.data.subarray(0, l ? l.B * l.T * this.config.vocabSize : 0);
  }

  /**
   * Logits [rows.length, V] of the last forward at `rows` (flat positions b·T + t): a view of the forward's own
   * logits when it kept them whole and the rows are consecutive (the same numbers as logits()), else the output
   * projection run on those rows alone into the logits buffer (valid until the next forward, logitsAt or
   * residualLogits; logits() and backward() are then refused until the next forward). At most logitRows rows.
   */
  logitsAt(rows: readonly number[]): FloatArray {
    const l = this.lastOrThrow('logitsAt');
    const N = l.B * l.T;
    const V = this.config.vocabSize;
    checkRows(rows, N, this.logitRows);
    const first = rows[0] ?? 0;
    if (l.whole && rows.every((r, i) => r === first + i))
      return this.logitsSlot.data.subarray(first * V, (first + rows.length) * V);
    const { y, n } = this.gatherRows(l.headInput, rows, this.gB.data);
    l.whole = false;
    this.head(this.k, this.logitsSlot.data, y, n);
    return this.logitsSlot.data.subarray(0, rows.length * V);
  }

  /** Rows the output projection runs on to read `n` (SAME_SUM_ROWS). */
  private paddedRows(n: number): number {
    return Math.max(n, Math.min(SAME_SUM_ROWS, this.logitRows));
  }

  /**
   * `x`'s rows `rows` as y [n, C]: a view when they are consecutive, else copied into `into` (copyOn, on a device
   * where the backend has one) — padded with copies of the first to at least SAME_SUM_ROWS rows (as many as the
   * logits buffer holds), so the output projection sums each row as the whole projection does. Read the first
   * rows.length rows of the result.
   */
  private gatherRows(x: FloatArray, rows: readonly number[], into: FloatArray): { y: FloatArray; n: number } {
    const C = this.config.dModel;
    const first = rows[0] ?? 0;
    const n = this.paddedRows(rows.length);
    if (n === rows.length && rows.every((r, i) => r === first + i))
      return { y: x.subarray(first * C, (first + n) * C), n };
    for (let i = 0; i < n; i++) {
      const r = rows[i] ?? first;
      copyOn(this.k, into.subarray(i * C), x.subarray(r * C), C); // on the device, where it has one
    }
    return { y: into, n };
  }

  /**
   * Runs the encoder on src [B, S]; returns the memory [B, S, C] and its padding mask view. `hook` (a forward's,
   * its encoder blocks' hooks already set) sees enc_resid_pre of every encoder layer and of the encoder's top.
   */
  encode(
    src: Int32Array,
    B: number,
    S: number,
    train: boolean,
    rng: Rng | null,
    hook: ForwardHook | null = null,
  ): { memory: FloatArray; mask: MaskView } {
    const k = this.k;
    if (!this.encEmbed) throw new Error('decoder-only model has no encoder');
    fillPaddingMask(this.srcPad.data, src, B, S);
    const mask = paddingView(this.srcPad.data, S);
    let x = this.encEmbed.forward(k, src, B, S, 0, train, rng);
    const C = this.config.dModel;
    const tap = (layer: number): void =>
      hook?.({ point: 'enc_resid_pre', layer, B, T: S, heads: 1, width: C }, x.subarray(0, B * S * C));
    this.encoder.forEach((blk, layer) => {
      if (hook) tap(layer);
      blk.forward(k, x, { B, T: S, S, selfMask: mask, crossMask: null, memory: null, dMemory: null, train, rng });
      x = blk.output;
    });
    if (hook) tap(this.encoder.length);
    if (this.encNorm) {
      this.encNorm.forward(k, this.encOut.data, x, B * S);
      x = this.encOut.data;
    }
    return { memory: x, mask };
  }

  /**
   * Forward pass and loss (mean over non-PAD targets). Heads in `opts.ablate` are off for
   * this forward only: every head is back on when it returns, so a later decode or forward
   * sees the whole model.
   */
  forward(batch: Batch, opts: ForwardOptions): { loss: number; tokens: number } {
    const ablate = opts.ablate ?? [];
    const hook = opts.hook ?? null;
    if (!ablate.length && !hook) return this.run(batch, opts, false, null);
    if (opts.train)
      throw new EngineError(
        'input/invalid',
        ablate.length
          ? 'Heads can be switched off only in evaluation (train: false); ablation is not a training method here.'
          : 'Hooks run only in evaluation (train: false); backward would not see what a hook replaced.',
      );
    const layers = this.attentionLayers();
    if (ablate.length) applyHeadsOff(layers, ablate, this.config.nHeads);
    if (hook) {
      this.decoder.forEach((blk, i) => blk.setHook(layerHook(hook, i)));
      this.encoder.forEach((blk, i) => blk.setHook(renamedHook(layerHook(hook, i), encoderPoint)));
    }
    try {
      return this.run(batch, opts, ablate.length > 0 || !opts.hookReadsOnly, hook);
    } finally {
      if (ablate.length) applyHeadsOff(layers, [], this.config.nHeads);
      if (hook) for (const blk of [...this.decoder, ...this.encoder]) blk.setHook(null);
    }
  }

  private run(
    batch: Batch,
    opts: ForwardOptions,
    ablated: boolean,
    hook: ForwardHook | null,
  ): { loss: number; tokens: number } {
    checkBatch(batch, this.config, this);
    const k = this.k;
    const cfg = this.config;
    const { B, T } = batch;
    const S = batch.S ?? 0;
    const rng = opts.rng ?? null;
    const train = opts.train;
    let memory: FloatArray | null = null;
    let srcMask: MaskView | null = null;
    if (cfg.kind === 'encoder-decoder') {
      const enc = this.encode(batch.src as Int32Array, B, S, train, rng, hook);
      memory = enc.memory;
      srcMask = enc.mask;
    }
    const anyPad = fillPaddingMask(this.tgtPad.data, batch.input, B, T, this.padId);
    let selfMask: MaskView;
    // The global layers of a model with globalEvery see the whole context (no window).
    let fullMask: MaskView | null = null;
    const mixed = this.causalFull.data.length > 0;
    if (cfg.kind === 'encoder-decoder' || anyPad) {
      fillCombinedMask(this.combined.data, this.tgtPad.data, B, T, cfg.slidingWindow);
      selfMask = combinedView(this.combined.data, T);
      if (mixed) {
        fillCombinedMask(this.combinedFull.data, this.tgtPad.data, B, T, 0);
        fullMask = combinedView(this.combinedFull.data, T);
      }
    } else {
      selfMask = causalView(this.causal.data, this.maxLen);
      if (mixed) fullMask = causalView(this.causalFull.data, this.maxLen);
    }

    let y = this.decEmbed.forward(k, batch.input, B, T, 0, train, rng);
    const decIn = y;
    const C = cfg.dModel;
    const tap = (layer: number, x: FloatArray): void =>
      hook?.({ point: 'resid_pre', layer, B, T, heads: 1, width: C }, x.subarray(0, B * T * C));
    this.decoder.forEach((blk, layer) => {
      if (hook) tap(layer, y);
      const mask = fullMask && layerWindow(cfg, layer) === 0 ? fullMask : selfMask;
      blk.forward(k, y, {
        B,
        T,
        S,
        selfMask: mask,
        crossMask: srcMask,
        memory,
        dMemory: this.dMemory.data,
        train,
        rng,
      });
      y = blk.output;
      // Layers reuse buffers (ModelShape.activations): the lens's stream is copied before a later layer writes there.
      if (this.streams.data.length > 0 && layer < this.decoder.length - 1)
        copyOn(k, this.streams.data.subarray(layer * B * T * C), y, B * T * C);
    });
    if (hook) tap(this.decoder.length, y);
    const decTop = y;
    if (this.decNorm) {
      this.decNorm.forward(k, this.decOut.data, y, B * T);
      y = this.decOut.data;
    }
    const N = B * T;
    const smoothing = opts.labelSmoothing ?? (train ? cfg.labelSmoothing : 0);
    const withLoss = opts.loss ?? true;
    const { sum, count } = withLoss ? this.projectAndLoss(y, batch.targets, N, smoothing) : { sum: 0, count: 0 };
    this.last = {
      B,
      T,
      S,
      count,
      smoothing,
      targets: batch.targets,
      headInput: y,
      decTop,
      encTop: memory,
      selfMask,
      srcMask,
      decIn,
      ablated,
      whole: withLoss && N <= this.logitRows,
    };
    return { loss: count > 0 ? sum / count : 0, tokens: count };
  }

  /**
   * The output projection of y [N, C] and the summed loss against `targets`: in one pass when the logits buffer
   * holds N rows, else in chunks of logitRows rows (each chunk's log-sum-exp lands in lse, its loss is added).
   */
  private projectAndLoss(
    y: FloatArray,
    targets: Int32Array,
    N: number,
    smoothing: number,
  ): { sum: number; count: number } {
    const k = this.k;
    const V = this.config.vocabSize;
    const C = this.config.dModel;
    const R = this.logitRows;
    let sum = 0;
    let count = 0;
    for (let s = 0; s < N; s += R) {
      const n = Math.min(R, N - s);
      // A short last chunk is projected as the window of SAME_SUM_ROWS rows that ends it (the same sums as whole).
      const m = Math.min(Math.max(n, SAME_SUM_ROWS), R, N);
      const w = Math.min(s, N - m);
      this.head(k, this.logitsSlot.data, m === N ? y : y.subarray(w * C, (w + m) * C), m);
      const logits = w === s ? this.logitsSlot.data : this.logitsSlot.data.subarray((s - w) * V);
      const lse = s === 0 ? this.lse.data : this.lse.data.subarray(s);
      const part = k.crossEntropyForward(lse, logits, targets.subarray(s, s + n), n, V, this.padId, smoothing);
      sum += part.sum;
      count += part.count;
    }
    return { sum, count };
  }

  /**
   * logits [N, V] = y [N, C] · W_headᵀ + b: the output projection (the embedding table when tied),
   * then, with a logit soft-cap c, c·tanh(logits / c). Every path that reads logits (the loss,
   * decoding, scoring, the lens) goes through here.
   */
  head(k: Backend, logits: FloatArray, y: FloatArray, N: number): void {
    const { dModel: C, vocabSize: V, logitSoftCap: cap } = this.config;
    linearForward(k, this.headW.data, this.headB ? this.headB.data : null, logits, y, N, C, V);
    if (cap > 0) k.softcapForward(logits, logits, N * V, cap);
  }

  /**
   * Gradients of the last forward's mean loss, written (not accumulated) into {@link grads}; with `seed`
   * [B, T, V], of Σ seed ⊙ logits instead (a metric's gradient at the logits: attribution patching).
   */
  backward(seed: FloatArray | null = null): void {
    const l = this.last;
    if (!l) throw new Error('backward() needs a forward() first');
    this.needActivations('backward');
    if (l.ablated)
      throw new Error('backward() after a forward with heads switched off or a hook: both are inference only');
    if (!l.whole)
      throw new Error(
        `backward() needs the last forward's logits whole (${l.B * l.T} rows; the model holds ${this.logitRows}, ` +
          'or the forward ran without loss, or logitsAt/residualLogits wrote over them): plan logitRows ≥ B·T',
      );
    const k = this.k;
    const cfg = this.config;
    const { B, T, S } = l;
    const N = B * T;
    const C = cfg.dModel;
    const V = cfg.vocabSize;
    k.fill(this.grads, this.store.count, 0);
    const dlogits = this.dlogits.data;
    k.fill(dlogits, N * V, 0);
    if (seed) dlogits.set(seed.subarray(0, N * V));
    else if (l.count > 0)
      k.crossEntropyBackward(
        dlogits,
        this.logitsSlot.data,
        this.lse.data,
        l.targets,
        N,
        V,
        this.padId,
        l.smoothing,
        1 / l.count,
      );
    // logits = c·tanh(z / c) (soft-capped), z = y Wᵀ + b
    if (cfg.logitSoftCap > 0) k.softcapBackward(dlogits, this.logitsSlot.data, N * V, cfg.logitSoftCap);
    let dTop = this.gA.data;
    linearBackward(k, this.headW, this.headB, dTop, dlogits, l.headInput, N, C, V, true);
    if (this.decNorm) {
      const d = this.gB.data;
      k.fill(d, N * C, 0);
      this.decNorm.backward(k, d, dTop, l.decTop, N);
      dTop = d;
    }
    const tap = this.gradTap;
    if (tap) tap('resid_pre', this.decoder.length, dTop.subarray(0, N * C));
    if (cfg.kind === 'encoder-decoder') k.fill(this.dMemory.data, B * S * C, 0);
    const dEmb = this.stackBackward(this.decoder, dTop, N * C, tap && ((i, d) => tap('resid_pre', i, d)));
    this.decEmbed.backward(k, dEmb, this.padId);
    if (this.encEmbed) {
      let dEnc = this.dMemory.data;
      if (this.encNorm) {
        const d = this.gA.data;
        k.fill(d, B * S * C, 0);
        const encTop = (this.encoder[this.encoder.length - 1] as Block).output;
        this.encNorm.backward(k, d, dEnc, encTop, B * S);
        dEnc = d;
      }
      const n = B * S * C;
      if (tap) tap('enc_resid_pre', this.encoder.length, dEnc.subarray(0, n));
      this.encEmbed.backward(
        k,
        this.stackBackward(this.encoder, dEnc, n, tap && ((i, d) => tap('enc_resid_pre', i, d))),
      );
    }
  }

  private stackBackward(
    blocks: readonly Block[],
    dTop: FloatArray,
    n: number,
    onInput: ((i: number, dIn: FloatArray) => void) | null = null,
  ): FloatArray {
    const k = this.k;
    let cur = dTop;
    for (let i = blocks.length - 1; i >= 0; i--) {
      const dIn = cur === this.gA.data ? this.gB.data : this.gA.data;
      k.fill(dIn, n, 0);
      (blocks[i] as Block).backward(k, dIn, cur);
      cur = dIn;
      if (onInput) onInput(i, cur.subarray(0, n));
    }
    return cur;
  }

  /**
   * Sets (or, with null, removes) the receiver of the activation gradients during later backward()s: the
   * decoder's resid_pre of layers 0..L (L: the final norm's input), z, attn_out and mlp_out of layers 0..L − 1;
   * an encoder-decoder's also cross_z and cross_out per decoder layer, and the encoder's enc_resid_pre (layers
   * 0..L_enc), enc_z, enc_attn_out and enc_mlp_out.
   */
  setGradientTap(tap: GradientTap | null): void {
    this.gradTap = tap;
    this.decoder.forEach((blk, i) => {
      blk.dyTap =
        tap && ((kind, dy) => tap(kind === 'self' ? 'attn_out' : kind === 'cross' ? 'cross_out' : 'mlp_out', i, dy));
      blk.selfAttn.dzTap = tap && ((dz) => tap('z', i, dz));
      if (blk.crossAttn) blk.crossAttn.dzTap = tap && ((dz) => tap('cross_z', i, dz));
    });
    this.encoder.forEach((blk, i) => {
      blk.dyTap = tap && ((kind, dy) => tap(kind === 'self' ? 'enc_attn_out' : 'enc_mlp_out', i, dy));
      blk.selfAttn.dzTap = tap && ((dz) => tap('enc_z', i, dz));
    });
  }

  /** Every attention layer, by stack (encoder self, decoder self, decoder cross) and layer. */
  attentionLayers(): AttentionLayer[] {
    return attentionLayersOf(this.encoder, this.decoder);
  }

  /**
   * The logit lens of the last forward: logits [B, T, V] read from the decoder's residual
   * stream after `layer` blocks (0 = the embeddings, nDecoderLayers = the top; readouts.ts).
   * A view of the backward scratch, valid until the next call or backward() (copy what you
   * keep); restores the final norm's statistics, so a backward() may still follow. With
   * `into` 'logits' it is written over the forward's own logits instead, so the backward
   * scratch ([B, T, V]: 200 MB for GPT-2 on 1,000 positions) is never touched — for a reader
   * that runs no backward and reads logits() no more (the logit lens). With `rows` (flat positions b·T + t, at most
   * logitRows), only those rows' logits [rows.length, V] (a model planned for fewer logit rows than B·T is read so).
   */
  residualLogits(
    layer: number,
    into: 'scratch' | 'logits' = 'scratch',
    rows: readonly number[] | null = null,
  ): FloatArray {
    const l = this.lastOrThrow('residualLogits');
    const n = this.decoder.length;
    if (!Number.isInteger(layer) || layer < 0 || layer > n)
      throw new EngineError(
        'input/invalid',
        `Layer ${layer} does not exist; the decoder's stream is read after layers 0 (embeddings) to ${n}.`,
      );
    const N = l.B * l.T;
    if (rows) checkRows(rows, N, this.logitRows);
    else if (N > this.logitRows)
      throw new Error(`residualLogits() of all ${N} rows needs logitRows ≥ ${N} (${this.logitRows}): pass rows`);
    const pick = rows && {
      n: this.paddedRows(rows.length),
      of: (stream: FloatArray): FloatArray => this.gatherRows(stream, rows, this.gB.data).y,
    };
    if (into === 'logits') l.whole = false;
    const head = (k: Backend, logits: FloatArray, y: FloatArray, N: number): void => this.head(k, logits, y, N);
    const NC = N * this.config.dModel;
    const stream = (at: number): FloatArray => {
      if (at === n || this.activations === 'backward') return (this.decoder[at - 1] as Block).output;
      if (this.activations === 'top')
        throw new Error(
          `residualLogits(${at}) reads the stream inside the model, but it keeps only the top's (activations ` +
            "'top'): plan it with activations 'streams' for the lens",
        );
      return this.streams.data.subarray((at - 1) * NC, at * NC);
    };
    const lens = {
      stream,
      decNorm: this.decNorm,
      N,
      decIn: l.decIn,
      decTop: l.decTop,
      head,
      V: this.config.vocabSize,
    };
    const out = lensLogits(
      this.k,
      {
        ...lens,
        normed: this.gA.data,
        normOut: this.decOut.data,
        logits: into === 'logits' ? this.logitsSlot.data : this.dlogits.data,
      },
      layer,
      pick,
    );
    return rows ? out.subarray(0, rows.length * this.config.vocabSize) : out;
  }

  /**
   * The attention maps and masks of the last forward for batch item `b` (copies, so they
   * survive the next step): per layer [H, T, S] for encoder self, decoder self and cross.
   */
  captureAttention(b = 0): AttentionCapture {
    const l = this.lastOrThrow('captureAttention');
    this.needActivations('captureAttention');
    if (b < 0 || b >= l.B)
      throw new EngineError('input/invalid', `Batch item ${b} does not exist; the last batch had ${l.B} items.`);
    return { maps: attentionMaps(this.encoder, this.decoder, this.config.nHeads, l, b), masks: this.captureMasks() };
  }

  /**
   * The masks of the last forward, dense, for the whole batch, with the broadcast shapes the kernels used
   * (readouts.ts).
   */
  captureMasks(): MaskSnapshot[] {
    const l = this.lastOrThrow('captureMasks');
    return forwardMasks({ ...l, tgtPad: this.tgtPad.data, causal: this.causal.data, maxT: this.maxLen });
  }

  /** Throws unless every decoder layer kept its own activations (ModelShape.activations 'backward'). */
  private needActivations(what: string): void {
    if (this.activations !== 'backward')
      throw new Error(
        `${what}() needs every layer's activations, but this model's layers reuse their buffers (planned with ` +
          `activations '${this.activations}' for inference): plan it with activations 'backward'`,
      );
  }

  private lastOrThrow(what: string): LastForward {
    if (!this.last) throw new Error(`${what}() needs a forward() first`);
    return this.last;
  }
}

/**
 * The fewest rows the output projection is run on when a job reads fewer (padded with copies): WebAssembly's matmul
 * sums every element of a product of 4 rows or more in one order whatever the number of rows (backends/wasm/
 * assembly/matmul.ts), but 1–3 rows in another (matmulSmall.ts) — so a row read alone has the digits it has in the
 * whole projection (patching compares one run's metric with a batch's to the last bit).
 */
const SAME_SUM_ROWS = 4;

/** Throws unless `rows` are 1..`most` distinct-or-not rows within [0, N) (logitsAt, residualLogits). */
function checkRows(rows: readonly number[], N: number, most: number): void {
  if (rows.length < 1 || rows.length > most)
    throw new EngineError(
      'input/invalid',
      `Logits are read at 1 to ${most} rows at a time (the model's logitRows), got ${rows.length}.`,
    );
  for (const r of rows)
    if (!Number.isInteger(r) || r < 0 || r >= N)
      throw new EngineError('input/invalid', `Row ${r} does not exist; the last forward had ${N} rows.`);
}
