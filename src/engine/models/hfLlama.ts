/**
 * Hugging Face's `LlamaForCausalLM` layout, both ways: which of our configs Llama can express
 * ({@link llamaRefusal}), its config.json ({@link llamaConfigJson}), the state_dict name of each
 * of our parameters ({@link llamaName}), and our config back from such a config.json
 * ({@link configFromLlamaJson}). Our RoPE is Hugging Face's rotate-half layout, so q_proj and
 * k_proj are stored as they are (no permutation, unlike Meta's original checkpoints).
 *
 * | ours (pytorchNames.ts) | Hugging Face |
 * |---|---|
 * | `transformer.wte.weight` | `model.embed_tokens.weight` |
 * | `transformer.h.{i}.attn.c_attn_q/k/v`, `c_proj` | `model.layers.{i}.self_attn.q/k/v_proj`, `o_proj` |
 * | `transformer.h.{i}.ln_1`, `ln_2` | `model.layers.{i}.input_layernorm`, `post_attention_layernorm` |
 * | `transformer.h.{i}.mlp.c_gate`, `c_fc`, `c_proj` | `model.layers.{i}.mlp.gate_proj`, `up_proj`, `down_proj` |
 * | `transformer.ln_f.weight` | `model.norm.weight` |
 * | `lm_head.weight` (untied only) | `lm_head.weight` |
 *
 * Pure. Leaves out: files (src/lab/interop), tokenizers, and the Llama family's own checkpoints
 * with rope_scaling and the like (refused by name).
 */

import type { ModelConfig } from '../config';
import { kvHeads, validateConfig } from '../config';
import { EngineError } from '../errors';
import type { SpecialIds } from '../tokenizers/special';

/** The `architectures` entry of a Llama config.json. */
export const LLAMA_ARCHITECTURE = 'LlamaForCausalLM';

/**
 * What Llama cannot express of `c`, as one line naming it (null when `c` is Llama-shaped):
 * decoder-only, pre-norm RMSNorm with a scale, SwiGLU, RoPE over whole heads, none of the
 * other options, and q/k/v/o biases all or none.
 */
export function llamaRefusal(c: ModelConfig): string | null {
  const no: string[] = [];
  if (c.kind !== 'decoder-only') no.push('an encoder-decoder');
  if (c.norm !== 'pre') no.push('post-norm');
  if (c.normType !== 'rmsnorm') no.push(`normType ${c.normType}`);
  else if (!c.normScale) no.push('RMSNorm without a scale (normScale false)');
  if (c.activation !== 'swiglu') no.push(`activation ${c.activation}`);
  if (c.positional !== 'rope') no.push(`${c.positional} positions`);
  else if (c.rotaryFraction !== 1) no.push(`rotaryFraction ${c.rotaryFraction}`);
  if (c.embedScale) no.push('embedScale');
  if (c.embedNorm) no.push('embedNorm');
  if (c.qkNorm) no.push('qkNorm');
  if (c.attnSoftCap > 0) no.push('attnSoftCap');
  if (c.logitSoftCap > 0) no.push('logitSoftCap');
  if (c.slidingWindow > 0) no.push('slidingWindow');
  if (c.parallelResidual) no.push('parallelResidual');
  if (c.qkvBias !== c.attnOutBias) no.push('qkvBias without attnOutBias (or the reverse)');
  if (no.length === 0) return null;
  return (
    `Hugging Face's LlamaForCausalLM cannot express ${no.join(', ')}; export with --format pytorch ` +
    "(Attention Lab's PyTorch model, the same logits) instead."
  );
}

