/**
 * Reading PyTorch's own checkpoint files — `pytorch_model.bin`, `.pt`, `.pth` — without
 * running anything in them. `torch.save` writes (since PyTorch 1.6) a zip: `<name>/data.pkl`,
 * a pickle of the state dict whose tensors point at storages by key, `<name>/data/<key>`,
 * each storage's raw little-endian bytes (stored, not compressed), and `byteorder`/`version`.
 * Before 1.6 (and with `_use_new_zipfile_serialization=False`) it wrote the legacy format:
 * five pickles in a row (magic number, protocol, system info, the object, the storage keys)
 * and then each storage as an int64 element count and its bytes. Both are read here.
 *
 * The pickle goes through the engine's restricted reader (engine/io/torchPickle.ts), which
 * allows only the globals torch.save writes for tensors and refuses any other by name, so a
 * hostile file is refused before any of it is used; nothing in it is ever executed. The
 * state dict is picked from it (engine/io/torchStateDict.ts) and its tensors are then read
 * one at a time, on request, in pieces of {@link CHUNK_BYTES} (a 500 MB file is never in
 * memory whole), widened to float32 from F16, BF16 or F64, strided views copied in order.
 *
 * Leaves out: compressed zip entries (torch never writes them), big-endian files (refused),
 * integer tensors as weights (refused when asked for, as the safetensors reader does), and
 * sharded `pytorch_model-0000N-of-0000M.bin` sets.
 */

import { EngineError } from '../../engine/errors';
import type { PickleValue, TorchStorageRef, TorchTensorRef } from '../../engine/io/torchPickle';
import { PickleDict, PickleEndError, PickleTuple, TORCH_DTYPE_SIZE, unpickle } from '../../engine/io/torchPickle';
import {
  findStateDict,
  gatherF32,
  isFloatDtype,
  isTensorRef,
  viewSpan,
  widenInto,
} from '../../engine/io/torchStateDict';
import type { FoundStateDict } from '../../engine/io/torchStateDict';
import type { ZipEntry } from '../../engine/io/zipDirectory';
import {
  parseCentralDirectory,
  parseZipEnd,
  ZIP_LOCAL_HEADER_BYTES,
  ZIP_TAIL_BYTES,
  zipDataOffset,
} from '../../engine/io/zipDirectory';
import type { SourceTensor } from '../../engine/models/importLayouts';
import { CancelledError } from '../base/cancelled';
import type { LabFs } from '../files/labFs';
import type { ReadHooks } from '../runs/safetensorsReader';
import { CHUNK_BYTES, checkFinite, readFully } from '../runs/safetensorsReader';

/** Largest `data.pkl` read: a state dict's pickle is kilobytes; one past this holds far more than tensors. */
export const MAX_PICKLE_BYTES = 256 << 20;

/** The magic number the legacy format's first pickle holds. */
const LEGACY_MAGIC = 0x1950a86a20f9469cfc6cn;

/**
 * Whether the first 9 bytes of a file are a zip's ("PK\x03\x04") or a pickle's (PROTO 2–5). A safetensors
 * file whose header is 0x0280–0x0580 bytes long starts with the same two bytes; its header then opens with "{".
 */
export function looksLikeTorchSave(first: Uint8Array): boolean {
  return (
    (first[0] === 0x50 && first[1] === 0x4b && first[2] === 0x03 && first[3] === 0x04) ||
    (first[0] === 0x80 && (first[1] ?? 0) >= 2 && (first[1] ?? 0) <= 5 && first[8] !== 0x7b)
  );
}

/** A storage's bytes in the file. */
interface StorageBytes {
  readonly offset: number;
  readonly bytes: number;
}

/** An open torch.save checkpoint: its state dict's tensors, read one at a time. */
export class TorchCheckpointReader {
  private readonly byName: Map<string, TorchTensorRef>;
  private done = 0;
  /** Bytes of every tensor of the state dict. */
  readonly dataBytes: number;

  private constructor(
    private readonly fs: LabFs,
    readonly file: string,
    private readonly found: FoundStateDict,
    private readonly storages: ReadonlyMap<string, StorageBytes>,
    /** Which of the two formats the file is in. */
    readonly format: 'zip' | 'legacy',
    private readonly chunkBytes: number,
  ) {
    this.byName = new Map(found.tensors.map((t) => [t.name, t.tensor]));
    this.dataBytes = found.tensors.reduce((a, t) => a + this.bytesOf(t.name), 0);
  }

