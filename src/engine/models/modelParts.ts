/**
 * The parts of the two models and the buffers they run in, planned at construction and
 * allocated when bound to a backend: the embeddings, blocks, final norms and output
 * projection, created in a fixed order under the parameters' PyTorch names (so the flat
 * parameter buffer, checkpoints and a seed's initial weights never depend on anything
 * else), and the activation, gradient-scratch and mask buffers of one forward and backward.
 *
 * Leaves out: running them (transformer.ts, whose Transformer is these parts plus forward,
 * backward and the readouts), the names themselves (pytorchNames.ts) and the
 * initialization (init.ts).
 *
 * Shape legend: B batch, S source positions, T target positions, C d_model, V vocabulary.
 */

import type { Backend, FloatArray } from '../backend';
import type { ModelConfig } from '../config';
import { layerRopeScaled, layerRopeTheta, validateConfig } from '../config';
import { EngineError } from '../errors';
import type { ParamSegment } from '../optim/optimizer';
import type { Rng } from '../rng';
import { Block } from './block';
import { Embedder } from './embed';
import { drawParams, initFor } from './init';
import type { KeptActivations, ModelShape } from './inputs';
import { planShape } from './inputs';
import { Norm } from './layers';
import { fillCausalMask } from './masks';
import type { Param, Slot } from './plan';
import { Arena, ParamStore } from './plan';
import { blockNames, modelNames } from './pytorchNames';

/** A model's parameters and buffers, planned (see the file comment); Transformer runs them. */
export abstract class ModelParts {
  readonly config: ModelConfig;
  readonly store = new ParamStore();
  readonly arena = new Arena();
  readonly maxBatch: number;
  readonly maxLen: number;
  readonly maxSrcLen: number;
  /** The padding id (ModelShape.padId): PAD, or −1 for a vocabulary without one. */
  readonly padId: number;
  /** Rows the logits and their gradient are planned for (ModelShape.logitRows). */
  readonly logitRows: number;
  /** What the decoder's layers keep of a forward (ModelShape.activations). */
  readonly activations: KeptActivations;
  readonly encEmbed: Embedder | null;
  readonly encoder: Block[] = [];
  readonly encNorm: Norm | null;
  readonly decEmbed: Embedder;
  readonly decoder: Block[] = [];
  readonly decNorm: Norm | null;
  /** Output projection weight [V, C] (the decoder embedding when tied) and bias. */
  readonly headW: Param;
  readonly headB: Param | null;
  protected readonly encOut: Slot;
  protected readonly decOut: Slot;
  /** With activations 'streams': the stream after layers 1..L − 1, [L − 1, B·T, C] (empty otherwise). */
  protected readonly streams: Slot;
  protected readonly dMemory: Slot;
  protected readonly logitsSlot: Slot;
  protected readonly dlogits: Slot;
  protected readonly lse: Slot;
  protected readonly gA: Slot;
  protected readonly gB: Slot;
  protected readonly srcPad: ReturnType<Arena['bytes']>;
  protected readonly tgtPad: ReturnType<Arena['bytes']>;
  protected readonly combined: ReturnType<Arena['bytes']>;
  protected readonly causal: ReturnType<Arena['bytes']>;
  /** The global layers' masks of a model with globalEvery (no window; empty otherwise). */
  protected readonly causalFull: ReturnType<Arena['bytes']>;
  protected readonly combinedFull: ReturnType<Arena['bytes']>;
  private backend: Backend | null = null;
  private flat: { params: FloatArray; grads: FloatArray | null } | null = null;

