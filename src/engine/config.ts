/**
 * Model configuration: the fields, the presets, and validation whose errors say what to
 * change. Every size a model allocates follows from these fields, so parameter counts and
 * memory estimates can be computed before anything is allocated (`models/plan.ts`).
 */

import { EngineError } from './errors';

/** Which architecture. */
export type ModelKind = 'encoder-decoder' | 'decoder-only';

/**
 * Feed-forward activations: 'relu' (the paper), 'gelu' (exact erf form, PyTorch's nn.GELU()
 * and nanoGPT's), 'geluTanh' (the tanh approximation GPT-2 was trained with, Hugging Face's
 * `gelu_new`, PyTorch's `gelu(approximate='tanh')`). See ops/activations.ts.
 */
export const ACTIVATIONS = ['relu', 'gelu', 'geluTanh', 'relu2', 'silu', 'swiglu', 'geglu'] as const;

/**
 * The gated feed-forward activations (Shazeer 2020, "GLU Variants Improve Transformer"): three
 * matrices, down(act(gate(x)) ⊙ up(x)). 'swiglu' gates with SiLU (Llama, Qwen, Mistral), 'geglu'
 * with the tanh GELU (Gemma's gelu_pytorch_tanh).
 */
export const GATED_ACTIVATIONS: readonly Activation[] = ['swiglu', 'geglu'];

/**
 * Position encodings: added to the embeddings ('sinusoidal', 'learned'), rotating queries and keys ('rope'), a bias
 * on the attention scores ('alibi'), or none.
 */
export const POSITIONALS = ['sinusoidal', 'learned', 'rope', 'alibi', 'none'] as const;

/** One of {@link POSITIONALS}. */
export type Positional = (typeof POSITIONALS)[number];

/** RoPE frequency scalings the engine builds (config.json's rope_scaling types; ops/rope.ts). */
export const ROPE_SCALINGS = ['none', 'linear', 'llama3'] as const;

/** One of {@link ROPE_SCALINGS}. */
export type RopeScalingType = (typeof ROPE_SCALINGS)[number];

/** Normalisation layers: LayerNorm (Ba et al. 2016) or RMSNorm (Zhang & Sennrich 2019, no mean, no bias). */
export const NORM_TYPES = ['layernorm', 'rmsnorm'] as const;

/** One of {@link NORM_TYPES}. */
export type NormType = (typeof NORM_TYPES)[number];

/** One of {@link ACTIVATIONS}. */
export type Activation = (typeof ACTIVATIONS)[number];

