/**
 * The model half of `export --format hf`: a Llama-shaped decoder (RoPE, RMSNorm with a scale,
 * SwiGLU, any nKvHeads, pre-norm) in Hugging Face's `LlamaForCausalLM` layout, so
 * `LlamaForCausalLM.from_pretrained(folder)` gives our logits: config.json's Llama fields and
 * the tensors under its names (`model.embed_tokens`, `model.layers.N.self_attn.q_proj` …,
 * `mlp.gate_proj / up_proj / down_proj`, `input_layernorm`, `post_attention_layernorm`,
 * `model.norm`, `lm_head`), fp32. Our RoPE is already Hugging Face's rotate-half layout, so
 * q and k need no permutation. A config Llama cannot express is refused in one line that
 * names what differs ({@link llamaDifferences}); `--format pytorch` exports those, with the
 * trainer's model that builds every option.
 *
 * Leaves out: the folder, the tokenizer files and the README (exportFolder.ts, exportReadme.ts);
 * the names (engine/models/hfLlama.ts, which `import` reads this layout back with).
 */

import type { ModelConfig } from '../../engine/config';
import { headSize, kvHeads } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import { encodeSafetensors } from '../../engine/io/safetensors';
import { hfRopeScalingJson } from '../../engine/models/hfFamilies';
import { hfLlamaNames } from '../../engine/models/hfLlama';
import type { NamedParams } from '../../engine/models/pytorchNames';
import type { SpecialIds } from '../../engine/tokenizers/special';

/** What in `c` LlamaForCausalLM has no field for (empty: it expresses the model exactly). */
export function llamaDifferences(c: ModelConfig): string[] {
  const d: string[] = [];
  if (c.kind !== 'decoder-only') return ['an encoder-decoder (Llama is decoder-only)'];
  if (c.norm !== 'pre') d.push('post-norm');
  if (c.positional !== 'rope') d.push(`positional ${c.positional} (Llama uses rope)`);
  if (c.rotaryFraction !== 1) d.push(`rotaryFraction ${c.rotaryFraction} (Llama rotates every channel)`);
  if (c.normType !== 'rmsnorm') d.push(`normType ${c.normType} (Llama uses rmsnorm)`);
  if (!c.normScale) d.push('normScale false');
  if (c.activation !== 'swiglu') d.push(`activation ${c.activation} (Llama uses swiglu)`);
  if (c.qkNorm) d.push('qkNorm');
  if (c.qkvBias !== c.attnOutBias) d.push('qkvBias ≠ attnOutBias (Llama has one attention_bias)');
  if (c.attnSoftCap > 0) d.push('attnSoftCap');
  if (c.logitSoftCap > 0) d.push('logitSoftCap');
  if (c.slidingWindow > 0) d.push('slidingWindow');
  if (c.parallelResidual) d.push('parallelResidual');
  if (c.postNorms) d.push('postNorms');
  if (c.globalEvery > 0) d.push('globalEvery');
  if (c.ropeLocalTheta > 0) d.push('ropeLocalTheta');
  if (c.embedNorm) d.push('embedNorm');
  if (c.embedScale) d.push('embedScale');
  const D = headSize(c);
  if (c.attnScale > 0 && Math.abs(c.attnScale * Math.sqrt(D) - 1) > 1e-12)
    d.push(`attnScale ${c.attnScale} (Llama scales the scores by 1/√head_dim)`);
  return d;
}

/** Throws EngineError('input/invalid'), in one line, unless LlamaForCausalLM expresses `c`. */
export function checkLlamaShaped(c: ModelConfig): void {
  const d = llamaDifferences(c);
  if (d.length > 0)
    throw new EngineError(
      'input/invalid',
      `Hugging Face's LlamaForCausalLM cannot express this run (${d.join(', ')}); export it with --format ` +
        `pytorch, whose reference.py (the PyTorch engine's model) loads every option.`,
    );
}

/** config.json of the export: LlamaConfig's fields (transformers' names). */
export function hfLlamaConfig(c: ModelConfig, ids: SpecialIds): Record<string, unknown> {
  return {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    vocab_size: c.vocabSize,
    hidden_size: c.dModel,
    intermediate_size: c.dFF,
    num_hidden_layers: c.nDecoderLayers,
    num_attention_heads: c.nHeads,
    num_key_value_heads: kvHeads(c),
    head_dim: headSize(c),
    hidden_act: 'silu',
    max_position_embeddings: c.maxLen,
    rms_norm_eps: c.layerNormEps,
    rope_theta: c.ropeTheta,
    rope_scaling: hfRopeScalingJson(c),
    attention_bias: c.qkvBias,
    mlp_bias: c.mlpBias,
    attention_dropout: 0,
    tie_word_embeddings: c.tieEmbeddings,
    initializer_range: 0.02,
    pretraining_tp: 1,
    use_cache: true,
    bos_token_id: ids.bos,
    eos_token_id: ids.eos,
    ...(ids.pad >= 0 ? { pad_token_id: ids.pad } : {}),
    torch_dtype: 'float32',
  };
}

export { hfLlamaNames };

/**
 * model.safetensors in LlamaForCausalLM's layout (fp32). A tied head is stored once, as
 * `model.embed_tokens.weight` (`tie_word_embeddings` makes transformers share it). Throws
 * EngineError('input/invalid') for a config Llama cannot express.
 */
export function hfLlamaTensors(model: NamedParams): { readonly bytes: Uint8Array; readonly tensors: number } {
  checkLlamaShaped(model.config);
  const tensors = hfLlamaNames(model.config).map(([hf, ours]) => {
    const p = model.param(ours);
    return { name: hf, dtype: 'F32' as const, shape: p.shape, data: p.data };
  });
  return { bytes: encodeSafetensors(tensors, { format: 'pt', source: 'attention-lab' }), tensors: tensors.length };
}
