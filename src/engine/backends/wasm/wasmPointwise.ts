/**
 * TypeScript wrappers of the row-wise and element-wise kernels of the WebAssembly backend:
 * embeddings and positions, layer norm and RMSNorm, RoPE, ReLU/GELU/tanh GELU/SiLU/squared ReLU, mul,
 * soft-cap, dropout and its keep-mask, softmax. Same
 * pattern as wasmDense.ts: float arrays outside the heap run the reference kernel; byte and
 * int arrays outside it (token ids; masks from a caller that did not use `allocBytes`) are
 * copied into staging regions of the heap per call, and those inside are used in place.
 *
 * Validation that throws EngineError (token ids outside the table) is delegated to the
 * reference kernel: when an id is bad, the call goes to the reference, which throws its
 * message, so both backends fail the same way.
 *
 * Leaves out: attention, cross-entropy and Adam (wasmAttention.ts).
 */

import type { FloatArray, Kernels, MaskView } from '../../backend';
import { keepScale, keepThreshold } from '../../ops/dropout';
import type { WasmRuntime } from './wasmRuntime';

/** The kernels wrapped here. */
export type PointwiseKernels = Pick<
  Kernels,
  | 'embeddingForward'
  | 'embeddingBackward'
  | 'positionalForward'
  | 'positionalBackward'
  | 'layernormForward'
  | 'layernormBackward'
  | 'rmsnormForward'
  | 'rmsnormBackward'
  | 'rope'
  | 'reluForward'
  | 'reluBackward'
  | 'geluForward'
  | 'geluBackward'
  | 'geluTanhForward'
  | 'geluTanhBackward'
  | 'siluForward'
  | 'siluBackward'
  | 'relu2Forward'
  | 'relu2Backward'
  | 'mul'
  | 'softcapForward'
  | 'softcapBackward'
  | 'dropoutMask'
  | 'dropoutForward'
  | 'dropoutBackward'
  | 'softmaxForward'
  | 'softmaxBackward'
>;

/** 2³²: a threshold this large keeps nothing (it does not fit the kernel's u32). */
const TWO_32 = 4294967296;

/** True when every id (except skipId) indexes a row of a table of `rows` rows. */
function idsValid(ids: Int32Array, n: number, rows: number, skipId: number): boolean {
  if (ids.length < n) return false;
  for (let i = 0; i < n; i++) {
    const id = ids[i] as number;
    if (id === skipId) continue;
    if (!(id >= 0 && id < rows)) return false;
  }
  return true;
}

/** Elements of `mask.data` a softmax over rows × cols reads, or −1 if the view is unusable here. */
export function maskExtent(mask: MaskView, rows: number, rowsPerBatch: number, cols: number): number {
  if (!(rowsPerBatch >= 1) || !Number.isInteger(rowsPerBatch)) return -1;
  const lastBatch = Math.floor((rows - 1) / rowsPerBatch);
  const lastRow = Math.min(rowsPerBatch, rows) - 1;
  const need = lastBatch * mask.batchStride + lastRow * mask.rowStride + cols;
  return mask.batchStride < 0 || mask.rowStride < 0 || need > mask.data.length ? -1 : need;
}

/** True for an integer ≥ 0. */
function whole(v: number): boolean {
  return Number.isInteger(v) && v >= 0;
}

/**
 * True when every element a rope call reads or writes lies inside x and the tables (a wrong
 * stride must not let the kernel write over another buffer of the heap), and no two head rows
 * overlap (chunks on different threads would then write one element). Else the reference runs.
 */
function ropeInBounds(
  x: FloatArray,
  cos: FloatArray,
  sin: FloatArray,
  B: number,
  T: number,
  H: number,
  D: number,
  R: number,
  start: number,
  batchStride: number,
  rowStride: number,
): boolean {
  if (!(whole(B) && whole(T) && whole(H) && whole(D) && whole(R) && whole(start) && whole(batchStride))) return false;
  if (!whole(rowStride)) return false;
  const last = (B - 1) * batchStride + (T - 1) * rowStride + (H - 1) * D + R - 1;
  const table = (start + T) * (R >> 1);
  const apart = (T === 1 || rowStride >= H * D) && (B === 1 || batchStride >= (T - 1) * rowStride + H * D);
  return apart && R % 2 === 0 && R <= D && last < x.length && table <= cos.length && table <= sin.length;
}

