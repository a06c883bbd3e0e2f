/**
 * Our parameters under the state_dict names of the PyTorch models people learn from
 * (DESIGN.md): nanoGPT's `GPT` for decoder-only and the seed notebook's `Transformer` for
 * the encoder-decoder. Names are already shared except that nanoGPT stacks the q, k, v
 * projections into one `c_attn` ([3C, C] weight, [3C] bias), which we keep as three
 * matrices; and that PyTorch lists a tied `lm_head.weight` under both names.
 * Used by `export --format pytorch` and by the parity tests that load PyTorch's golden
 * weights, so one mapping is exercised in both directions.
 */

import type { FloatArray } from '../backend';
import { EngineError } from '../errors';
import type { Param } from './plan';
import type { Transformer } from './transformer';

/** One PyTorch tensor and the parameters it is made of (concatenated along dim 0). */
export interface TorchTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly parts: readonly Param[];
  /** A second name for a tied tensor: written on export, skipped on import. */
  readonly alias: boolean;
}

const QKV = /^(transformer\.h\.\d+\.attn)\.c_attn_([qkv])\.(weight|bias)$/;

/** The PyTorch tensors of `model`, in parameter order. */
export function torchTensors(model: Transformer): TorchTensor[] {
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
    const shape = kind === 'weight' ? [3 * (p.shape[0] as number), p.shape[1] as number] : [3 * (p.shape[0] as number)];
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
export function loadTorchTensors(model: Transformer, get: (name: string, shape: readonly number[]) => ArrayLike<number> | null): void {
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
    throw new EngineError('checkpoint/invalid', `Missing ${missing.length} tensor(s): ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}; the file was written for a different model config.`);
  }
}

/** Copies `data` (the tensor's values, row-major in PyTorch's shape) into the parameters it is made of. */
export function setTorchTensor(t: TorchTensor, data: ArrayLike<number>): void {
  const n = t.parts.reduce((a, p) => a + p.size, 0);
  if (data.length !== n) throw new EngineError('checkpoint/invalid', `Tensor ${t.name} needs ${n} values, got ${data.length}.`);
  let off = 0;
  for (const p of t.parts) {
    copy(p.data, data, off, p.size);
    off += p.size;
  }
}

function copy(dst: FloatArray, src: ArrayLike<number>, off: number, n: number): void {
  for (let i = 0; i < n; i++) dst[i] = src[off + i] as number;
}