  /**
   * Opens `file`, reads its pickle through the restricted reader and picks the state dict;
   * reads no tensor. Throws EngineError('checkpoint/invalid') in one line for a refused global,
   * a truncated or damaged file, or one that holds no state dict.
   */
  static async open(
    fs: LabFs,
    file: string,
    opts: { readonly chunkBytes?: number } = {},
  ): Promise<TorchCheckpointReader> {
    const name = fs.basename(file);
    const st = await fs.stat(file);
    if (st?.kind !== 'file') throw new EngineError('input/invalid', `${file} is not a file; pass a checkpoint file.`);
    const first = await fs.readRange(file, 0, Math.min(9, st.size));
    if (!looksLikeTorchSave(first))
      throw new EngineError(
        'checkpoint/invalid',
        `${name} was not written by torch.save (it is neither a zip nor a pickle); pass a .safetensors file or ` +
          'a torch.save state dict.',
      );
    const chunkBytes = opts.chunkBytes ?? CHUNK_BYTES;
    if (first[0] === 0x50) {
      const { found, storages } = await openZip(fs, file, name, st.size);
      return new TorchCheckpointReader(fs, file, found, storages, 'zip', chunkBytes);
    }
    const { found, storages } = await openLegacy(fs, file, name, st.size);
    return new TorchCheckpointReader(fs, file, found, storages, 'legacy', chunkBytes);
  }

  /** The state dict's tensors, names and shapes, in the file's order. */
  get tensors(): SourceTensor[] {
    return this.found.tensors.map((t) => ({ name: t.name, shape: t.tensor.shape }));
  }

  /** The key the state dict sits under (`model` …), or null when the file is the state dict. */
  get stateDictKey(): string | null {
    return this.found.key;
  }

  /** The model's hyperparameters saved beside the state dict (nanoGPT's `model_args`), and their key. */
  get config(): { readonly key: string; readonly values: Record<string, unknown> } | null {
    const { config, configKey } = this.found;
    return config && configKey ? { key: configKey, values: config } : null;
  }

  /** Whether tensors `a` and `b` are the same view (offset, shape, strides) of the same storage. */
  sameTensor(a: string, b: string): boolean {
    const x = this.byName.get(a);
    const y = this.byName.get(b);
    const same = (p: readonly number[], q: readonly number[]): boolean =>
      p.length === q.length && p.every((d, i) => d === q[i]);
    return (
      !!x &&
      !!y &&
      x.storage.key === y.storage.key &&
      x.offset === y.offset &&
      same(x.shape, y.shape) &&
      same(x.stride, y.stride)
    );
  }

  /** The byte of the file where tensor `name`'s first element lies (0 for an unknown name). */
  offsetOf(name: string): number {
    const t = this.byName.get(name);
    const where = t ? this.storages.get(t.storage.key) : undefined;
    return t && where ? where.offset + t.offset * TORCH_DTYPE_SIZE[t.storage.dtype] : 0;
  }

  /** Bytes tensor `name`'s values take in the file (0 for an unknown name). */
  bytesOf(name: string): number {
    const t = this.byName.get(name);
    return t ? t.shape.reduce((a, d) => a * d, 1) * TORCH_DTYPE_SIZE[t.storage.dtype] : 0;
  }

