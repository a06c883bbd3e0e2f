/**
 * Reading and strictly validating the header of a safetensors file (Hugging Face,
 * https://github.com/huggingface/safetensors, "Format" in its README): an 8-byte
 * little-endian u64 N, then N bytes of UTF-8 JSON mapping each tensor name to
 * `{dtype, shape, data_offsets: [begin, end]}` (offsets relative to the first byte after
 * the header) plus an optional `"__metadata__"` object of strings; then the data.
 *
 * The file is treated as hostile: every number is checked before it is used, and every
 * problem throws EngineError('checkpoint/invalid') saying what is wrong and what to do.
 * As in the reference implementation, the tensors must tile the data section exactly:
 * no overlaps, no holes, nothing after the last tensor.
 * The header can be parsed from the whole file or, for files read piece by piece
 * (`src/lab/runs/safetensorsReader.ts`), from its first 8 + N bytes and the file's length.
 * Leaves out: copying the tensor bytes into arrays (`safetensors.ts`) and dtypes this
 * project does not read (I8, F8, ...), which are reported as unsupported.
 */

import { EngineError } from '../errors';
import { decodeUtf8Strict } from './utf8';

/** The element types this project reads and writes (F16 and BF16 are widened to float32 on reading). */
export type SafetensorsDtype = 'F32' | 'F64' | 'I32' | 'I64' | 'U8' | 'F16' | 'BF16';

/** Bytes per element of each supported dtype. */
export const DTYPE_SIZE: Readonly<Record<SafetensorsDtype, number>> = {
  F32: 4,
  F64: 8,
  I32: 4,
  I64: 8,
  U8: 1,
  F16: 2,
  BF16: 2,
};

/** Dtypes the format defines that this project does not read. */
const OTHER_DTYPES = [
  'BOOL',
  'I8',
  'I16',
  'U16',
  'U32',
  'U64',
  'F8_E4M3',
  'F8_E5M2',
  'F8_E8M0',
  'F6_E2M3',
  'F6_E3M2',
  'F4',
  'C64',
];

/** Largest header accepted (the reference implementation's limit, 100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;

/** One validated header entry; `begin`/`end` are byte offsets into the data section. */
export interface HeaderEntry {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: number[];
  readonly begin: number;
  readonly end: number;
}

/** A validated header: the tensors in header order, the metadata, and where data starts. */
export interface ParsedHeader {
  readonly entries: HeaderEntry[];
  readonly metadata: Record<string, string>;
  /** Absolute byte offset of the data section (8 + N). */
  readonly dataStart: number;
}

const CORRUPT = 'the file is corrupt or was not written as safetensors — restore it from a backup or retrain';

/** Parses and validates the header of `bytes` (the whole file); `source` names the file in messages. */
export function parseSafetensorsHeader(bytes: Uint8Array, source: string): ParsedHeader {
  return parseSafetensorsHeaderPrefix(bytes, bytes.length, source);
}

/**
 * The header length N from the first 8 bytes of a file of `fileLength` bytes, checked
 * against the limit and the file's length, so a reader knows how many bytes to read next.
 */
export function safetensorsHeaderLength(first: Uint8Array, fileLength: number, source: string): number {
  const bad = (msg: string): never => {
    throw new EngineError('checkpoint/invalid', `${source}: ${msg}`);
  };
  if (first.length < 8 || fileLength < 8) {
    bad(
      `the file is ${Math.min(first.length, fileLength)} bytes long, but a safetensors file starts ` +
        `with an 8-byte header length; the file is empty or was cut off — restore it from a backup or retrain.`,
    );
  }
  const view = new DataView(first.buffer, first.byteOffset, 8);
  const lo = view.getUint32(0, true);
  const hi = view.getUint32(4, true);
  const n = hi * 2 ** 32 + lo;
  if (hi !== 0 || n > MAX_HEADER_BYTES)
    bad(`the header length field says ${n} bytes, more than the ${MAX_HEADER_BYTES}-byte limit; ${CORRUPT}.`);
  if (n < 2) bad(`the header length field says ${n} bytes, too small for even an empty JSON object; ${CORRUPT}.`);
  if (8 + n > fileLength) {
    bad(
      `the file is truncated: its header says ${n} bytes but only ${fileLength - 8} follow; the ` +
        `file was cut off — restore it from a backup or retrain.`,
    );
  }
  return n;
}

/**
 * Parses and validates the header from `prefix`, the first 8 + N (or more) bytes of a file
 * of `fileLength` bytes: every tensor is checked against the data section the file has.
 */
