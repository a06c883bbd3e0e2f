/**
 * Up-front memory planning (as llm.c does): layers request every parameter and activation
 * buffer they will ever use while the model is constructed, for the largest batch and
 * sequence; the model then allocates one flat parameter buffer and one activation arena,
 * and one flat gradient buffer at the first backward (a model that only runs — decode,
 * attention, lens — never holds gradients). A training step therefore allocates nothing, and the same
 * construction code, run without allocating, gives exact parameter counts and memory
 * estimates before a single float exists.
 */

import type { Backend, FloatArray } from '../backend';
import { EngineError } from '../errors';
import type { ParamSegment } from '../optim/optimizer';

const EMPTY = new Float32Array(0);

/** Bytes as a refusal says them: "3.7 GB", "134 MB" (decimal units). */
function gb(bytes: number): string {
  const [v, unit] = bytes >= 1e9 ? [bytes / 1e9, 'GB'] : [bytes / 1e6, 'MB'];
  return `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ${unit}`;
}

/**
 * Refuses, in one line naming `what`, its size, the limit and `lower` (what to change), a buffer of `floats`
 * over the backend's largest allocation (a GPU's largest storage buffer).
 */
function refuseOverLimit(backend: Backend, floats: number, what: string, lower: string): void {
  const max = backend.maxAllocFloats ?? Infinity;
  if (floats <= max) return;
  throw new EngineError(
    'config/invalid',
    `${what.charAt(0).toUpperCase()}${what.slice(1)}: ${gb(floats * 4)} > this GPU adapter's largest storage ` +
      `buffer (${gb(max * 4)}); ${lower}, or use --backend wasm.`,
  );
}

/** n rounded up to a multiple of 64 (a cache line). */
function alignBytes(n: number): number {
  return Math.ceil(n / 64) * 64;
}

/** A named parameter: a view into the flat parameter and gradient buffers. */
export interface Param {
  readonly name: string;
  readonly shape: readonly number[];
  readonly offset: number;
  readonly size: number;
  /** Weight decay applies (≥ 2-D, nanoGPT's rule). */
  readonly decay: boolean;
  /** A hidden 2-D matrix [rows, cols] (a Linear layer's weight: attention and feed-forward), which Muon updates. */
  readonly hidden: boolean;
  /** How to initialize: normal(0, std), a constant, or uniform(−a, a). */
  readonly init: ParamInit;
  data: FloatArray;
  grad: FloatArray;
}

/** Initialization rule of one parameter. */
export type ParamInit =
  | { readonly kind: 'normal'; readonly std: number }
  | { readonly kind: 'uniform'; readonly bound: number }
  | { readonly kind: 'const'; readonly value: number };

/** Registers parameters during construction, then binds them to flat buffers. */
export class ParamStore {
  readonly params: Param[] = [];
  private total = 0;

  /** Registers a parameter; `hidden` marks a hidden 2-D matrix (see {@link Param.hidden}). */
  add(name: string, shape: readonly number[], init: ParamInit, hidden = false): Param {
    const size = shape.reduce((a, b) => a * b, 1);
    const p: Param = {
      name,
      shape,
      offset: this.total,
      size,
      decay: shape.length >= 2,
      hidden: hidden && shape.length === 2,
      init,
      data: EMPTY,
      grad: EMPTY,
    };
    this.total += size;
    this.params.push(p);
    return p;
  }

  get count(): number {
    return this.total;
  }

  /** Allocates the flat parameter buffer and points every parameter at its slice. */
  bind(backend: Backend): FloatArray {
    refuseOverLimit(backend, this.total, "the model's parameters", 'use a smaller model');
    const params = backend.alloc(this.total);
    for (const p of this.params) p.data = params.subarray(p.offset, p.offset + p.size);
    return params;
  }

  /** Allocates the flat gradient buffer (zeros) and points every parameter's `grad` at its slice. */
  bindGrads(backend: Backend): FloatArray {
    refuseOverLimit(backend, this.total, "the model's gradients", 'use a smaller model');
    const grads = backend.alloc(this.total);
    for (const p of this.params) p.grad = grads.subarray(p.offset, p.offset + p.size);
    return grads;
  }

  segments(): ParamSegment[] {
    return this.params.map((p) => ({
      name: p.name,
      offset: p.offset,
      size: p.size,
      shape: p.shape,
      decay: p.decay,
      hidden: p.hidden,
    }));
  }
}

/** A float buffer requested at construction and filled in by {@link Arena.bind}. */
export interface Slot {
  readonly size: number;
  /** What it holds, as a refusal names it ("attention probabilities"); absent for the small ones. */
  readonly name?: string;
  data: FloatArray;
}

/** A byte buffer (ids, masks, dropout keeps) requested at construction, bound later. */
export interface ByteSlot {
  readonly size: number;
  data: Uint8Array;
}

/** The n-th request of every layer of one reuse group (all of one size): one buffer, a view for each. */
interface GroupSlot<S> {
  readonly size: number;
  readonly users: S[];
}

/**
 * Activation memory. `buffer` slots are private to one layer (kept for backward);
 * `shared` slots with the same key are one buffer sized for the largest request: layers
 * use them only for values that do not outlive their own backward (gradient scratch).
 * Between {@link reuseAs}(key) and reuseAs(null), the n-th `buffer` (and `bytes`) request is
 * the n-th of every earlier layer planned under the same key when it is of the same size:
 * layers that run only forward, one after the other, reuse each other's buffers
 * (ModelShape.activations).
 */
