/**
 * The model as the other side of a channel sees it: its config (the engine's ModelConfig
 * fields, declared again here because the protocol imports nothing outside itself;
 * src/lab/runs/modelConfigShape.ts fails to compile if the two differ), its sizes, attention snapshots with their
 * masks, and
 * decode options and results. Tensors travel as Float32Array / Uint8Array plus shape.
 *
 * Leaves out: computing any of it (the engine and src/lab), and the messages that carry it.
 */

import type { Infer } from './schema';
import {
  arrayOf,
  bool,
  f32,
  f32OrU8,
  int,
  nonNegInt,
  nullable,
  num,
  obj,
  oneOf,
  optional,
  posInt,
  ProtocolError,
  record,
  refine,
  str,
  tuple,
  u8,
  variants,
} from './schema';
import { DECODE_STRATEGIES, modelKind } from './data';

/**
 * A model's hyper-parameters, as the dashboard draws them: the engine's ModelConfig
 * (src/engine/config.ts has the meaning of each field). Only `kind` is required: run.json
 * has held every field since its first version (and the engine checks them all when a run
 * is read), but a ModelInfo need not come from a run folder, so a receiver treats a missing
 * field as unknown (the dashboard shows "?") and never guesses a value.
 */
export type ModelConfigData = Infer<typeof modelConfig>;
export const modelConfig = obj({
  kind: modelKind,
  /** Source vocabulary (encoder-decoder only; 0 for decoder-only). */
  srcVocabSize: optional(nonNegInt),
  /** Target / decoder vocabulary: the size of the output softmax. */
  vocabSize: optional(posInt),
  dModel: optional(posInt),
  nHeads: optional(posInt),
  dFF: optional(posInt),
  /** Encoder layers (encoder-decoder only; 0 for decoder-only). */
  nEncoderLayers: optional(nonNegInt),
  nDecoderLayers: optional(posInt),
  /** Longest sequence (positions) the model accepts: the context. */
  maxLen: optional(posInt),
  dropout: optional(num),
  /** 'post' = the paper (x = LN(x + sublayer(x))); 'pre' = GPT-2 (x = x + sublayer(LN(x))), with a final LN. */
  norm: optional(oneOf('post', 'pre')),
  positional: optional(oneOf('sinusoidal', 'learned', 'rope', 'alibi', 'none')),
  /** RoPE's base θ. */
  ropeTheta: optional(num),
  /** The fraction of each head's channels RoPE rotates. */
  rotaryFraction: optional(num),
  /**
   * 'geluTanh' is GPT-2's tanh approximation (Hugging Face's gelu_new); 'relu2' is ReLU²; 'swiglu' and 'geglu' are
   * gated (three matrices).
   */
  activation: optional(oneOf('relu', 'gelu', 'geluTanh', 'relu2', 'silu', 'swiglu', 'geglu')),
  /** Output projection shares the (target) embedding matrix. */
  tieEmbeddings: optional(bool),
  /** Biases in the norms and the output projection (and the default of the per-part switches). */
  bias: optional(bool),
  qkvBias: optional(bool),
  attnOutBias: optional(bool),
  mlpBias: optional(bool),
  /** The eps of every norm. */
  layerNormEps: optional(num),
  normType: optional(oneOf('layernorm', 'rmsnorm')),
  /** Norms have a learned per-channel scale. */
  normScale: optional(bool),
  /** RMSNorm of each head's queries and keys. */
  qkNorm: optional(bool),
  /** Key/value heads (grouped-query attention when fewer than nHeads); 0 = as many as nHeads. */
  nKvHeads: optional(nonNegInt),
  /** Soft-caps c · tanh(x / c) of the attention scores and of the output logits; 0 = off. */
  attnSoftCap: optional(num),
  logitSoftCap: optional(num),
  /** Sliding-window attention: positions each position sees, itself included; 0 = all. */
  slidingWindow: optional(nonNegInt),
  /** Attention and MLP in one residual step. */
  parallelResidual: optional(bool),
  /** A norm right after the embeddings. */
  embedNorm: optional(bool),
  /** Multiply embeddings by √d_model (the paper, §3.4). */
  embedScale: optional(bool),
  /** Channels of each head; 0 = dModel / nHeads. */
  headDim: optional(nonNegInt),
  /** Softmax scale of the scores; 0 = 1 / √headDim. */
  attnScale: optional(num),
  /** A norm on each sublayer's output before the residual (Gemma's sandwich norms). */
  postNorms: optional(bool),
  /** Every globalEvery-th layer global, the others windowed; 0 = all alike. */
  globalEvery: optional(nonNegInt),
  /** RoPE's θ in the windowed layers; 0 = ropeTheta. */
  ropeLocalTheta: optional(num),
  /** RoPE frequency scaling (rope_scaling): none, linear or llama3. */
  ropeScaling: optional(oneOf('none', 'linear', 'llama3')),
  /** The factor of ropeScaling; 1 with none. */
  ropeScalingFactor: optional(num),
  /** llama3 scaling's low_freq_factor. */
  ropeLowFreqFactor: optional(num),
  /** llama3 scaling's high_freq_factor. */
  ropeHighFreqFactor: optional(num),
  /** llama3 scaling's original_max_position_embeddings. */
  ropeOriginalMaxLen: optional(nonNegInt),
  /** Label smoothing ε of the training loss. */
  labelSmoothing: optional(num),
});

