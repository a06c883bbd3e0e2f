/**
 * Today's small models as Hugging Face saves them, mapped onto our Transformer: a family's
 * `config.json` becomes our ModelConfig ({@link configFromHfJson}) and its state_dict names
 * become our parameters' ({@link hfFamilyTensors}), with the one reshape a family needs.
 * Pure, and direction-free: import reads through it (importLayouts.ts); hfLlama.ts keeps the
 * names of our own Llama export, whose config.json carries an `attention_lab` block.
 *
 * | family (`model_type`) | checkpoints | what differs from Llama |
 * |---|---|---|
 * | `llama` | SmolLM2, TinyLlama, Llama 2/3.x | — (Llama 3.1/3.2: llama3 rope scaling) |
 * | `qwen2` | Qwen2, Qwen2.5 | q/k/v biases; use_sliding_window must be false |
 * | `qwen3` | Qwen3 | q_norm/k_norm RMSNorm over each head (weights [head_dim]), head_dim set apart |
 * | `mistral` | Mistral | sliding_window → slidingWindow (the same rule, see below) |
 * | `gpt_neox` | Pythia, GPT-NeoX | LayerNorm with bias, exact GELU, partial rotary, parallel residual, fused qkv |
 * | `gemma3_text` | Gemma 3 (270M, 1B; 4B and up: their text model) | see below |
 *
 * GPT-NeoX fuses q, k and v in one `query_key_value` whose rows are laid out per head,
 * [H, 3, D] (transformers views its output as [.., H, 3·D] and chunks the last axis in
 * three), so our q is rows {h·3D + d}, k {h·3D + D + d}, v {h·3D + 2D + d}: a {@link RowSplit}.
 *
 * Sliding window: transformers masks key j for query i unless j > i − sliding_window
 * (masking_utils.sliding_window_overlay), i.e. i − j < W: our slidingWindow's rule, so the
 * value is taken as it is. A window at or past the context masks nothing and is dropped.
 *
 * RoPE: `rope_parameters` (transformers 5) or `rope_theta` + `rope_scaling` (the files on the
 * Hub). The rope types default, linear and llama3 are built (config ropeScaling; Llama 3.1 and 3.2 are llama3);
 * dynamic, yarn, longrope and any other are refused naming the key and value.
 *
 * Gemma 3 (Gemma3ForCausalLM): embeddings scaled by √hidden (embedScale), GeGLU with the tanh GELU, QK-norm,
 * head_dim apart from hidden / heads, scores scaled by query_pre_attn_scalar^−½ (attnScale), a norm before and
 * after each sublayer (input_layernorm, post_attention_layernorm, pre_feedforward_layernorm,
 * post_feedforward_layernorm → ln_1, ln_1_post, ln_2, ln_2_post: postNorms), local layers with a window and
 * rope_local_base_freq, every n-th layer global with rope_theta (layer_types or sliding_window_pattern →
 * globalEvery; transformers' window is i − j < sliding_window, ours). Gemma's RMSNorm multiplies by 1 + w where
 * ours multiplies by w, so every norm weight (q_norm and k_norm too) is read with 1 added ({@link HfTensor.add};
 * exact in float32, as transformers computes 1 + w there). Linear rope scaling (4B and up) scales the global layers.
 *
 * Leaves out: files, Gemma 3's image-and-text models (model_type gemma3: refused), Gemma 1 and 2, Meta's
 * original (permuted q/k) checkpoints, tokenizers.
 */

import type { Activation, ModelConfig } from '../config';
import { ROPE_SCALING_OFF, validateConfig } from '../config';
import { EngineError } from '../errors';

/** The families {@link configFromHfJson} maps, by their config.json `model_type`. */
export const HF_FAMILIES = {
  llama: { architecture: 'LlamaForCausalLM', label: 'Llama' },
  qwen2: { architecture: 'Qwen2ForCausalLM', label: 'Qwen2' },
  qwen3: { architecture: 'Qwen3ForCausalLM', label: 'Qwen3' },
  mistral: { architecture: 'MistralForCausalLM', label: 'Mistral' },
  gpt_neox: { architecture: 'GPTNeoXForCausalLM', label: 'GPT-NeoX' },
  gemma3_text: { architecture: 'Gemma3ForCausalLM', label: 'Gemma 3' },
} as const;

