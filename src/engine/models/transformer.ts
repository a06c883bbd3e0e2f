/**
 * The two models: the paper's encoder-decoder (Vaswani et al. 2017) and the decoder-only
 * GPT (nanoGPT's `GPT`), one class since they share every part. Parameters carry the
 * state_dict names of the PyTorch models people learn from (DESIGN.md), except that the
 * GPT's stacked `c_attn` is kept as three matrices (`c_attn_q/k/v`) and stacked on export.
 *
 * Training is forward(batch) → loss, then backward() → gradients in the flat `grads`
 * buffer; everything is planned at construction, so neither allocates. Decoding uses a
 * separate key/value-cache stepper (`stepper.ts`), which runs each layer's `step`.
 * Two inference-only readings of a forward: heads switched off (`ForwardOptions.ablate`,
 * heads.ts) and the logit lens (`residualLogits`).
 *
 * Shape legend: B batch, S source positions, T target positions, C d_model, V vocabulary.
 */

import type { Backend, FloatArray, MaskView } from '../backend';
import type { ModelConfig } from '../config';
import { validateConfig } from '../config';
import { EngineError } from '../errors';
import type { ParamSegment } from '../optim/optimizer';
import type { Rng } from '../rng';
import { PAD } from '../tokenizers/special';
import type { BlockInit, BlockNames } from './block';
import { Block } from './block';
import { Embedder } from './embed';
import type { AttentionLayer, HeadRef } from './heads';
import { applyHeadsOff } from './heads';
import { LayerNorm, linearBackward, linearForward } from './layers';
import type { MaskSnapshot } from './masks';
import { causalView, combinedView, fillCausalMask, fillCombinedMask, fillPaddingMask, paddingView, snapshotMask } from './masks';
import type { Param, ParamInit, Slot } from './plan';
import { Arena, ParamStore } from './plan';

/** Largest shapes the model's buffers are planned for. */
export interface ModelShape {
  readonly maxBatch: number;
  /** Decoder positions (≤ config.maxLen; default config.maxLen). */
  readonly maxLen?: number;
  /** Encoder positions (encoder-decoder; ≤ config.maxLen; default config.maxLen). */
  readonly maxSrcLen?: number;
  /**
   * The id that is padding: masked out of attention, ignored by the loss, and its embedding
   * row left alone by backward. Default PAD (0, our vocabularies). A decoder-only model whose
   * vocabulary has no PAD (GPT-2's, where 0 is "!") passes −1, so no real token is hidden.
   */
  readonly padId?: number;
}

/** One training or evaluation batch, already padded (with the model's `padId`, PAD = 0 by default). */
export interface Batch {
  readonly B: number;
  /** Decoder positions. */
  readonly T: number;
  /** Decoder input [B, T]: BOS + target (encoder-decoder) or text tokens (decoder-only). */
  readonly input: Int32Array;
  /** Next-token targets [B, T]; PAD positions are ignored by the loss. */
  readonly targets: Int32Array;
  /** Source positions (encoder-decoder). */
  readonly S?: number;
  /** Source tokens [B, S] (encoder-decoder). */
  readonly src?: Int32Array;
}

/** Options of one forward pass. */
export interface ForwardOptions {
  /** Dropout on (needs rng). */
  readonly train: boolean;
  readonly rng?: Rng | null;
  /** Label smoothing of the reported loss; default config.labelSmoothing when training, else 0. */
  readonly labelSmoothing?: number;
  /**
   * Heads whose output is zeroed in this forward (ablation; inference only, so not with
   * `train`). Absent or empty: every head on, at the cost of one check per forward.
   */
  readonly ablate?: readonly HeadRef[];
}

/** Attention probabilities of one layer for one batch item: [H, T, S]. */
export interface AttentionMap {
  readonly stack: 'encoder' | 'decoder';
  readonly kind: 'self' | 'cross';
  readonly layer: number;
  readonly shape: readonly [number, number, number];
  readonly data: Float32Array;
}