/** A transformer's hyper-parameters. Field names are what `--set key=value` accepts. */
export interface ModelConfig {
  readonly kind: ModelKind;
  /** Source vocabulary (encoder-decoder only; 0 for decoder-only). */
  readonly srcVocabSize: number;
  /** Target / decoder vocabulary: the size of the output softmax. */
  readonly vocabSize: number;
  readonly dModel: number;
  readonly nHeads: number;
  readonly dFF: number;
  /** Encoder layers (encoder-decoder only; 0 for decoder-only). */
  readonly nEncoderLayers: number;
  readonly nDecoderLayers: number;
  /** Longest sequence (positions) the model accepts: the context. */
  readonly maxLen: number;
  /** Residual, embedding and attention-probability dropout. */
  readonly dropout: number;
  /** 'post' = the paper (x = LN(x + sublayer(x))); 'pre' = GPT-2 (x = x + sublayer(LN(x))), with a final LN. */
  readonly norm: 'post' | 'pre';
  readonly positional: Positional;
  /** RoPE's base θ (10000 in the RoFormer paper and Llama 2; 500000 in Llama 3; 1e6 in Qwen2.5). */
  readonly ropeTheta: number;
  /**
   * The fraction of each head's channels RoPE rotates (Pythia's `rotary_pct`, 0.25); the rest
   * pass unrotated. dHead · rotaryFraction must be an even whole number.
   */
  readonly rotaryFraction: number;
  readonly activation: Activation;
  /** Output projection shares the (target) embedding matrix. */
  readonly tieEmbeddings: boolean;
  /** Biases in the norms and the output projection, and the default of the three per-part switches below. */
  readonly bias: boolean;
  /** Biases of the q, k, v projections (Qwen2 has these and no others). */
  readonly qkvBias: boolean;
  /** Bias of the attention's output projection W_o. */
  readonly attnOutBias: boolean;
  /** Biases of the feed-forward network's matrices. */
  readonly mlpBias: boolean;
  /** The eps of every norm, LayerNorm or RMSNorm (the name is kept for run.json files of every version). */
  readonly layerNormEps: number;
  /** Which norm every norm of the model is. */
  readonly normType: NormType;
  /** Norms have a learned per-channel scale (false: nanochat's weightless RMSNorm; rmsnorm only). */
  readonly normScale: boolean;
  /** RMSNorm of each head's queries and keys before the scores (Qwen3, Gemma 3, OLMo 2, nanochat). */
  readonly qkNorm: boolean;
  /**
   * Key/value heads: 0 = as many as nHeads (multi-head), fewer (grouped-query, Ainslie et al. 2023) or 1
   * (multi-query). 0 keeps multi-head attention when nHeads is changed alone. See {@link kvHeads}.
   */
  readonly nKvHeads: number;
  /** Soft-cap c of the attention scores, c · tanh(s / c) after scaling (Gemma 2); 0 = off. */
  readonly attnSoftCap: number;
  /** Soft-cap c of the output logits, c · tanh(z / c) (Gemma 2, nanochat's 15); 0 = off. */
  readonly logitSoftCap: number;
  /** Each position attends to at most this many positions, itself included (Mistral's); 0 = the whole context. */
  readonly slidingWindow: number;
  /** x + attn(norm₁(x)) + mlp(norm₂(x)) in one residual step (GPT-NeoX, GPT-J); pre-norm only. */
  readonly parallelResidual: boolean;
  /** A norm right after the embeddings, before the first layer (nanochat). */
  readonly embedNorm: boolean;
  /** Multiply embeddings by √d_model (the paper, §3.4). */
  readonly embedScale: boolean;
  /**
   * Channels of each attention head: 0 = dModel / nHeads. Set apart from it, q is nHeads·headDim wide and W_o maps
   * that back to dModel (Qwen3, Gemma 3: 4 heads of 256 over a 640-wide residual).
   */
  readonly headDim: number;
  /** Softmax scale of the scores: 0 = 1 / √headDim (Gemma 3 sets query_pre_attn_scalar^−½). */
  readonly attnScale: number;
  /** A norm on each sublayer's output before it joins the residual ("sandwich" norms, Gemma 2 and 3); pre-norm only. */
  readonly postNorms: boolean;
  /**
   * With slidingWindow: every globalEvery-th layer (layer i with (i + 1) % globalEvery == 0) attends to the whole
   * context and the others are windowed (Gemma 3: 6, five local layers to one global); 0 = every layer windowed.
   */
  readonly globalEvery: number;
  /** RoPE's θ in the windowed (local) layers when globalEvery > 0 (Gemma 3: 10000 local, 1e6 global); 0 = ropeTheta. */
  readonly ropeLocalTheta: number;
  /**
   * RoPE frequency scaling (config.json's rope_scaling): 'linear' divides every frequency by ropeScalingFactor
   * (Gemma 3 4B and up, factor 8); 'llama3' divides the low ones and blends the band between (Llama 3.1 and 3.2,
   * ops/rope.ts `ropeInvFreq`). It applies to the layers of ropeTheta: with globalEvery, the global layers only.
   */
  readonly ropeScaling: RopeScalingType;
  /** The factor of ropeScaling (Llama 3.1: 8, Llama 3.2: 32; Gemma 3: 8); 1 with none. */
  readonly ropeScalingFactor: number;
  /** llama3 scaling: wavelengths above ropeOriginalMaxLen / ropeLowFreqFactor are divided by the factor (1). */
  readonly ropeLowFreqFactor: number;
  /** llama3 scaling: wavelengths below ropeOriginalMaxLen / ropeHighFreqFactor are kept (4). */
  readonly ropeHighFreqFactor: number;
  /** llama3 scaling: the context the model was first trained at (original_max_position_embeddings, 8192). */
  readonly ropeOriginalMaxLen: number;
  /** Label smoothing ε of the training loss (the paper uses 0.1). */
  readonly labelSmoothing: number;
}

/** The fields a preset's size sets. */
type SizeField =
  'srcVocabSize' | 'vocabSize' | 'dModel' | 'nHeads' | 'dFF' | 'nEncoderLayers' | 'nDecoderLayers' | 'maxLen';

/**
 * No RoPE scaling: the fields a config without one holds (the llama3 numbers at Llama 3.1's, unused). A config read
 * from elsewhere with no scaling takes these, so two such configs compare equal.
 */
export const ROPE_SCALING_OFF = {
  ropeScaling: 'none',
  ropeScalingFactor: 1,
  ropeLowFreqFactor: 1,
  ropeHighFreqFactor: 4,
  ropeOriginalMaxLen: 8192,
} as const satisfies Partial<ModelConfig>;

/**
 * The options of today's transformers, all off: the models of 2017 and 2019 as they were. A
 * run.json written before these fields existed reads as these values (`completeConfig`).
 */
const TODAY_OFF = {
  ropeTheta: 10000,
  rotaryFraction: 1,
  normType: 'layernorm',
  normScale: true,
  qkNorm: false,
  attnSoftCap: 0,
  logitSoftCap: 0,
  slidingWindow: 0,
  parallelResidual: false,
  embedNorm: false,
  headDim: 0,
  attnScale: 0,
  postNorms: false,
  globalEvery: 0,
  ropeLocalTheta: 0,
  ...ROPE_SCALING_OFF,
} as const satisfies Partial<ModelConfig>;

