/**
 * Reading a safetensors file that may be far larger than what should sit in memory twice
 * (GPT-2 small is 500 MB of float32): the header is read and validated first (the pure
 * parser in `engine/io/safetensorsHeader.ts`, against the file's real length), then each
 * tensor on request, in pieces of {@link CHUNK_BYTES}, widened to float32 as it arrives
 * (F16, BF16, F64), with progress in bytes and a cancellation check between pieces.
 *
 * A weight that is NaN or infinite is refused as it arrives, naming its tensor.
 *
 * Pickle checkpoints (`.pt`, `.bin`, `.pth`, `.ckpt`) are refused before a byte of them is
 * interpreted: unpickling runs code. The message gives the three lines of Python that
 * convert one with the `safetensors` package.
 *
 * The file is read through the lab's file system in ranges, so the same reader serves a
 * file on disk and one in the web host's workspace.
 *
 * Leaves out: memory mapping (Node has none), big-endian hosts (float32 bytes are copied
 * as they are: safetensors and every host Node runs on here are little-endian), and writing.
 */

import { EngineError } from '../../engine/errors';
import { widenHalf } from '../../engine/io/halfFloat';
import type { HeaderEntry, ParsedHeader } from '../../engine/io/safetensorsHeader';
import { parseSafetensorsHeaderPrefix, safetensorsHeaderLength } from '../../engine/io/safetensorsHeader';
import { CancelledError } from '../base/cancelled';
import { extensionOf } from '../files/slashPaths';
import type { LabFs } from '../files/labFs';

/** Bytes read per piece. */
export const CHUNK_BYTES = 8 << 20;

/** Progress and cancellation of reading. */
export interface ReadHooks {
  /** Bytes of tensor data read so far and in the whole data section. */
  readonly onBytes?: (done: number, total: number) => void;
  /** Checked between pieces; when true reading stops with a {@link CancelledError}. */
  readonly isCancelled?: () => boolean;
  /** Awaited between pieces so a worker can take in a stop command. */
  readonly yieldNow?: () => Promise<void>;
}

const PICKLE_EXTENSIONS = ['pt', 'pth', 'bin', 'ckpt'];

/** The last name of a path (`/` or `\\` separated). */
function nameOf(file: string): string {
  return file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
}

/** The one-line refusal of a pickle checkpoint, with the conversion in three lines of Python. */
export function pickleMessage(file: string): string {
  const name = nameOf(file);
  return (
    `${name} is a PyTorch pickle checkpoint, which Attention Lab never opens (unpickling can run ` +
    `code); convert it to safetensors with the safetensors package (pip install safetensors) and import that: ` +
    `import torch, safetensors.torch as st ⏎ sd = torch.load(${JSON.stringify(name)}, ` +
    `map_location="cpu"); sd = sd.get("model", sd) ⏎ ` +
    `st.save_file({k: v.detach().clone().contiguous() for k, v in sd.items()}, "model.safetensors")`
  );
}

/** True for a file name PyTorch pickles are saved under. */
export function isPickleName(file: string): boolean {
  return PICKLE_EXTENSIONS.includes(extensionOf(file));
}

/** Pickle protocol 2+ starts with 0x80; `torch.save` since 1.6 writes a zip ("PK\x03\x04"). */
function looksLikePickle(first: Uint8Array): boolean {
  return (
    (first[0] === 0x80 && (first[1] ?? 0) >= 2 && (first[1] ?? 0) <= 5) ||
    (first[0] === 0x50 && first[1] === 0x4b && first[2] === 0x03 && first[3] === 0x04)
  );
}

/**
 * An open safetensors file: its validated header, and tensors read one at a time (each piece read on its own, so
 * nothing stays open).
 */
export class SafetensorsReader {
  private readonly byName: Map<string, HeaderEntry>;
  private done = 0;

  private constructor(
    private readonly fs: LabFs,
    readonly file: string,
    readonly header: ParsedHeader,
    /** Bytes of the data section. */
    readonly dataBytes: number,
    private readonly chunkBytes: number,
  ) {
    this.byName = new Map(header.entries.map((e) => [e.name, e]));
  }

  /**
   * Opens `file` and validates its header. Throws EngineError('checkpoint/invalid') for a
   * pickle, a truncated file, a header past the end, overlaps, holes and unknown dtypes.
   */
  static async open(fs: LabFs, file: string, opts: { readonly chunkBytes?: number } = {}): Promise<SafetensorsReader> {
    const name = fs.basename(file);
    if (isPickleName(file)) throw new EngineError('checkpoint/invalid', pickleMessage(file));
    const st = await fs.stat(file);
    if (st?.kind !== 'file') throw new EngineError('input/invalid', `${file} is not a file; pass a .safetensors file.`);
    const size = st.size;
    const first = await fs.readRange(file, 0, Math.min(9, size));
    // A header length of 0x…0380 (896) starts like pickle protocol 3; a safetensors header then opens with "{".
    if (size >= 4 && looksLikePickle(first) && first[8] !== 0x7b)
      throw new EngineError('checkpoint/invalid', pickleMessage(file));
    const n = safetensorsHeaderLength(first, size, name);
    const prefix = await readFully(fs, file, 0, 8 + n);
    const header = parseSafetensorsHeaderPrefix(prefix, size, name);
    return new SafetensorsReader(fs, file, header, size - header.dataStart, opts.chunkBytes ?? CHUNK_BYTES);
  }

