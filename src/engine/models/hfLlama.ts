/**
 * Hugging Face's `LlamaForCausalLM` layout, the pure half both directions share: the state_dict
 * name of each of our parameters ({@link hfLlamaNames}), and our config back from a Llama
 * config.json ({@link configFromLlamaJson}) for `import`. Our RoPE is Hugging Face's rotate-half
 * layout, so q_proj and k_proj are stored as they are (no permutation, unlike Meta's original
 * checkpoints). What Llama cannot express and the config.json written are exportHf.ts's.
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
 * Pure. Leaves out: files and the export's config.json (src/lab/interop/exportHf.ts), tokenizers,
 * and the Llama family's own checkpoints with rope_parameters and the like (refused by name); rope_scaling
 * is read as hfFamilies.ts reads it.
 */

import type { ModelConfig } from '../config';
import { headSize, kvHeads, ROPE_SCALING_OFF, validateConfig } from '../config';
import { EngineError } from '../errors';
import { hfRopeScaling } from './hfFamilies';

/** The `architectures` entry of a Llama config.json. */
export const LLAMA_ARCHITECTURE = 'LlamaForCausalLM';

/**
 * [Hugging Face's name, our parameter's name] of every tensor of a Llama-shaped `c`, in Llama's
 * order (no `lm_head.weight` when tied: transformers shares `model.embed_tokens.weight`). The one
 * mapping of both directions: `export --format hf` (lab/interop/exportHf.ts) and its import.
 */
export function hfLlamaNames(c: ModelConfig): [string, string][] {
  const out: [string, string][] = [['model.embed_tokens.weight', 'transformer.wte.weight']];
  const withBias = (hf: string, ours: string, bias: boolean): [string, string][] => [
    [`${hf}.weight`, `${ours}.weight`],
    ...(bias ? [[`${hf}.bias`, `${ours}.bias`] as [string, string]] : []),
  ];
  for (let i = 0; i < c.nDecoderLayers; i++) {
    const hf = `model.layers.${i}`;
    const p = `transformer.h.${i}`;
    out.push(
      ...withBias(`${hf}.self_attn.q_proj`, `${p}.attn.c_attn_q`, c.qkvBias),
      ...withBias(`${hf}.self_attn.k_proj`, `${p}.attn.c_attn_k`, c.qkvBias),
      ...withBias(`${hf}.self_attn.v_proj`, `${p}.attn.c_attn_v`, c.qkvBias),
      ...withBias(`${hf}.self_attn.o_proj`, `${p}.attn.c_proj`, c.attnOutBias),
      ...withBias(`${hf}.mlp.gate_proj`, `${p}.mlp.c_gate`, c.mlpBias),
      ...withBias(`${hf}.mlp.up_proj`, `${p}.mlp.c_fc`, c.mlpBias),
      ...withBias(`${hf}.mlp.down_proj`, `${p}.mlp.c_proj`, c.mlpBias),
      [`${hf}.input_layernorm.weight`, `${p}.ln_1.weight`],
      [`${hf}.post_attention_layernorm.weight`, `${p}.ln_2.weight`],
    );
  }
  out.push(['model.norm.weight', 'transformer.ln_f.weight']);
  if (!c.tieEmbeddings) out.push(['lm_head.weight', 'lm_head.weight']);
  return out;
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
  // head_dim (transformers' default hidden_size / num_attention_heads) is our headDim, 0 when it is that default.
  const headDim = cfg['head_dim'] === undefined || cfg['head_dim'] === null ? C / H : num('head_dim');
  const qkvBias = bool('attention_bias');
  let config = validateConfig({
    kind: 'decoder-only',
    srcVocabSize: 0,
    vocabSize: num('vocab_size'),
    dModel: C,
    nHeads: H,
    nKvHeads: Hkv === H ? 0 : Hkv,
    headDim: headDim === C / H ? 0 : headDim,
    dFF: num('intermediate_size'),
    nEncoderLayers: 0,
    nDecoderLayers: num('num_hidden_layers'),
    maxLen: num('max_position_embeddings'),
    dropout: 0,
    norm: 'pre',
    positional: 'rope',
    ropeTheta: num('rope_theta', 10000),
    ...hfRopeScaling(cfg),
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
    // Fields that change nothing: the llama3 numbers of another scaling, the factor of none.
    const inert = (c: ModelConfig): ModelConfig => ({
      ...c,
      nKvHeads: kvHeads(c),
      headDim: headSize(c),
      ...(c.ropeScaling === 'none' ? ROPE_SCALING_OFF : {}),
      ...(c.ropeScaling === 'linear'
        ? { ...ROPE_SCALING_OFF, ropeScaling: 'linear', ropeScalingFactor: c.ropeScalingFactor }
        : {}),
    });
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
