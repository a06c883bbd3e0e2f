/**
 * The safetensors codec (Hugging Face, https://github.com/huggingface/safetensors): bytes
 * in, bytes out, so `model.safetensors` and `optimizer.safetensors` load in PyTorch and
 * nanoGPT. Layout: an 8-byte little-endian u64 N, N bytes of UTF-8 JSON (padded with spaces
 * to a multiple of 8 so the data starts 8-byte aligned), then every tensor's bytes,
 * little-endian, in header order with no gaps.
 *
 * Decoding copies each tensor into its own (aligned) typed array; I64 is narrowed to
 * Int32Array, with an error if a value does not fit; F16 and BF16 are widened to float32
 * (halfFloat.ts), and written from numbers rounded to nearest. Header validation lives in
 * `safetensorsHeader.ts`. Leaves out: file I/O (`src/lab` owns files; it reads large files
 * tensor by tensor, `src/lab/runs/safetensorsReader.ts`), memory mapping, and dtypes other than
 * F32, F64, F16, BF16, I32, I64 and U8.
 */

import { EngineError } from '../errors';
import { f32ToBf16, f32ToF16, widenHalf } from './halfFloat';
import { DTYPE_SIZE, parseSafetensorsHeader } from './safetensorsHeader';
import type { SafetensorsDtype } from './safetensorsHeader';
import { encodeUtf8 } from './utf8';

export type { SafetensorsDtype } from './safetensorsHeader';

/** A tensor to write: row-major `data` of product(shape) elements. */
export interface TensorToWrite {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  /** A typed array (or any array of numbers); integers for I32, I64 and U8. */
  readonly data: ArrayLike<number>;
}

/**
 * The array type a decoded tensor of dtype D is stored in (I64 is narrowed to int32, F16 and BF16 widened to float32).
 */
export type TensorArray<D extends SafetensorsDtype = SafetensorsDtype> = D extends 'F32' | 'F16' | 'BF16'
  ? Float32Array
  : D extends 'F64'
    ? Float64Array
    : D extends 'U8'
      ? Uint8Array
      : Int32Array;

/** One tensor read back from a file. */
export interface DecodedTensor {
  readonly dtype: SafetensorsDtype;
  readonly shape: number[];
  readonly data: Float32Array | Float64Array | Int32Array | Uint8Array;
}

/** A decoded safetensors file. */
export interface SafetensorsFile {
  /** Tensors in header order. */
  readonly tensors: Map<string, DecodedTensor>;
  readonly metadata: Record<string, string>;
  /** The name used for this file in error messages (e.g. "model.safetensors"). */
  readonly source: string;
}

/**
 * Encodes tensors (in the given order) and optional string metadata into safetensors
 * bytes. Deterministic: the same input gives the same bytes. Throws EngineError
 * ('input/invalid') for duplicate or reserved names, bad shapes, a data length that is not
 * product(shape), or integer values the dtype cannot hold.
 */
export function encodeSafetensors(tensors: readonly TensorToWrite[], metadata?: Record<string, string>): Uint8Array {
  const names = new Set<string>();
  for (const t of tensors) checkTensorToWrite(t, names);
  const { out, starts } = layout(tensors, metadata);
  const view = new DataView(out.buffer);
  tensors.forEach((t, i) => writeElements(view, starts[i] as number, t.dtype, t.data));
  return out;
}

/**
 * The bytes of a safetensors file of F32 `tensors` (name and shape) before their values exist: the header written,
 * and each tensor's values as a Float32Array view into the bytes, to be filled in place — so a caller that computes
 * or reads the values there holds them once, not once in its arrays and again in the file. Null on a big-endian host
 * (the file is little-endian). Throws as encodeSafetensors does for names and shapes.
 */
export function layoutF32Safetensors(
  tensors: readonly { readonly name: string; readonly shape: readonly number[] }[],
  metadata?: Record<string, string>,
): { bytes: Uint8Array; views: Float32Array[] } | null {
  if (!LITTLE_ENDIAN) return null;
  const names = new Set<string>();
  const specs = tensors.map((t) => ({ ...t, dtype: 'F32' as const, length: t.shape.reduce((a, d) => a * d, 1) }));
  const sized = specs.map((t) => ({ ...t, data: { length: t.length } as ArrayLike<number> }));
  for (const t of sized) checkTensorToWrite(t, names);
  const { out, starts } = layout(sized, metadata);
  // data starts at 8 + a multiple of 8 and every F32 tensor's offset is a multiple of 4: aligned views
  return { bytes: out, views: specs.map((t, i) => new Float32Array(out.buffer, starts[i] as number, t.length)) };
}