/** Which masks a forward used, and every attention map, for one batch item. */
export interface AttentionCapture {
  readonly maps: readonly AttentionMap[];
  readonly masks: readonly MaskSnapshot[];
}

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
  /** Heads were switched off: backward would be wrong. */
  ablated: boolean;
}

/** Parameter names of the decoder-only (nanoGPT) and encoder-decoder (seed notebook) models. */
function blockNames(cfg: ModelConfig, stack: 'encoder' | 'decoder', i: number): BlockNames {
  if (cfg.kind === 'decoder-only') {
    const p = `transformer.h.${i}`;
    return {
      selfAttn: { q: `${p}.attn.c_attn_q`, k: `${p}.attn.c_attn_k`, v: `${p}.attn.c_attn_v`, o: `${p}.attn.c_proj` },
      crossAttn: null,
      norms: [`${p}.ln_1`, `${p}.ln_2`],
      fc1: `${p}.mlp.c_fc`,
      fc2: `${p}.mlp.c_proj`,
    };
  }
  const p = `${stack}_layers.${i}`;
  const attn = (n: string): BlockNames['selfAttn'] => ({ q: `${p}.${n}.W_q`, k: `${p}.${n}.W_k`, v: `${p}.${n}.W_v`, o: `${p}.${n}.W_o` });
  return {
    selfAttn: attn('self_attn'),
    crossAttn: stack === 'decoder' ? attn('cross_attn') : null,
    norms: stack === 'decoder' ? [`${p}.norm1`, `${p}.norm2`, `${p}.norm3`] : [`${p}.norm1`, `${p}.norm2`],
    fc1: `${p}.feed_forward.fc1`,
    fc2: `${p}.feed_forward.fc2`,
  };
}

/**
 * Initialization: GPT-2's (normal 0.02, residual projections scaled by 1/√(2·layers)) for
 * decoder-only; Xavier-uniform matrices and normal(0, d^−½) embeddings (the scale that
 * ×√d brings to unit variance) for the encoder-decoder.
 */
function initFor(cfg: ModelConfig): { block: BlockInit; embed: ParamInit; pos: ParamInit; head: ParamInit } {
  const C = cfg.dModel;
  if (cfg.kind === 'decoder-only') {
    const n: ParamInit = { kind: 'normal', std: 0.02 };
    return { block: { qkv: n, fc1: n, out: { kind: 'normal', std: 0.02 / Math.sqrt(2 * cfg.nDecoderLayers) } }, embed: n, pos: n, head: n };
  }
  const xavier = (i: number, o: number): ParamInit => ({ kind: 'uniform', bound: Math.sqrt(6 / (i + o)) });
  return {
    block: { qkv: xavier(C, C), out: xavier(C, C), fc1: xavier(C, cfg.dFF) },
    embed: { kind: 'normal', std: 1 / Math.sqrt(C) },
    pos: { kind: 'normal', std: 0.02 },
    head: xavier(C, cfg.vocabSize),
  };
}

export class Transformer {
  readonly config: ModelConfig;
  readonly store = new ParamStore();
  readonly arena = new Arena();
  readonly maxBatch: number;
  readonly maxLen: number;
  readonly maxSrcLen: number;
  /** The padding id (ModelShape.padId): PAD, or −1 for a vocabulary without one. */
  readonly padId: number;
  readonly encEmbed: Embedder | null;
  readonly encoder: Block[] = [];
  readonly encNorm: LayerNorm | null;
  readonly decEmbed: Embedder;
  readonly decoder: Block[] = [];
  readonly decNorm: LayerNorm | null;
  /** Output projection weight [V, C] (the decoder embedding when tied) and bias. */
  readonly headW: Param;
  readonly headB: Param | null;
  private readonly encOut: Slot;
  private readonly decOut: Slot;
  private readonly dMemory: Slot;
  private readonly logitsSlot: Slot;
  private readonly dlogits: Slot;
  private readonly lse: Slot;
  private readonly gA: Slot;
  private readonly gB: Slot;
  private readonly srcPad: ReturnType<Arena['bytes']>;
  private readonly tgtPad: ReturnType<Arena['bytes']>;
  private readonly combined: ReturnType<Arena['bytes']>;
  private readonly causal: ReturnType<Arena['bytes']>;
  private backend: Backend | null = null;
  private flat: { params: FloatArray; grads: FloatArray } | null = null;
  private last: LastForward | null = null;

