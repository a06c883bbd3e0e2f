/**
 * GPU residency for the WebGPU backend: every buffer the backend allocates is a host array
 * (its "mirror", the exact type the models already hold: Float32Array, Uint8Array, Int32Array)
 * paired with a GPUBuffer of the same bytes. Models keep passing views (`subarray`s of one
 * flat allocation, as plan.ts's ParamStore and Arena hand out); a kernel resolves a view to
 * (its root's GPUBuffer, element offset) through the view's ArrayBuffer, so the models' kernel
 * calls stay as they are while the numbers live on the GPU.
 *
 * The mirror is not kept in step: the GPU copy is the truth between `upload` (after the host
 * wrote it: initial weights, a loaded checkpoint, masks) and `download` (before the host reads
 * it: the loss, a snapshot, a checkpoint). A large mirror that is never written costs address
 * space, not memory (the runtime's zeroed pages are not touched).
 *
 * Work is recorded into one command encoder, in one compute pass, and submitted by `flush` (before
 * any upload or download, so the queue's order is the program's order; WebGPU orders the
 * dispatches of a pass, each seeing the writes of those before it). Each dispatch's small
 * parameter block takes a 256-byte slot of a uniform ring; a full ring flushes first. A step
 * records the same dispatches into the same slots each time, so the bind group of each
 * (pipeline, slot, buffers) is made once and replayed from a cache (never one holding a
 * transient buffer, which the next flush destroys).
 *
 * Failure is never silent: a buffer larger than the device's binding limit is refused before it
 * is created, naming the limit (plan.ts's Arena splits the activations below {@link WebGpuMemory.maxAllocFloats});
 * allocations run in an 'out-of-memory' error scope, popped and raised as one line at the next wait;
 * a lost device (`GPUDevice.lost`: a driver reset, a GPU unplugged, `destroy()`) turns every later wait,
 * download included, into an EngineError `gpu/lost`, so no value read from a lost device is ever used.
 *
 * Leaves out: the kernels (webgpuKernels.ts) and recording a whole step's command buffer once to
 * replay it (WebGPU submits a command buffer only once).
 */

/// <reference types="@webgpu/types" />

import { EngineError } from '../../errors';

/** A host view the backend can resolve to GPU memory. */
export type HostView = Float32Array | Uint8Array | Int32Array | Uint32Array;

/** A view resolved: the GPUBuffer of its root allocation and the view's offset in it. */
export interface Resolved {
  readonly buffer: GPUBuffer;
  /** Offset of the view's first element in the buffer, in elements of the view's own type. */
  readonly offset: number;
}

const SLOT = 256; // minUniformBufferOffsetAlignment's largest allowed value
const RING_SLOTS = 1024;
/** Cached bind groups at most (a step of a 12-layer model makes about 700). */
const MAX_BIND_GROUPS = 16384;
const USAGE_STORAGE = 0x80 | 0x04 | 0x08; // STORAGE | COPY_SRC | COPY_DST
const USAGE_UNIFORM = 0x40 | 0x08; // UNIFORM | COPY_DST
const USAGE_READBACK = 0x01 | 0x08; // MAP_READ | COPY_DST
const MAP_READ = 0x01;

/** Scalars of one dispatch's uniform block, in WGSL struct order: 'u' u32, 'i' i32, 'f' f32. */
export type UniformField = readonly ['u' | 'i' | 'f', number];

/** The GPU memory and command recording of one device (see the file comment). */
export class WebGpuMemory {
  private readonly roots = new WeakMap<ArrayBufferLike, GPUBuffer>();
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  private readonly variants = new Map<string, Map<string, string>>();
  /** A 16-byte buffer bound where an optional operand is absent (a mask, a decay mask). */
  readonly spare: GPUBuffer;
  private readonly ring: GPUBuffer;
  private readonly ringHost = new ArrayBuffer(SLOT * RING_SLOTS);
  private ringUsed = 0;
  private encoder: GPUCommandEncoder | null = null;
  /** The compute pass dispatches are recorded into until the next flush or copy. */
  private pass: GPUComputePassEncoder | null = null;
  private transients: GPUBuffer[] = [];
  /** Bind groups by (pipeline, ring slot, buffers), made once and reused step after step. */
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  /** Small ids of pipelines and buffers for {@link bindGroups}' keys. */
  private readonly ids = new WeakMap<object, number>();
  private nextId = 0;
  /** The first error the device reported (validation, out of memory), raised at the next wait. */
  private error: string | null = null;
  /** Why the device was lost (GPUDeviceLostInfo's message or reason); null while it lives. */
  private lostReason: string | null = null;
  /**
   * True while an 'out-of-memory' error scope is open around the allocations since the last check. It is
   * popped only by {@link checkAllocations}, which awaits it at once: a popErrorScope promise of Dawn's still
   * pending when the worker ends aborts the process (a refusal right after allocating would end it so).
   */
  private scopeOpen = false;
  /** Bytes of the storage buffers allocated so far, and of the largest since the last check (said when short). */
  private allocatedBytes = 0;
  private largestSinceCheck = 0;

