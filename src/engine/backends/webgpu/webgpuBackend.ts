/**
 * The WebGPU `Backend` the models bind to: the kernels of webgpuKernels.ts behind backend.ts's
 * interface, with every buffer the models and optimizer allocate resident on the GPU.
 *
 * Two kernels of that interface return numbers, which a GPU can give only asynchronously:
 * - `crossEntropyForward` records the loss on the device (into the step's stats) and returns the
 *   counted rows — counted on the host from the targets, which the host holds — with `sum` NaN:
 *   the loss itself comes from {@link WebGpuBackend.readStats}, so a synchronous `Trainer.step`
 *   on this backend stops at its non-finite check instead of training on a guess;
 * - `sumSquares` refuses: the optimizer's norm is read with the loss, by `Trainer.stepAsync`.
 *
 * A step's clip factor and non-finite guard are on the device too (`gateUpdate`): Σ g² and the
 * gate are recorded after the backward, the update kernels read the gate (the gradients scaled
 * by it; nothing changed where the loss or the norm is not finite), and the step reads the loss
 * and norm back once, after its update.
 *
 * The host arrays are mirrors, synced explicitly: {@link WebGpuBackend.uploadAll} after the
 * host wrote weights (initialise, a loaded checkpoint, the optimizer's state and decay mask),
 * {@link WebGpuBackend.downloadAll} before the host reads them (checkpoints, snapshots). The tables
 * the models fill on the host at their first forward (RoPE's cos/sin, ALiBi's slopes), written once
 * and never again, are uploaded the first time a kernel reads them.
 *
 * Muon's hidden matrices update on the device (`muonMatrix`), as AdamW does.
 *
 * Leaves out: opening the device (the platform layer).
 */

/// <reference types="@webgpu/types" />

import type { AdamParams, AttentionDims, Backend, FloatArray, MaskView } from '../../backend';
import type { DeviceStats } from '../../train';
import type { HostView } from './webgpuMemory';
import { WebGpuKernels } from './webgpuKernels';

/** The WebGPU backend: a `Backend` plus the explicit syncs of its host mirrors. */
export interface WebGpuBackend extends Backend, DeviceStats {
  readonly name: 'webgpu';
  readonly kernels: WebGpuKernels;
  /** Copies every buffer allocated here from its host mirror to the GPU (after the host wrote weights). */
  uploadAll(): void;
  /** Runs what was recorded, then copies every buffer allocated here from the GPU to its host mirror. */
  downloadAll(): Promise<void>;
  /** Runs what was recorded, then copies one view from the GPU to its host mirror. */
  download(view: HostView | FloatArray): Promise<void>;
  /** Gives back the GPU memory of every buffer allocated here (the model worker, reopening a run). */
  dispose(): void;
  /** Raises, as one line, an allocation that ran out of GPU memory, or the device's loss (webgpuMemory.ts). */
  checkAllocations(): Promise<void>;
  /** True once the device is lost (GPUDevice.lost): nothing on it can be read any more. */
  readonly lost: boolean;
}

/** What a float view is on this backend (the models only ever pass what `alloc` gave, or a subarray). */
const f32 = (x: FloatArray): Float32Array => x as Float32Array;