/** Sizes of the model being trained. */
export type ModelInfo = Infer<typeof modelInfo>;
export const modelInfo = obj({
  config: modelConfig,
  params: nonNegInt,
  paramsByModule: record(nonNegInt),
  memoryBytes: nonNegInt,
  flopsPerToken: num,
  backend: str,
  /**
   * Threads the kernels run on: 1, or 1 + the helper threads (absent before it was recorded, and for a run not
   * training).
   */
  threads: optional(posInt),
});

function fills(data: { readonly length: number }, shape: readonly number[], p: string): void {
  const n = shape.reduce((a, b) => a * b, 1);
  if (data.length !== n)
    throw new ProtocolError(`${p}.data: ${data.length} values do not fill shape [${shape.join(', ')}]`);
}

/**
 * Which attention a map or a head belongs to: the encoder's self-attention, the decoder's
 * self-attention, or the decoder's cross-attention over the encoder's output. The one
 * spelling of it everywhere: maps and head scores carry it as `stack`, snapshot files name
 * their maps `map.<stack>.<layer>`, the CLI and CSV print it, the dashboard keys its views
 * and its saved state by it. (The engine declares the same union in models/heads.ts;
 * src/lab/runs/modelConfigShape.ts fails to compile if the two differ.)
 */
export type AttentionStack = (typeof ATTENTION_STACKS)[number];
/** Every attention stack, in the order a model's heads are listed: encoder self, decoder self, decoder cross. */
export const ATTENTION_STACKS = ['encoder.self', 'decoder.self', 'decoder.cross'] as const;
export const attentionStack = oneOf(...ATTENTION_STACKS);

/**
 * Attention probabilities of one layer: [heads, rows, cols]. `data` holds the probabilities
 * (Float32Array: training snapshots) or their 8-bit square-root codes (Uint8Array: the
 * attention of a text); src/common/attentionCodec.ts reads both.
 */
export type AttentionMapData = Infer<typeof attentionMapData>;
export const attentionMapData = refine(
  obj({
    stack: attentionStack,
    layer: nonNegInt,
    shape: tuple('[heads, rows, cols]', nonNegInt, nonNegInt, nonNegInt),
    data: f32OrU8,
    /**
     * Set on an overview of a longer map: each cell is the largest weight of a `pool` × `pool`
     * block of positions, `shape` the blocks' (⌈rows/pool⌉, ⌈cols/pool⌉); the tokens on the
     * axes are the full map's. The full map is asked for when it is looked at.
     */
    pool: optional(posInt),
    /**
     * Key/value heads of the layer under grouped-query attention: query head h reads key/value
     * head floor(h / (heads / kvHeads)). Absent (files from before it) means one per head.
     */
    kvHeads: optional(posInt),
  }),
  (m, p) => fills(m.data, m.shape, p),
);

/** A mask as the engine used it, with its broadcast shape ([B,1,1,S], [1,1,T,T] …). */
export type MaskData = Infer<typeof maskData>;
export const maskData = refine(obj({ name: str, shape: arrayOf(nonNegInt), data: u8 }), (m, p) =>
  fills(m.data, m.shape, p),
);

/**
 * Scores of one self-attention head (definitions and references: src/engine/analysis/headScores.ts).
 * Each in [0, 1] but entropy (nats). `induction` is the mean over the run's diagnostic sequences
 * (random tokens repeated twice, eight periods and starts), the rest on the probe sample.
 */
export type SelfHeadScoresData = Infer<typeof selfHeadScores>;
export const selfHeadScores = obj({ previousToken: num, firstToken: num, diagonal: num, induction: num, entropy: num });

/** Alignment scores of one cross-attention head: copy (diagonal) vs reverse (anti-diagonal). */
export type CrossHeadScoresData = Infer<typeof crossHeadScores>;
export const crossHeadScores = obj({ diagonal: num, antiDiagonal: num, entropy: num });