  /**
   * Tensor `name` as float32 in row-major order (F32 copied; F16, BF16, F64 converted), read in
   * pieces with progress; an integer tensor is refused naming it, and so is a NaN or infinite value.
   */
  async readF32(name: string, hooks: ReadHooks = {}): Promise<Float32Array> {
    const base = this.fs.basename(this.file);
    const t = this.byName.get(name);
    if (!t) throw new EngineError('checkpoint/invalid', `${base} has no tensor ${JSON.stringify(name)}.`);
    const dtype = t.storage.dtype;
    if (!isFloatDtype(dtype))
      throw new EngineError(
        'checkpoint/invalid',
        `${base}: tensor ${JSON.stringify(name)} is ${dtype}, but a weight must be F32, F16, BF16 or F64; ` +
          're-save it as float32.',
      );
    const size = TORCH_DTYPE_SIZE[dtype];
    const where = this.storages.get(t.storage.key) as StorageBytes;
    const span = viewSpan(t);
    const start = where.offset + span.first * size;
    const total = span.count * size;
    // A whole number of elements per piece.
    const step = Math.max(size, this.chunkBytes - (this.chunkBytes % size));
    const out = span.contiguous ? new Float32Array(span.count) : null;
    const raw = span.contiguous ? null : new Uint8Array(total);
    for (let off = 0; off < total; off += step) {
      if (hooks.isCancelled?.()) throw new CancelledError(`reading ${base}`);
      const len = Math.min(step, total - off);
      const piece = await readFully(this.fs, this.file, start + off, len);
      if (out) {
        // float32 bytes copy as they are (little-endian, as every host Node runs on here); others widen.
        if (dtype === 'F32') new Uint8Array(out.buffer).set(piece, off);
        else widenInto(dtype, piece, out, off / size, len / size);
        checkFinite(out, off / size, len / size, this.file, name);
      } else (raw as Uint8Array).set(piece, off);
      this.done += out ? len : 0;
      if (out) hooks.onBytes?.(this.done, this.dataBytes);
      if (hooks.yieldNow) await hooks.yieldNow();
    }
    if (out) return out;
    // A strided view (a transpose, a slice, a storage shared with other tensors): gather its elements in order.
    const values = gatherF32(t, raw as Uint8Array);
    checkFinite(values, 0, values.length, this.file, name);
    this.done += this.bytesOf(name);
    hooks.onBytes?.(this.done, this.dataBytes);
    return values;
  }
}

/** Every storage the state dict's tensors use, by key. */
function storagesOf(found: FoundStateDict): Map<string, TorchStorageRef> {
  return new Map(found.tensors.map((t) => [t.tensor.storage.key, t.tensor.storage]));
}

/** Every storage any tensor of `root` uses (the legacy format's sizes depend on them all), by key. */
function everyStorage(root: PickleValue): Map<string, TorchStorageRef> {
  const out = new Map<string, TorchStorageRef>();
  const seen = new Set<object>();
  // An explicit stack, not recursion: a hostile pickle may nest a million lists.
  const todo: (PickleValue | undefined)[] = [root];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v !== 'object' || v === null || seen.has(v)) continue; // a pickle's memo can make cycles
    seen.add(v);
    if (isTensorRef(v)) out.set(v.storage.key, v.storage);
    else if (Array.isArray(v) || v instanceof PickleTuple) for (const x of Array.isArray(v) ? v : v.items) todo.push(x);
    else if (v instanceof PickleDict) for (const x of v.map.values()) todo.push(x);
  }
  return out;
}

function damaged(name: string, what: string): never {
  throw new EngineError(
    'checkpoint/invalid',
    `${name}: ${what}; the file was cut off or damaged — copy it again, or re-save it with torch.save.`,
  );
}

