/**
 * TypeScript wrappers of fused attention (forward and backward), cross-entropy and Adam
 * for the WebAssembly backend. Same pattern as wasmDense.ts; in addition:
 * - attention takes any head size D (the last D mod 4 dimensions take partial-vector
 *   paths; every preset's D is 16–64);
 * - attention's optional fields (grouped-query heads, soft-cap, ALiBi) are checked by the
 *   reference's attentionOptions (its EngineError); ALiBi slopes are staged as float32;
 * - attention backward splits (batch, kv head) pairs over threads only when no two batch
 *   items share key/value rows (a batch stride of 0 is used by decoding, forward only);
 * - cross-entropy targets are validated here; a bad one sends the call to the reference
 *   kernel, which throws its EngineError.
 *
 * Leaves out: the loops (assembly/attention*.ts, assembly/loss.ts, assembly/adam.ts).
 */

import type { AttentionDims, FloatArray, Kernels, MaskView } from '../../backend';
import { attentionOptions } from '../../ops/attention';
import { keepScale } from '../../ops/dropout';
import { Region } from './wasmHeap';
import type { WasmRuntime } from './wasmRuntime';

/** The kernels wrapped here. */
export type AttentionLossKernels = Pick<
  Kernels,
  'attentionForward' | 'attentionBackward' | 'crossEntropyForward' | 'crossEntropyBackward' | 'adamStep'
>;

/** Elements of mask.data that attention over dims reads, or −1 if the view is unusable here. */
function attentionMaskExtent(mask: MaskView, dims: AttentionDims): number {
  const need = (dims.B - 1) * mask.batchStride + (dims.T - 1) * mask.rowStride + dims.S;
  return mask.batchStride < 0 || mask.rowStride < 0 || need > mask.data.length ? -1 : need;
}

/** True when every target is the ignore index or a class in [0, V). */
function targetsValid(targets: Int32Array, N: number, V: number, ignoreIndex: number): boolean {
  if (targets.length < N) return false;
  for (let n = 0; n < N; n++) {
    const t = targets[n] as number;
    if (t !== ignoreIndex && !(t >= 0 && t < V)) return false;
  }
  return true;
}