const PAPER: Omit<ModelConfig, SizeField | 'nKvHeads'> = {
  kind: 'encoder-decoder',
  dropout: 0.1,
  norm: 'post',
  positional: 'sinusoidal',
  ...TODAY_OFF,
  activation: 'relu',
  tieEmbeddings: false,
  bias: true,
  qkvBias: true,
  attnOutBias: true,
  mlpBias: true,
  layerNormEps: 1e-5,
  embedScale: true,
  labelSmoothing: 0.1,
};

const NANOGPT: Omit<ModelConfig, SizeField | 'nKvHeads'> = {
  kind: 'decoder-only',
  dropout: 0.0,
  norm: 'pre',
  positional: 'learned',
  ...TODAY_OFF,
  activation: 'gelu',
  tieEmbeddings: true,
  bias: true,
  qkvBias: true,
  attnOutBias: true,
  mlpBias: true,
  layerNormEps: 1e-5,
  embedScale: false,
  labelSmoothing: 0,
};

/**
 * Llama's decoder (Touvron et al. 2023; SmolLM2, TinyLlama, Mistral are the same shape): RoPE,
 * RMSNorm with a scale, SwiGLU, grouped-query attention (nKvHeads in the sizes), no biases,
 * untied output.
 */
const LLAMA: Omit<ModelConfig, SizeField | 'nKvHeads'> = {
  ...NANOGPT,
  positional: 'rope',
  normType: 'rmsnorm',
  activation: 'swiglu',
  tieEmbeddings: false,
  bias: false,
  qkvBias: false,
  attnOutBias: false,
  mlpBias: false,
  layerNormEps: 1e-5,
};

/**
 * nanochat's decoder (Karpathy 2025, `nanochat/gpt.py`): RoPE, RMSNorm without weights (also
 * right after the embeddings), QK-norm, ReLU², no biases, untied output, logits soft-capped at
 * 15. Its optimizer (Muon for the matrices, AdamW for the rest) is the optimizer's choice.
 */
const NANOCHAT: Omit<ModelConfig, SizeField | 'nKvHeads'> = {
  ...LLAMA,
  activation: 'relu2',
  normScale: false,
  qkNorm: true,
  logitSoftCap: 15,
  embedNorm: true,
};

/** Sizes of the encoder-decoder presets; `base` is the paper's base model (N 6, d 512, h 8, d_ff 2048). */
const ENCODER_DECODER_SIZES: Readonly<
  Record<string, Pick<ModelConfig, 'dModel' | 'nHeads' | 'dFF' | 'nEncoderLayers' | 'nDecoderLayers' | 'maxLen'>>
> = {
  tiny: { dModel: 64, nHeads: 4, dFF: 256, nEncoderLayers: 2, nDecoderLayers: 2, maxLen: 64 },
  small: { dModel: 128, nHeads: 4, dFF: 512, nEncoderLayers: 3, nDecoderLayers: 3, maxLen: 128 },
  base: { dModel: 512, nHeads: 8, dFF: 2048, nEncoderLayers: 6, nDecoderLayers: 6, maxLen: 256 },
};

type DecoderSize = Pick<ModelConfig, 'dModel' | 'nHeads' | 'dFF' | 'nDecoderLayers' | 'maxLen' | 'dropout'> &
  Partial<Pick<ModelConfig, 'nKvHeads'>>;

/** Today's decoders at the sizes of `tiny` and `small` (in DECODER_ONLY_PRESETS after nanoGPT's). */
export const MODERN_PRESETS: Readonly<
  Record<string, { arch: Omit<ModelConfig, SizeField | 'nKvHeads'>; size: DecoderSize }>
> = {
  'llama-tiny': {
    arch: LLAMA,
    size: { dModel: 64, nHeads: 4, nKvHeads: 2, dFF: 176, nDecoderLayers: 2, maxLen: 64, dropout: 0 },
  },
  'llama-small': {
    arch: LLAMA,
    size: { dModel: 128, nHeads: 4, nKvHeads: 2, dFF: 344, nDecoderLayers: 4, maxLen: 64, dropout: 0 },
  },
  'nanochat-tiny': {
    arch: NANOCHAT,
    size: { dModel: 64, nHeads: 4, dFF: 256, nDecoderLayers: 2, maxLen: 64, dropout: 0 },
  },
  'nanochat-small': {
    arch: NANOCHAT,
    size: { dModel: 128, nHeads: 4, dFF: 512, nDecoderLayers: 4, maxLen: 64, dropout: 0 },
  },
};