export class Arena {
  private readonly slots: Slot[] = [];
  private readonly shared = new Map<string, { size: number; users: Slot[] }>();
  private readonly byteSlots: ByteSlot[] = [];
  private readonly groups = new Map<string, { floats: GroupSlot<Slot>[]; bytes: GroupSlot<ByteSlot>[] }>();
  private reuse: { floats: GroupSlot<Slot>[]; bytes: GroupSlot<ByteSlot>[]; nf: number; nb: number } | null = null;

  /** Plans the next layer's `buffer` and `bytes` requests in reuse group `key` (null: its own again). */
  reuseAs(key: string | null): void {
    if (key === null) {
      this.reuse = null;
      return;
    }
    let g = this.groups.get(key);
    if (!g) this.groups.set(key, (g = { floats: [], bytes: [] }));
    this.reuse = { ...g, nf: 0, nb: 0 };
  }

  /** A buffer of `size` floats private to one layer; `name` says what it holds where a refusal names it. */
  buffer(size: number, name?: string): Slot {
    const s: Slot = { size, data: EMPTY, ...(name === undefined ? {} : { name }) };
    const r = this.reuse;
    if (!r || !join(r.floats, r.nf++, s)) this.slots.push(s);
    return s;
  }

  scratch(key: string, size: number): Slot {
    const s: Slot = { size, data: EMPTY };
    const entry = this.shared.get(key);
    if (entry) {
      entry.size = Math.max(entry.size, size);
      entry.users.push(s);
    } else {
      this.shared.set(key, { size, users: [s] });
    }
    return s;
  }

  /** A byte buffer (masks, dropout keep-masks). */
  bytes(size: number): ByteSlot {
    const s: ByteSlot = { size, data: new Uint8Array(0) };
    const r = this.reuse;
    if (!r || !join(r.bytes, r.nb++, s)) this.byteSlots.push(s);
    return s;
  }

  /** Floats this arena will hold. */
  get floats(): number {
    let n = 0;
    for (const s of this.slots) n += s.size;
    for (const e of this.shared.values()) n += e.size;
    for (const g of this.groups.values()) for (const e of g.floats) n += e.size;
    return n;
  }

  /** Bytes of the byte buffers (before each is aligned to 64 bytes). */
  get otherBytes(): number {
    let n = 0;
    for (const s of this.byteSlots) n += s.size;
    for (const g of this.groups.values()) for (const e of g.bytes) n += e.size;
    return n;
  }

  /**
   * Allocates one buffer and hands each slot its view. On a backend with `maxAllocFloats` (a GPU's
   * largest buffer), the slots are packed in order into as few allocations of at most that many as
   * it takes; a single slot larger than that is refused in one line naming it, its size and the limit.
   */
  bind(backend: Backend): void {
    const max = backend.maxAllocFloats ?? Infinity;
    // Every float slot, the shared ones once each (their users share the view).
    const parts: { size: number; name: string | undefined; take: (v: FloatArray) => void }[] = [
      ...this.slots.map((s) => ({ size: s.size, name: s.name, take: (v: FloatArray) => (s.data = v) })),
      ...[...this.shared].map(([key, e]) => ({
        size: e.size,
        name: `the scratch buffer ${key}`,
        take: (v: FloatArray) => e.users.forEach((u) => (u.data = v)),
      })),
      // A reuse group's slot: one buffer that the same request of each layer shares (layers run forward only).
      ...[...this.groups.values()].flatMap((g) =>
        g.floats.map((e) => ({
          size: e.size,
          name: e.users[0]?.name,
          take: (v: FloatArray) => e.users.forEach((u) => (u.data = v)),
        })),
      ),
    ];
    for (const p of parts) refuseOverLimit(backend, p.size, p.name ?? 'an activation buffer', 'lower batch or context');
    let next = 0;
    while (next < parts.length) {
      let end = next;
      let n = 0;
      while (end < parts.length && n + (parts[end]?.size ?? 0) <= max) n += parts[end++]?.size ?? 0;
      const all = backend.alloc(n);
      let off = 0;
      for (const p of parts.slice(next, end)) {
        p.take(all.subarray(off, off + p.size));
        off += p.size;
      }
      next = end;
    }
    // Byte slots live in the backend's memory where it has its own (allocBytes), so its
    // kernels read and write masks in place; each starts on a 64-byte boundary.
    const byteGroups: GroupSlot<ByteSlot>[] = [
      ...this.byteSlots.map((b) => ({ size: b.size, users: [b] })),
      ...[...this.groups.values()].flatMap((g) => g.bytes),
    ];
    let bytes = 0;
    for (const b of byteGroups) bytes += alignBytes(b.size);
    const flat = backend.allocBytes ? backend.allocBytes(bytes) : new Uint8Array(bytes);
    let at = 0;
    for (const b of byteGroups) {
      const view = flat.subarray(at, at + b.size);
      for (const u of b.users) u.data = view;
      at += alignBytes(b.size);
    }
  }
}

/**
 * Adds `s` to the n-th slot of a reuse group; false when that slot is another size (a layer planned otherwise: the
 * request keeps a buffer of its own, so a buffer a layer fills once, ALiBi's slopes, never meets another's values).
 */
function join<S extends { readonly size: number }>(slots: GroupSlot<S>[], n: number, s: S): boolean {
  const e = slots[n];
  if (e && e.size !== s.size) return false;
  if (e) e.users.push(s);
  else slots[n] = { size: s.size, users: [s] };
  return true;
}