/** One of {@link HF_FAMILIES}. */
export type HfFamily = keyof typeof HF_FAMILIES;

/** Families that are known but not built yet, with what to say. */
const NOT_YET: Readonly<Record<string, string>> = {
  gemma2: 'Gemma 2',
  gemma: 'Gemma',
};

/** The model a run was imported from, as run.json keeps it (`source`). */
export interface HfSource {
  /** The model's own name: "SmolLM2-135M". */
  readonly name: string;
  /** config.json's `architectures[0]`: "LlamaForCausalLM". */
  readonly architecture: string;
  /** config.json's `model_type`. */
  readonly family: HfFamily;
}

/** A family's label for people: "Llama", "GPT-NeoX". */
export function familyLabel(f: HfFamily): string {
  return HF_FAMILIES[f].label;
}

type Json = Readonly<Record<string, unknown>>;

function bad(msg: string): never {
  throw new EngineError('checkpoint/invalid', msg);
}

const show = (v: unknown): string => JSON.stringify(v) ?? String(v);

/**
 * The family of a config.json: its `model_type` (or, without one, its `architectures`); null
 * when it names neither (GPT-2, nanoGPT and our own files go their own way). A model_type that
 * is not one of {@link HF_FAMILIES} is refused naming it, unless it is `gpt2`.
 */
export function hfFamilyOf(cfg: Json | null): HfFamily | null {
  if (!cfg) return null;
  const type = cfg['model_type'];
  const arch = Array.isArray(cfg['architectures']) ? (cfg['architectures'] as unknown[]) : [];
  if (type === undefined) {
    const hit = (Object.keys(HF_FAMILIES) as HfFamily[]).find((f) => arch.includes(HF_FAMILIES[f].architecture));
    return hit ?? null;
  }
  if (typeof type === 'string' && Object.hasOwn(HF_FAMILIES, type)) return type as HfFamily;
  if (type === 'gpt2') return null;
  if (type === 'gemma3')
    bad(
      `config.json's model_type is "gemma3": Gemma 3's image-and-text model (its vision_config's SigLIP encoder ` +
        'and projector are not built); import a text-only Gemma3ForCausalLM folder (model_type gemma3_text).',
    );
  if (typeof type === 'string' && Object.hasOwn(NOT_YET, type))
    bad(
      `config.json's model_type is ${show(type)}: ${NOT_YET[type]} is not one of the families this version imports ` +
        `(${familyList()}); it comes in a later version.`,
    );
  return bad(
    `config.json's model_type is ${show(type)}, not a family Attention Lab imports (${familyList()}, and gpt2); ` +
      'convert the model to one of these, or open an issue for the family.',
  );
}

function familyList(): string {
  return Object.keys(HF_FAMILIES).join(', ');
}

/** A config.json field read with its type checked; `dflt` where it is absent or null. */
function reader(cfg: Json): {
  num: (k: string, dflt?: number) => number;
  bool: (k: string, dflt: boolean) => boolean;
} {
  return {
    num: (k, dflt) => {
      const v = cfg[k] ?? dflt;
      if (typeof v !== 'number' || !Number.isFinite(v))
        return bad(`config.json's ${k} is ${v === undefined ? 'missing' : show(v)}; it needs a number there.`);
      return v;
    },
    bool: (k, dflt) => {
      const v = cfg[k] ?? dflt;
      if (typeof v !== 'boolean') return bad(`config.json's ${k} is ${show(v)}, not true or false.`);
      return v;
    },
  };
}

/** The config fields of a RoPE scaling (ROPE_SCALING_OFF for none). */
type RopeScalingConfig = Pick<
  ModelConfig,
  'ropeScaling' | 'ropeScalingFactor' | 'ropeLowFreqFactor' | 'ropeHighFreqFactor' | 'ropeOriginalMaxLen'
>;

/**
 * The scaling that a `rope_parameters` or `rope_scaling` object `o` (at `key`) states: default (none), linear or
 * llama3, with their numbers as modeling_rope_utils reads them; dynamic, yarn, longrope and any other type are
 * refused naming the key and the value.
 */