/**
 * Where a head sits: `layer` and `head` are 0-based like {@link AttentionMapData} (people see them 1-based);
 * `kvGroup`, under grouped-query attention, the 0-based key/value head it reads (absent: its own).
 */
const headAt = { layer: nonNegInt, head: nonNegInt, kvGroup: optional(nonNegInt) } as const;

/** The scores of one head, by the attention stack it belongs to (every stack has a variant). */
export type HeadScoreData = Infer<typeof headScoreData>;
export const headScoreData = variants('stack', {
  'encoder.self': { ...headAt, scores: selfHeadScores },
  'decoder.self': { ...headAt, scores: selfHeadScores },
  'decoder.cross': { ...headAt, scores: crossHeadScores },
} satisfies { readonly [S in AttentionStack]: object });

/** Snapshot of the probe sample's attention at one step. */
export type AttentionSnapshot = Infer<typeof attentionSnapshot>;
export const attentionSnapshot = obj({
  step: nonNegInt,
  /** Token strings of the source (encoder-decoder) and of the decoder input. */
  srcTokens: arrayOf(str),
  tgtTokens: arrayOf(str),
  maps: arrayOf(attentionMapData),
  masks: arrayOf(maskData),
  /**
   * Set when the text was cut to fit the model's context (Show Attention for a long
   * selection): says what is shown, e.g. "Showing the first 64 of 97 tokens — the model's context."
   */
  truncation: optional(str),
  /** Every head's scores at this step (absent in files written before scores existed). */
  headScores: optional(arrayOf(headScoreData)),
  /**
   * What the maps and the positional scores are of: the run's probe sample (training
   * snapshots; the default when absent) or a text the user gave (the Attention tab's text
   * box, Show Attention for Selection). Induction is always measured on the run's diagnostic
   * sequences.
   */
  source: optional(oneOf('probe', 'selection')),
  /** The text itself (source 'selection'), as the user gave it. */
  text: optional(str),
});

/** Options of one playground decode. */
export type DecodeParams = Infer<typeof decodeParams>;
export const decodeParams = obj({
  input: str,
  strategy: oneOf(...DECODE_STRATEGIES),
  beam: posInt,
  lengthPenalty: num,
  temperature: num,
  topK: nonNegInt,
  topP: num,
  maxTokens: posInt,
  seed: int,
  /** Wrap the input in the run's chat template as one user message (a run whose tokenizer has one). */
  chat: optional(bool),
});

/** Attention of a decode's generated tokens, per decoder layer ([H, T, K] self, [H, T, S] cross). */
export type DecodeAttentionData = Infer<typeof decodeAttentionData>;
export const decodeAttentionData = obj({
  queryStart: nonNegInt,
  queries: nonNegInt,
  selfKeys: nonNegInt,
  sourceLength: nonNegInt,
  nHeads: posInt,
  self: arrayOf(f32),
  cross: arrayOf(f32),
});

/** A finished decode. */
export type DecodeOutput = Infer<typeof decodeOutput>;
export const decodeOutput = obj({
  text: str,
  promptTokens: arrayOf(str),
  tokens: arrayOf(str),
  ids: arrayOf(int),
  logprobs: arrayOf(num),
  score: num,
  attention: nullable(decodeAttentionData),
  /** Beam search: the n-best texts and scores. */
  beams: arrayOf(obj({ text: str, score: num })),
  /**
   * Set when the model's context shaped the decode: generation slid past it (greedy,
   * sampling) or stopped at it (beam search). One sentence for the status line and the CLI.
   */
  contextNote: optional(str),
  /** Why the best hypothesis ended: it chose EOS, reached `maxTokens`, or filled the context (beam search). */
  stopReason: oneOf('eos', 'maxTokens', 'context'),
});

/**
 * Why a decode stopped, as a clause ("Done: 200 token(s) — as many as asked for (max tokens)"):
 * the one wording of the playground's status line and the editor's Decode… message.
 */
export function stopReasonText(reason: DecodeOutput['stopReason']): string {
  switch (reason) {
    case 'maxTokens':
      return 'as many as asked for (max tokens)';
    case 'eos':
      return 'the model ended the text (it chose the end-of-sequence token)';
    case 'context':
      return "stopped at the model's context";
    default:
      return reason satisfies never;
  }
}

/** Validates an attention snapshot (e.g. read back from snapshots). */
export function validateSnapshot(v: unknown, where = 'snapshot'): AttentionSnapshot {
  return attentionSnapshot.check(v, where);
}

/** Validates model info. */
export function validateModelInfo(v: unknown, where = 'model'): ModelInfo {
  return modelInfo.check(v, where);
}