/** The file's bytes with its header written (values still zero) and where each tensor's values start. */
function layout(
  tensors: readonly { name: string; dtype: SafetensorsDtype; shape: readonly number[]; data: { length: number } }[],
  metadata?: Record<string, string>,
): { out: Uint8Array; starts: number[] } {
  const parts: string[] = [];
  if (metadata !== undefined) {
    const fields = Object.entries(metadata).map(([k, v]) => {
      if (typeof v !== 'string')
        throw badInput(
          `metadata value "${k}" must be a string, got ${typeof v}; stringify it (e.g. JSON.stringify) first.`,
        );
      return `${JSON.stringify(k)}:${JSON.stringify(v)}`;
    });
    parts.push(`"__metadata__":{${fields.join(',')}}`);
  }
  let offset = 0;
  const ends: number[] = [];
  for (const t of tensors) {
    const end = offset + t.data.length * DTYPE_SIZE[t.dtype];
    parts.push(
      `${JSON.stringify(t.name)}:{"dtype":"${t.dtype}","shape":[` +
        `${t.shape.join(',')}],"data_offsets":[${offset},${end}]}`,
    );
    ends.push(end);
    offset = end;
  }
  const json = encodeUtf8(`{${parts.join(',')}}`);
  const headerLength = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLength + offset);
  new DataView(out.buffer).setUint32(0, headerLength, true); // high word stays 0: headers are far below 4 GB
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLength); // pad with spaces
  const base = 8 + headerLength;
  return { out, starts: tensors.map((t, i) => base + (ends[i] as number) - t.data.length * DTYPE_SIZE[t.dtype]) };
}

/**
 * Decodes and strictly validates safetensors bytes. `source` names the file in error
 * messages. Throws EngineError('checkpoint/invalid') saying what is wrong and what to do.
 */
export function decodeSafetensors(bytes: Uint8Array, source = 'safetensors file'): SafetensorsFile {
  const header = parseSafetensorsHeader(bytes, source);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tensors = new Map<string, DecodedTensor>();
  for (const e of header.entries) {
    const count = (e.end - e.begin) / DTYPE_SIZE[e.dtype];
    const data = readElements(view, header.dataStart + e.begin, e.dtype, count, (i, value) => {
      throw new EngineError(
        'checkpoint/invalid',
        `${source}: tensor ${JSON.stringify(e.name)} (I64) holds ${value} at index ${i}, which does ` +
          `not fit in 32 bits; Attention Lab keeps integer tensors as int32 — re-export the tensor ` +
          `with values in [-2147483648, 2147483647].`,
      );
    });
    tensors.set(e.name, { dtype: e.dtype, shape: e.shape, data });
  }
  return { tensors, metadata: header.metadata, source };
}

/**
 * The data of tensor `name`, checked to have exactly this dtype and shape. Throws
 * EngineError('checkpoint/invalid') naming what is missing or different.
 */
export function expectTensor<D extends SafetensorsDtype>(
  file: SafetensorsFile,
  name: string,
  dtype: D,
  shape: readonly number[],
): TensorArray<D> {
  const t = file.tensors.get(name);
  const fix = 'it was written by a different model config — load it with the config it was saved with, or retrain';
  if (t === undefined)
    throw new EngineError('checkpoint/invalid', `${file.source} has no tensor ${JSON.stringify(name)}; ${fix}.`);
  if (t.dtype !== dtype) {
    throw new EngineError(
      'checkpoint/invalid',
      `${file.source}: tensor ${JSON.stringify(name)} is ${t.dtype} but ${dtype} was expected; ${fix}.`,
    );
  }
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
    throw new EngineError(
      'checkpoint/invalid',
      `${file.source}: tensor ${JSON.stringify(name)} has shape [${t.shape.join(', ')}] but ` +
        `[${shape.join(', ')}] was expected; ${fix}.`,
    );
  }
  return t.data as TensorArray<D>;
}

/** Whether this host stores numbers little-endian, as safetensors does (then F32 bytes copy as they are). */
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

function badInput(msg: string): EngineError {
  return new EngineError('input/invalid', `encodeSafetensors: ${msg}`);
}

const INT_RANGE: Partial<Record<SafetensorsDtype, readonly [number, number]>> = {
  I32: [-(2 ** 31), 2 ** 31 - 1],
  I64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  U8: [0, 255],
};