function scalingFromJson(key: string, o: Json, dflt: string | undefined): RopeScalingConfig {
  const typeKey = o['rope_type'] !== undefined ? 'rope_type' : 'type';
  const type = o['rope_type'] ?? o['type'] ?? dflt;
  const num = (k: string): number => {
    const v = o[k];
    if (typeof v !== 'number' || !Number.isFinite(v))
      return bad(
        `config.json's ${key}.${k} is ${v === undefined ? 'missing' : show(v)}; ${show(type)} RoPE scaling needs it ` +
          'as a number.',
      );
    return v;
  };
  if (type === 'default') return ROPE_SCALING_OFF;
  if (type === 'linear') return { ...ROPE_SCALING_OFF, ropeScaling: 'linear', ropeScalingFactor: num('factor') };
  if (type === 'llama3')
    return {
      ropeScaling: 'llama3',
      ropeScalingFactor: num('factor'),
      ropeLowFreqFactor: num('low_freq_factor'),
      ropeHighFreqFactor: num('high_freq_factor'),
      ropeOriginalMaxLen: num('original_max_position_embeddings'),
    };
  return bad(
    `config.json's ${key}.${typeKey} is ${show(type)}; Attention Lab builds default, linear and llama3 RoPE ` +
      '(dynamic, yarn and longrope change with the length or rescale cos and sin), so this model cannot be imported.',
  );
}

/**
 * The RoPE scaling of a config.json with one kind of layer: `rope_parameters` (transformers 5) or `rope_scaling`
 * (the Hub's files), as our config's fields; types other than default, linear and llama3 refused by name.
 */
export function hfRopeScaling(cfg: Json): RopeScalingConfig {
  const params = cfg['rope_parameters'];
  const scalingJson = cfg['rope_scaling'];
  for (const [key, v] of [
    ['rope_parameters', params],
    ['rope_scaling', scalingJson],
  ] as const)
    if (v !== undefined && v !== null && (typeof v !== 'object' || Array.isArray(v)))
      bad(`config.json's ${key} is ${show(v)}; it must be an object or null.`);
  let scaling: RopeScalingConfig = ROPE_SCALING_OFF;
  if (params !== undefined && params !== null) scaling = scalingFromJson('rope_parameters', params as Json, 'default');
  if (scalingJson !== undefined && scalingJson !== null) {
    const s = scalingFromJson('rope_scaling', scalingJson as Json, undefined);
    if (s.ropeScaling !== 'none') scaling = s;
  }
  return scaling;
}

/** config.json's `rope_scaling` for our config's scaling, as the Hub's files write it; null for none. */
export function hfRopeScalingJson(c: RopeScalingConfig): Json | null {
  if (c.ropeScaling === 'linear') return { rope_type: 'linear', factor: c.ropeScalingFactor };
  if (c.ropeScaling === 'llama3')
    return {
      rope_type: 'llama3',
      factor: c.ropeScalingFactor,
      low_freq_factor: c.ropeLowFreqFactor,
      high_freq_factor: c.ropeHighFreqFactor,
      original_max_position_embeddings: c.ropeOriginalMaxLen,
    };
  return null;
}

/**
 * RoPE's θ, rotary fraction and scaling from `rope_parameters` (transformers 5) or the Hub's `rope_theta` and
 * `rope_scaling`; rope types other than default, linear and llama3 refused by name.
 */
function ropeOf(cfg: Json, family: HfFamily): { theta: number; fraction: number; scaling: RopeScalingConfig } {
  const params = cfg['rope_parameters'];
  const p = (typeof params === 'object' && params !== null ? params : {}) as Json;
  const scaling = hfRopeScaling(cfg);
  const r = reader(cfg);
  const theta =
    typeof p['rope_theta'] === 'number'
      ? (p['rope_theta'] as number)
      : family === 'gpt_neox'
        ? r.num(cfg['rotary_emb_base'] !== undefined ? 'rotary_emb_base' : 'rope_theta', 10000)
        : r.num('rope_theta', 10000);
  const fraction =
    typeof p['partial_rotary_factor'] === 'number'
      ? (p['partial_rotary_factor'] as number)
      : family === 'gpt_neox'
        ? r.num(cfg['rotary_pct'] !== undefined ? 'rotary_pct' : 'partial_rotary_factor', 1)
        : r.num('partial_rotary_factor', 1);
  return { theta, fraction, scaling };
}