/** The zip format: the directory, `data.pkl` through the restricted reader, and where each storage's bytes are. */
async function openZip(
  fs: LabFs,
  file: string,
  name: string,
  size: number,
): Promise<{ found: FoundStateDict; storages: Map<string, StorageBytes> }> {
  const tailBytes = Math.min(size, ZIP_TAIL_BYTES);
  const end = parseZipEnd(await readFully(fs, file, size - tailBytes, tailBytes), size, name);
  const cd = await readFully(fs, file, end.cdOffset, end.cdSize);
  const entries = parseCentralDirectory(cd, end.count, size, name);
  const pkls = entries.filter((e) => /^[^/]+\/data\.pkl$/.test(e.name));
  if (pkls.length !== 1)
    damaged(
      name,
      `the zip holds ${pkls.length === 0 ? 'no' : 'several'} <name>/data.pkl, so torch.save did not write it`,
    );
  const pkl = pkls[0] as ZipEntry;
  const prefix = pkl.name.slice(0, -'data.pkl'.length);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const data = async (e: ZipEntry, cap: number): Promise<Uint8Array> => {
    if (e.method !== 0)
      damaged(name, `entry ${e.name} is compressed (method ${e.method}), which torch.save never does`);
    if (e.size > cap) damaged(name, `entry ${e.name} is ${e.size} bytes, more than a state dict's ${cap}`);
    const at = zipDataOffset(await readFully(fs, file, e.headerOffset, ZIP_LOCAL_HEADER_BYTES), e, size, name);
    return readFully(fs, file, at, e.size);
  };
  const order = byName.get(`${prefix}byteorder`);
  if (order) {
    const text = String.fromCharCode(...(await data(order, 16)));
    if (text !== 'little')
      throw new EngineError(
        'checkpoint/invalid',
        `${name} was saved on a ${text}-endian machine; load and re-save it with torch.save on a little-endian one.`,
      );
  }
  const found = findStateDict(unpickle(await data(pkl, MAX_PICKLE_BYTES), name).value, name);
  const storages = new Map<string, StorageBytes>();
  for (const s of storagesOf(found).values()) {
    const e = byName.get(`${prefix}data/${s.key}`);
    if (!e) return damaged(name, `the zip has no ${prefix}data/${s.key}, a storage its tensors use`);
    if (e.method !== 0) damaged(name, `storage ${e.name} is compressed, which torch.save never does`);
    const bytes = s.numel * TORCH_DTYPE_SIZE[s.dtype];
    if (e.size < bytes) damaged(name, `storage ${e.name} holds ${e.size} bytes, fewer than its ${bytes}`);
    const local = await readFully(fs, file, e.headerOffset, ZIP_LOCAL_HEADER_BYTES);
    storages.set(s.key, { offset: zipDataOffset(local, e, size, name), bytes });
  }
  return { found, storages };
}

/**
 * The legacy format: its pickles are read from a prefix of the file that grows until they
 * end; then each storage, in the order the last pickle lists, is an int64 count and its bytes.
 */
async function openLegacy(
  fs: LabFs,
  file: string,
  name: string,
  size: number,
): Promise<{ found: FoundStateDict; storages: Map<string, StorageBytes> }> {
  for (let cap = Math.min(size, 1 << 20); ; cap = Math.min(size, cap * 4)) {
    const bytes = await readFully(fs, file, 0, cap);
    let pickles: PickleValue[];
    let pos = 0;
    try {
      pickles = [];
      for (let i = 0; i < 5; i++) {
        const u = unpickle(bytes, name, pos);
        pickles.push(u.value);
        pos = u.end;
      }
    } catch (e) {
      if (e instanceof PickleEndError && cap < size && cap < MAX_PICKLE_BYTES) continue;
      throw e;
    }
    const [magic, , sysInfo, root, keys] = pickles;
    if (magic !== Number(LEGACY_MAGIC) && magic !== LEGACY_MAGIC)
      damaged(name, 'its first pickle is not torch.save’s magic number, so torch.save did not write it');
    if (sysInfo instanceof PickleDict && sysInfo.map.get('little_endian') === false)
      throw new EngineError(
        'checkpoint/invalid',
        `${name} was saved on a big-endian machine; load and re-save it with torch.save on a little-endian one.`,
      );
    const found = findStateDict(root ?? null, name);
    const refs = everyStorage(root ?? null);
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string'))
      return damaged(name, 'its storage list is not a list of keys');
    const storages = new Map<string, StorageBytes>();
    for (const key of keys as string[]) {
      if (pos + 8 > size) damaged(name, `storage ${key} runs past the end of the file`);
      const head = await readFully(fs, file, pos, 8);
      const v = new DataView(head.buffer, head.byteOffset, 8);
      const numel = v.getUint32(0, true) + v.getUint32(4, true) * 2 ** 32;
      const s = refs.get(key);
      const bytes = numel * (s ? TORCH_DTYPE_SIZE[s.dtype] : 1);
      if (s && numel < s.numel) damaged(name, `storage ${key} holds ${numel} elements, fewer than its ${s.numel}`);
      if (!s) damaged(name, `storage ${key} is used by no tensor, so its size is unknown`);
      if (pos + 8 + bytes > size) damaged(name, `storage ${key} runs past the end of the file`);
      storages.set(key, { offset: pos + 8, bytes });
      pos += 8 + bytes;
    }
    for (const key of storagesOf(found).keys()) if (!storages.has(key)) damaged(name, `storage ${key} is missing`);
    return { found, storages };
  }
}