/**
 * The decoder-only presets: `gpt` is nanoGPT's GPT-2 small shape, `small` its shakespeare_char
 * CPU config; `llama-*` and `nanochat-*` are today's decoders at the sizes of `tiny` and
 * `small`. A gated feed-forward has three matrices where the others have two, so its dFF is
 * about 2/3 of theirs (rounded to a multiple of 8), keeping the parameter count (as Llama's
 * 8/3·d).
 */
const DECODER_ONLY_PRESETS: Readonly<
  Record<string, { arch: Omit<ModelConfig, SizeField | 'nKvHeads'>; size: DecoderSize }>
> = {
  tiny: { arch: NANOGPT, size: { dModel: 64, nHeads: 4, dFF: 256, nDecoderLayers: 2, maxLen: 64, dropout: 0 } },
  small: { arch: NANOGPT, size: { dModel: 128, nHeads: 4, dFF: 512, nDecoderLayers: 4, maxLen: 64, dropout: 0 } },
  gpt: { arch: NANOGPT, size: { dModel: 768, nHeads: 12, dFF: 3072, nDecoderLayers: 12, maxLen: 1024, dropout: 0 } },
  ...MODERN_PRESETS,
};

/**
 * The presets the engine can build for a kind, in order. The names people choose among are
 * declared in src/protocol/data.ts `MODEL_PRESETS` (the engine imports nothing); a unit test
 * keeps the two equal.
 */
export function presetNames(kind: ModelKind): readonly string[] {
  return Object.keys(kind === 'encoder-decoder' ? ENCODER_DECODER_SIZES : DECODER_ONLY_PRESETS);
}

/**
 * A preset config. Vocabulary sizes come from the tokenizer, so they are arguments. Every
 * encoder-decoder preset is the paper's architecture; the decoder-only presets are nanoGPT's
 * (`tiny`, `small`, `gpt`), Llama's (`llama-*`) and nanochat's (`nanochat-*`).
 */
export function presetConfig(
  kind: ModelKind,
  preset: string,
  vocabSize: number,
  srcVocabSize = vocabSize,
): ModelConfig {
  if (kind === 'encoder-decoder') {
    const s = Object.hasOwn(ENCODER_DECODER_SIZES, preset) ? ENCODER_DECODER_SIZES[preset] : undefined;
    if (!s) throw unknownPreset(kind, preset);
    return validateConfig({ ...PAPER, ...s, nKvHeads: 0, kind, vocabSize, srcVocabSize });
  }
  const p = Object.hasOwn(DECODER_ONLY_PRESETS, preset) ? DECODER_ONLY_PRESETS[preset] : undefined;
  if (!p) throw unknownPreset(kind, preset);
  return validateConfig({
    ...p.arch,
    nKvHeads: 0,
    ...p.size,
    kind,
    vocabSize,
    srcVocabSize: 0,
    nEncoderLayers: 0,
  });
}

function unknownPreset(kind: ModelKind, preset: string): EngineError {
  return new EngineError(
    'config/invalid',
    `Unknown preset "${preset}" for ${kind}; choose one of ${presetNames(kind).join(', ')}.`,
  );
}

const FIELD_KINDS: Record<keyof ModelConfig, 'int' | 'number' | 'bool' | readonly string[]> = {
  kind: ['encoder-decoder', 'decoder-only'],
  srcVocabSize: 'int',
  vocabSize: 'int',
  dModel: 'int',
  nHeads: 'int',
  dFF: 'int',
  nEncoderLayers: 'int',
  nDecoderLayers: 'int',
  maxLen: 'int',
  dropout: 'number',
  norm: ['post', 'pre'],
  positional: POSITIONALS,
  ropeTheta: 'number',
  rotaryFraction: 'number',
  activation: ACTIVATIONS,
  tieEmbeddings: 'bool',
  bias: 'bool',
  qkvBias: 'bool',
  attnOutBias: 'bool',
  mlpBias: 'bool',
  layerNormEps: 'number',
  normType: NORM_TYPES,
  normScale: 'bool',
  qkNorm: 'bool',
  nKvHeads: 'int',
  attnSoftCap: 'number',
  logitSoftCap: 'number',
  slidingWindow: 'int',
  parallelResidual: 'bool',
  embedNorm: 'bool',
  embedScale: 'bool',
  headDim: 'int',
  attnScale: 'number',
  postNorms: 'bool',
  globalEvery: 'int',
  ropeLocalTheta: 'number',
  ropeScaling: ROPE_SCALINGS,
  ropeScalingFactor: 'number',
  ropeLowFreqFactor: 'number',
  ropeHighFreqFactor: 'number',
  ropeOriginalMaxLen: 'int',
  labelSmoothing: 'number',
};

/** The names of every config field, for `--set` and settings validation. */
export const CONFIG_FIELDS = Object.keys(FIELD_KINDS) as (keyof ModelConfig)[];