  /**
   * Plans the model. Nothing is allocated until {@link bind}: a model that is never bound
   * costs only its bookkeeping, which is how {@link estimateModel} counts.
   */
  constructor(config: ModelConfig, shape: ModelShape) {
    const cfg = validateConfig(config);
    this.config = cfg;
    const bad = (m: string): never => {
      throw new EngineError('config/invalid', m);
    };
    if (!Number.isInteger(shape.maxBatch) || shape.maxBatch <= 0) bad(`Batch size must be a positive integer, got ${shape.maxBatch}.`);
    this.maxBatch = shape.maxBatch;
    this.maxLen = shape.maxLen ?? cfg.maxLen;
    this.maxSrcLen = cfg.kind === 'encoder-decoder' ? shape.maxSrcLen ?? cfg.maxLen : 0;
    this.padId = shape.padId ?? PAD;
    if (this.padId !== PAD && (cfg.kind !== 'decoder-only' || this.padId !== -1)) {
      bad(`padId ${this.padId} is not supported: a decoder-only model pads with ${PAD} or has no padding (−1); an encoder-decoder pads with ${PAD}.`);
    }
    for (const [what, v] of [['Sequence length', this.maxLen], ['Source length', this.maxSrcLen]] as const) {
      if (v > cfg.maxLen) bad(`${what} ${v} exceeds the context of ${cfg.maxLen}; use shorter sequences or set maxLen ≥ ${v}.`);
      if (!Number.isInteger(v) || v < 0 || (what === 'Sequence length' && v === 0)) bad(`${what} must be a positive integer, got ${v}.`);
    }
    const { store, arena } = this;
    const B = this.maxBatch;
    const T = this.maxLen;
    const S = this.maxSrcLen;
    const C = cfg.dModel;
    const init = initFor(cfg);
    const gpt = cfg.kind === 'decoder-only';

    if (!gpt) {
      this.encEmbed = new Embedder(store, arena, cfg, { table: 'encoder_embedding.weight', positions: 'encoder_positions.weight' }, cfg.srcVocabSize, { table: init.embed, positions: init.pos }, B * S);
      for (let i = 0; i < cfg.nEncoderLayers; i++) this.encoder.push(new Block(store, arena, cfg, blockNames(cfg, 'encoder', i), init.block, { B, T: S, S }));
      this.encNorm = cfg.norm === 'pre' ? new LayerNorm(store, arena, 'encoder_norm', C, cfg.bias, cfg.layerNormEps, B * S) : null;
    } else {
      this.encEmbed = null;
      this.encNorm = null;
    }
    this.decEmbed = gpt
      ? new Embedder(store, arena, cfg, { table: 'transformer.wte.weight', positions: 'transformer.wpe.weight' }, cfg.vocabSize, { table: init.embed, positions: init.pos }, B * T)
      : new Embedder(store, arena, cfg, { table: 'decoder_embedding.weight', positions: 'decoder_positions.weight' }, cfg.vocabSize, { table: init.embed, positions: init.pos }, B * T);
    for (let i = 0; i < cfg.nDecoderLayers; i++) this.decoder.push(new Block(store, arena, cfg, blockNames(cfg, 'decoder', i), init.block, { B, T, S }));
    this.decNorm = cfg.norm === 'pre' ? new LayerNorm(store, arena, gpt ? 'transformer.ln_f' : 'decoder_norm', C, cfg.bias, cfg.layerNormEps, B * T) : null;
    const headName = gpt ? 'lm_head' : 'fc';
    this.headW = cfg.tieEmbeddings ? this.decEmbed.table : store.add(`${headName}.weight`, [cfg.vocabSize, C], init.head);
    this.headB = !gpt && cfg.bias ? store.add(`${headName}.bias`, [cfg.vocabSize], { kind: 'const', value: 0 }) : null;

    const nT = B * T * C;
    const nS = B * S * C;
    this.encOut = arena.buffer(gpt ? 0 : nS);
    this.decOut = arena.buffer(nT);
    this.dMemory = arena.buffer(gpt ? 0 : nS);
    this.logitsSlot = arena.buffer(B * T * cfg.vocabSize);
    this.dlogits = arena.scratch('model.dlogits', B * T * cfg.vocabSize);
    this.lse = arena.buffer(B * T);
    this.gA = arena.scratch('model.gA', Math.max(nT, nS));
    this.gB = arena.scratch('model.gB', Math.max(nT, nS));
    this.srcPad = arena.bytes(B * S);
    this.tgtPad = arena.bytes(B * T);
    this.combined = arena.bytes(B * T * T);
    this.causal = arena.bytes(T * T);
  }