const ACTIVATIONS: Readonly<Record<string, Activation>> = {
  gelu: 'gelu',
  gelu_new: 'geluTanh',
  gelu_fast: 'geluTanh',
  gelu_pytorch_tanh: 'geluTanh',
  relu: 'relu',
};

/**
 * Our config from a family's config.json (the layers, heads, sizes and switches; tying as the
 * file says). Throws EngineError('checkpoint/invalid') naming the key and value it cannot take.
 */
export function configFromHfJson(cfg: Json, family: HfFamily): { config: ModelConfig; notes: string[] } {
  if (family === 'gemma3_text') return gemma3Config(cfg);
  const { num, bool } = reader(cfg);
  const notes: string[] = [];
  const C = num('hidden_size');
  const H = num('num_attention_heads');
  const neox = family === 'gpt_neox';
  const Hkv = neox ? H : num('num_key_value_heads', H);
  const headDimCfg = cfg['head_dim'] ?? null;
  if (headDimCfg !== null && (typeof headDimCfg !== 'number' || !Number.isInteger(headDimCfg) || headDimCfg <= 0))
    bad(`config.json's head_dim is ${show(headDimCfg)}; it must be a whole number of channels.`);
  const headDim = headDimCfg === null || headDimCfg === C / H ? 0 : (headDimCfg as number);
  const rope = ropeOf(cfg, family);
  const maxLen = num('max_position_embeddings');
  const act = cfg['hidden_act'] ?? (neox ? 'gelu' : 'silu');
  let activation: Activation;
  if (neox) {
    if (typeof act !== 'string' || !Object.hasOwn(ACTIVATIONS, act))
      bad(
        `config.json's hidden_act is ${show(act)}; Attention Lab's GPT-NeoX takes ` +
          `${Object.keys(ACTIVATIONS).join(', ')}.`,
      );
    activation = ACTIVATIONS[act as string] as Activation;
  } else {
    if (act !== 'silu') bad(`config.json's hidden_act is ${show(act)}; a ${familyLabel(family)} takes silu (SwiGLU).`);
    activation = 'swiglu';
  }
  // Windows: Qwen's layer-wise windows are refused; Mistral's one window is ours.
  let slidingWindow = 0;
  if (family === 'qwen2' || family === 'qwen3') {
    if (bool('use_sliding_window', false))
      bad(
        "config.json's use_sliding_window is true; Attention Lab builds Qwen with full attention in every layer " +
          '(windows on the layers past max_window_layers are not built).',
      );
  } else if (family === 'mistral' && cfg['sliding_window'] !== undefined && cfg['sliding_window'] !== null) {
    const W = num('sliding_window');
    if (W < maxLen) slidingWindow = W;
    else notes.push(`sliding_window ${W} is not less than the context ${maxLen}: it masks nothing, so it is dropped`);
  }
  const types = cfg['layer_types'];
  if (Array.isArray(types)) {
    const other = types.find((t) => t !== 'full_attention' && !(family === 'mistral' && t === 'sliding_attention'));
    if (other !== undefined)
      bad(`config.json's layer_types holds ${show(other)}; Attention Lab builds one kind of attention in every layer.`);
  }
  // Biases: Llama and Mistral say attention_bias (q, k, v and o) and mlp_bias; Qwen2 has q/k/v biases and no
  // others; GPT-NeoX has them everywhere (attention's switchable), LayerNorm's too.
  const attnBias = family === 'qwen2' ? false : bool('attention_bias', neox);
  const qkvBias = family === 'qwen2' ? true : attnBias;
  const mlpBias = neox ? true : family === 'llama' ? bool('mlp_bias', false) : false;
  const config = validateConfig({
    kind: 'decoder-only',
    srcVocabSize: 0,
    vocabSize: num('vocab_size'),
    dModel: C,
    nHeads: H,
    nKvHeads: Hkv === H ? 0 : Hkv,
    headDim,
    dFF: num('intermediate_size'),
    nEncoderLayers: 0,
    nDecoderLayers: num('num_hidden_layers'),
    maxLen,
    dropout: 0,
    norm: 'pre',
    positional: 'rope',
    ropeTheta: rope.theta,
    rotaryFraction: rope.fraction,
    ...rope.scaling,
    activation,
    tieEmbeddings: bool('tie_word_embeddings', false),
    bias: neox,
    qkvBias,
    attnOutBias: attnBias,
    mlpBias,
    layerNormEps: neox ? num('layer_norm_eps', 1e-5) : num('rms_norm_eps', 1e-6),
    normType: neox ? 'layernorm' : 'rmsnorm',
    normScale: true,
    qkNorm: family === 'qwen3',
    slidingWindow,
    parallelResidual: neox && bool('use_parallel_residual', true),
    embedScale: false,
    labelSmoothing: 0,
  });
  return { config, notes };
}