/** Smallest vocabulary: PAD, BOS, EOS, UNK and at least one real token. */
export const MIN_VOCAB = 5;

/**
 * Checks every field and every relation between fields; throws EngineError
 * ('config/invalid') naming the field, the value and the fix. Returns the config, with the
 * fields of today's transformers filled in where an older config lacks them (`completeConfig`).
 */
export function validateConfig(given: ConfigInput): ModelConfig {
  const c = completeConfig(given);
  const bad = (msg: string): never => {
    throw new EngineError('config/invalid', msg);
  };
  for (const key of CONFIG_FIELDS) {
    const kind = FIELD_KINDS[key];
    const v = (c as unknown as Record<string, unknown>)[key];
    if (kind === 'int') {
      if (typeof v !== 'number' || !Number.isInteger(v)) bad(`${key} must be an integer, got ${String(v)}.`);
    } else if (kind === 'number') {
      if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${key} must be a finite number, got ${String(v)}.`);
    } else if (kind === 'bool') {
      if (typeof v !== 'boolean') bad(`${key} must be true or false, got ${String(v)}.`);
    } else if (typeof v !== 'string' || !kind.includes(v)) {
      bad(`${key} must be one of ${kind.join(', ')}, got ${String(v)}.`);
    }
  }
  const positive: (keyof ModelConfig)[] = ['vocabSize', 'dModel', 'nHeads', 'dFF', 'nDecoderLayers', 'maxLen'];
  for (const key of positive) {
    const v = c[key] as number;
    if (v <= 0) bad(`${key} must be greater than 0, got ${v}; set a positive size.`);
  }
  // Bounds before anything loops over or allocates a size (the head suggestion below, the
  // model's plan, the estimate): each field alone, then the parameter count in closed form.
  const sizeProblem = configSizeProblem(c);
  if (sizeProblem) bad(sizeProblem);
  if (c.headDim === 0 && c.dModel % c.nHeads !== 0) {
    const near = divisorsNear(c.dModel, c.nHeads);
    bad(
      `dModel ${c.dModel} is not divisible by nHeads ${c.nHeads}; each head needs dModel / nHeads ` +
        `channels. Use nHeads ${near} or a dModel that is a multiple of ${c.nHeads}.`,
    );
  }
  if (c.vocabSize < MIN_VOCAB)
    bad(
      `vocabSize ${c.vocabSize} is too small: the four special tokens (PAD, BOS, EOS, UNK) need at ` +
        `least ${MIN_VOCAB}; train the tokenizer on more text or raise the vocabulary size.`,
    );
  if (c.kind === 'encoder-decoder') {
    if (c.srcVocabSize < MIN_VOCAB)
      bad(`srcVocabSize ${c.srcVocabSize} is too small: need at least ${MIN_VOCAB} (special tokens plus text).`);
    if (c.nEncoderLayers <= 0)
      bad(`nEncoderLayers must be greater than 0 for an encoder-decoder, got ${c.nEncoderLayers}.`);
  } else if (c.nEncoderLayers !== 0 || c.srcVocabSize !== 0) {
    bad(
      `A decoder-only model has no encoder: set nEncoderLayers and srcVocabSize to 0 (got ` +
        `${c.nEncoderLayers} and ${c.srcVocabSize}).`,
    );
  }
  if (c.dropout < 0 || c.dropout >= 1) bad(`dropout must be in [0, 1), got ${c.dropout}.`);
  if (c.labelSmoothing < 0 || c.labelSmoothing >= 1) bad(`labelSmoothing must be in [0, 1), got ${c.labelSmoothing}.`);
  if (c.layerNormEps <= 0) bad(`layerNormEps must be greater than 0, got ${c.layerNormEps}.`);
  if (c.positional === 'sinusoidal' && c.dModel % 2 !== 0)
    bad(`Sinusoidal positions pair sin/cos channels, so dModel must be even; got ${c.dModel}.`);
  validateTodayOptions(c, bad);
  return c;
}

/** The relations of the options of today's transformers (`validateConfig` checks each field's type first). */
function validateTodayOptions(c: ModelConfig, bad: (msg: string) => never): void {
  if (c.nKvHeads < 0) bad(`nKvHeads must be ≥ 0 (0 = as many as nHeads), got ${c.nKvHeads}.`);
  if (c.nKvHeads > c.nHeads)
    bad(`nKvHeads ${c.nKvHeads} is more than nHeads ${c.nHeads}; each key/value head serves one or more query heads.`);
  if (c.nKvHeads > 0 && c.nHeads % c.nKvHeads !== 0) {
    const ok = [];
    for (let k = 1; k <= c.nHeads; k++) if (c.nHeads % k === 0) ok.push(k);
    bad(
      `nHeads ${c.nHeads} is not divisible by nKvHeads ${c.nKvHeads}; each key/value head serves nHeads / nKvHeads ` +
        `query heads. Use nKvHeads ${ok.join(', ')}.`,
    );
  }
  if (c.ropeTheta <= 0) bad(`ropeTheta must be greater than 0, got ${c.ropeTheta}; Llama 2 uses 10000.`);
  if (c.rotaryFraction <= 0 || c.rotaryFraction > 1)
    bad(`rotaryFraction must be in (0, 1], got ${c.rotaryFraction}; 1 rotates every channel, Pythia rotates 0.25.`);
  if (c.positional === 'rope') {
    const D = headSize(c);
    const R = D * c.rotaryFraction;
    if (!Number.isInteger(R) || R % 2 !== 0 || R < 2)
      bad(
        `rotaryFraction ${c.rotaryFraction} rotates ${R} of each head's ${D} channels; RoPE rotates channels in ` +
          `pairs, so dModel / nHeads × rotaryFraction must be an even whole number ` +
          `(try ${evenFraction(D, c.rotaryFraction)}).`,
      );
  }
  if (c.positional === 'alibi' && c.kind === 'encoder-decoder')
    bad(`ALiBi is a bias of causal self-attention here; the encoder-decoder takes rope, sinusoidal, learned or none.`);
  if (c.normType === 'layernorm' && !c.normScale)
    bad(
      `normScale false (a norm without a learned scale) needs normType rmsnorm; ` +
        `set normType rmsnorm or normScale true.`,
    );
  if (c.attnSoftCap < 0) bad(`attnSoftCap must be ≥ 0 (0 = off), got ${c.attnSoftCap}; Gemma 2 uses 50.`);
  if (c.logitSoftCap < 0) bad(`logitSoftCap must be ≥ 0 (0 = off), got ${c.logitSoftCap}; nanochat uses 15.`);
  if (c.slidingWindow < 0) bad(`slidingWindow must be ≥ 0 (0 = the whole context), got ${c.slidingWindow}.`);
  if (c.slidingWindow > c.maxLen)
    bad(
      `slidingWindow ${c.slidingWindow} is larger than the context maxLen ${c.maxLen}, so it would mask nothing; ` +
        `set slidingWindow below ${c.maxLen}, or 0 for no window.`,
    );
  if (c.parallelResidual && c.norm !== 'pre')
    bad(
      `parallelResidual needs norm pre (attention and MLP both read norm(x)); set norm pre or parallelResidual false.`,
    );
  if (c.headDim < 0) bad(`headDim must be ≥ 0 (0 = dModel / nHeads), got ${c.headDim}.`);
  if (c.attnScale < 0) bad(`attnScale must be ≥ 0 (0 = 1 / √headDim), got ${c.attnScale}.`);
  if (c.postNorms && c.norm !== 'pre')
    bad(`postNorms (Gemma's sandwich norms) needs norm pre; set norm pre or postNorms false.`);
  if (c.postNorms && c.parallelResidual)
    bad(`postNorms with parallelResidual is not built (no model uses both); set one of them false.`);
  if (c.globalEvery < 0) bad(`globalEvery must be ≥ 0 (0 = every layer alike), got ${c.globalEvery}.`);
  if (c.globalEvery > 0 && c.slidingWindow === 0)
    bad(
      `globalEvery ${c.globalEvery} alternates windowed and global layers, so it needs a slidingWindow; ` +
        `set slidingWindow or globalEvery 0.`,
    );
  if (c.ropeLocalTheta < 0) bad(`ropeLocalTheta must be ≥ 0 (0 = ropeTheta), got ${c.ropeLocalTheta}.`);
  if (c.ropeScaling !== 'none' && c.positional !== 'rope')
    bad(`ropeScaling ${c.ropeScaling} scales RoPE's frequencies; set positional rope or ropeScaling none.`);
  if (!(c.ropeScalingFactor >= 1))
    bad(`ropeScalingFactor must be ≥ 1 (1 = no scaling), got ${c.ropeScalingFactor}; Llama 3.1 uses 8.`);
  if (c.ropeScaling === 'llama3') {
    if (!(c.ropeLowFreqFactor > 0) || !(c.ropeHighFreqFactor > c.ropeLowFreqFactor))
      bad(
        `llama3 RoPE scaling needs 0 < ropeLowFreqFactor < ropeHighFreqFactor, got ${c.ropeLowFreqFactor} and ` +
          `${c.ropeHighFreqFactor}; Llama 3.1 uses 1 and 4.`,
      );
    if (c.ropeOriginalMaxLen < 1)
      bad(`llama3 RoPE scaling needs ropeOriginalMaxLen ≥ 1, got ${c.ropeOriginalMaxLen}; Llama 3.1 uses 8192.`);
  }
}