  /** Tensor names in header order. */
  get names(): string[] {
    return this.header.entries.map((e) => e.name);
  }

  /** The header entry of `name`, or undefined. */
  entry(name: string): HeaderEntry | undefined {
    return this.byName.get(name);
  }

  /**
   * Tensor `name` as float32 (F32 copied, F16/BF16/F64 converted), read in pieces with
   * progress; integer tensors are refused, naming the tensor and its dtype, and so is a NaN
   * or infinite value (or an F64 too large for float32), naming the tensor and the index.
   */
  async readF32(name: string, hooks: ReadHooks = {}): Promise<Float32Array> {
    const e = this.byName.get(name);
    if (!e) throw new EngineError('checkpoint/invalid', `${nameOf(this.file)} has no tensor ${JSON.stringify(name)}.`);
    if (e.dtype !== 'F32' && e.dtype !== 'F16' && e.dtype !== 'BF16' && e.dtype !== 'F64') {
      throw new EngineError(
        'checkpoint/invalid',
        `${nameOf(this.file)}: tensor ${JSON.stringify(name)} is ${e.dtype}, but a weight must be ` +
          `F32, F16, BF16 or F64; re-save it as float32.`,
      );
    }
    const size = e.dtype === 'F32' ? 4 : e.dtype === 'F64' ? 8 : 2;
    const count = (e.end - e.begin) / size;
    const out = new Float32Array(count);
    const start = this.header.dataStart + e.begin;
    // A whole number of elements per piece.
    const step = Math.max(size, this.chunkBytes - (this.chunkBytes % size));
    const outBytes = new Uint8Array(out.buffer);
    for (let off = 0; off < e.end - e.begin; off += step) {
      if (hooks.isCancelled?.()) throw new CancelledError(`reading ${nameOf(this.file)}`);
      const len = Math.min(step, e.end - e.begin - off);
      const piece = await readFully(this.fs, this.file, start + off, len);
      if (e.dtype === 'F32') outBytes.set(piece, off);
      else widen(e.dtype, piece, out, off / size, len / size);
      checkFinite(out, off / size, len / size, this.file, name);
      this.done += len;
      hooks.onBytes?.(this.done, this.dataBytes);
      if (hooks.yieldNow) await hooks.yieldNow();
    }
    return out;
  }

  /**
   * Reads F32 tensor `name` straight into `dst` (its length must be the tensor's), piece by
   * piece, with no copy of the whole tensor in between: how a checkpoint's weights go into a
   * model's buffers.
   */
  async readF32Into(name: string, dst: Float32Array | Float64Array): Promise<void> {
    const e = this.byName.get(name);
    if (!e || e.dtype !== 'F32' || (e.end - e.begin) / 4 !== dst.length)
      throw new Error(`readF32Into: ${name} is not an F32 tensor of ${dst.length} values`);
    const target = dst instanceof Float32Array ? dst : new Float32Array(dst.length);
    const bytes = new Uint8Array(target.buffer, target.byteOffset, target.byteLength);
    for (let off = 0; off < bytes.length; off += this.chunkBytes) {
      const len = Math.min(this.chunkBytes, bytes.length - off);
      bytes.set(await readFully(this.fs, this.file, this.header.dataStart + e.begin + off, len), off);
    }
    this.done += bytes.length;
    if (target !== dst) dst.set(target);
  }
}

/** Throws at the first NaN or infinity among `count` values of `out` from `at` (a weight no trained model holds). */
function checkFinite(out: Float32Array, at: number, count: number, file: string, name: string): void {
  for (let i = at; i < at + count; i++) {
    const x = out[i] as number;
    if (x - x !== 0) {
      throw new EngineError(
        'checkpoint/invalid',
        `${nameOf(file)}: tensor ${JSON.stringify(name)} holds ${x} at index ${i} of ${out.length}; ` +
          `the weights are damaged or come from a run whose loss diverged — import a checkpoint saved before that.`,
      );
    }
  }
}

function widen(dtype: 'F16' | 'BF16' | 'F64', src: Uint8Array, dst: Float32Array, at: number, count: number): void {
  if (dtype !== 'F64') {
    widenHalf(dtype, src, dst, at, count);
    return;
  }
  const view = new DataView(src.buffer, src.byteOffset, src.byteLength);
  for (let i = 0; i < count; i++) dst[at + i] = view.getFloat64(8 * i, true);
}

/** Reads exactly `length` bytes at `position`; a short read means the file shrank. */
async function readFully(fs: LabFs, file: string, position: number, length: number): Promise<Uint8Array> {
  const got = await fs.readRange(file, position, length);
  if (got.length < length) {
    throw new EngineError(
      'checkpoint/invalid',
      `the file ended ${length - got.length} bytes early while reading at byte ` +
        `${position + got.length}; it was cut off or is being written — wait for it to finish, or copy it again.`,
    );
  }
  return got;
}
