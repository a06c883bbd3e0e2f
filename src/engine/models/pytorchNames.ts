/**
 * Our parameters under the state_dict names of the PyTorch models people learn from
 * (docs/ARCHITECTURE.md, "PyTorch names"): nanoGPT's `GPT` for decoder-only and the seed
 * notebook's `Transformer` for the encoder-decoder. The model is built under these names (`modelNames`, `blockNames`),
 * except that nanoGPT stacks the q, k, v projections into one `c_attn` ([3C, C] weight,
 * [3C] bias; [(H + 2·Hkv)·D, C] under grouped-query attention), which we keep as three
 * matrices (`c_attn_q/k/v`); and that PyTorch lists a
 * tied `lm_head.weight` under both names. `torchTensors` undoes both: it is used by
 * `export --format pytorch` and by the parity tests that load PyTorch's golden weights, so
 * one mapping is exercised in both directions.
 *
 * Leaves out: other layouts read on import (importLayouts.ts) and file I/O (src/lab).
 */

import type { FloatArray } from '../backend';
import type { ModelConfig } from '../config';
import { EngineError } from '../errors';
import type { BlockNames } from './block';
import type { Param } from './plan';

/** Names of an embedding's token table, learned positions and norm (embedNorm; `.weight` added). */
export interface EmbedNames {
  readonly table: string;
  readonly positions: string;
  readonly norm: string;
}

/** Names of the parameters outside the blocks. */
export interface ModelNames {
  /** The encoder's embeddings and final norm (encoder-decoder). */
  readonly encEmbed: EmbedNames;
  readonly encNorm: string;
  readonly decEmbed: EmbedNames;
  /** The decoder's final norm (pre-LN). */
  readonly decNorm: string;
  /** The output projection (`.weight`, `.bias`). */
  readonly head: string;
}

/** The names of a model's embeddings, final norms and output projection. */
export function modelNames(cfg: ModelConfig): ModelNames {
  const gpt = cfg.kind === 'decoder-only';
  return {
    encEmbed: {
      table: 'encoder_embedding.weight',
      positions: 'encoder_positions.weight',
      norm: 'encoder_embedding_norm',
    },
    encNorm: 'encoder_norm',
    decEmbed: gpt
      ? { table: 'transformer.wte.weight', positions: 'transformer.wpe.weight', norm: 'transformer.ln_e' }
      : { table: 'decoder_embedding.weight', positions: 'decoder_positions.weight', norm: 'decoder_embedding_norm' },
    decNorm: gpt ? 'transformer.ln_f' : 'decoder_norm',
    head: gpt ? 'lm_head' : 'fc',
  };
}

/**
 * Parameter names of block `i` of a stack: nanoGPT's `transformer.h.{i}` or the seed notebook's `{stack}_layers.{i}`.
 */
export function blockNames(cfg: ModelConfig, stack: 'encoder' | 'decoder', i: number): BlockNames {
  if (cfg.kind === 'decoder-only') {
    const p = `transformer.h.${i}`;
    return {
      selfAttn: {
        q: `${p}.attn.c_attn_q`,
        k: `${p}.attn.c_attn_k`,
        v: `${p}.attn.c_attn_v`,
        o: `${p}.attn.c_proj`,
        qNorm: `${p}.attn.q_norm`,
        kNorm: `${p}.attn.k_norm`,
      },
      crossAttn: null,
      norms: [`${p}.ln_1`, `${p}.ln_2`],
      fc1: `${p}.mlp.c_fc`,
      gate: `${p}.mlp.c_gate`,
      fc2: `${p}.mlp.c_proj`,
    };
  }
  const p = `${stack}_layers.${i}`;
  const attn = (n: string): BlockNames['selfAttn'] => ({
    q: `${p}.${n}.W_q`,
    k: `${p}.${n}.W_k`,
    v: `${p}.${n}.W_v`,
    o: `${p}.${n}.W_o`,
    qNorm: `${p}.${n}.q_norm`,
    kNorm: `${p}.${n}.k_norm`,
  });
  return {
    selfAttn: attn('self_attn'),
    crossAttn: stack === 'decoder' ? attn('cross_attn') : null,
    norms: stack === 'decoder' ? [`${p}.norm1`, `${p}.norm2`, `${p}.norm3`] : [`${p}.norm1`, `${p}.norm2`],
    fc1: `${p}.feed_forward.fc1`,
    gate: `${p}.feed_forward.gate`,
    fc2: `${p}.feed_forward.fc2`,
  };
}