/**
 * The sliding window of decoder layer i (0-based): slidingWindow, except the global layers of a model with
 * globalEvery (every globalEvery-th layer, Gemma 3's one in six), which see the whole context (0).
 */
export function layerWindow(c: Pick<ModelConfig, 'slidingWindow' | 'globalEvery'>, i: number): number {
  if (c.slidingWindow === 0) return 0;
  return c.globalEvery > 0 && (i + 1) % c.globalEvery === 0 ? 0 : c.slidingWindow;
}

/**
 * RoPE's θ in decoder layer i: ropeLocalTheta in a windowed layer of a model with globalEvery (when set), else
 * ropeTheta.
 */
export function layerRopeTheta(
  c: Pick<ModelConfig, 'ropeTheta' | 'ropeLocalTheta' | 'slidingWindow' | 'globalEvery'>,
  i: number,
): number {
  return c.globalEvery > 0 && c.ropeLocalTheta > 0 && layerWindow(c, i) > 0 ? c.ropeLocalTheta : c.ropeTheta;
}

/**
 * Whether ropeScaling applies in decoder layer i: in every layer, except the windowed (local) layers of a model
 * with globalEvery, which keep the plain frequencies (Gemma 3 scales its global layers only).
 */
export function layerRopeScaled(c: Pick<ModelConfig, 'slidingWindow' | 'globalEvery'>, i: number): boolean {
  return !(c.globalEvery > 0 && layerWindow(c, i) > 0);
}