/**
 * Gemma 3's RoPE: θ of the global and of the local layers and the global layers' scaling (linear ×8 from 4B up),
 * from rope_parameters per layer type (transformers 5) or the Hub's keys (rope_theta, rope_local_base_freq and a
 * rope_scaling that concerns the global layers). The local layers' RoPE is never scaled.
 */
function gemma3Rope(cfg: Json): { global: number; local: number; scaling: RopeScalingConfig } {
  const { num } = reader(cfg);
  const params = cfg['rope_parameters'];
  const scalingJson = cfg['rope_scaling'];
  const object = (key: string, o: unknown): Json => {
    if (o === undefined || o === null) return {};
    if (typeof o !== 'object' || Array.isArray(o))
      return bad(`config.json's ${key} is ${show(o)}; it must be an object.`);
    return o as Json;
  };
  const per = object('rope_parameters', params);
  const full = object('rope_parameters.full_attention', per['full_attention']);
  const sliding = object('rope_parameters.sliding_attention', per['sliding_attention']);
  let scaling = scalingFromJson('rope_parameters.full_attention', full, 'default');
  const local = scalingFromJson('rope_parameters.sliding_attention', sliding, 'default');
  if (local.ropeScaling !== 'none')
    bad(
      `config.json's rope_parameters.sliding_attention scales RoPE (${local.ropeScaling}); Attention Lab scales ` +
        "Gemma 3's global layers only, as every Gemma 3 checkpoint does.",
    );
  if (scalingJson !== undefined && scalingJson !== null) {
    const s = scalingFromJson('rope_scaling', object('rope_scaling', scalingJson), undefined);
    if (s.ropeScaling !== 'none') scaling = s;
  }
  const theta = (o: Json, key: string, dflt: number): number =>
    typeof o['rope_theta'] === 'number' ? (o['rope_theta'] as number) : num(key, dflt);
  return { global: theta(full, 'rope_theta', 1e6), local: theta(sliding, 'rope_local_base_freq', 1e4), scaling };
}

/**
 * Gemma 3's layer pattern as our globalEvery: layer_types (or sliding_window_pattern, 6 by default) must make
 * layer i global iff (i + 1) % n == 0; 0 when no layer is global; -1 when every layer is.
 */
function gemma3GlobalEvery(cfg: Json, layers: number): number {
  const types = cfg['layer_types'];
  let global: boolean[];
  if (types === undefined || types === null) {
    const n = reader(cfg).num('sliding_window_pattern', 6);
    global = Array.from({ length: layers }, (_, i) => (i + 1) % n === 0);
  } else {
    if (!Array.isArray(types) || types.length !== layers)
      bad(`config.json's layer_types is ${show(types)}; it must list ${layers} layers' attention.`);
    const other = types.find((t) => t !== 'full_attention' && t !== 'sliding_attention');
    if (other !== undefined)
      bad(`config.json's layer_types holds ${show(other)}; Gemma 3 takes full_attention and sliding_attention.`);
    global = types.map((t) => t === 'full_attention');
  }
  if (global.every((g) => g)) return -1;
  const first = global.indexOf(true);
  if (first < 0) return 0;
  const n = first + 1;
  if (global.some((g, i) => g !== ((i + 1) % n === 0)))
    bad(
      `config.json's layer_types is ${show(types)}; Attention Lab builds one pattern (globalEvery): every n-th ` +
        'layer full_attention, the others sliding_attention.',
    );
  return n;
}