function checkTensorToWrite(t: TensorToWrite, names: Set<string>): void {
  const label = `tensor ${JSON.stringify(t.name)}`;
  if (t.name === '__metadata__') throw badInput(`the name "__metadata__" is reserved for metadata; rename the tensor.`);
  if (names.has(t.name)) throw badInput(`${label} appears twice; every tensor needs its own name.`);
  names.add(t.name);
  if (!Object.hasOwn(DTYPE_SIZE, t.dtype))
    throw badInput(`${label} has dtype ${String(t.dtype)}; use one of ${Object.keys(DTYPE_SIZE).join(', ')}.`);
  if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0))
    throw badInput(`${label} has shape [${t.shape.join(', ')}]; dims must be whole numbers ≥ 0.`);
  const elements = t.shape.reduce((a, d) => a * d, 1);
  if (elements !== t.data.length)
    throw badInput(`${label} has shape [${t.shape.join(', ')}] (${elements} elements) but ${t.data.length} values.`);
  const range = INT_RANGE[t.dtype];
  if (range === undefined) return;
  for (let i = 0; i < t.data.length; i++) {
    const x = t.data[i] as number;
    if (!Number.isInteger(x) || x < range[0] || x > range[1]) {
      throw badInput(
        `${label} (${t.dtype}) holds ${x} at index ${i}, which ${t.dtype} cannot store; round or ` +
          `rescale it, or use F32.`,
      );
    }
  }
}

function writeElements(view: DataView, pos: number, dtype: SafetensorsDtype, data: ArrayLike<number>): void {
  const n = data.length;
  switch (dtype) {
    case 'F32':
      if (LITTLE_ENDIAN && data instanceof Float32Array) {
        // Same bytes on a little-endian host: one copy instead of n DataView calls (500 MB for GPT-2 small).
        new Uint8Array(view.buffer, view.byteOffset + pos, 4 * n).set(
          new Uint8Array(data.buffer, data.byteOffset, 4 * n),
        );
        return;
      }
      for (let i = 0; i < n; i++) view.setFloat32(pos + 4 * i, data[i] as number, true);
      return;
    case 'F64':
      for (let i = 0; i < n; i++) view.setFloat64(pos + 8 * i, data[i] as number, true);
      return;
    case 'I32':
      for (let i = 0; i < n; i++) view.setInt32(pos + 4 * i, data[i] as number, true);
      return;
    case 'I64':
      for (let i = 0; i < n; i++) {
        // Two's complement split of a safe integer into 32-bit words.
        const x = data[i] as number;
        view.setUint32(pos + 8 * i, x >>> 0, true);
        view.setInt32(pos + 8 * i + 4, Math.floor(x / 2 ** 32), true);
      }
      return;
    case 'U8':
      for (let i = 0; i < n; i++) view.setUint8(pos + i, data[i] as number);
      return;
    case 'F16':
      for (let i = 0; i < n; i++) view.setUint16(pos + 2 * i, f32ToF16(data[i] as number), true);
      return;
    case 'BF16':
      for (let i = 0; i < n; i++) view.setUint16(pos + 2 * i, f32ToBf16(data[i] as number), true);
      return;
    default:
      dtype satisfies never;
  }
}

function readElements(
  view: DataView,
  pos: number,
  dtype: SafetensorsDtype,
  n: number,
  tooWide: (index: number, value: bigint) => never,
): Float32Array | Float64Array | Int32Array | Uint8Array {
  switch (dtype) {
    case 'F32': {
      const out = new Float32Array(n);
      if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(new Uint8Array(view.buffer, view.byteOffset + pos, 4 * n));
      else for (let i = 0; i < n; i++) out[i] = view.getFloat32(pos + 4 * i, true);
      return out;
    }
    case 'F64': {
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) out[i] = view.getFloat64(pos + 8 * i, true);
      return out;
    }
    case 'I32': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) out[i] = view.getInt32(pos + 4 * i, true);
      return out;
    }
    case 'I64': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const lo = view.getUint32(pos + 8 * i, true);
        const hi = view.getInt32(pos + 8 * i + 4, true);
        // Fits in int32 iff the high word is the sign extension of the low word's top bit.
        if (hi !== (lo >= 2 ** 31 ? -1 : 0)) tooWide(i, view.getBigInt64(pos + 8 * i, true));
        out[i] = lo | 0;
      }
      return out;
    }
    case 'U8':
      return new Uint8Array(view.buffer, view.byteOffset + pos, n).slice(); // a copy, not a view
    case 'F16':
    case 'BF16': {
      const out = new Float32Array(n);
      widenHalf(dtype, new Uint8Array(view.buffer, view.byteOffset + pos, 2 * n), out, 0, n);
      return out;
    }
    default:
      return dtype satisfies never;
  }
}
