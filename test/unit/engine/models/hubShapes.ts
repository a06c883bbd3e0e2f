/**
 * Real-size model shapes from the Hub's config.json files, for tests of memory plans and
 * chunking that need a model's true sizes (never its weights).
 */
import type { ModelConfig } from '../../../../src/engine/config';
import { configFromHfJson } from '../../../../src/engine/models/hfFamilies';

/** Qwen2.5-0.5B's config.json: 494M parameters, 24 layers, d 896, 14/2 heads, a 151,936-token vocabulary, context 32768. */
export function qwen25Config(): ModelConfig {
  return configFromHfJson(
    {
      model_type: 'qwen2',
      hidden_size: 896,
      intermediate_size: 4864,
      num_attention_heads: 14,
      num_key_value_heads: 2,
      num_hidden_layers: 24,
      max_position_embeddings: 32768,
      rms_norm_eps: 1e-6,
      rope_theta: 1000000,
      tie_word_embeddings: true,
      vocab_size: 151936,
      hidden_act: 'silu',
    },
    'qwen2',
  ).config;
}
