/**
 * The WebAssembly backend's memory: one shared `WebAssembly.Memory` that the kernel module
 * (and every helper thread's instance of it) works on, a bump allocator over it, and the
 * test "is this array inside it?" that decides between the fast kernels and the reference.
 *
 * Why shared memory: `alloc(n)` hands out Float32Array views into wasm memory (and
 * `allocU8(n)` byte views, for masks) so kernels read and write tensors without copies. Growing an ordinary memory
 * detaches its
 * ArrayBuffer and with it every view handed out so far; growing a shared memory does not
 * (each grow yields a new, longer SharedArrayBuffer, and the old ones keep aliasing the
 * same bytes). So views stay valid for the backend's life, and helper threads can run
 * kernels on the same bytes. Which SharedArrayBuffer objects are "ours" is recorded when a
 * view is made, not only when we grow: V8 (11.3) hands out a new buffer object for a
 * shared memory whenever *any* shared memory in the isolate grows, so with two backends in
 * one process (the benchmark's 1- and 2-thread runs, a worker with two runs open) a view
 * would otherwise look foreign and silently take the reference kernels. V8 reserves the maximum (4 GiB, the wasm32
 * limit) as address
 * space up front; only what is allocated is committed.
 *
 * Nothing is ever freed: models allocate their parameters, gradients and activations once
 * (see models/plan.ts), so a bump allocator is exact for training. Each decode stepper
 * allocates its key/value cache anew (the Backend interface has no `free`), so a long
 * session of many decodes grows the heap; see the backend's header.
 *
 * Leaves out: the kernels' own scratch layout (the kernels) and choosing thread counts.
 */

import type { FloatArray } from '../../backend';
import { EngineError } from '../../errors';
import type { WasmMemory } from './webAssemblyApi';

const PAGE = 65536;

/** One shared memory and a bump allocator over it. */
export class WasmHeap {
  readonly memory: WasmMemory;
  private top: number;
  /** Every SharedArrayBuffer object of this memory that a view was made on. */
  private readonly buffers = new WeakSet<ArrayBufferLike>();
  /** The last of them (the common case of `owns`, checked without hashing). */
  private lastBuffer: ArrayBufferLike | null = null;
  private u8: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  private i32: Int32Array<ArrayBufferLike> = new Int32Array(0);

  constructor(memory: WasmMemory, base: number) {
    this.memory = memory;
    this.top = alignUp(base, 64);
    this.refresh();
  }

  private refresh(): void {
    const buf = this.current();
    this.u8 = new Uint8Array(buf);
    this.i32 = new Int32Array(buf);
  }

  /** The memory's buffer object now, recorded as ours. */
  private current(): ArrayBufferLike {
    const buf = this.memory.buffer;
    if (buf !== this.lastBuffer) {
      this.buffers.add(buf);
      this.lastBuffer = buf;
    }
    return buf;
  }

  /** Reserves `bytes` (64-byte aligned, zero unless reused scratch) and returns its address. */
  allocBytes(bytes: number): number {
    const at = alignUp(this.top, 64);
    const end = at + alignUp(Math.max(bytes, 1), 64);
    if (end > this.memory.buffer.byteLength) {
      const need = Math.ceil((end - this.memory.buffer.byteLength) / PAGE);
      // Grow by at least a quarter of the current size, so many small allocations are cheap.
      const grow = Math.max(need, Math.ceil(this.memory.buffer.byteLength / PAGE / 4));
      try {
        this.memory.grow(grow);
      } catch {
        try {
          this.memory.grow(need);
        } catch (e) {
          throw new EngineError(
            'config/invalid',
            `The WebAssembly backend cannot allocate ${mib(bytes)} more (${mib(this.top)} in use; ` +
              `WebAssembly memory ends at 4 GiB). ` +
              'Use a smaller batch, context or model, or the reference backend (backend ' +
              '"reference"), which has no such limit.',
            { cause: e },
          );
        }
      }
      this.refresh();
    }
    this.top = end;
    return at;
  }

  /** A zeroed Float32Array of n elements inside the memory. */
  alloc(n: number): Float32Array<ArrayBufferLike> {
    const at = this.allocBytes(n * 4);
    return new Float32Array(this.current(), at, n);
  }

  /**
   * A zeroed Uint8Array of n bytes inside the memory (masks, dropout keep-masks), made on
   * the same recorded buffer as `alloc`'s views, so kernels find it with `rawPtr`.
   */
  allocU8(n: number): Uint8Array<ArrayBufferLike> {
    const at = this.allocBytes(n);
    return new Uint8Array(this.current(), at, n);
  }

  /** True when `buf` is (a view of) this memory. */
  owns(buf: ArrayBufferLike): boolean {
    return buf === this.lastBuffer || this.buffers.has(buf);
  }

  /** Byte address of a Float32Array inside this memory, or −1 (another array, or float64). */
  ptr(x: FloatArray): number {
    return x instanceof Float32Array && this.owns(x.buffer) ? x.byteOffset : -1;
  }

  /** Byte address of a byte or int array inside this memory, or −1. */
  rawPtr(x: Uint8Array | Int32Array): number {
    return this.owns(x.buffer) ? x.byteOffset : -1;
  }

  /** The whole memory as bytes (current size). */
  bytes(): Uint8Array<ArrayBufferLike> {
    if (this.u8.byteLength !== this.memory.buffer.byteLength) this.refresh();
    return this.u8;
  }

  /** The whole memory as int32 (current size), for atomics on the control block. */
  ints(): Int32Array<ArrayBufferLike> {
    if (this.i32.byteLength !== this.memory.buffer.byteLength) this.refresh();
    return this.i32;
  }

  /** Bytes handed out so far. */
  get used(): number {
    return this.top;
  }
}

/** A reusable region that grows (by reallocation) to the largest size requested. */
export class Region {
  private at = 0;
  private size = 0;

  constructor(private readonly heap: WasmHeap) {}

  /** Address of at least `bytes` bytes; reallocates (leaving the old region unused) when too small. */
  ensure(bytes: number): number {
    // Never address 0: kernels read a 0 pointer as "no mask / none".
    if (bytes > this.size || this.at === 0) {
      this.size = alignUp(Math.max(bytes, this.size * 2), 64);
      this.at = this.heap.allocBytes(this.size);
    }
    return this.at;
  }

  /** Copies src[0..n) of a byte array into the region (or returns src's own address if it lives in the heap). */
  stageBytes(src: Uint8Array, n: number): number {
    const own = this.heap.rawPtr(src);
    if (own >= 0) return own;
    const at = this.ensure(n);
    this.heap.bytes().set(n === src.length ? src : src.subarray(0, n), at);
    return at;
  }

  /** Copies src[0..n) of an int array into the region (or returns src's own address). */
  stageInts(src: Int32Array, n: number): number {
    const own = this.heap.rawPtr(src);
    if (own >= 0) return own;
    const at = this.ensure(n * 4);
    this.heap.ints().set(n === src.length ? src : src.subarray(0, n), at >>> 2); // unsigned: addresses reach 4 GiB
    return at;
  }
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(0)} MiB`;
}

function alignUp(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}