/** Channels of each attention head: headDim, or dModel / nHeads when it is 0. */
export function headSize(c: Pick<ModelConfig, 'dModel' | 'nHeads' | 'headDim'>): number {
  return c.headDim > 0 ? c.headDim : c.dModel / c.nHeads;
}

/** The number of key/value heads: nKvHeads, or nHeads when it is 0. */
export function kvHeads(c: Pick<ModelConfig, 'nHeads' | 'nKvHeads'>): number {
  return c.nKvHeads > 0 ? c.nKvHeads : c.nHeads;
}

/** The rotary fraction nearest `f` whose rotated channels of a head of D are an even whole number ≥ 2. */
function evenFraction(D: number, f: number): number {
  const pairs = Math.max(1, Math.min(Math.floor(D / 2), Math.round((D * f) / 2)));
  return (2 * pairs) / D;
}

/** The fields added for today's transformers; a config of an older version lacks them. */
export type TodayField =
  | 'ropeTheta'
  | 'rotaryFraction'
  | 'qkvBias'
  | 'attnOutBias'
  | 'mlpBias'
  | 'normType'
  | 'normScale'
  | 'qkNorm'
  | 'nKvHeads'
  | 'attnSoftCap'
  | 'logitSoftCap'
  | 'slidingWindow'
  | 'parallelResidual'
  | 'embedNorm'
  | 'headDim'
  | 'attnScale'
  | 'postNorms'
  | 'globalEvery'
  | 'ropeLocalTheta'
  | 'ropeScaling'
  | 'ropeScalingFactor'
  | 'ropeLowFreqFactor'
  | 'ropeHighFreqFactor'
  | 'ropeOriginalMaxLen';

/** A config that may lack the fields of today's transformers (what `validateConfig` and `completeConfig` accept). */
export type ConfigInput = Omit<ModelConfig, TodayField> & Partial<Pick<ModelConfig, TodayField>>;

/**
 * A config as a run.json, a checkpoint or a settings object of any version holds it: the
 * fields added for today's transformers are filled with the values that keep the model what
 * it was (nKvHeads 0 = as many as nHeads, the per-part biases = `bias`, every option off). Fields already
 * present are kept as they are, for `validateConfig` to judge. Returns a new object.
 */
export function completeConfig(raw: ConfigInput): ModelConfig {
  const r = raw as Record<string, unknown>;
  if (typeof r !== 'object' || r === null) return raw as ModelConfig;
  const out: Record<string, unknown> = { ...TODAY_OFF, ...r };
  if (out['nKvHeads'] === undefined) out['nKvHeads'] = 0;
  for (const k of ['qkvBias', 'attnOutBias', 'mlpBias']) if (out[k] === undefined) out[k] = r['bias'];
  return out as unknown as ModelConfig;
}

/**
 * Largest value of each size field: far past any model this lab builds, small enough that every loop over one ends at
 * once.
 */
export const CONFIG_LIMITS: Readonly<
  Record<
    'vocabSize' | 'srcVocabSize' | 'dModel' | 'nHeads' | 'dFF' | 'nEncoderLayers' | 'nDecoderLayers' | 'maxLen',
    number
  >
> = {
  vocabSize: 1 << 22,
  srcVocabSize: 1 << 22,
  dModel: 1 << 16,
  nHeads: 1 << 12,
  dFF: 1 << 18,
  nEncoderLayers: 1024,
  nDecoderLayers: 1024,
  maxLen: 1 << 20,
};

/** Most parameters a model may have: 8 GiB of float32, past GPT-2 XL's 1.56 billion. */
export const MAX_PARAMS = 2 ** 31;