/** A WebGPU backend on `device` (see the file comment). */
export function createWebGpuBackend(device: GPUDevice): WebGpuBackend {
  const k = new WebGpuKernels(device);
  const mem = k.mem;
  /** Every root allocated here, for uploadAll / downloadAll. */
  const allocated: HostView[] = [];
  /** [loss sum, counted rows, Σ g², the update's gate]: what a step reads back, in one copy. */
  const stats = mem.alloc(4);
  /** The gate (wgslPointwise.ts GATE), which the update kernels read while `gated`. */
  const gateView = stats.subarray(3, 4);
  /** True from gateUpdate until the step's stats are read: the updates recorded meanwhile go through the gate. */
  let gated = false;
  /** crossEntropyForward's per-row scratch (2·N floats), grown to the largest N. */
  let ceRows = mem.alloc(2);

  const track = <T extends HostView>(v: T): T => (allocated.push(v), v);
  /** Each table already uploaded, as (GPU buffer → element offsets). */
  const tablesUp = new WeakMap<GPUBuffer, Set<number>>();
  /** Uploads a host-filled table (see the file comment) the first time a kernel reads it. */
  const table = (x: FloatArray): Float32Array => {
    const v = f32(x);
    if (!mem.owns(v)) return v;
    const { buffer, offset } = mem.resolve(v, false);
    let seen = tablesUp.get(buffer);
    if (!seen) tablesUp.set(buffer, (seen = new Set()));
    if (!seen.has(offset)) {
      mem.upload(v);
      seen.add(offset);
    }
    return v;
  };
  const withSlopes = (d: AttentionDims): AttentionDims => {
    if (d.alibi) table(d.alibi);
    return d;
  };

  return {
    name: 'webgpu',
    kernels: k,
    maxAllocFloats: mem.maxAllocFloats,
    alloc: (n) => track(mem.alloc(n)),
    allocBytes: (n) => track(mem.allocBytes(n)),
    uploadAll(): void {
      for (const v of allocated) mem.upload(v);
    },
    async downloadAll(): Promise<void> {
      // Every read settles before the first failure is raised: none is left pending on a lost device.
      const failed = (await Promise.allSettled(allocated.map((v) => mem.download(v)))).find(
        (r) => r.status === 'rejected',
      );
      if (failed) throw failed.reason;
    },
    download: (view) => mem.download(view as HostView),
    checkAllocations: () => mem.checkAllocations(),
    get lost(): boolean {
      return mem.lost;
    },
    dispose(): void {
      mem.flush();
      for (const v of allocated) mem.resolve(v, false).buffer.destroy();
      allocated.length = 0;
    },
    gateUpdate(grads: FloatArray, n: number, clip: number): void {
      k.sumSquares(stats.subarray(2, 3), f32(grads), n);
      k.gate(stats, clip);
      gated = true;
    },
    async readStats(grads: FloatArray, n: number): Promise<{ lossSum: number; normSq: number }> {
      if (!gated) k.sumSquares(stats.subarray(2, 3), f32(grads), n);
      gated = false;
      await mem.download(stats);
      return { lossSum: stats[0] as number, normSq: stats[2] as number };
    },

    fill: (x, n, v) => k.fill(f32(x), n, v),
    scale: (x, n, s) => k.scale(f32(x), n, s),
    add: (o, a, b, n) => k.add(f32(o), f32(a), f32(b), n),
    copy: (dst, src, n) => k.copy(f32(dst), f32(src), n),
    muonMatrix: (m) => k.muonMatrix(m, gated ? gateView : null),
    sumSquares(): number {
      throw new Error(
        'The WebGPU backend reads the gradient norm asynchronously: train with Trainer.stepAsync, not step.',
      );
    },
    matmul: (c, a, b, M, N, K, tA, tB, acc) => k.matmul(f32(c), f32(a), f32(b), M, N, K, tA, tB, acc),
    addBias: (y, b, r, c) => k.addBias(f32(y), f32(b), r, c),
    biasBackward: (db, dy, r, c) => k.biasBackward(f32(db), f32(dy), r, c),
    embeddingForward: (o, ids, t, N, C, s) => k.embeddingForward(f32(o), ids, f32(t), N, C, s),
    embeddingBackward: (dt, d, ids, N, C, s, pad) => k.embeddingBackward(f32(dt), f32(d), ids, N, C, s, pad),
    positionalForward: (x, pe, B, T, C, s) => k.positionalForward(f32(x), f32(pe), B, T, C, s),
    positionalBackward: (dpe, dx, B, T, C, s) => k.positionalBackward(f32(dpe), f32(dx), B, T, C, s),
    layernormForward: (y, m, r, x, w, b, N, C, eps) =>
      k.layernormForward(f32(y), f32(m), f32(r), f32(x), f32(w), b ? f32(b) : null, N, C, eps),
    layernormBackward: (dx, dw, db, dy, x, m, r, w, N, C) =>
      k.layernormBackward(f32(dx), f32(dw), db ? f32(db) : null, f32(dy), f32(x), f32(m), f32(r), f32(w), N, C),
    rmsnormForward: (y, r, x, w, N, C, eps) => k.rmsnormForward(f32(y), f32(r), f32(x), w ? f32(w) : null, N, C, eps),
    rmsnormBackward: (dx, dw, dy, x, r, w, N, C) =>
      k.rmsnormBackward(f32(dx), dw ? f32(dw) : null, f32(dy), f32(x), f32(r), w ? f32(w) : null, N, C),
    rope: (x, cos, sin, B, T, H, D, R, start, bs, rs, inv) =>
      k.rope(f32(x), table(cos), table(sin), B, T, H, D, R, start, bs, rs, inv),
    reluForward: (y, x, n) => k.activationForward('relu', f32(y), f32(x), n),
    reluBackward: (dx, dy, x, n) => k.activationBackward('relu', f32(dx), f32(dy), f32(x), n),
    geluForward: (y, x, n) => k.activationForward('gelu', f32(y), f32(x), n),
    geluBackward: (dx, dy, x, n) => k.activationBackward('gelu', f32(dx), f32(dy), f32(x), n),
    geluTanhForward: (y, x, n) => k.activationForward('geluTanh', f32(y), f32(x), n),
    geluTanhBackward: (dx, dy, x, n) => k.activationBackward('geluTanh', f32(dx), f32(dy), f32(x), n),
    siluForward: (y, x, n) => k.activationForward('silu', f32(y), f32(x), n),
    siluBackward: (dx, dy, x, n) => k.activationBackward('silu', f32(dx), f32(dy), f32(x), n),
    relu2Forward: (y, x, n) => k.activationForward('relu2', f32(y), f32(x), n),
    relu2Backward: (dx, dy, x, n) => k.activationBackward('relu2', f32(dx), f32(dy), f32(x), n),
    mul: (o, a, b, n, acc) => k.mul(f32(o), f32(a), f32(b), n, acc),
    softcapForward: (y, x, n, cap) => k.softcapForward(f32(y), f32(x), n, cap),
    softcapBackward: (d, y, n, cap) => k.softcapBackward(f32(d), f32(y), n, cap),
    dropoutMask: (keep, n, p, k0, k1) => k.dropoutMask(keep, n, p, k0, k1),
    dropoutForward: (y, x, keep, n, p) => k.dropoutForward(f32(y), f32(x), keep, n, p),
    dropoutBackward: (dx, dy, keep, n, p) => k.dropoutBackward(f32(dx), f32(dy), keep, n, p),
    softmaxForward: (y, x, rows, cols, mask: MaskView | null, rpb) =>
      k.softmaxForward(f32(y), f32(x), rows, cols, mask, rpb),
    softmaxBackward: (dx, dy, y, rows, cols) => k.softmaxBackward(f32(dx), f32(dy), f32(y), rows, cols),
    attentionForward: (out, probs, q, kk, v, dims: AttentionDims, mask, keep, p) =>
      k.attentionForward(f32(out), f32(probs), f32(q), f32(kk), f32(v), withSlopes(dims), mask, keep, p),
    attentionBackward: (dq, dk, dv, dout, probs, q, kk, v, dims: AttentionDims, keep, p) =>
      k.attentionBackward(
        f32(dq),
        f32(dk),
        f32(dv),
        f32(dout),
        f32(probs),
        f32(q),
        f32(kk),
        f32(v),
        withSlopes(dims),
        keep,
        p,
      ),
    crossEntropyForward(lse, logits, targets, N, V, ignoreIndex, smoothing): { sum: number; count: number } {
      if (ceRows.length < 2 * N) ceRows = mem.alloc(2 * N);
      k.crossEntropyForward(stats, ceRows, f32(lse), f32(logits), targets, N, V, ignoreIndex, smoothing);
      let count = 0;
      for (let r = 0; r < N; r++) if (targets[r] !== ignoreIndex) count++;
      return { sum: Number.NaN, count };
    },
    crossEntropyBackward: (dl, logits, lse, targets, N, V, ign, sm, gs) =>
      k.crossEntropyBackward(f32(dl), f32(logits), f32(lse), targets, N, V, ign, sm, gs),
    adamStep: (p, g, m, v, n, opts: AdamParams, mask) =>
      k.adamStep(f32(p), f32(g), f32(m), f32(v), n, opts, mask, gated ? gateView : null),
  };
}