/** config.json of `c` as LlamaForCausalLM reads it (the caller checked {@link llamaRefusal}). */
export function llamaConfigJson(c: ModelConfig, special: SpecialIds): Record<string, unknown> {
  const id = (n: number): number | null => (n >= 0 ? n : null);
  return {
    architectures: [LLAMA_ARCHITECTURE],
    model_type: 'llama',
    vocab_size: c.vocabSize,
    hidden_size: c.dModel,
    intermediate_size: c.dFF,
    num_hidden_layers: c.nDecoderLayers,
    num_attention_heads: c.nHeads,
    num_key_value_heads: kvHeads(c),
    head_dim: c.dModel / c.nHeads,
    hidden_act: 'silu',
    max_position_embeddings: c.maxLen,
    rms_norm_eps: c.layerNormEps,
    rope_theta: c.ropeTheta,
    rope_scaling: null,
    attention_bias: c.qkvBias,
    attention_dropout: 0,
    mlp_bias: c.mlpBias,
    pretraining_tp: 1,
    tie_word_embeddings: c.tieEmbeddings,
    bos_token_id: id(special.bos),
    eos_token_id: id(special.eos),
    pad_token_id: id(special.pad),
    initializer_range: 0.02,
    use_cache: true,
    torch_dtype: 'float32',
  };
}

const RENAMES: readonly [RegExp, string][] = [
  [/^transformer\.wte\.weight$/, 'model.embed_tokens.weight'],
  [/^transformer\.h\.(\d+)\.attn\.c_attn_([qkv])\.(weight|bias)$/, 'model.layers.$1.self_attn.$2_proj.$3'],
  [/^transformer\.h\.(\d+)\.attn\.c_proj\.(weight|bias)$/, 'model.layers.$1.self_attn.o_proj.$2'],
  [/^transformer\.h\.(\d+)\.ln_1\.weight$/, 'model.layers.$1.input_layernorm.weight'],
  [/^transformer\.h\.(\d+)\.ln_2\.weight$/, 'model.layers.$1.post_attention_layernorm.weight'],
  [/^transformer\.h\.(\d+)\.mlp\.c_gate\.(weight|bias)$/, 'model.layers.$1.mlp.gate_proj.$2'],
  [/^transformer\.h\.(\d+)\.mlp\.c_fc\.(weight|bias)$/, 'model.layers.$1.mlp.up_proj.$2'],
  [/^transformer\.h\.(\d+)\.mlp\.c_proj\.(weight|bias)$/, 'model.layers.$1.mlp.down_proj.$2'],
  [/^transformer\.ln_f\.weight$/, 'model.norm.weight'],
  [/^lm_head\.weight$/, 'lm_head.weight'],
];

/** Hugging Face Llama's name of our parameter `name`, or null when Llama has no such tensor. */
export function llamaName(name: string): string | null {
  for (const [re, to] of RENAMES) if (re.test(name)) return name.replace(re, to);
  return null;
}

type Json = Readonly<Record<string, unknown>>;

function bad(msg: string): never {
  throw new EngineError('checkpoint/invalid', msg);
}

/** Whether a config.json is a Llama's (`architectures` names LlamaForCausalLM, or `model_type` llama). */
export function isLlamaJson(cfg: Json | null): boolean {
  if (!cfg) return false;
  const arch = cfg['architectures'];
  return (Array.isArray(arch) && arch.includes(LLAMA_ARCHITECTURE)) || cfg['model_type'] === 'llama';
}

/**
 * Fields a Llama config.json may set that Attention Lab's model does not have, and the value
 * that means "off" (null: absent or null).
 */
const UNSUPPORTED: Readonly<Record<string, unknown>> = {
  rope_scaling: null,
  pretraining_tp: 1,
  sliding_window: null,
  partial_rotary_factor: 1,
  rope_parameters: null,
  layer_types: null,
};

/**
 * Our config from a Llama config.json (LlamaForCausalLM's fields). `ownConfig` is the
 * `attention_lab.config` our export adds: when present it supplies what Llama has no field for
 * (dropout, label smoothing) after the fields Llama has are checked against it, so our own
 * export comes back exactly. Throws EngineError('checkpoint/invalid') naming the field.
 */