  /** Allocates every buffer on `backend`. Weights start at zero: call {@link initialize} or load them. */
  bind(backend: Backend): this {
    if (this.backend) throw new Error('model already bound');
    this.backend = backend;
    this.flat = this.store.bind(backend);
    this.arena.bind(backend);
    this.encEmbed?.bind();
    this.decEmbed.bind();
    fillCausalMask(this.causal.data, this.maxLen);
    return this;
  }

  private get k(): Backend {
    return this.backendOrThrow();
  }

  /** The backend this model was bound to. */
  backendOrThrow(): Backend {
    if (!this.backend) throw new Error('model not bound: call bind(backend) first');
    return this.backend;
  }

  /** All parameters, flat. */
  get params(): FloatArray {
    if (!this.flat) throw new Error('model not bound');
    return this.flat.params;
  }

  /** All gradients, flat, aligned with {@link params}. */
  get grads(): FloatArray {
    if (!this.flat) throw new Error('model not bound');
    return this.flat.grads;
  }

  get paramList(): readonly Param[] {
    return this.store.params;
  }

  segments(): ParamSegment[] {
    return this.store.segments();
  }

  /** A parameter by name, or throws naming the close alternatives. */
  param(name: string): Param {
    const p = this.store.params.find((q) => q.name === name);
    if (!p) throw new EngineError('checkpoint/invalid', `Model has no parameter "${name}"; it has ${this.store.params.length} parameters such as ${this.store.params.slice(0, 3).map((q) => q.name).join(', ')}.`);
    return p;
  }

  /** Draws initial weights from `rng` (padding rows of the embeddings start at zero, as in PyTorch). */
  initialize(rng: Rng): void {
    for (const p of this.store.params) {
      const d = p.data;
      const init = p.init;
      for (let i = 0; i < p.size; i++) {
        d[i] = init.kind === 'const' ? init.value : init.kind === 'normal' ? rng.normal() * init.std : (rng.next() * 2 - 1) * init.bound;
      }
    }
    for (const e of [this.encEmbed, this.decEmbed]) if (e && this.config.kind === 'encoder-decoder') e.table.data.fill(0, 0, this.config.dModel);
  }

  /** Logits [B, T, V] of the last forward. */
  logits(): FloatArray {
    const l = this.last;
    return this.logitsSlot.data.subarray(0, l ? l.B * l.T * this.config.vocabSize : 0);
  }