/** Gemma 3's config.json (Gemma3ForCausalLM, model_type gemma3_text) as ours; see the file comment. */
function gemma3Config(cfg: Json): { config: ModelConfig; notes: string[] } {
  const { num, bool } = reader(cfg);
  const notes: string[] = [];
  const C = num('hidden_size');
  const H = num('num_attention_heads');
  const Hkv = num('num_key_value_heads', H);
  const D = num('head_dim', 256);
  const layers = num('num_hidden_layers');
  const maxLen = num('max_position_embeddings');
  const act = cfg['hidden_activation'] ?? cfg['hidden_act'] ?? 'gelu_pytorch_tanh';
  if (act !== 'gelu_pytorch_tanh' && act !== 'gelu_new' && act !== 'gelu_fast')
    bad(`config.json's hidden_activation is ${show(act)}; Gemma 3 takes gelu_pytorch_tanh (GeGLU).`);
  if (bool('use_bidirectional_attention', false))
    bad("config.json's use_bidirectional_attention is true (EmbeddingGemma); Attention Lab builds causal models.");
  const scalar = num('query_pre_attn_scalar', 256);
  if (scalar <= 0) bad(`config.json's query_pre_attn_scalar is ${scalar}; it must be positive.`);
  const rope = gemma3Rope(cfg);
  const every = gemma3GlobalEvery(cfg, layers);
  const window = every < 0 ? 0 : num('sliding_window', 4096);
  // A window at or past the context masks nothing; it still marks the local layers (their θ), so it is kept at maxLen.
  const slidingWindow = every < 0 ? 0 : Math.min(window, maxLen);
  if (window > maxLen) notes.push(`sliding_window ${window} is past the context ${maxLen}: it masks nothing`);
  // No global layer among these (a model cut below the pattern): every layer is local, θ the local one.
  const allLocal = every === 0;
  const softcap = (k: string): number => (cfg[k] === undefined || cfg[k] === null ? 0 : num(k));
  const attnBias = bool('attention_bias', false);
  const config = validateConfig({
    kind: 'decoder-only',
    srcVocabSize: 0,
    vocabSize: num('vocab_size'),
    dModel: C,
    nHeads: H,
    nKvHeads: Hkv === H ? 0 : Hkv,
    headDim: D === C / H ? 0 : D,
    attnScale: scalar === D ? 0 : scalar ** -0.5,
    dFF: num('intermediate_size'),
    nEncoderLayers: 0,
    nDecoderLayers: layers,
    maxLen,
    dropout: 0,
    norm: 'pre',
    positional: 'rope',
    ropeTheta: allLocal ? rope.local : rope.global,
    ropeLocalTheta: every > 0 && rope.local !== rope.global ? rope.local : 0,
    // The global layers' scaling (ropeScaling applies to ropeTheta's layers; none when every layer is local).
    ...(allLocal ? ROPE_SCALING_OFF : rope.scaling),
    rotaryFraction: 1,
    activation: 'geglu',
    tieEmbeddings: bool('tie_word_embeddings', true),
    bias: false,
    qkvBias: attnBias,
    attnOutBias: attnBias,
    mlpBias: false,
    layerNormEps: num('rms_norm_eps', 1e-6),
    normType: 'rmsnorm',
    normScale: true,
    qkNorm: true,
    postNorms: true,
    slidingWindow,
    globalEvery: every > 0 ? every : 0,
    attnSoftCap: softcap('attn_logit_softcapping'),
    logitSoftCap: softcap('final_logit_softcapping'),
    parallelResidual: false,
    embedScale: true,
    labelSmoothing: 0,
  });
  return { config, notes };
}

/**
 * Rows of a fused tensor that one of our tensors takes: the file's rows seen as [groups, parts,
 * rows / (groups · parts)], part `part` of each group (GPT-NeoX's query_key_value: groups H, parts 3).
 */
export interface RowSplit {
  readonly groups: number;
  readonly parts: number;
  readonly part: number;
}

/** One tensor of a family's file and where it goes. */
export interface HfTensor {
  /** Its name in the file. */
  readonly source: string;
  /** Our parameter's name (pytorchNames.ts). */
  readonly target: string;
  /** Only some of its rows (a fused tensor). */
  readonly split?: RowSplit;
  /** Added to every value as it is read (Gemma's norms multiply by 1 + w, ours by w). */
  readonly add?: number;
}

