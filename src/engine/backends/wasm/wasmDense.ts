/**
 * TypeScript wrappers of the dense kernels — matmul, bias, fill, scale, add, sum of
 * squares — for the WebAssembly backend: each checks that its float arrays live in the
 * backend's heap (else it runs the reference kernel on them, so plain arrays still work),
 * writes the arguments into the control block, and runs the kernel on 1 or 2+ threads.
 *
 * Work estimates passed to `exec` are rough element-operation counts; see wasmRuntime.ts.
 *
 * Leaves out: the loops themselves (assembly/matmul.ts, assembly/pointwise.ts).
 */

import type { FloatArray, Kernels } from '../../backend';
import type { WasmRuntime } from './wasmRuntime';

/** The dense kernels of one backend instance. */
export type DenseKernels = Pick<
  Kernels,
  'matmul' | 'addBias' | 'biasBackward' | 'fill' | 'scale' | 'add' | 'sumSquares'
>;

/** Creates the dense kernels over `rt`. */
export function createDenseKernels(rt: WasmRuntime): DenseKernels {
  const { args, c, ref } = rt;
  const fill = (x: FloatArray, n: number, value: number): void => {
    const px = rt.ptr(x);
    if (px < 0) return ref.fill(x, n, value);
    if (n <= 0) return;
    args[0] = px;
    args[1] = n;
    args[2] = value;
    rt.exec(c.K_FILL, n >> 2);
  };
  return {
    fill,
    scale(x, n, s): void {
      const px = rt.ptr(x);
      if (px < 0) return ref.scale(x, n, s);
      if (n <= 0) return;
      args[0] = px;
      args[1] = n;
      args[2] = s;
      rt.exec(c.K_SCALE, n >> 2);
    },
    add(out, a, b, n): void {
      const po = rt.ptr(out),
        pa = rt.ptr(a),
        pb = rt.ptr(b);
      if (po < 0 || pa < 0 || pb < 0) return ref.add(out, a, b, n);
      if (n <= 0) return;
      args[0] = po;
      args[1] = pa;
      args[2] = pb;
      args[3] = n;
      rt.exec(c.K_ADD, n >> 1);
    },
    sumSquares(x, n): number {
      const px = rt.ptr(x);
      if (px < 0) return ref.sumSquares(x, n);
      if (n <= 0) return 0;
      const chunks = rt.fns.sumSquaresChunks(n);
      const partials = rt.shared.ensure(chunks * 8);
      args[0] = px;
      args[1] = n;
      args[2] = partials;
      rt.exec(c.K_SUM_SQUARES, n >> 1);
      return rt.fns.sumF64(partials, chunks);
    },
    matmul(cm, a, b, M, N, K, transA, transB, accumulate): void {
      const pc = rt.ptr(cm),
        pa = rt.ptr(a),
        pb = rt.ptr(b);
      if (pc < 0 || pa < 0 || pb < 0) return ref.matmul(cm, a, b, M, N, K, transA, transB, accumulate);
      if (M <= 0 || N <= 0) return;
      if (K <= 0) {
        if (!accumulate) fill(cm, M * N, 0);
        return;
      }
      rt.ensureScratch(rt.fns.matmulScratchBytes(K));
      args[0] = pc;
      args[1] = pa;
      args[2] = pb;
      args[3] = M;
      args[4] = N;
      args[5] = K;
      args[6] = transA ? 1 : 0;
      args[7] = transB ? 1 : 0;
      args[8] = accumulate ? 1 : 0;
      // Fewer than 4 rows is a memory-bound pass over B (decoding): worth splitting sooner.
      rt.exec(c.K_MATMUL, M < 4 ? N * K : (M * N * K) / 8, 2); // 2 chunks per thread: each chunk packs its own B
    },
    addBias(y, bias, rows, cols): void {
      const py = rt.ptr(y),
        pb = rt.ptr(bias);
      if (py < 0 || pb < 0) return ref.addBias(y, bias, rows, cols);
      if (rows <= 0 || cols <= 0) return;
      args[0] = py;
      args[1] = pb;
      args[2] = rows;
      args[3] = cols;
      rt.exec(c.K_ADD_BIAS, (rows * cols) >> 1);
    },
    biasBackward(dbias, dy, rows, cols): void {
      const pd = rt.ptr(dbias),
        py = rt.ptr(dy);
      if (pd < 0 || py < 0) return ref.biasBackward(dbias, dy, rows, cols);
      if (rows <= 0 || cols <= 0) return;
      args[0] = pd;
      args[1] = py;
      args[2] = rows;
      args[3] = cols;
      rt.exec(c.K_BIAS_BACKWARD, (rows * cols) >> 1);
    },
  };
}