export function configFromLlamaJson(cfg: Json, ownConfig: unknown): ModelConfig {
  for (const [k, off] of Object.entries(UNSUPPORTED)) {
    const v = cfg[k];
    if (v === undefined || v === null || v === off) continue;
    bad(
      `config.json's ${k} is ${JSON.stringify(v)}; Attention Lab's model has no ${k}, so this Llama ` +
        'cannot be imported.',
    );
  }
  const num = (k: string, dflt?: number): number => {
    const v = cfg[k] ?? dflt;
    if (typeof v !== 'number' || !Number.isFinite(v))
      return bad(`config.json's ${k} is ${JSON.stringify(v) ?? 'missing'}; a Llama config.json needs a number there.`);
    return v;
  };
  const bool = (k: string): boolean => {
    const v = cfg[k] ?? false;
    if (typeof v !== 'boolean') return bad(`config.json's ${k} is ${JSON.stringify(v)}, not true or false.`);
    return v;
  };
  const act = cfg['hidden_act'] ?? 'silu';
  if (act !== 'silu')
    bad(`config.json's hidden_act is ${JSON.stringify(act)}; Attention Lab's Llama import takes silu (SwiGLU).`);
  const C = num('hidden_size');
  const H = num('num_attention_heads');
  const Hkv = num('num_key_value_heads', H);
  const headDim = cfg['head_dim'] ?? null;
  if (headDim !== null && headDim !== C / H)
    bad(
      `config.json's head_dim ${JSON.stringify(headDim)} is not hidden_size / num_attention_heads = ${C / H}; ` +
        "Attention Lab's heads are d_model / heads wide.",
    );
  const qkvBias = bool('attention_bias');
  let config = validateConfig({
    kind: 'decoder-only',
    srcVocabSize: 0,
    vocabSize: num('vocab_size'),
    dModel: C,
    nHeads: H,
    nKvHeads: Hkv === H ? 0 : Hkv,
    dFF: num('intermediate_size'),
    nEncoderLayers: 0,
    nDecoderLayers: num('num_hidden_layers'),
    maxLen: num('max_position_embeddings'),
    dropout: 0,
    norm: 'pre',
    positional: 'rope',
    ropeTheta: num('rope_theta', 10000),
    rotaryFraction: 1,
    activation: 'swiglu',
    tieEmbeddings: bool('tie_word_embeddings'),
    bias: qkvBias,
    qkvBias,
    attnOutBias: qkvBias,
    mlpBias: bool('mlp_bias'),
    layerNormEps: num('rms_norm_eps', 1e-6),
    normType: 'rmsnorm',
    normScale: true,
    qkNorm: false,
    attnSoftCap: 0,
    logitSoftCap: 0,
    slidingWindow: 0,
    parallelResidual: false,
    embedNorm: false,
    embedScale: false,
    labelSmoothing: 0,
  });
  if (ownConfig !== undefined && ownConfig !== null) {
    let own: ModelConfig;
    try {
      own = validateConfig(ownConfig as ModelConfig);
    } catch (e) {
      return bad(`config.json's attention_lab.config is not a valid config (${(e as Error).message}); remove it.`);
    }
    // Llama's fields decide; ours adds only what Llama has no field for, and must agree on the rest.
    const merged = { ...config, dropout: own.dropout, labelSmoothing: own.labelSmoothing, bias: own.bias };
    const inert = (c: ModelConfig): ModelConfig => ({ ...c, nKvHeads: kvHeads(c) });
    const a = inert(own) as unknown as Record<string, unknown>;
    const b = inert(merged) as unknown as Record<string, unknown>;
    const differ = Object.keys(a).find((k) => a[k] !== b[k]);
    if (differ !== undefined)
      bad(
        `config.json's Llama fields give ${differ} ${JSON.stringify(b[differ])} but its attention_lab.config ` +
          `says ${JSON.stringify(a[differ])}; re-export the run, or remove the attention_lab block.`,
      );
    config = own;
  }
  return config;
}