  private checkBatch(b: Batch): void {
    const bad = (m: string): never => {
      throw new EngineError('input/invalid', m);
    };
    const cfg = this.config;
    if (b.B < 1 || b.B > this.maxBatch) bad(`Batch of ${b.B} sequences exceeds the planned batch of ${this.maxBatch}; build the model with a larger maxBatch.`);
    if (b.T < 1 || b.T > this.maxLen) bad(`Sequence length ${b.T} exceeds the context of ${this.maxLen}; shorten the sequences or retrain with a longer context.`);
    if (b.input.length < b.B * b.T || b.targets.length < b.B * b.T) bad(`input and targets need ${b.B * b.T} tokens (B×T), got ${b.input.length} and ${b.targets.length}.`);
    checkIds(b.input, b.B * b.T, cfg.vocabSize, 'input');
    checkIds(b.targets, b.B * b.T, cfg.vocabSize, 'targets');
    if (cfg.kind === 'encoder-decoder') {
      const S = b.S ?? 0;
      if (!b.src || S < 1) bad('An encoder-decoder batch needs source tokens (src, S).');
      if (S > this.maxSrcLen) bad(`Source length ${S} exceeds the context of ${this.maxSrcLen}; shorten the source or retrain with a longer context.`);
      if ((b.src as Int32Array).length < b.B * S) bad(`src needs ${b.B * S} tokens (B×S), got ${(b.src as Int32Array).length}.`);
      checkIds(b.src as Int32Array, b.B * S, cfg.srcVocabSize, 'src');
    }
  }

  /** Runs the encoder on src [B, S]; returns the memory [B, S, C] and its padding mask view. */
  encode(src: Int32Array, B: number, S: number, train: boolean, rng: Rng | null): { memory: FloatArray; mask: MaskView } {
    const k = this.k;
    if (!this.encEmbed) throw new Error('decoder-only model has no encoder');
    fillPaddingMask(this.srcPad.data, src, B, S);
    const mask = paddingView(this.srcPad.data, S);
    let x = this.encEmbed.forward(k, src, B, S, 0, train, rng);
    for (const blk of this.encoder) {
      blk.forward(k, x, { B, T: S, S, selfMask: mask, crossMask: null, memory: null, dMemory: null, train, rng });
      x = blk.output;
    }
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
    if (!ablate.length) return this.run(batch, opts, false);
    if (opts.train) throw new EngineError('input/invalid', 'Heads can be switched off only in evaluation (train: false); ablation is not a training method here.');
    const layers = this.attentionLayers();
    applyHeadsOff(layers, ablate, this.config.nHeads);
    try {
      return this.run(batch, opts, true);
    } finally {
      applyHeadsOff(layers, [], this.config.nHeads);
    }
  }

  private run(batch: Batch, opts: ForwardOptions, ablated: boolean): { loss: number; tokens: number } {
    this.checkBatch(batch);
    const k = this.k;
    const cfg = this.config;
    const { B, T } = batch;
    const S = batch.S ?? 0;
    const rng = opts.rng ?? null;
    const train = opts.train;
    let memory: FloatArray | null = null;
    let srcMask: MaskView | null = null;
    if (cfg.kind === 'encoder-decoder') {
      const enc = this.encode(batch.src as Int32Array, B, S, train, rng);
      memory = enc.memory;
      srcMask = enc.mask;
    }
    const anyPad = fillPaddingMask(this.tgtPad.data, batch.input, B, T, this.padId);
    let selfMask: MaskView;
    if (cfg.kind === 'encoder-decoder' || anyPad) {
      fillCombinedMask(this.combined.data, this.tgtPad.data, B, T);
      selfMask = combinedView(this.combined.data, T);
    } else selfMask = causalView(this.causal.data, this.maxLen);

    let y = this.decEmbed.forward(k, batch.input, B, T, 0, train, rng);
    const decIn = y;
    for (const blk of this.decoder) {
      blk.forward(k, y, { B, T, S, selfMask, crossMask: srcMask, memory, dMemory: this.dMemory.data, train, rng });
      y = blk.output;
    }
    const decTop = y;
    if (this.decNorm) {
      this.decNorm.forward(k, this.decOut.data, y, B * T);
      y = this.decOut.data;
    }
    const N = B * T;
    const V = cfg.vocabSize;
    this.head(k, this.logitsSlot.data, y, N);
    const smoothing = opts.labelSmoothing ?? (train ? cfg.labelSmoothing : 0);
    const { sum, count } = k.crossEntropyForward(this.lse.data, this.logitsSlot.data, batch.targets, N, V, this.padId, smoothing);
    this.last = { B, T, S, count, smoothing, targets: batch.targets, headInput: y, decTop, encTop: memory, selfMask, srcMask, decIn, ablated };
    return { loss: count > 0 ? sum / count : 0, tokens: count };
  }