/**
 * Every tensor a `family` model of config `c` reads, in the family's order: for the Llama-shaped
 * families Llama's names (plus Qwen3's q_norm/k_norm), for GPT-NeoX its own. An untied head is
 * `lm_head.weight` (GPT-NeoX: `embed_out.weight`); a tied one is not in the list.
 */
export function hfFamilyTensors(family: HfFamily, c: ModelConfig): HfTensor[] {
  return family === 'gpt_neox' ? neoxTensors(c) : family === 'gemma3_text' ? gemma3Tensors(c) : llamaTensors(c);
}

function gemma3Tensors(c: ModelConfig): HfTensor[] {
  const out: HfTensor[] = [{ source: 'model.embed_tokens.weight', target: 'transformer.wte.weight' }];
  const add = (hf: string, ours: string, bias: boolean): void => {
    out.push({ source: `${hf}.weight`, target: `${ours}.weight` });
    if (bias) out.push({ source: `${hf}.bias`, target: `${ours}.bias` });
  };
  const norm = (hf: string, ours: string): void => {
    out.push({ source: `${hf}.weight`, target: `${ours}.weight`, add: 1 });
  };
  for (let i = 0; i < c.nDecoderLayers; i++) {
    const hf = `model.layers.${i}`;
    const p = `transformer.h.${i}`;
    add(`${hf}.self_attn.q_proj`, `${p}.attn.c_attn_q`, c.qkvBias);
    add(`${hf}.self_attn.k_proj`, `${p}.attn.c_attn_k`, c.qkvBias);
    add(`${hf}.self_attn.v_proj`, `${p}.attn.c_attn_v`, c.qkvBias);
    add(`${hf}.self_attn.o_proj`, `${p}.attn.c_proj`, c.attnOutBias);
    norm(`${hf}.self_attn.q_norm`, `${p}.attn.q_norm`);
    norm(`${hf}.self_attn.k_norm`, `${p}.attn.k_norm`);
    add(`${hf}.mlp.gate_proj`, `${p}.mlp.c_gate`, false);
    add(`${hf}.mlp.up_proj`, `${p}.mlp.c_fc`, false);
    add(`${hf}.mlp.down_proj`, `${p}.mlp.c_proj`, false);
    norm(`${hf}.input_layernorm`, `${p}.ln_1`);
    norm(`${hf}.post_attention_layernorm`, `${p}.ln_1_post`);
    norm(`${hf}.pre_feedforward_layernorm`, `${p}.ln_2`);
    norm(`${hf}.post_feedforward_layernorm`, `${p}.ln_2_post`);
  }
  norm('model.norm', 'transformer.ln_f');
  if (!c.tieEmbeddings) out.push({ source: 'lm_head.weight', target: 'lm_head.weight' });
  return out;
}

function llamaTensors(c: ModelConfig): HfTensor[] {
  const out: HfTensor[] = [{ source: 'model.embed_tokens.weight', target: 'transformer.wte.weight' }];
  const add = (hf: string, ours: string, bias: boolean): void => {
    out.push({ source: `${hf}.weight`, target: `${ours}.weight` });
    if (bias) out.push({ source: `${hf}.bias`, target: `${ours}.bias` });
  };
  for (let i = 0; i < c.nDecoderLayers; i++) {
    const hf = `model.layers.${i}`;
    const p = `transformer.h.${i}`;
    add(`${hf}.self_attn.q_proj`, `${p}.attn.c_attn_q`, c.qkvBias);
    add(`${hf}.self_attn.k_proj`, `${p}.attn.c_attn_k`, c.qkvBias);
    add(`${hf}.self_attn.v_proj`, `${p}.attn.c_attn_v`, c.qkvBias);
    add(`${hf}.self_attn.o_proj`, `${p}.attn.c_proj`, c.attnOutBias);
    if (c.qkNorm) {
      add(`${hf}.self_attn.q_norm`, `${p}.attn.q_norm`, false);
      add(`${hf}.self_attn.k_norm`, `${p}.attn.k_norm`, false);
    }
    add(`${hf}.mlp.gate_proj`, `${p}.mlp.c_gate`, c.mlpBias);
    add(`${hf}.mlp.up_proj`, `${p}.mlp.c_fc`, c.mlpBias);
    add(`${hf}.mlp.down_proj`, `${p}.mlp.c_proj`, c.mlpBias);
    add(`${hf}.input_layernorm`, `${p}.ln_1`, false);
    add(`${hf}.post_attention_layernorm`, `${p}.ln_2`, false);
  }
  out.push({ source: 'model.norm.weight', target: 'transformer.ln_f.weight' });
  if (!c.tieEmbeddings) out.push({ source: 'lm_head.weight', target: 'lm_head.weight' });
  return out;
}

