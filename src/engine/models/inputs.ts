/**
 * What a model is planned for and what it takes: the largest shapes its buffers are planned
 * for (ModelShape), one padded training or evaluation batch (Batch), and the options of a
 * forward pass; with the checks each must pass — sizes within the context and the plan,
 * ids within the vocabulary — failing with a message that says what to change.
 *
 * Leaves out: making batches (src/lab/data) and the model itself (transformer.ts).
 *
 * Shape legend: B batch, S source positions, T target positions.
 */

import type { ModelConfig } from '../config';
import { EngineError } from '../errors';
import type { Rng } from '../rng';
import { PAD } from '../tokenizers/special';
import type { HeadRef } from './heads';
import type { ForwardHook } from './hooks';

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
  /**
   * Rows (positions of the batch) the output projection's buffers hold: the logits [R, V] and their gradient.
   * Default maxBatch·maxLen, every position at once, as training's backward needs. Fewer (an inference job over a
   * long text with a large vocabulary, see logitChunkRows): a forward whose B·T exceeds them computes its loss over
   * chunks of R rows, and the logits are read only at the rows a job asks for (Transformer.logitsAt). At least 4.
   */
  readonly logitRows?: number;
  /** What the decoder's layers keep of a forward (default 'backward'; see {@link KeptActivations}). */
  readonly activations?: KeptActivations;
}

/**
 * What the decoder's layers keep of a forward. 'backward': every layer its own activations, as backward and a
 * forward's attention maps (captureAttention) need. An inference job over a long text needs less: its layers reuse
 * two sets of buffers in turn (a layer's are free once the next has read its output; Qwen2.5-0.5B over 1,024
 * tokens keeps 2 of its 24 layers' 150 MB), and the model keeps 'streams' — the residual stream after every layer
 * [B·T, C], for the logit lens — or only the 'top' (scoring, ablation, steering: logitsAt reads the final hidden
 * state). Such a model runs no backward and captures no attention from its forward.
 */
export type KeptActivations = 'backward' | 'streams' | 'top';

/** Bytes one chunk of the output projection takes at most when a job reads logits in chunks (logitChunkRows). */
export const LOGIT_CHUNK_BYTES = 32 * 2 ** 20;

/**
 * Rows of logits an inference job over `rows` positions plans (ModelShape.logitRows): all of them when they fit in
 * LOGIT_CHUNK_BYTES, else as many as fit (at least one) — 55 rows of Qwen2.5's 151,936-token vocabulary, where the
 * whole of a 1,024-token text would be 622 MB.
 */
export function logitChunkRows(cfg: Pick<ModelConfig, 'vocabSize'>, rows: number): number {
  return Math.max(1, Math.min(rows, Math.floor(LOGIT_CHUNK_BYTES / (4 * cfg.vocabSize))));
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
  /**
   * Called at every hook point (hooks.ts) to read or replace its activation; inference only (not
   * with `train`). Absent: no extra work.
   */
  readonly hook?: ForwardHook;
  /**
   * false: no output projection and no loss (the forward returns loss 0 over 0 tokens) — for a job that reads
   * attention or activations, or the logits of a few rows afterwards (Transformer.logitsAt). Default true.
   */
  readonly loss?: boolean;
  /**
   * The hook only reads (captures) and writes nothing: a backward() may follow this forward (attribution
   * patching's one corrupted pass). A hook that writes anyway makes that backward wrong.
   */
  readonly hookReadsOnly?: boolean;
}

/** A model's plan: its ModelShape with every default filled in. */
export interface PlannedShape {
  readonly maxBatch: number;
  /** Decoder positions. */
  readonly maxLen: number;
  /** Encoder positions (0 for decoder-only). */
  readonly maxSrcLen: number;
  /** PAD, or −1 for a vocabulary without one. */
  readonly padId: number;
  /** Rows the output projection's buffers hold (ModelShape.logitRows; at most maxBatch·maxLen). */
  readonly logitRows: number;
  readonly activations: KeptActivations;
}

