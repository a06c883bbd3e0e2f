/**
 * `export --format pytorch`: model.safetensors under the state_dict names of nanoGPT's `GPT`
 * (decoder-only) or the seed notebook's `Transformer` (encoder-decoder), fp32, Linear
 * weights [out, in], plus config.json with the constructor arguments (DESIGN.md). A
 * decoder-only model whose options differ from nanoGPT's architecture is still exported,
 * with the differences listed, since nanoGPT would not give the same logits.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ModelConfig } from '../engine/config';
import { EngineError } from '../engine/errors';
import { encodeSafetensors } from '../engine/io/safetensors';
import { gatherTorchTensor, torchTensors } from '../engine/models/pytorchNames';
import type { Transformer } from '../engine/models/transformer';
import { sinusoidalTable } from '../engine/ops/embedding';
import { writeFileAtomic } from './atomicFile';

/** What an export wrote. */
export interface ExportResult {
  readonly files: readonly string[];
  readonly tensors: number;
  /** Ways the model differs from the PyTorch class it is named after. */
  readonly warnings: readonly string[];
}

/** nanoGPT's GPTConfig, or the notebook Transformer's arguments plus the paper's options. */
export function pytorchConfig(c: ModelConfig): Record<string, unknown> {
  if (c.kind === 'decoder-only') {
    return { block_size: c.maxLen, vocab_size: c.vocabSize, n_layer: c.nDecoderLayers, n_head: c.nHeads, n_embd: c.dModel, dropout: c.dropout, bias: c.bias };
  }
  return {
    src_vocab_size: c.srcVocabSize, tgt_vocab_size: c.vocabSize, d_model: c.dModel, num_heads: c.nHeads,
    num_layers: c.nEncoderLayers, num_encoder_layers: c.nEncoderLayers, num_decoder_layers: c.nDecoderLayers,
    d_ff: c.dFF, max_seq_length: c.maxLen, dropout: c.dropout, embed_scale: c.embedScale ? Math.sqrt(c.dModel) : 1,
    norm_placement: c.norm, activation: c.activation, positional: c.positional, tie_embeddings: c.tieEmbeddings,
    bias: c.bias, layer_norm_eps: c.layerNormEps, label_smoothing: c.labelSmoothing,
  };
}

function nanoGptDifferences(c: ModelConfig): string[] {
  const w: string[] = [];
  if (c.kind !== 'decoder-only') return w;
  if (c.norm !== 'pre') w.push('post-LN (nanoGPT is pre-LN)');
  if (c.activation === 'relu') w.push('ReLU (nanoGPT uses GELU)');
  if (c.activation === 'geluTanh') w.push("tanh GELU (GPT-2's gelu_new; nanoGPT's model.py uses the exact nn.GELU())");
  if (c.positional !== 'learned') w.push('sinusoidal positions (nanoGPT learns wpe; none is exported)');
  if (!c.tieEmbeddings) w.push('untied output projection (exported as lm_head.weight; nanoGPT ties it to wte)');
  if (c.embedScale) w.push('embeddings scaled by √d (nanoGPT does not scale)');
  if (c.dFF !== 4 * c.dModel) w.push(`d_ff ${c.dFF} (nanoGPT's MLP is 4·n_embd = ${4 * c.dModel})`);
  if (c.layerNormEps !== 1e-5) w.push(`LayerNorm ε ${c.layerNormEps} (nanoGPT uses 1e-5)`);
  return w;
}

/** Writes `outDir`/model.safetensors and `outDir`/config.json. */
export function exportPytorch(model: Transformer, outDir: string): ExportResult {
  const c = model.config;
  if (fs.existsSync(path.join(outDir, 'run.json'))) throw new EngineError('input/invalid', `${outDir} is a run folder; export into another folder so the run's own model.safetensors is not replaced.`);
  fs.mkdirSync(outDir, { recursive: true });
  const tensors = torchTensors(model).map((t) => ({ name: t.name, dtype: 'F32' as const, shape: t.shape, data: gatherTorchTensor(t) }));
  if (c.kind === 'encoder-decoder' && c.positional === 'sinusoidal') {
    tensors.push({ name: 'positional_encoding.pe', dtype: 'F32', shape: [1, c.maxLen, c.dModel], data: sinusoidalTable(c.maxLen, c.dModel) });
  }
  const model_ = path.join(outDir, 'model.safetensors');
  const config = path.join(outDir, 'config.json');
  // Our whole config rides along in the metadata, so `import` gives back exactly this model
  // (activation, norm placement … that the PyTorch config.json has no field for).
  writeFileAtomic(model_, encodeSafetensors(tensors, { format: 'pt', source: 'attention-lab', attention_lab_config: JSON.stringify(c) }));
  writeFileAtomic(config, `${JSON.stringify(pytorchConfig(c), null, 2)}\n`);
  return { files: [model_, config], tensors: tensors.length, warnings: nanoGptDifferences(c) };
}