function neoxTensors(c: ModelConfig): HfTensor[] {
  const out: HfTensor[] = [{ source: 'gpt_neox.embed_in.weight', target: 'transformer.wte.weight' }];
  const both = (hf: string, ours: string, bias = true): void => {
    out.push({ source: `${hf}.weight`, target: `${ours}.weight` });
    if (bias) out.push({ source: `${hf}.bias`, target: `${ours}.bias` });
  };
  for (let i = 0; i < c.nDecoderLayers; i++) {
    const hf = `gpt_neox.layers.${i}`;
    const p = `transformer.h.${i}`;
    both(`${hf}.input_layernorm`, `${p}.ln_1`);
    both(`${hf}.post_attention_layernorm`, `${p}.ln_2`);
    (['q', 'k', 'v'] as const).forEach((x, part) => {
      const split = { groups: c.nHeads, parts: 3, part };
      out.push({ source: `${hf}.attention.query_key_value.weight`, target: `${p}.attn.c_attn_${x}.weight`, split });
      if (c.qkvBias)
        out.push({ source: `${hf}.attention.query_key_value.bias`, target: `${p}.attn.c_attn_${x}.bias`, split });
    });
    both(`${hf}.attention.dense`, `${p}.attn.c_proj`, c.attnOutBias);
    both(`${hf}.mlp.dense_h_to_4h`, `${p}.mlp.c_fc`);
    both(`${hf}.mlp.dense_4h_to_h`, `${p}.mlp.c_proj`);
  }
  both('gpt_neox.final_layer_norm', 'transformer.ln_f');
  if (!c.tieEmbeddings) out.push({ source: 'embed_out.weight', target: 'lm_head.weight' });
  return out;
}

/** Buffers older saves hold that are not parameters (RoPE tables, GPT-NeoX's causal masks). */
export const HF_IGNORED = /\.rotary_emb\.inv_freq$|^gpt_neox\.layers\.\d+\.attention\.(bias|masked_bias)$/;

/** The shape of the file's tensor that `t` reads, given our parameter's shape. */
export function sourceShape(t: HfTensor, ours: readonly number[]): number[] {
  if (!t.split) return [...ours];
  const [rows, ...rest] = ours as [number, ...number[]];
  return [rows * t.split.parts, ...rest];
}

/** The rows of `data` (the file's fused tensor, `cols` numbers a row) that `split` takes. */
export function splitRows(data: Float32Array, split: RowSplit, cols: number): Float32Array {
  const { groups, parts, part } = split;
  const per = data.length / (groups * parts * cols); // rows of a part in a group
  const out = new Float32Array(data.length / parts);
  const run = per * cols;
  for (let g = 0; g < groups; g++)
    out.set(data.subarray((g * parts + part) * run, (g * parts + part + 1) * run), g * run);
  return out;
}

/**
 * The model's own name: for a Hugging Face cache snapshot (…/models--org--name/snapshots/<commit>) the repository's;
 * else config.json's `_name_or_path` when it is a Hub id ("HuggingFaceTB/SmolLM2-135M" → "SmolLM2-135M"); else the
 * folder's name; else the family's label.
 */
export function hfModelName(folderPath: readonly string[], cfg: Json, family: HfFamily): string {
  const n = folderPath.length;
  const last = folderPath[n - 1] ?? '';
  const repo = /^models--(.+)$/.exec(folderPath[n - 3] ?? '');
  if (/^[0-9a-f]{40}$/.test(last) && folderPath[n - 2] === 'snapshots' && repo)
    return (repo[1] as string).split('--').pop() as string;
  const named = cfg['_name_or_path'];
  if (typeof named === 'string' && /^[\w.-]+\/[\w.-]+$/.test(named) && !named.startsWith('.'))
    return named.split('/')[1] as string;
  return last !== '' ? last : familyLabel(family);
}