  /**
   * Plans the model. Nothing is allocated until {@link bind}: a model that is never bound
   * costs only its bookkeeping, which is how estimateModel (estimate.ts) counts.
   */
  constructor(config: ModelConfig, shape: ModelShape) {
    const cfg = validateConfig(config);
    const unbuilt = unbuiltOptions(cfg);
    if (unbuilt.length > 0)
      throw new EngineError(
        'config/invalid',
        `This version of Attention Lab does not build ${unbuilt.join(', ')} yet; ` +
          `leave ${unbuilt.length > 1 ? 'them' : 'it'} at the default.`,
      );
    this.config = cfg;
    ({
      maxBatch: this.maxBatch,
      maxLen: this.maxLen,
      maxSrcLen: this.maxSrcLen,
      padId: this.padId,
      logitRows: this.logitRows,
      activations: this.activations,
    } = planShape(cfg, shape));
    const { store, arena } = this;
    const B = this.maxBatch;
    const T = this.maxLen;
    const S = this.maxSrcLen;
    const C = cfg.dModel;
    const init = initFor(cfg);
    const names = modelNames(cfg);
    const gpt = cfg.kind === 'decoder-only';
    const embedInit = { table: init.embed, positions: init.pos };

    if (!gpt) {
      this.encEmbed = new Embedder(store, arena, cfg, names.encEmbed, cfg.srcVocabSize, embedInit, B * S);
      for (let i = 0; i < cfg.nEncoderLayers; i++)
        this.encoder.push(new Block(store, arena, cfg, blockNames(cfg, 'encoder', i), init.block, { B, T: S, S }));
      this.encNorm = cfg.norm === 'pre' ? new Norm(store, arena, names.encNorm, C, cfg, B * S) : null;
    } else {
      this.encEmbed = null;
      this.encNorm = null;
    }
    this.decEmbed = new Embedder(store, arena, cfg, names.decEmbed, cfg.vocabSize, embedInit, B * T);
    const reuse = this.activations !== 'backward'; // two sets of buffers, in turn (ModelShape.activations)
    for (let i = 0; i < cfg.nDecoderLayers; i++) {
      arena.reuseAs(reuse ? `decoder.${i % 2}` : null);
      this.decoder.push(
        new Block(store, arena, layerConfig(cfg, i), blockNames(cfg, 'decoder', i), init.block, { B, T, S }),
      );
    }
    arena.reuseAs(null);
    this.decNorm = cfg.norm === 'pre' ? new Norm(store, arena, names.decNorm, C, cfg, B * T) : null;
    this.headW = cfg.tieEmbeddings
      ? this.decEmbed.table
      : store.add(`${names.head}.weight`, [cfg.vocabSize, C], init.head);
    this.headB =
      !gpt && cfg.bias ? store.add(`${names.head}.bias`, [cfg.vocabSize], { kind: 'const', value: 0 }) : null;

    const nT = B * T * C;
    const nS = B * S * C;
    this.encOut = arena.buffer(gpt ? 0 : nS);
    this.decOut = arena.buffer(nT);
    this.streams = arena.buffer(this.activations === 'streams' ? Math.max(0, cfg.nDecoderLayers - 1) * nT : 0);
    this.dMemory = arena.buffer(gpt ? 0 : nS);
    this.logitsSlot = arena.buffer(this.logitRows * cfg.vocabSize, 'the logits (batch·context·vocabulary)');
    this.dlogits = arena.scratch('model.dlogits', this.logitRows * cfg.vocabSize);
    this.lse = arena.buffer(B * T);
    this.gA = arena.scratch('model.gA', Math.max(nT, nS));
    this.gB = arena.scratch('model.gB', Math.max(nT, nS));
    this.srcPad = arena.bytes(B * S);
    this.tgtPad = arena.bytes(B * T);
    this.combined = arena.bytes(B * T * T);
    this.causal = arena.bytes(T * T);
    const mixed = cfg.slidingWindow > 0 && cfg.globalEvery > 0;
    this.causalFull = arena.bytes(mixed ? T * T : 0);
    this.combinedFull = arena.bytes(mixed ? B * T * T : 0);
  }

  /** Allocates every buffer on `backend`. Weights start at zero: call {@link initialize} or load them. */
  bind(backend: Backend): this {
    if (this.backend) throw new Error('model already bound');
    this.backend = backend;
    this.flat = { params: this.store.bind(backend), grads: null };
    this.arena.bind(backend);
    this.encEmbed?.bind();
    this.decEmbed.bind();
    fillCausalMask(this.causal.data, this.maxLen, this.config.slidingWindow);
    if (this.causalFull.data.length > 0) fillCausalMask(this.causalFull.data, this.maxLen, 0);
    return this;
  }

  /** The bound backend (throws before {@link bind}). */
  protected get k(): Backend {
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

  /**
   * All gradients, flat, aligned with {@link params}: allocated on first use (backward, an optimizer), so a
   * model that only runs holds none.
   */
  get grads(): FloatArray {
    if (!this.flat || !this.backend) throw new Error('model not bound');
    this.flat.grads ??= this.store.bindGrads(this.backend);
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
    if (!p)
      throw new EngineError(
        'checkpoint/invalid',
        `Model has no parameter "${name}"; it has ${this.store.params.length} parameters such as ${this.store.params
          .slice(0, 3)
          .map((q) => q.name)
          .join(', ')}.`,
      );
    return p;
  }

  /** Draws initial weights from `rng` (padding rows of the embeddings start at zero, as in PyTorch). */
  initialize(rng: Rng): void {
    drawParams(this.store.params, rng);
    for (const e of [this.encEmbed, this.decEmbed])
      if (e && this.config.kind === 'encoder-decoder') e.table.data.fill(0, 0, this.config.dModel);
  }
}

/**
 * The options of today's transformers that are declared in the config but not yet built by the
 * models, as `field value` (each is removed from this list as it lands in every backend).
 */
export function unbuiltOptions(_c: ModelConfig): string[] {
  return []; // every option of issues 29 and 30 is built (models/attention.ts, layers.ts, block.ts, embed.ts)
}

/**
 * The config decoder layer i is built from: the model's, with that layer's RoPE θ (globalEvery, ropeLocalTheta)
 * and without ropeScaling in the local layers of a globalEvery model (Gemma 3 scales its global layers only).
 */
export function layerConfig(cfg: ModelConfig, i: number): ModelConfig {
  const theta = layerRopeTheta(cfg, i);
  const scaling = layerRopeScaled(cfg, i) ? cfg.ropeScaling : 'none';
  return theta === cfg.ropeTheta && scaling === cfg.ropeScaling
    ? cfg
    : { ...cfg, ropeTheta: theta, ropeScaling: scaling };
}
