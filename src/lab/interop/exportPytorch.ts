/**
 * The model half of `export --format pytorch`: the tensors under the state_dict names of
 * nanoGPT's `GPT` (decoder-only) or the seed notebook's `Transformer` (encoder-decoder),
 * fp32, Linear weights [out, in], and config.json with the constructor arguments
 * (docs/ARCHITECTURE.md, "PyTorch names") plus our whole ModelConfig. A decoder-only model
 * whose options differ from nanoGPT's architecture is still exported, with the differences
 * listed, since nanoGPT would not give the same logits (the folder's reference.py, the PyTorch
 * engine's model, builds every option).
 *
 * Leaves out: the folder, the tokenizer files and the README (exportFolder.ts writes them).
 */

import type { ModelConfig } from '../../engine/config';
import { encodeSafetensors } from '../../engine/io/safetensors';
import { gatherTorchTensor, torchTensors } from '../../engine/models/pytorchNames';
import type { Transformer } from '../../engine/models/transformer';
import { sinusoidalTable } from '../../engine/ops/embedding';

/** Hugging Face's name of an activation (`activation_function` in a GPT-2 config.json). */
export function hfActivationName(a: ModelConfig['activation']): string {
  return a === 'geluTanh' ? 'gelu_new' : a;
}

/**
 * nanoGPT's GPTConfig fields plus Hugging Face's `activation_function`, or the notebook
 * Transformer's arguments plus the paper's options. (exportFolder.ts adds the
 * `attention_lab` block with the whole ModelConfig.)
 */
export function pytorchConfig(c: ModelConfig): Record<string, unknown> {
  if (c.kind === 'decoder-only') {
    return {
      block_size: c.maxLen,
      vocab_size: c.vocabSize,
      n_layer: c.nDecoderLayers,
      n_head: c.nHeads,
      n_embd: c.dModel,
      dropout: c.dropout,
      bias: c.bias,
      activation_function: hfActivationName(c.activation),
    };
  }
  return {
    src_vocab_size: c.srcVocabSize,
    tgt_vocab_size: c.vocabSize,
    d_model: c.dModel,
    num_heads: c.nHeads,
    num_layers: c.nEncoderLayers,
    num_encoder_layers: c.nEncoderLayers,
    num_decoder_layers: c.nDecoderLayers,
    d_ff: c.dFF,
    max_seq_length: c.maxLen,
    dropout: c.dropout,
    embed_scale: c.embedScale ? Math.sqrt(c.dModel) : 1,
    norm_placement: c.norm,
    activation: c.activation,
    positional: c.positional,
    tie_embeddings: c.tieEmbeddings,
    bias: c.bias,
    layer_norm_eps: c.layerNormEps,
    label_smoothing: c.labelSmoothing,
  };
}

function nanoGptDifferences(c: ModelConfig): string[] {
  const w: string[] = [];
  if (c.kind !== 'decoder-only') return w;
  if (c.norm !== 'pre') w.push('post-LN (nanoGPT is pre-LN)');
  if (c.activation === 'relu') w.push('ReLU (nanoGPT uses GELU)');
  if (c.activation === 'geluTanh') w.push("tanh GELU (GPT-2's gelu_new; nanoGPT's model.py uses the exact nn.GELU())");
  if (c.positional === 'sinusoidal') w.push('sinusoidal positions (nanoGPT learns wpe; none is exported)');
  else if (c.positional !== 'learned') w.push(`${c.positional} positions (nanoGPT learns wpe; none is exported)`);
  // Today's options (issue 29): reference.py builds each; nanoGPT has none of them.
  const today = [
    c.normType === 'rmsnorm' ? `RMSNorm${c.normScale ? '' : ' without a scale'} (nanoGPT uses LayerNorm)` : '',
    ['relu2', 'silu', 'swiglu', 'geglu'].includes(c.activation) ? `${c.activation} feed-forward` : '',
    c.qkNorm ? 'QK-norm' : '',
    c.nKvHeads > 0 && c.nKvHeads !== c.nHeads ? `${c.nKvHeads} key/value heads (c_attn has (H + 2·Hkv)·D rows)` : '',
    c.qkvBias !== c.bias || c.attnOutBias !== c.bias || c.mlpBias !== c.bias ? 'per-part biases' : '',
    c.attnSoftCap > 0 ? `attention scores soft-capped at ${c.attnSoftCap}` : '',
    c.logitSoftCap > 0 ? `logits soft-capped at ${c.logitSoftCap}` : '',
    c.slidingWindow > 0 ? `a sliding window of ${c.slidingWindow}` : '',
    c.parallelResidual ? 'the parallel residual' : '',
    c.embedNorm ? 'a norm after the embeddings (transformer.ln_e)' : '',
    c.headDim > 0 && c.headDim !== c.dModel / c.nHeads
      ? `heads of ${c.headDim} channels (c_attn has (H + 2·Hkv)·D rows, c_proj H·D columns)`
      : '',
    c.attnScale > 0 ? `scores scaled by ${c.attnScale} (nanoGPT scales by 1/√D)` : '',
  ];
  w.push(...today.filter((x) => x !== ''));
  if (!c.tieEmbeddings) w.push('untied output projection (exported as lm_head.weight; nanoGPT ties it to wte)');
  if (c.embedScale) w.push('embeddings scaled by √d (nanoGPT does not scale)');
  if (c.dFF !== 4 * c.dModel) w.push(`d_ff ${c.dFF} (nanoGPT's MLP is 4·n_embd = ${4 * c.dModel})`);
  if (c.layerNormEps !== 1e-5) w.push(`LayerNorm ε ${c.layerNormEps} (nanoGPT uses 1e-5)`);
  return w;
}

/** The model's tensors for PyTorch and the ways it differs from the class it is named after. */
export function pytorchTensors(model: Transformer): {
  readonly bytes: Uint8Array;
  readonly tensors: number;
  readonly warnings: string[];
} {
  const c = model.config;
  const tensors = torchTensors(model).map((t) => ({
    name: t.name,
    dtype: 'F32' as const,
    shape: t.shape,
    data: gatherTorchTensor(t),
  }));
  if (c.kind === 'encoder-decoder' && c.positional === 'sinusoidal') {
    tensors.push({
      name: 'positional_encoding.pe',
      dtype: 'F32',
      shape: [1, c.maxLen, c.dModel],
      data: sinusoidalTable(c.maxLen, c.dModel),
    });
  }
  // Our whole config rides along in the metadata, so `import` gives back exactly this model
  // (activation, norm placement … that the PyTorch config.json has no field for).
  return {
    bytes: encodeSafetensors(tensors, {
      format: 'pt',
      source: 'attention-lab',
      attention_lab_config: JSON.stringify(c),
    }),
    tensors: tensors.length,
    warnings: nanoGptDifferences(c),
  };
}
