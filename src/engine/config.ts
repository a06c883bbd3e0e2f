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
export const ACTIVATIONS = ['relu', 'gelu', 'geluTanh'] as const;

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
  readonly positional: 'sinusoidal' | 'learned';
  readonly activation: Activation;
  /** Output projection shares the (target) embedding matrix. */
  readonly tieEmbeddings: boolean;
  /** Biases in linear layers and LayerNorms. */
  readonly bias: boolean;
  readonly layerNormEps: number;
  /** Multiply embeddings by √d_model (the paper, §3.4). */
  readonly embedScale: boolean;
  /** Label smoothing ε of the training loss (the paper uses 0.1). */
  readonly labelSmoothing: number;
}

const PAPER: Omit<
  ModelConfig,
  'srcVocabSize' | 'vocabSize' | 'dModel' | 'nHeads' | 'dFF' | 'nEncoderLayers' | 'nDecoderLayers' | 'maxLen'
> = {
  kind: 'encoder-decoder',
  dropout: 0.1,
  norm: 'post',
  positional: 'sinusoidal',
  activation: 'relu',
  tieEmbeddings: false,
  bias: true,
  layerNormEps: 1e-5,
  embedScale: true,
  labelSmoothing: 0.1,
};

const NANOGPT: Omit<
  ModelConfig,
  'srcVocabSize' | 'vocabSize' | 'dModel' | 'nHeads' | 'dFF' | 'nEncoderLayers' | 'nDecoderLayers' | 'maxLen'
> = {
  kind: 'decoder-only',
  dropout: 0.0,
  norm: 'pre',
  positional: 'learned',
  activation: 'gelu',
  tieEmbeddings: true,
  bias: true,
  layerNormEps: 1e-5,
  embedScale: false,
  labelSmoothing: 0,
};

/** Sizes of the encoder-decoder presets; `base` is the paper's base model (N 6, d 512, h 8, d_ff 2048). */
const ENCODER_DECODER_SIZES: Readonly<
  Record<string, Pick<ModelConfig, 'dModel' | 'nHeads' | 'dFF' | 'nEncoderLayers' | 'nDecoderLayers' | 'maxLen'>>
> = {
  tiny: { dModel: 64, nHeads: 4, dFF: 256, nEncoderLayers: 2, nDecoderLayers: 2, maxLen: 64 },
  small: { dModel: 128, nHeads: 4, dFF: 512, nEncoderLayers: 3, nDecoderLayers: 3, maxLen: 128 },
  base: { dModel: 512, nHeads: 8, dFF: 2048, nEncoderLayers: 6, nDecoderLayers: 6, maxLen: 256 },
};

/** Sizes of the decoder-only presets: `gpt` is nanoGPT's GPT-2 small shape, `small` its shakespeare_char CPU config. */
const DECODER_ONLY_SIZES: Readonly<
  Record<string, Pick<ModelConfig, 'dModel' | 'nHeads' | 'dFF' | 'nDecoderLayers' | 'maxLen' | 'dropout'>>
> = {
  tiny: { dModel: 64, nHeads: 4, dFF: 256, nDecoderLayers: 2, maxLen: 64, dropout: 0 },
  small: { dModel: 128, nHeads: 4, dFF: 512, nDecoderLayers: 4, maxLen: 64, dropout: 0 },
  gpt: { dModel: 768, nHeads: 12, dFF: 3072, nDecoderLayers: 12, maxLen: 1024, dropout: 0 },
};

/**
 * The presets the engine can build for a kind, in order. The names people choose among are
 * declared in src/protocol/data.ts `MODEL_PRESETS` (the engine imports nothing); a unit test
 * keeps the two equal.
 */
export function presetNames(kind: ModelKind): readonly string[] {
  return Object.keys(kind === 'encoder-decoder' ? ENCODER_DECODER_SIZES : DECODER_ONLY_SIZES);
}

/**
 * A preset config. Vocabulary sizes come from the tokenizer, so they are arguments. Every
 * decoder-only preset is nanoGPT's architecture; every encoder-decoder preset the paper's.
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
    return validateConfig({ ...PAPER, ...s, kind, vocabSize, srcVocabSize });
  }
  const s = Object.hasOwn(DECODER_ONLY_SIZES, preset) ? DECODER_ONLY_SIZES[preset] : undefined;
  if (!s) throw unknownPreset(kind, preset);
  return validateConfig({ ...NANOGPT, ...s, kind, vocabSize, srcVocabSize: 0, nEncoderLayers: 0 });
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
  positional: ['sinusoidal', 'learned'],
  activation: ACTIVATIONS,
  tieEmbeddings: 'bool',
  bias: 'bool',
  layerNormEps: 'number',
  embedScale: 'bool',
  labelSmoothing: 'number',
};

/** The names of every config field, for `--set` and settings validation. */
export const CONFIG_FIELDS = Object.keys(FIELD_KINDS) as (keyof ModelConfig)[];

/** Smallest vocabulary: PAD, BOS, EOS, UNK and at least one real token. */
export const MIN_VOCAB = 5;

/**
 * Checks every field and every relation between fields; throws EngineError
 * ('config/invalid') naming the field, the value and the fix. Returns the config.
 */
export function validateConfig(c: ModelConfig): ModelConfig {
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
  if (c.dModel % c.nHeads !== 0) {
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
  return c;
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
  >,
): number {
  const d = c.dModel;
  const ffn = 2 * d * c.dFF + c.dFF + d;
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