  constructor(readonly device: GPUDevice) {
    this.ring = device.createBuffer({ size: SLOT * RING_SLOTS, usage: USAGE_UNIFORM });
    this.spare = device.createBuffer({ size: 16, usage: USAGE_STORAGE });
    device.onuncapturederror = (e: GPUUncapturedErrorEvent) => {
      const first = e.error.message.split('\n')[0] ?? 'unknown';
      this.error ??= e.error.constructor.name === 'GPUOutOfMemoryError' ? `out of memory: ${first}` : first;
    };
    void device.lost.then((info) => {
      this.lostReason = info.message || info.reason || 'unknown';
    });
  }

  /** The largest buffer this device binds, in floats: the smaller of its binding and buffer size limits. */
  get maxAllocFloats(): number {
    const l = this.device.limits;
    return Math.floor(Math.min(l.maxStorageBufferBindingSize, l.maxBufferSize) / 4);
  }

  /** True once the device is lost: nothing on it can be read any more. */
  get lost(): boolean {
    return this.lostReason !== null;
  }

  /** A zeroed float buffer of n elements, resident on the GPU (the mirror is zero too). */
  alloc(n: number): Float32Array {
    const host = new Float32Array(n);
    this.register(host.buffer, host.byteLength);
    return host;
  }

  /** A zeroed byte buffer (masks, keep-masks), resident on the GPU; its size rounds up to 4 bytes there. */
  allocBytes(n: number): Uint8Array {
    const host = new Uint8Array(new ArrayBuffer(Math.ceil(n / 4) * 4), 0, n);
    this.register(host.buffer, host.buffer.byteLength);
    return host;
  }

  /** A zeroed int32 buffer (token ids, targets), resident on the GPU. */
  allocInts(n: number): Int32Array {
    const host = new Int32Array(n);
    this.register(host.buffer, host.byteLength);
    return host;
  }

  private register(root: ArrayBufferLike, bytes: number): void {
    const max = this.maxAllocFloats * 4;
    if (bytes > max)
      throw new EngineError(
        'config/invalid',
        `A ${bytesText(bytes)} buffer exceeds this GPU adapter's largest storage buffer of ${bytesText(max)}; ` +
          'lower batch or context (or the model), or use --backend wasm.',
      );
    if (!this.scopeOpen) this.device.pushErrorScope('out-of-memory');
    this.scopeOpen = true;
    const buffer = this.device.createBuffer({ size: Math.max(4, Math.ceil(bytes / 4) * 4), usage: USAGE_STORAGE });
    this.allocatedBytes += bytes;
    this.largestSinceCheck = Math.max(this.largestSinceCheck, bytes);
    this.roots.set(root, buffer);
  }

  /**
   * Pops the out-of-memory scope of the allocations since the last check; when one ran out of GPU
   * memory, says so in one line with the largest buffer among them and what was allocated in all (a
   * training session checks right after the model is built, so it refuses before its first step).
   */
  async checkAllocations(): Promise<void> {
    this.throwIfLost();
    if (!this.scopeOpen) return;
    this.scopeOpen = false;
    const largest = this.largestSinceCheck;
    this.largestSinceCheck = 0;
    const e = await this.device.popErrorScope().catch(() => null);
    this.throwIfLost();
    if (e !== null)
      throw new EngineError(
        'config/invalid',
        `The GPU ran out of memory allocating its buffers (the largest ${bytesText(largest)}, ` +
          `${bytesText(this.allocatedBytes)} in all on this device); lower batch or context (or the model), ` +
          'or use --backend wasm.',
      );
  }

  /** True when `view` was allocated here. */
  owns(view: HostView): boolean {
    return this.roots.has(view.buffer);
  }