/** Creates attention, loss and optimizer kernels over `rt`. */
export function createAttentionLossKernels(rt: WasmRuntime): AttentionLossKernels {
  const { args, c, ref } = rt;
  /** Writes x's address (0 for null) into argument slot `slot`; false if x is outside the heap. No allocation. */
  const at = (x: FloatArray | null, slot: number): boolean => {
    const p = x === null ? 0 : rt.ptr(x);
    args[slot] = p;
    return p >= 0;
  };
  const slopeRegion = new Region(rt.heap);
  let slopeView: Float32Array<ArrayBufferLike> = new Float32Array(0);
  /** Address of the ALiBi slopes as float32 in the heap (the array's own when it lives there). */
  const stageSlopes = (alibi: FloatArray, H: number): number => {
    const own = rt.ptr(alibi);
    if (own >= 0) return own;
    const at = slopeRegion.ensure(H * 4);
    const buffer = rt.heap.bytes().buffer;
    if (slopeView.buffer !== buffer || slopeView.byteOffset !== at || slopeView.length < H) {
      slopeView = new Float32Array(buffer, at, H);
    }
    for (let h = 0; h < H; h++) slopeView[h] = alibi[h] as number;
    return at;
  };
  /** Shape, mask, dropout and option slots 8..24; false if the mask view cannot be staged. */
  const putShape = (dims: AttentionDims, mask: MaskView | null, keep: Uint8Array | null, dropP: number): boolean => {
    const { B, T, S, H, D } = dims;
    const opts = attentionOptions(dims);
    const extent = mask === null ? 0 : attentionMaskExtent(mask, dims);
    const nKeep = B * H * T * S;
    if (extent < 0 || (keep !== null && keep.length < nKeep)) return false;
    args[8] = B;
    args[9] = T;
    args[10] = S;
    args[11] = H;
    args[12] = D;
    args[13] = dims.qBatchStride;
    args[14] = dims.kvBatchStride;
    args[15] = dims.scale;
    args[16] = mask === null ? 0 : rt.bytesA.stageBytes(mask.data, extent);
    args[17] = mask === null ? 0 : mask.batchStride;
    args[18] = mask === null ? 0 : mask.rowStride;
    args[19] = keep === null ? 0 : rt.bytesB.stageBytes(keep, nKeep);
    args[20] = keep === null ? 1 : keepScale(dropP);
    args[21] = opts.Hkv;
    args[22] = opts.softCap;
    args[23] = opts.alibi === null ? 0 : stageSlopes(opts.alibi, H);
    args[24] = opts.qStart;
    rt.ensureScratch(rt.fns.attentionScratchBytes(T, S, D));
    return true;
  };
  const usable = (d: AttentionDims): boolean => d.B > 0 && d.T > 0 && d.S > 0 && d.H > 0 && d.D > 0;
  return {
    attentionForward(out, probs, q, k, v, dims, mask, keep, dropP): void {
      const ok =
        usable(dims) &&
        at(out, 0) &&
        at(probs, 1) &&
        at(q, 2) &&
        at(k, 3) &&
        at(v, 4) &&
        at(null, 5) &&
        at(null, 6) &&
        at(null, 7) &&
        putShape(dims, mask, keep, dropP);
      if (!ok) return ref.attentionForward(out, probs, q, k, v, dims, mask, keep, dropP);
      rt.exec(c.K_ATTENTION_FORWARD, dims.B * dims.H * dims.T * dims.S * dims.D);
    },
    attentionBackward(dq, dk, dv, dout, probs, q, k, v, dims, keep, dropP): void {
      const ok =
        usable(dims) &&
        at(dq, 0) &&
        at(probs, 1) &&
        at(q, 2) &&
        at(k, 3) &&
        at(v, 4) &&
        at(dk, 5) &&
        at(dv, 6) &&
        at(dout, 7) &&
        putShape(dims, null, keep, dropP);
      if (!ok) return ref.attentionBackward(dq, dk, dv, dout, probs, q, k, v, dims, keep, dropP);
      const C = dims.H * dims.D;
      const kvC = (dims.Hkv ?? dims.H) * dims.D;
      const disjoint = dims.B === 1 || (dims.kvBatchStride >= dims.S * kvC && dims.qBatchStride >= dims.T * C);
      rt.exec(c.K_ATTENTION_BACKWARD, disjoint ? 2 * dims.B * dims.H * dims.T * dims.S * dims.D : 0);
    },
    crossEntropyForward(lse, logits, targets, N, V, ignoreIndex, smoothing): { sum: number; count: number } {
      const pl = rt.ptr(lse),
        pz = rt.ptr(logits);
      if (pl < 0 || pz < 0 || !targetsValid(targets, N, V, ignoreIndex)) {
        return ref.crossEntropyForward(lse, logits, targets, N, V, ignoreIndex, smoothing);
      }
      if (N <= 0) return { sum: 0, count: 0 };
      const rows = rt.shared.ensure(N * 8);
      args[0] = pl;
      args[1] = pz;
      args[2] = rt.intsA.stageInts(targets, N);
      args[3] = N;
      args[4] = V;
      args[5] = ignoreIndex;
      args[6] = smoothing;
      args[7] = rows;
      rt.exec(c.K_CROSS_ENTROPY_FORWARD, N * V * 2);
      let count = 0;
      for (let n = 0; n < N; n++) if (targets[n] !== ignoreIndex) count++;
      return { sum: rt.fns.sumF64(rows, N), count };
    },
    crossEntropyBackward(dlogits, logits, lse, targets, N, V, ignoreIndex, smoothing, gradScale): void {
      const pd = rt.ptr(dlogits),
        pz = rt.ptr(logits),
        pl = rt.ptr(lse);
      if (pd < 0 || pz < 0 || pl < 0 || !targetsValid(targets, N, V, ignoreIndex)) {
        return ref.crossEntropyBackward(dlogits, logits, lse, targets, N, V, ignoreIndex, smoothing, gradScale);
      }
      if (N <= 0) return;
      args[0] = pd;
      args[1] = pz;
      args[2] = pl;
      args[3] = rt.intsA.stageInts(targets, N);
      args[4] = N;
      args[5] = V;
      args[6] = ignoreIndex;
      args[7] = smoothing;
      args[8] = gradScale;
      rt.exec(c.K_CROSS_ENTROPY_BACKWARD, N * V * 2);
    },
    adamStep(params, grads, m, v, n, opts, decayMask): void {
      if (!(at(params, 0) && at(grads, 1) && at(m, 2) && at(v, 3)) || (decayMask !== null && decayMask.length < n)) {
        return ref.adamStep(params, grads, m, v, n, opts, decayMask);
      }
      if (n <= 0) return;
      const decay = opts.lr * opts.weightDecay;
      args[4] = n;
      args[5] = opts.lr;
      args[6] = opts.beta1;
      args[7] = opts.beta2;
      args[8] = opts.eps;
      args[9] = decay;
      args[10] = 1 - Math.pow(opts.beta1, opts.step);
      args[11] = 1 - Math.pow(opts.beta2, opts.step);
      args[12] = decay !== 0 && decayMask !== null ? rt.bytesB.stageBytes(decayMask, n) : 0;
      rt.exec(c.K_ADAM, n * 2);
    },
  };
}