  /** logits [N, V] = y [N, C] · W_headᵀ + b: the output projection (the embedding table when tied). */
  head(k: Backend, logits: FloatArray, y: FloatArray, N: number): void {
    linearForward(k, this.headW.data, this.headB ? this.headB.data : null, logits, y, N, this.config.dModel, this.config.vocabSize);
  }

  /** Gradients of the last forward's mean loss, written (not accumulated) into {@link grads}. */
  backward(): void {
    const l = this.last;
    if (!l) throw new Error('backward() needs a forward() first');
    if (l.ablated) throw new Error('backward() after a forward with heads switched off: ablation is inference only');
    const k = this.k;
    const cfg = this.config;
    const { B, T, S } = l;
    const N = B * T;
    const C = cfg.dModel;
    const V = cfg.vocabSize;
    k.fill(this.grads, this.store.count, 0);
    const dlogits = this.dlogits.data;
    k.fill(dlogits, N * V, 0);
    if (l.count > 0) k.crossEntropyBackward(dlogits, this.logitsSlot.data, this.lse.data, l.targets, N, V, this.padId, l.smoothing, 1 / l.count);
    // logits = y Wᵀ + b
    let dTop = this.gA.data;
    linearBackward(k, this.headW, this.headB, dTop, dlogits, l.headInput, N, C, V, true);
    if (this.decNorm) {
      const d = this.gB.data;
      k.fill(d, N * C, 0);
      this.decNorm.backward(k, d, dTop, l.decTop, N);
      dTop = d;
    }
    if (cfg.kind === 'encoder-decoder') k.fill(this.dMemory.data, B * S * C, 0);
    const dEmb = this.stackBackward(this.decoder, dTop, N * C);
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
      this.encEmbed.backward(k, this.stackBackward(this.encoder, dEnc, B * S * C));
    }
  }

  private stackBackward(blocks: readonly Block[], dTop: FloatArray, n: number): FloatArray {
    const k = this.k;
    let cur = dTop;
    for (let i = blocks.length - 1; i >= 0; i--) {
      const dIn = cur === this.gA.data ? this.gB.data : this.gA.data;
      k.fill(dIn, n, 0);
      (blocks[i] as Block).backward(k, dIn, cur);
      cur = dIn;
    }
    return cur;
  }

  /** Every attention layer, by stack (encoder self, decoder self, decoder cross) and layer. */
  attentionLayers(): AttentionLayer[] {
    const layers: AttentionLayer[] = this.encoder.map((b, layer) => ({ stack: 'encoder.self', layer, attn: b.selfAttn }));
    this.decoder.forEach((b, layer) => layers.push({ stack: 'decoder.self', layer, attn: b.selfAttn }));
    this.decoder.forEach((b, layer) => {
      if (b.crossAttn) layers.push({ stack: 'decoder.cross', layer, attn: b.crossAttn });
    });
    return layers;
  }

  /**
   * The logit lens (nostalgebraist 2020): logits [B, T, V] read from the decoder's residual
   * stream of the last forward after `layer` blocks (0 = the embeddings, nDecoderLayers =
   * the top), through what the top goes through — the final norm (pre-LN) and the output
   * projection — so the top layer's equal {@link logits}. A post-LN model has no final norm:
   * each block's output is already the output of its last LayerNorm, the stream the next
   * block reads, so it goes through the output projection alone (the embeddings, layer 0,
   * unnormalized). A copy; uses the backward scratch and restores the final norm's
   * statistics, so a backward() may still follow.
   */
  residualLogits(layer: number): Float32Array {
    const l = this.last;
    if (!l) throw new Error('residualLogits() needs a forward() first');
    const n = this.decoder.length;
    if (!Number.isInteger(layer) || layer < 0 || layer > n) throw new EngineError('input/invalid', `Layer ${layer} does not exist; the decoder's stream is read after layers 0 (embeddings) to ${n}.`);
    const k = this.k;
    const N = l.B * l.T;
    let h = layer === 0 ? l.decIn : (this.decoder[layer - 1] as Block).output;
    if (this.decNorm) {
      this.decNorm.forward(k, this.gA.data, h, N);
      this.decNorm.forward(k, this.decOut.data, l.decTop, N); // restores backward's statistics (same numbers)
      h = this.gA.data;
    }
    const out = this.dlogits.data;
    this.head(k, out, h, N);
    return Float32Array.from(out.subarray(0, N * this.config.vocabSize));
  }

  /**
   * The attention maps and masks of the last forward for batch item `b` (copies, so they
   * survive the next step): per layer [H, T, S] for encoder self, decoder self and cross.
   */
  captureAttention(b = 0): AttentionCapture {
    const l = this.last;
    if (!l) throw new Error('captureAttention() needs a forward() first');
    if (b < 0 || b >= l.B) throw new EngineError('input/invalid', `Batch item ${b} does not exist; the last batch had ${l.B} items.`);
    const H = this.config.nHeads;
    const maps: AttentionMap[] = [];
    const take = (stack: AttentionMap['stack'], kind: AttentionMap['kind'], layer: number, probs: FloatArray, Tq: number, Sk: number): void => {
      const n = H * Tq * Sk;
      maps.push({ stack, kind, layer, shape: [H, Tq, Sk], data: Float32Array.from(probs.subarray(b * n, (b + 1) * n)) });
    };
    this.encoder.forEach((blk, i) => take('encoder', 'self', i, blk.selfAttn.probs.data, l.S, l.S));
    this.decoder.forEach((blk, i) => {
      take('decoder', 'self', i, blk.selfAttn.probs.data, l.T, l.T);
      if (blk.crossAttn) take('decoder', 'cross', i, blk.crossAttn.probs.data, l.T, l.S);
    });
    return { maps, masks: this.captureMasks() };
  }

  /**
   * The masks of the last forward, dense, for the whole batch, with the exact broadcast
   * shapes the kernels used: source padding [B,1,1,S] (encoder self- and cross-attention),
   * target padding [B,1,1,T], causal [1,1,T,T], and — when the decoder combined them —
   * padding ∧ causal [B,1,T,T].
   */
  captureMasks(): MaskSnapshot[] {
    const l = this.last;
    if (!l) throw new Error('captureMasks() needs a forward() first');
    const masks: MaskSnapshot[] = [];
    if (l.srcMask) masks.push(snapshotMask('source.padding', l.srcMask, l.B, 1, l.S));
    masks.push(snapshotMask('target.padding', paddingView(this.tgtPad.data, l.T), l.B, 1, l.T));
    masks.push(snapshotMask('decoder.causal', causalView(this.causal.data, this.maxLen), 1, l.T, l.T));
    if (l.selfMask.batchStride !== 0) masks.push(snapshotMask('decoder.self', l.selfMask, l.B, l.T, l.T));
    return masks;
  }
}

function checkIds(ids: Int32Array, n: number, V: number, what: string): void {
  for (let i = 0; i < n; i++) {
    const id = ids[i] as number;
    if (id < 0 || id >= V) {
      throw new EngineError('input/invalid', `${what} has token id ${id} at position ${i}, outside the vocabulary of ${V}; the data was tokenized with a different tokenizer than the model's.`);
    }
  }
}