/** Creates the row- and element-wise kernels over `rt` (the wrappers allocate nothing per call). */
export function createPointwiseKernels(rt: WasmRuntime): PointwiseKernels {
  const { args, c, ref } = rt;
  /** Writes x's address into argument slot `slot`; false if x is outside the heap. No allocation. */
  const at = (x: FloatArray, slot: number): boolean => {
    const p = rt.ptr(x);
    args[slot] = p;
    return p >= 0;
  };
  return {
    embeddingForward(out, ids, table, N, C, scale): void {
      const po = rt.ptr(out),
        pt = rt.ptr(table);
      if (po < 0 || pt < 0 || !idsValid(ids, N, Math.floor(table.length / C), NaN)) {
        return ref.embeddingForward(out, ids, table, N, C, scale);
      }
      if (N <= 0) return;
      args[0] = po;
      args[1] = rt.intsA.stageInts(ids, N);
      args[2] = pt;
      args[3] = N;
      args[4] = C;
      args[5] = scale;
      rt.exec(c.K_EMBEDDING_FORWARD, (N * C) >> 1);
    },
    embeddingBackward(dtable, dout, ids, N, C, scale, paddingIdx): void {
      if (!(at(dtable, 0) && at(dout, 1)) || !idsValid(ids, N, Math.floor(dtable.length / C), paddingIdx)) {
        return ref.embeddingBackward(dtable, dout, ids, N, C, scale, paddingIdx);
      }
      if (N <= 0) return;
      args[2] = rt.intsA.stageInts(ids, N);
      args[3] = N;
      args[4] = C;
      args[5] = scale;
      args[6] = paddingIdx;
      rt.exec(c.K_EMBEDDING_BACKWARD, (N * C) >> 1);
    },
    positionalForward(x, pe, B, T, C, start): void {
      if (!(at(x, 0) && at(pe, 1))) return ref.positionalForward(x, pe, B, T, C, start);
      if (B <= 0 || T <= 0) return;
      args[2] = B;
      args[3] = T;
      args[4] = C;
      args[5] = start;
      rt.exec(c.K_POSITIONAL_FORWARD, (B * T * C) >> 1);
    },
    positionalBackward(dpe, dx, B, T, C, start): void {
      if (!(at(dpe, 0) && at(dx, 1))) return ref.positionalBackward(dpe, dx, B, T, C, start);
      if (B <= 0 || T <= 0) return;
      args[2] = B;
      args[3] = T;
      args[4] = C;
      args[5] = start;
      rt.exec(c.K_POSITIONAL_BACKWARD, (B * T * C) >> 1);
    },
    layernormForward(y, mean, rstd, x, w, b, N, C, eps): void {
      const ok = at(y, 0) && at(mean, 1) && at(rstd, 2) && at(x, 3) && at(w, 4) && (b === null || rt.ptr(b) >= 0);
      if (!ok) return ref.layernormForward(y, mean, rstd, x, w, b, N, C, eps);
      if (N <= 0) return;
      args[5] = b === null ? 0 : rt.ptr(b);
      args[6] = N;
      args[7] = C;
      args[8] = eps;
      rt.exec(c.K_LAYERNORM_FORWARD, N * C);
    },
    layernormBackward(dx, dw, db, dy, x, mean, rstd, w, N, C): void {
      const ok =
        at(dx, 0) &&
        at(dw, 1) &&
        at(dy, 3) &&
        at(x, 4) &&
        at(mean, 5) &&
        at(rstd, 6) &&
        at(w, 7) &&
        (db === null || rt.ptr(db) >= 0);
      if (!ok) return ref.layernormBackward(dx, dw, db, dy, x, mean, rstd, w, N, C);
      if (N <= 0) return;
      args[2] = db === null ? 0 : rt.ptr(db);
      args[8] = N;
      args[9] = C;
      rt.exec(c.K_LAYERNORM_BACKWARD_DX, N * C);
      rt.exec(c.K_LAYERNORM_BACKWARD_DW, N * C);
    },
    rmsnormForward(y, rstd, x, w, N, C, eps): void {
      const ok = at(y, 0) && at(rstd, 1) && at(x, 2) && (w === null || rt.ptr(w) >= 0);
      if (!ok) return ref.rmsnormForward(y, rstd, x, w, N, C, eps);
      if (N <= 0) return;
      args[3] = w === null ? 0 : rt.ptr(w);
      args[4] = N;
      args[5] = C;
      args[6] = eps;
      rt.exec(c.K_RMSNORM_FORWARD, N * C);
    },
    rmsnormBackward(dx, dw, dy, x, rstd, w, N, C): void {
      const ok =
        at(dx, 0) &&
        at(dy, 2) &&
        at(x, 3) &&
        at(rstd, 4) &&
        (dw === null || rt.ptr(dw) >= 0) &&
        (w === null || rt.ptr(w) >= 0);
      if (!ok) return ref.rmsnormBackward(dx, dw, dy, x, rstd, w, N, C);
      if (N <= 0) return;
      args[1] = dw === null ? 0 : rt.ptr(dw);
      args[5] = w === null ? 0 : rt.ptr(w);
      args[6] = N;
      args[7] = C;
      rt.exec(c.K_RMSNORM_BACKWARD_DX, N * C);
      if (dw !== null) rt.exec(c.K_RMSNORM_BACKWARD_DW, N * C);
    },
    rope(x, cos, sin, B, T, H, D, R, start, batchStride, rowStride, inverse): void {
      if (B <= 0 || T <= 0 || H <= 0 || R <= 0) return;
      const ok =
        at(x, 0) && at(cos, 1) && at(sin, 2) && ropeInBounds(x, cos, sin, B, T, H, D, R, start, batchStride, rowStride);
      if (!ok) return ref.rope(x, cos, sin, B, T, H, D, R, start, batchStride, rowStride, inverse);
      args[3] = B;
      args[4] = T;
      args[5] = H;
      args[6] = D;
      args[7] = R;
      args[8] = start;
      args[9] = batchStride;
      args[10] = rowStride;
      args[11] = inverse ? 1 : 0;
      rt.exec(c.K_ROPE, (B * T * H * R) >> 1);
    },
    reluForward(y, x, n): void {
      if (!(at(y, 0) && at(x, 1))) return ref.reluForward(y, x, n);
      if (n <= 0) return;
      args[2] = n;
      rt.exec(c.K_RELU_FORWARD, n >> 1);
    },
    reluBackward(dx, dy, x, n): void {
      if (!(at(dx, 0) && at(dy, 1) && at(x, 2))) return ref.reluBackward(dx, dy, x, n);
      if (n <= 0) return;
      args[3] = n;
      rt.exec(c.K_RELU_BACKWARD, n >> 1);
    },
    geluForward(y, x, n): void {
      if (!(at(y, 0) && at(x, 1))) return ref.geluForward(y, x, n);
      if (n <= 0) return;
      args[2] = n;
      rt.exec(c.K_GELU_FORWARD, n * 4);
    },
    geluBackward(dx, dy, x, n): void {
      if (!(at(dx, 0) && at(dy, 1) && at(x, 2))) return ref.geluBackward(dx, dy, x, n);
      if (n <= 0) return;
      args[3] = n;
      rt.exec(c.K_GELU_BACKWARD, n * 4);
    },
    geluTanhForward(y, x, n): void {
      if (!(at(y, 0) && at(x, 1))) return ref.geluTanhForward(y, x, n);
      if (n <= 0) return;
      args[2] = n;
      rt.exec(c.K_GELU_TANH_FORWARD, n * 4);
    },
    geluTanhBackward(dx, dy, x, n): void {
      if (!(at(dx, 0) && at(dy, 1) && at(x, 2))) return ref.geluTanhBackward(dx, dy, x, n);
      if (n <= 0) return;
      args[3] = n;
      rt.exec(c.K_GELU_TANH_BACKWARD, n * 4);
    },
    siluForward(y, x, n): void {
      if (!(at(y, 0) && at(x, 1))) return ref.siluForward(y, x, n);
      if (n <= 0) return;
      args[2] = n;
      rt.exec(c.K_SILU_FORWARD, n * 4);
    },
    siluBackward(dx, dy, x, n): void {
      if (!(at(dx, 0) && at(dy, 1) && at(x, 2))) return ref.siluBackward(dx, dy, x, n);
      if (n <= 0) return;
      args[3] = n;
      rt.exec(c.K_SILU_BACKWARD, n * 4);
    },
    relu2Forward(y, x, n): void {
      if (!(at(y, 0) && at(x, 1))) return ref.relu2Forward(y, x, n);
      if (n <= 0) return;
      args[2] = n;
      rt.exec(c.K_RELU2_FORWARD, n >> 1);
    },
    relu2Backward(dx, dy, x, n): void {
      if (!(at(dx, 0) && at(dy, 1) && at(x, 2))) return ref.relu2Backward(dx, dy, x, n);
      if (n <= 0) return;
      args[3] = n;
      rt.exec(c.K_RELU2_BACKWARD, n >> 1);
    },
    mul(out, a, b, n, accumulate): void {
      if (!(at(out, 0) && at(a, 1) && at(b, 2))) return ref.mul(out, a, b, n, accumulate);
      if (n <= 0) return;
      args[3] = n;
      args[4] = accumulate ? 1 : 0;
      rt.exec(c.K_MUL, n >> 1);
    },
    softcapForward(y, x, n, cap): void {
      if (!(at(y, 0) && at(x, 1))) return ref.softcapForward(y, x, n, cap);
      if (n <= 0) return;
      args[2] = n;
      args[3] = cap;
      args[4] = 1 / cap;
      rt.exec(c.K_SOFTCAP_FORWARD, n * 4);
    },
    softcapBackward(d, y, n, cap): void {
      if (!(at(d, 0) && at(y, 1))) return ref.softcapBackward(d, y, n, cap);
      if (n <= 0) return;
      args[2] = n;
      args[3] = cap;
      args[4] = 1 / (cap * cap);
      rt.exec(c.K_SOFTCAP_BACKWARD, n >> 1);
    },
    dropoutMask(keep, n, p, key0, key1): void {
      if (keep.length < n) return ref.dropoutMask(keep, n, p, key0, key1);
      if (n <= 0) return;
      const threshold = keepThreshold(p);
      if (threshold >= TWO_32) {
        keep.fill(0, 0, n);
        return;
      }
      // A keep array outside the heap gets the kernel's bytes in a staging region, copied out.
      const own = rt.heap.rawPtr(keep);
      const at = own >= 0 ? own : rt.bytesB.ensure(n);
      args[0] = at;
      args[1] = n;
      args[2] = threshold;
      args[3] = key0 >>> 0; // mod 2³², as the reference's ⊕ takes it
      args[4] = key1 >>> 0;
      rt.exec(c.K_DROPOUT_MASK, n * 4);
      if (own < 0) keep.set(rt.heap.bytes().subarray(at, at + n));
    },
    dropoutForward(y, x, keep, n, p): void {
      if (!(at(y, 0) && at(x, 1)) || (p !== 0 && keep.length < n)) return ref.dropoutForward(y, x, keep, n, p);
      if (n <= 0) return;
      args[2] = p === 0 ? 0 : rt.bytesB.stageBytes(keep, n);
      args[3] = n;
      args[4] = keepScale(p);
      rt.exec(c.K_DROPOUT_FORWARD, n >> 1);
    },
    dropoutBackward(dx, dy, keep, n, p): void {
      if (!(at(dx, 0) && at(dy, 1)) || (p !== 0 && keep.length < n)) return ref.dropoutBackward(dx, dy, keep, n, p);
      if (n <= 0) return;
      args[2] = p === 0 ? 0 : rt.bytesB.stageBytes(keep, n);
      args[3] = n;
      args[4] = keepScale(p);
      rt.exec(c.K_DROPOUT_BACKWARD, n >> 1);
    },
    softmaxForward(y, x, rows, cols, mask, rowsPerBatch): void {
      const extent = mask === null ? 0 : maskExtent(mask, rows, rowsPerBatch, cols);
      if (!(at(y, 0) && at(x, 1)) || extent < 0) return ref.softmaxForward(y, x, rows, cols, mask, rowsPerBatch);
      if (rows <= 0 || cols <= 0) return;
      args[2] = rows;
      args[3] = cols;
      args[4] = mask === null ? 0 : rt.bytesA.stageBytes(mask.data, extent);
      args[5] = mask === null ? 0 : mask.batchStride;
      args[6] = mask === null ? 0 : mask.rowStride;
      args[7] = rowsPerBatch;
      rt.exec(c.K_SOFTMAX_FORWARD, rows * cols * 2);
    },
    softmaxBackward(dx, dy, y, rows, cols): void {
      if (!(at(dx, 0) && at(dy, 1) && at(y, 2))) return ref.softmaxBackward(dx, dy, y, rows, cols);
      if (rows <= 0 || cols <= 0) return;
      args[3] = rows;
      args[4] = cols;
      rt.exec(c.K_SOFTMAX_BACKWARD, rows * cols);
    },
  };
}