/** `shape` with its defaults, checked against `cfg`; throws EngineError('config/invalid') saying what to change. */
export function planShape(cfg: ModelConfig, shape: ModelShape): PlannedShape {
  const bad = (m: string): never => {
    throw new EngineError('config/invalid', m);
  };
  if (!Number.isInteger(shape.maxBatch) || shape.maxBatch <= 0)
    bad(`Batch size must be a positive integer, got ${shape.maxBatch}.`);
  const maxLen = shape.maxLen ?? cfg.maxLen;
  const maxSrcLen = cfg.kind === 'encoder-decoder' ? (shape.maxSrcLen ?? cfg.maxLen) : 0;
  const padId = shape.padId ?? PAD;
  if (padId !== PAD && (cfg.kind !== 'decoder-only' || padId !== -1)) {
    bad(
      `padId ${padId} is not supported: a decoder-only model pads with ${PAD} or has no padding ` +
        `(−1); an encoder-decoder pads with ${PAD}.`,
    );
  }
  for (const [what, v] of [
    ['Sequence length', maxLen],
    ['Source length', maxSrcLen],
  ] as const) {
    if (v > cfg.maxLen)
      bad(`${what} ${v} exceeds the context of ${cfg.maxLen}; use shorter sequences or set maxLen ≥ ${v}.`);
    if (!Number.isInteger(v) || v < 0 || (what === 'Sequence length' && v === 0))
      bad(`${what} must be a positive integer, got ${v}.`);
  }
  const all = shape.maxBatch * maxLen;
  const given = shape.logitRows;
  if (given !== undefined && (!Number.isInteger(given) || given < 1))
    bad(`Logit rows must be a positive integer, got ${given}.`);
  // at least 4: fewer rows take another order of sums in WebAssembly's matmul (Transformer's SAME_SUM_ROWS)
  const logitRows = Math.min(all, Math.max(4, given ?? all));
  const activations = shape.activations ?? 'backward';
  if (!['backward', 'streams', 'top'].includes(activations))
    bad(`Kept activations must be backward, streams or top, got ${String(activations)}.`);
  return { maxBatch: shape.maxBatch, maxLen, maxSrcLen, padId, logitRows, activations };
}

/** Throws EngineError('input/invalid') unless `b` fits the plan `limits` and holds only ids of `cfg`'s vocabularies. */
export function checkBatch(b: Batch, cfg: ModelConfig, limits: Omit<PlannedShape, 'padId'>): void {
  const bad = (m: string): never => {
    throw new EngineError('input/invalid', m);
  };
  if (b.B < 1 || b.B > limits.maxBatch)
    bad(
      `Batch of ${b.B} sequences exceeds the planned batch of ${limits.maxBatch}; build the model ` +
        `with a larger maxBatch.`,
    );
  if (b.T < 1 || b.T > limits.maxLen)
    bad(
      `Sequence length ${b.T} exceeds the context of ${limits.maxLen}; shorten the sequences or ` +
        `retrain with a longer context.`,
    );
  if (b.input.length < b.B * b.T || b.targets.length < b.B * b.T)
    bad(`input and targets need ${b.B * b.T} tokens (B×T), got ${b.input.length} and ${b.targets.length}.`);
  checkIds(b.input, b.B * b.T, cfg.vocabSize, 'input');
  checkIds(b.targets, b.B * b.T, cfg.vocabSize, 'targets');
  if (cfg.kind === 'encoder-decoder') {
    const S = b.S ?? 0;
    if (!b.src || S < 1) bad('An encoder-decoder batch needs source tokens (src, S).');
    if (S > limits.maxSrcLen)
      bad(
        `Source length ${S} exceeds the context of ${limits.maxSrcLen}; shorten the source or ` +
          `retrain with a longer context.`,
      );
    if ((b.src as Int32Array).length < b.B * S)
      bad(`src needs ${b.B * S} tokens (B×S), got ${(b.src as Int32Array).length}.`);
    checkIds(b.src as Int32Array, b.B * S, cfg.srcVocabSize, 'src');
  }
}

function checkIds(ids: Int32Array, n: number, V: number, what: string): void {
  for (let i = 0; i < n; i++) {
    const id = ids[i] as number;
    if (id < 0 || id >= V) {
      throw new EngineError(
        'input/invalid',
        `${what} has token id ${id} at position ${i}, outside the vocabulary of ${V}; the data was ` +
          `tokenized with a different tokenizer than the model's.`,
      );
    }
  }
}