  /**
   * The GPU buffer and element offset of `view`. A view not allocated here (a batch's token ids)
   * is copied into a buffer that lives until the next flush; pass `transient` = false to refuse it.
   */
  resolve(view: HostView, transient = true): Resolved {
    const buffer = this.roots.get(view.buffer);
    if (buffer) return { buffer, offset: view.byteOffset / view.BYTES_PER_ELEMENT };
    if (!transient) throw new Error('buffer not allocated by this WebGPU backend');
    const bytes = Math.max(4, Math.ceil(view.byteLength / 4) * 4);
    const tmp = this.device.createBuffer({ size: bytes, usage: USAGE_STORAGE, mappedAtCreation: true });
    new Uint8Array(tmp.getMappedRange()).set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
    tmp.unmap();
    this.transients.push(tmp);
    return { buffer: tmp, offset: 0 };
  }

  /** Copies the host's values of `view` to the GPU (after the host wrote them). */
  upload(view: HostView): void {
    const buffer = this.roots.get(view.buffer);
    if (!buffer) throw new Error('upload: buffer not allocated by this WebGPU backend');
    this.flush();
    // writeBuffer needs 4-byte offsets and sizes: widen a byte view to whole words of its root.
    const start = Math.floor(view.byteOffset / 4) * 4;
    const end = Math.min(Math.ceil((view.byteOffset + view.byteLength) / 4) * 4, view.buffer.byteLength);
    if (end > start) this.device.queue.writeBuffer(buffer, start, view.buffer as ArrayBuffer, start, end - start);
  }

  /** Runs everything recorded so far, then copies the GPU's values of `view` into it. */
  async download(view: HostView): Promise<void> {
    this.throwIfLost();
    const buffer = this.roots.get(view.buffer);
    if (!buffer) throw new Error('download: buffer not allocated by this WebGPU backend');
    const start = Math.floor(view.byteOffset / 4) * 4;
    const end = Math.min(Math.ceil((view.byteOffset + view.byteLength) / 4) * 4, buffer.size);
    if (end <= start) return;
    const staging = this.device.createBuffer({ size: end - start, usage: USAGE_READBACK });
    this.endPass();
    const enc = this.takeEncoder();
    enc.copyBufferToBuffer(buffer, start, staging, 0, end - start);
    this.flush();
    try {
      await staging.mapAsync(MAP_READ);
    } catch (e) {
      // A lost device aborts every mapping (AbortError; nothing here unmaps or destroys a staging buffer
      // while it maps), and its lost promise settles with it. No other promise is started on the lost
      // device: one of Dawn's still pending when the worker ends aborts the process.
      if ((e as Error).name === 'AbortError') await this.device.lost;
      this.throwIfLost();
      throw e;
    }
    await this.checkAllocations();
    this.throwIfFailed();
    const got = new Uint8Array(staging.getMappedRange());
    const into = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    into.set(got.subarray(view.byteOffset - start, view.byteOffset - start + view.byteLength));
    staging.unmap();
    staging.destroy();
  }

  /** The compute pipeline of a WGSL module (entry point `main`), compiled once. */
  pipeline(code: string): GPUComputePipeline {
    let p = this.pipelines.get(code);
    if (!p) {
      const module = this.device.createShaderModule({ code });
      p = this.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
      this.pipelines.set(code, p);
    }
    return p;
  }