/**
 * An upper bound of a config's parameter count in closed form (every matrix and vector of
 * both stacks, embeddings, learned positions and an untied head), so a config can be refused
 * in O(1) before the model is planned layer by layer.
 */
export function paramsUpperBound(
  c: Pick<
    ModelConfig,
    'vocabSize' | 'srcVocabSize' | 'dModel' | 'dFF' | 'nEncoderLayers' | 'nDecoderLayers' | 'maxLen'
  > &
    Partial<Pick<ModelConfig, 'activation'>>,
): number {
  const d = c.dModel;
  const gated = c.activation !== undefined && GATED_ACTIVATIONS.includes(c.activation);
  const ffn = (gated ? 3 : 2) * d * c.dFF + 2 * c.dFF + d;
  const attn = 4 * d * d + 4 * d;
  const norms = 3 * 2 * d;
  const decoder = c.nDecoderLayers * (2 * attn + ffn + norms);
  const encoder = c.nEncoderLayers * (attn + ffn + norms);
  const embeddings = (2 * c.vocabSize + c.srcVocabSize) * d + c.vocabSize + 2 * c.maxLen * d + 4 * d;
  return decoder + encoder + embeddings;
}

/** Why a config's sizes are out of bounds (one field too large, or too many parameters), or null; O(1). */
export function configSizeProblem(c: ModelConfig): string | null {
  for (const [key, max] of Object.entries(CONFIG_LIMITS) as [keyof typeof CONFIG_LIMITS, number][]) {
    const v = c[key];
    if (v > max) return `${key} ${v} is larger than the ${max} Attention Lab allows; set ${key} to at most ${max}.`;
  }
  if (c.nHeads > c.dModel)
    return (
      `nHeads ${c.nHeads} is more than dModel ${c.dModel}; each head needs at least one ` +
      `channel, so use at most ${c.dModel} heads.`
    );
  const params = paramsUpperBound(c);
  if (params > MAX_PARAMS) {
    return (
      `This model would have about ${(params / 1e9).toFixed(1)} billion ` +
      `parameters, more than the ${(MAX_PARAMS / 1e9).toFixed(2)} billion (` +
      `${(MAX_PARAMS * 4) / 2 ** 30} GiB of float32) Attention Lab holds; ` +
      `use fewer layers (nDecoderLayers ${c.nDecoderLayers}` +
      `${c.nEncoderLayers ? `, nEncoderLayers ${c.nEncoderLayers}` : ''}), a ` +
      `smaller dModel (${c.dModel}) or dFF (${c.dFF}), or a smaller ` +
      `vocabulary or context.`
    );
  }
  return null;
}

/**
 * The divisor of `d` nearest `h` (the smaller on a tie), from the divisor pairs up to √d: at most 256 steps for d ≤
 * 2^16.
 */
function divisorsNear(d: number, h: number): number {
  let best = 1;
  const closer = (k: number): void => {
    if (Math.abs(k - h) < Math.abs(best - h) || (Math.abs(k - h) === Math.abs(best - h) && k < best)) best = k;
  };
  for (let k = 1; k * k <= d; k++) {
    if (d % k !== 0) continue;
    closer(k);
    closer(d / k);
  }
  return best;
}

/**
 * Applies `--set key=value` style overrides: strings are parsed by the field's type
 * ("true"/"false", numbers, enum names). Unknown fields and unparsable values throw
 * EngineError('config/invalid') naming the valid choices. Validates the result.
 */
export function applyOverrides(
  c: ModelConfig,
  overrides: Readonly<Record<string, string | number | boolean>>,
): ModelConfig {
  const out: Record<string, unknown> = { ...c };
  for (const [key, raw] of Object.entries(overrides)) {
    const kind = (FIELD_KINDS as Record<string, (typeof FIELD_KINDS)[keyof ModelConfig] | undefined>)[key];
    if (!kind)
      throw new EngineError(
        'config/invalid',
        `Unknown config field "${key}"; valid fields are ${CONFIG_FIELDS.join(', ')}.`,
      );
    let v: unknown = raw;
    if (typeof raw === 'string') {
      if (kind === 'int' || kind === 'number') v = raw.trim() === '' ? NaN : Number(raw);
      else if (kind === 'bool') v = raw === 'true' ? true : raw === 'false' ? false : raw;
    }
    if ((kind === 'int' || kind === 'number') && (typeof v !== 'number' || Number.isNaN(v))) {
      throw new EngineError('config/invalid', `${key} must be a number, got "${String(raw)}".`);
    }
    if (kind === 'bool' && typeof v !== 'boolean')
      throw new EngineError('config/invalid', `${key} must be true or false, got "${String(raw)}".`);
    out[key] = v;
  }
  return validateConfig(out as unknown as ModelConfig);
}