export function parseSafetensorsHeaderPrefix(prefix: Uint8Array, fileLength: number, source: string): ParsedHeader {
  const bad = (msg: string, cause?: unknown): never => {
    throw new EngineError('checkpoint/invalid', `${source}: ${msg}`, cause === undefined ? undefined : { cause });
  };
  const n = safetensorsHeaderLength(prefix, fileLength, source);
  if (prefix.length < 8 + n)
    throw new Error(`parseSafetensorsHeaderPrefix: pass the first ${8 + n} bytes, got ${prefix.length}`);
  const bytes = prefix;
  let text = '';
  try {
    text = decodeUtf8Strict(bytes.subarray(8, 8 + n));
  } catch (e) {
    bad(`the header is not valid UTF-8; ${CORRUPT}.`, e);
  }
  if (!text.startsWith('{'))
    bad(`the header must start with "{", found ${JSON.stringify(text.slice(0, 10))}; ${CORRUPT}.`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    bad(`the header is not valid JSON (${e instanceof Error ? e.message : String(e)}); ${CORRUPT}.`, e);
  }
  if (!isPlainObject(json)) return bad(`the header must be a JSON object of tensors; ${CORRUPT}.`);
  const dataLength = fileLength - 8 - n;
  const entries: HeaderEntry[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(json)) {
    if (name === '__metadata__') metadata = checkMetadata(value, bad);
    else entries.push(checkEntry(name, value, dataLength, bad));
  }
  checkTiling(entries, dataLength, bad);
  return { entries, metadata, dataStart: 8 + n };
}

type Bad = (msg: string) => never;

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function checkMetadata(value: unknown, bad: Bad): Record<string, string> {
  if (!isPlainObject(value)) return bad(`"__metadata__" must be an object of strings; ${CORRUPT}.`);
  const pairs: [string, string][] = [];
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') bad(`metadata value "${k}" must be a string, found ${JSON.stringify(v)}; ${CORRUPT}.`);
    pairs.push([k, v as string]);
  }
  return Object.fromEntries(pairs); // own data properties, even for a key named "__proto__"
}

function checkEntry(name: string, value: unknown, dataLength: number, bad: Bad): HeaderEntry {
  const t = `tensor ${JSON.stringify(name)}`;
  if (!isPlainObject(value)) return bad(`${t} must be an object with dtype, shape and data_offsets; ${CORRUPT}.`);
  const { dtype, shape, data_offsets: offsets } = value;
  if (dtype === undefined || shape === undefined || offsets === undefined) {
    const missing = ['dtype', 'shape', 'data_offsets'].filter((k) => value[k] === undefined);
    bad(`${t} is missing ${missing.join(', ')}; ${CORRUPT}.`);
  }
  if (typeof dtype !== 'string')
    return bad(`${t} has a dtype that is not a string (${JSON.stringify(dtype)}); ${CORRUPT}.`);
  if (!Object.hasOwn(DTYPE_SIZE, dtype)) {
    if (OTHER_DTYPES.includes(dtype)) {
      bad(
        `${t} has dtype ${dtype}, which Attention Lab does not read (it reads ` +
          `${Object.keys(DTYPE_SIZE).join(', ')}); convert the tensor to F32 before loading.`,
      );
    }
    bad(`${t} has unknown dtype ${JSON.stringify(dtype)}; ${CORRUPT}.`);
  }
  const size = DTYPE_SIZE[dtype as SafetensorsDtype];
  if (!Array.isArray(shape) || !shape.every(isCount)) {
    return bad(
      `${t} has shape ${JSON.stringify(shape)}; a shape is a list of whole numbers ≥ 0. ${capitalize(CORRUPT)}.`,
    );
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) {
    return bad(
      `${t} has data_offsets ${JSON.stringify(offsets)}; they must be two whole numbers [begin, ` +
        `end]. ${capitalize(CORRUPT)}.`,
    );
  }
  const [begin, end] = offsets as [number, number];
  if (end < begin) bad(`${t} ends (byte ${end}) before it begins (byte ${begin}); ${CORRUPT}.`);
  if (end > dataLength) {
    bad(
      `${t} ends at data byte ${end} but the data section has only ${dataLength} bytes; the file ` +
        `was cut off or is corrupt — restore it from a backup or retrain.`,
    );
  }
  const elements = shape.includes(0) ? 0 : (shape as number[]).reduce((a, d) => a * d, 1);
  if (elements * size !== end - begin) {
    bad(
      `${t} has shape [${shape.join(', ')}] of ${dtype}, which needs ${elements * size} bytes, but ` +
        `its data_offsets [${begin}, ${end}] hold ${end - begin}; ${CORRUPT}.`,
    );
  }
  return { name, dtype: dtype as SafetensorsDtype, shape: shape as number[], begin, end };
}

/** Sorted by offset, each tensor must start where the previous one ended, from 0 to the end. */
function checkTiling(entries: readonly HeaderEntry[], dataLength: number, bad: Bad): void {
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let pos = 0;
  let prev: HeaderEntry | null = null;
  for (const e of sorted) {
    if (e.begin < pos && prev) {
      bad(
        `tensors ${JSON.stringify(prev.name)} [${prev.begin}, ${prev.end}) and ` +
          `${JSON.stringify(e.name)} [${e.begin}, ${e.end}) overlap; ${CORRUPT}.`,
      );
    }
    if (e.begin > pos)
      bad(`data bytes [${pos}, ${e.begin}) belong to no tensor (a hole before ${JSON.stringify(e.name)}); ${CORRUPT}.`);
    pos = e.end;
    prev = e;
  }
  if (pos !== dataLength)
    bad(`data bytes [${pos}, ${dataLength}) after the last tensor belong to no tensor; ${CORRUPT}.`);
}

function isCount(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