  /**
   * Records one dispatch: binding 0 is the uniform block `uniforms`, bindings 1.. the storage
   * buffers `buffers` in order (whole buffers; offsets travel in the uniforms). Operands that
   * share a buffer (views of one flat allocation) share one binding: WebGPU forbids binding
   * one buffer twice as writable storage, so the shader is specialized (see {@link mergeAliases}).
   */
  dispatch(
    code: string,
    uniforms: readonly UniformField[],
    buffers: readonly GPUBuffer[],
    groups: readonly [number, number?, number?],
  ): void {
    if (this.ringUsed === RING_SLOTS) this.flush();
    const slot = this.ringUsed++;
    const dv = new DataView(this.ringHost, slot * SLOT, SLOT);
    uniforms.forEach(([t, v], i) => {
      if (t === 'f') dv.setFloat32(i * 4, v, true);
      else if (t === 'i') dv.setInt32(i * 4, v, true);
      else dv.setUint32(i * 4, v, true);
    });
    const group = buffers.map((b) => buffers.indexOf(b));
    const unique = buffers.filter((_, i) => group[i] === i);
    const pipeline = this.pipeline(unique.length === buffers.length ? code : this.variant(code, group));
    const transient = this.transients.length > 0 && unique.some((b) => this.transients.includes(b));
    const key = transient ? '' : `${this.idOf(pipeline)}:${slot}:${unique.map((b) => this.idOf(b)).join(',')}`;
    let bind = transient ? undefined : this.bindGroups.get(key);
    if (bind === undefined) {
      const entries: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: this.ring, offset: slot * SLOT, size: SLOT } },
      ];
      unique.forEach((buffer, i) => entries.push({ binding: i + 1, resource: { buffer } }));
      bind = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
      if (!transient) {
        // Bounded: a model closed leaves its groups behind (their buffers are never bound again).
        if (this.bindGroups.size >= MAX_BIND_GROUPS) this.bindGroups.clear();
        this.bindGroups.set(key, bind);
      }
    }
    const pass = (this.pass ??= this.takeEncoder().beginComputePass());
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(groups[0], groups[1] ?? 1, groups[2] ?? 1);
  }

  /** How many dispatches' bind groups are cached (for tests). */
  get cachedBindGroups(): number {
    return this.bindGroups.size;
  }

  private idOf(o: object): number {
    let id = this.ids.get(o);
    if (id === undefined) this.ids.set(o, (id = this.nextId++));
    return id;
  }

  /** Ends the open compute pass, so that the encoder can record a copy (or be finished). */
  private endPass(): void {
    this.pass?.end();
    this.pass = null;
  }

  private variant(code: string, group: readonly number[]): string {
    let byGroup = this.variants.get(code);
    if (!byGroup) this.variants.set(code, (byGroup = new Map()));
    const key = group.join(',');
    let v = byGroup.get(key);
    if (v === undefined) byGroup.set(key, (v = mergeAliases(code, group)));
    return v;
  }

  private takeEncoder(): GPUCommandEncoder {
    return (this.encoder ??= this.device.createCommandEncoder());
  }

  /** Submits what was recorded (with the uniform slots it used); later work sees its results. */
  flush(): void {
    this.endPass();
    if (this.ringUsed > 0) this.device.queue.writeBuffer(this.ring, 0, this.ringHost, 0, this.ringUsed * SLOT);
    if (this.encoder) this.device.queue.submit([this.encoder.finish()]);
    this.encoder = null;
    this.ringUsed = 0;
    for (const t of this.transients) t.destroy();
    this.transients = [];
  }

  /** Waits until the GPU has finished everything submitted (and flushes first). */
  async finish(): Promise<void> {
    this.throwIfLost();
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
    await this.checkAllocations();
    this.throwIfFailed();
  }

  /** Throws the `gpu/lost` EngineError once the device is lost (the session turns it into its stop line). */
  throwIfLost(): void {
    if (this.lostReason !== null)
      throw new EngineError('gpu/lost', `The GPU device was lost (${this.lostReason.split('\n')[0]})`);
  }

  private throwIfFailed(): void {
    this.throwIfLost();
    if (this.error === null) return;
    // A refused dispatch is a bug here, not the user's input: a plain Error, not an EngineError.
    throw new Error(`The GPU refused the WebGPU backend's work (${this.error}); use --backend wasm.`);
  }
}

/** Bytes as people read them: "3.7 GB", "96 MB" (decimal units, one decimal below 10). */
export function bytesText(bytes: number): string {
  const [v, unit] = bytes >= 1e9 ? [bytes / 1e9, 'GB'] : bytes >= 1e6 ? [bytes / 1e6, 'MB'] : [bytes / 1e3, 'kB'];
  return `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ${unit}`;
}

const BINDING = /@group\(0\) @binding\((\d+)\) var<storage, read_write> (\w+): array<(\w+)>;\n?/g;

/**
 * A shader's variant where storage operand i (binding i + 1) reads and writes through the binding
 * of operand group[i] (the first operand on the same buffer): the later operands' declarations go,
 * their names become the first's, and the remaining bindings are numbered 1.. in order. Operands
 * on one buffer must have one element type (views of one allocation do).
 */
export function mergeAliases(code: string, group: readonly number[]): string {
  const decls = [...code.matchAll(BINDING)].filter((m) => m[1] !== '0');
  if (decls.length !== group.length)
    throw new Error(`shader has ${decls.length} storage bindings, given ${group.length}`);
  let out = code;
  const names = decls.map((m) => m[2] as string);
  decls.forEach((m, i) => {
    const first = decls[group[i] as number] as RegExpMatchArray;
    if (first === m) return;
    if (first[3] !== m[3]) throw new Error(`operands ${first[2]} and ${m[2]} share a buffer but not a type`);
    out = out.replace(m[0], '').replace(new RegExp(`(?<![.\\w])${m[2]}(?!\\w)`, 'g'), first[2] as string);
  });
  let next = 1;
  return out.replace(BINDING, (all, b: string, name: string, type: string) =>
    b === '0' || !names.includes(name)
      ? all
      : `@group(0) @binding(${next++}) var<storage, read_write> ${name}: array<${type}>;\n`,
  );
}
