/**
 * From what a restricted unpickling built (torchPickle.ts) to the tensors of a model: the
 * state dict a checkpoint holds, and its tensors' values as float32.
 *
 * A checkpoint is either a state dict itself (`torch.save(model.state_dict(), f)`: every key
 * a string, every value a tensor) or a dict holding one beside plain values — nanoGPT's
 * `ckpt.pt` is `{'model': …, 'optimizer': …, 'model_args': {...}, 'iter_num': …}`, and
 * grokking and Othello-GPT checkpoints are alike. {@link findStateDict} picks it: a
 * well-known key first (`model`, `state_dict` …), else the only candidate; the plain values
 * under `model_args` or `config` come back as JSON, which sizes a model as config.json would.
 *
 * A tensor is a strided view of a storage; {@link viewSpan} says which of the storage's
 * elements it reads, and {@link gatherF32} copies them in the view's row-major order —
 * transposed and sliced views, and tensors sharing a storage, come out as their values.
 * Leaves out: reading the bytes (src/lab/interop/torchCheckpoint.ts).
 */

import { EngineError } from '../errors';
import { widenHalf } from './halfFloat';
import type { PickleValue, TorchDtype, TorchTensorRef } from './torchPickle';
import { PickleDict, PickleGlobal, PickleTuple, TORCH_DTYPE_SIZE } from './torchPickle';

/** A state dict found in a checkpoint. */
export interface FoundStateDict {
  /** Its tensors, in the file's order. */
  readonly tensors: ReadonlyArray<{ readonly name: string; readonly tensor: TorchTensorRef }>;
  /** The key it sits under (`model` …), or null when the file is the state dict. */
  readonly key: string | null;
  /** The plain values under `model_args` or `config` beside it, as JSON, or null. */
  readonly config: Record<string, unknown> | null;
  /** The key the config came from. */
  readonly configKey: string | null;
}

/** Keys a checkpoint keeps its model's state dict under, most usual first. */
const MODEL_KEYS = ['model', 'state_dict', 'model_state_dict', 'model_state', 'module', 'net', 'params'];
/** Keys a checkpoint keeps its model's hyperparameters under. */
const CONFIG_KEYS = ['model_args', 'config', 'model_config', 'cfg'];

/** Whether `t` is a tensor reference. */
export function isTensorRef(t: PickleValue | undefined): t is TorchTensorRef {
  return typeof t === 'object' && t !== null && 'kind' in t && t.kind === 'tensor';
}

function stateDictOf(v: PickleValue | undefined): FoundStateDict['tensors'] | null {
  if (!(v instanceof PickleDict) || v.map.size === 0) return null;
  const out: { name: string; tensor: TorchTensorRef }[] = [];
  for (const [k, t] of v.map) {
    if (typeof k !== 'string' || !isTensorRef(t)) return null;
    out.push({ name: k, tensor: t });
  }
  return out;
}

/** The state dict `root` is or holds; refused in one line when there is none or several could be it. */
export function findStateDict(root: PickleValue, source: string): FoundStateDict {
  const own = stateDictOf(root);
  if (own) return { tensors: own, key: null, config: null, configKey: null };
  const bad = (msg: string): never => {
    throw new EngineError('checkpoint/invalid', `${source}: ${msg}`);
  };
  if (!(root instanceof PickleDict))
    return bad(`it holds a ${describe(root)}, not a state dict; save model.state_dict() with torch.save.`);
  const keys = [...root.map.keys()].filter((k): k is string => typeof k === 'string');
  const candidates = keys.filter((k) => stateDictOf(root.map.get(k)) !== null);
  const key = MODEL_KEYS.find((k) => candidates.includes(k)) ?? (candidates.length === 1 ? candidates[0] : undefined);
  if (key === undefined) {
    const shown = (candidates.length > 0 ? candidates : keys).slice(0, 6).join(', ');
    return bad(
      candidates.length > 1
        ? `it holds several state dicts (${shown}) and none under "model"; save the model's alone with torch.save.`
        : `it holds no state dict (a dict of name → tensor) at its top or under its keys (${shown || 'none'}); ` +
            'save model.state_dict() with torch.save.',
    );
  }
  const tensors = stateDictOf(root.map.get(key)) as FoundStateDict['tensors'];
  for (const ck of CONFIG_KEYS) {
    const json = toJson(root.map.get(ck));
    if (json !== null && typeof json === 'object' && !Array.isArray(json))
      return { tensors, key, config: json as Record<string, unknown>, configKey: ck };
  }
  return { tensors, key, config: null, configKey: null };
}