/** One PyTorch tensor and the parameters it is made of (concatenated along dim 0). */
export interface TorchTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly parts: readonly Param[];
  /** A second name for a tied tensor: written on export, skipped on import. */
  readonly alias: boolean;
}

const QKV = /^(transformer\.h\.\d+\.attn)\.c_attn_([qkv])\.(weight|bias)$/;

/** What the mapping reads of a model (a Transformer), so this file needs nothing of the model's. */
export interface NamedParams {
  readonly config: ModelConfig;
  /** Every parameter, in order. */
  readonly paramList: readonly Param[];
  /** The output projection's weight (the token embedding when tied). */
  readonly headW: Param;
  /** A parameter by name (throws for a name the model lacks). */
  param(name: string): Param;
}

/** The PyTorch tensors of `model`, in parameter order. */
export function torchTensors(model: NamedParams): TorchTensor[] {
  const out: TorchTensor[] = [];
  const params = model.paramList;
  for (const p of params) {
    const m = QKV.exec(p.name);
    if (!m) {
      out.push({ name: p.name, shape: p.shape, parts: [p], alias: false });
      continue;
    }
    if (m[2] !== 'q') continue; // k and v join q's tensor
    const [, prefix, , kind] = m;
    const parts = (['q', 'k', 'v'] as const).map((x) => model.param(`${prefix}.c_attn_${x}.${kind}`));
    // q is [H·D, C], k and v [Hkv·D, C] each: stacked along dim 0.
    const rows = parts.reduce((n, x) => n + (x.shape[0] as number), 0);
    const shape = kind === 'weight' ? [rows, p.shape[1] as number] : [rows];
    out.push({ name: `${prefix}.c_attn.${kind}`, shape, parts, alias: false });
  }
  if (model.config.kind === 'decoder-only' && model.config.tieEmbeddings) {
    out.push({ name: 'lm_head.weight', shape: model.headW.shape, parts: [model.headW], alias: true });
  }
  return out;
}

/** The tensor's values (a concatenation for stacked tensors). */
export function gatherTorchTensor(t: TorchTensor, grads = false): Float32Array {
  const out = new Float32Array(t.parts.reduce((n, p) => n + p.size, 0));
  let off = 0;
  for (const p of t.parts) {
    out.set(grads ? p.grad : p.data, off);
    off += p.size;
  }
  return out;
}

/**
 * Loads every (non-alias) tensor through `get(name, shape)`, which returns its data or
 * null when the file lacks it. Throws EngineError('checkpoint/invalid') listing what is missing.
 */
export function loadTorchTensors(
  model: NamedParams,
  get: (name: string, shape: readonly number[]) => ArrayLike<number> | null,
): void {
  const missing: string[] = [];
  for (const t of torchTensors(model)) {
    if (t.alias) continue;
    const data = get(t.name, t.shape);
    if (!data) {
      missing.push(t.name);
      continue;
    }
    setTorchTensor(t, data);
  }
  if (missing.length) {
    throw new EngineError(
      'checkpoint/invalid',
      `Missing ${missing.length} tensor(s): ` +
        `${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}; the file was written ` +
        `for a different model config.`,
    );
  }
}

/** Copies `data` (the tensor's values, row-major in PyTorch's shape) into the parameters it is made of. */
export function setTorchTensor(t: TorchTensor, data: ArrayLike<number>): void {
  const n = t.parts.reduce((a, p) => a + p.size, 0);
  if (data.length !== n)
    throw new EngineError('checkpoint/invalid', `Tensor ${t.name} needs ${n} values, got ${data.length}.`);
  let off = 0;
  for (const p of t.parts) {
    copy(p.data, data, off, p.size);
    off += p.size;
  }
}

function copy(dst: FloatArray, src: ArrayLike<number>, off: number, n: number): void {
  // A typed array is copied whole (a memcpy, 2 GB of Qwen2.5-0.5B in a second, not an element loop of seven).
  if (src instanceof Float32Array || src instanceof Float64Array) dst.set(src.subarray(off, off + n));
  else for (let i = 0; i < n; i++) dst[i] = src[off + i] as number;
}