function describe(v: PickleValue): string {
  if (Array.isArray(v)) return 'list';
  if (v instanceof PickleTuple) return 'tuple';
  if (isTensorRef(v)) return 'single tensor';
  return v === null ? 'None' : typeof v;
}

/** How deep {@link toJson} follows nested containers; deeper ones (and cycles a memo can make) become null. */
const MAX_JSON_DEPTH = 32;

/** A plain value as JSON (tuples as arrays, torch names as strings); undefined for tensors and bytes. */
export function toJson(v: PickleValue | undefined, depth = 0): unknown {
  if (v === undefined || v === null || typeof v === 'string' || typeof v === 'boolean') return v ?? null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof PickleGlobal) return v.key.replace(' ', '.');
  const isContainer = Array.isArray(v) || v instanceof PickleTuple || v instanceof PickleDict;
  if (isContainer && depth >= MAX_JSON_DEPTH) return null;
  if (Array.isArray(v) || v instanceof PickleTuple)
    return (Array.isArray(v) ? v : v.items).map((x) => toJson(x, depth + 1));
  if (v instanceof PickleDict) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v.map)
      if (typeof k === 'string' || typeof k === 'number') out[String(k)] = toJson(x, depth + 1);
    return out;
  }
  return undefined;
}

/** The storage elements a view reads: `count` from `first` (0 for an empty tensor), and whether in order. */
export function viewSpan(t: TorchTensorRef): { first: number; count: number; contiguous: boolean } {
  const n = t.shape.reduce((a, d) => a * d, 1);
  if (n === 0) return { first: t.offset, count: 0, contiguous: true };
  let last = t.offset;
  let contiguous = true;
  let expect = 1;
  for (let i = t.shape.length - 1; i >= 0; i--) {
    const d = t.shape[i] as number;
    last += (d - 1) * (t.stride[i] as number);
    if (d !== 1 && t.stride[i] !== expect) contiguous = false;
    expect *= d;
  }
  return { first: t.offset, count: last - t.offset + 1, contiguous: contiguous && last - t.offset + 1 === n };
}

/** Whether a storage dtype is a float that widens to float32. */
export function isFloatDtype(d: TorchDtype): d is 'F32' | 'F16' | 'BF16' | 'F64' {
  return d === 'F32' || d === 'F16' || d === 'BF16' || d === 'F64';
}

/** Converts `count` little-endian elements of `dtype` from `src` into `dst` at `at`. */
export function widenInto(
  dtype: 'F32' | 'F16' | 'BF16' | 'F64',
  src: Uint8Array,
  dst: Float32Array,
  at: number,
  count: number,
): void {
  if (dtype === 'F16' || dtype === 'BF16') return widenHalf(dtype, src, dst, at, count);
  const v = new DataView(src.buffer, src.byteOffset, src.byteLength);
  if (dtype === 'F32') for (let i = 0; i < count; i++) dst[at + i] = v.getFloat32(4 * i, true);
  else for (let i = 0; i < count; i++) dst[at + i] = v.getFloat64(8 * i, true);
}

/**
 * The values of view `t` in row-major order, from `span`: the storage's bytes of elements
 * [viewSpan(t).first, first + count).
 */
export function gatherF32(t: TorchTensorRef, span: Uint8Array): Float32Array {
  const dtype = t.storage.dtype;
  if (!isFloatDtype(dtype)) throw new Error(`gatherF32: ${dtype} is not a float dtype`);
  const size = TORCH_DTYPE_SIZE[dtype];
  const all = new Float32Array(span.length / size);
  widenInto(dtype, span, all, 0, all.length);
  const n = t.shape.reduce((a, d) => a * d, 1);
  const out = new Float32Array(n);
  const dims = t.shape.length;
  const idx = new Array<number>(dims).fill(0);
  let src = 0; // element index relative to the view's offset
  for (let i = 0; i < n; i++) {
    out[i] = all[src] as number;
    // Odometer: step the last dimension, carry into the ones before it.
    for (let d = dims - 1; d >= 0; d--) {
      idx[d] = (idx[d] as number) + 1;
      src += t.stride[d] as number;
      if ((idx[d] as number) < (t.shape[d] as number)) break;
      src -= (t.shape[d] as number) * (t.stride[d] as number);
      idx[d] = 0;
    }
  }
  return out;
}
