/**
 * Dense matrix product with the four transpose variants, plus the bias kernels of a
 * linear layer. A linear layer y = x·Wᵀ + b (W stored [O, I], PyTorch's layout) uses:
 *   forward  y[N,O]   = x[N,I] · W[O,I]ᵀ          → matmul(transB)
 *   backward dx[N,I] += dy[N,O] · W[O,I]          → matmul(accumulate)
 *            dW[O,I] += dy[N,O]ᵀ · x[N,I]         → matmul(transA, accumulate)
 *            db[O]   += Σ_n dy[n,:]               → biasBackward
 *
 * Speed (this is also the backend the learning tests run on): every variant orders its
 * loops so the innermost one walks memory contiguously — an "axpy" over a row of C for
 * C += a·B-row, or a dot product of two contiguous rows for A·Bᵀ — with small register
 * blocks (2 rows × 4 k, or 2×2 dot products) so each loaded element is used more than
 * once, and nothing is allocated per call. About 2–3 GFLOP/s on one core under V8.
 *
 * Leaves out: cache blocking and SIMD (the WebAssembly backend's job), and strided /
 * batched views; callers pass contiguous row-major buffers.
 */

import type { FloatArray } from '../backend';

/**
 * C[M,N] = (accumulate ? C : 0) + op(A) · op(B).
 * op(A) is A stored [M,K], or with transA Aᵀ where A is stored [K,M].
 * op(B) is B stored [K,N], or with transB Bᵀ where B is stored [N,K].
 */
export function matmul(
  c: FloatArray,
  a: FloatArray,
  b: FloatArray,
  M: number,
  N: number,
  K: number,
  transA: boolean,
  transB: boolean,
  accumulate: boolean,
): void {
  if (transB) {
    if (transA) matmulTT(c, a, b, M, N, K, accumulate);
    else matmulNT(c, a, b, M, N, K, accumulate);
  } else {
    matmulAxpy(c, a, b, M, N, K, transA, accumulate);
  }
}

/**
 * C[i,:] (+)= Σ_k op(A)[i,k] · B[k,:] with B stored [K,N]: loop order i-k-j, so the inner
 * loop is an axpy over contiguous rows of B and C. A[i,k] sits at i·sI + k·sK: sI = K,
 * sK = 1 when A is stored [M,K]; sI = 1, sK = M when it is stored [K,M] (transA).
 * Rows of C are updated two at a time so each loaded B element serves both.
 */
function matmulAxpy(
  c: FloatArray,
  a: FloatArray,
  b: FloatArray,
  M: number,
  N: number,
  K: number,
  transA: boolean,
  accumulate: boolean,
): void {
  const sI = transA ? 1 : K;
  const sK = transA ? M : 1;
  let i = 0;
  for (; i + 1 < M; i += 2) axpyRowPair(c, a, b, i, sI, sK, N, K, accumulate);
  if (i < M) axpyRow(c, a, b, i, sI, sK, N, K, accumulate);
}

/**
 * Rows i and i+1 of C: C[r,:] (+)= Σ_k A[r,k]·B[k,:], four k per pass over the two C rows
 * (a 2×4 register block: eight A values held, four B rows streamed), so C is loaded and
 * stored K/4 times instead of K.
 */
function axpyRowPair(
  c: FloatArray,
  a: FloatArray,
  b: FloatArray,
  i: number,
  sI: number,
  sK: number,
  N: number,
  K: number,
  accumulate: boolean,
): void {
  const c0 = i * N;
  const c1 = c0 + N;
  if (!accumulate) for (let j = 0; j < N; j++) c[c0 + j] = c[c1 + j] = 0;
  const r0 = i * sI;
  const r1 = r0 + sI;
  let k = 0;
  for (; k + 3 < K; k += 4) {
    const x0 = a[r0 + k * sK] as number,
      x1 = a[r0 + (k + 1) * sK] as number;
    const x2 = a[r0 + (k + 2) * sK] as number,
      x3 = a[r0 + (k + 3) * sK] as number;
    const y0 = a[r1 + k * sK] as number,
      y1 = a[r1 + (k + 1) * sK] as number;
    const y2 = a[r1 + (k + 2) * sK] as number,
      y3 = a[r1 + (k + 3) * sK] as number;
    const b0 = k * N,
      b1 = b0 + N,
      b2 = b1 + N,
      b3 = b2 + N;
    for (let j = 0; j < N; j++) {
      const u0 = b[b0 + j] as number,
        u1 = b[b1 + j] as number;
      const u2 = b[b2 + j] as number,
        u3 = b[b3 + j] as number;
      c[c0 + j] = (c[c0 + j] as number) + x0 * u0 + x1 * u1 + x2 * u2 + x3 * u3;
      c[c1 + j] = (c[c1 + j] as number) + y0 * u0 + y1 * u1 + y2 * u2 + y3 * u3;
    }
  }
  for (; k < K; k++) {
    const x = a[r0 + k * sK] as number;
    const y = a[r1 + k * sK] as number;
    const bRow = k * N;
    for (let j = 0; j < N; j++) {
      const u = b[bRow + j] as number;
      c[c0 + j] = (c[c0 + j] as number) + x * u;
      c[c1 + j] = (c[c1 + j] as number) + y * u;
    }
  }
}

/** The last row when M is odd: C[i,:] (+)= Σ_k A[i,k]·B[k,:], four k per pass. */
function axpyRow(
  c: FloatArray,
  a: FloatArray,
  b: FloatArray,
  i: number,
  sI: number,
  sK: number,
  N: number,
  K: number,
  accumulate: boolean,
): void {
  const c0 = i * N;
  if (!accumulate) for (let j = 0; j < N; j++) c[c0 + j] = 0;
  const r0 = i * sI;
  let k = 0;
  for (; k + 3 < K; k += 4) {
    const x0 = a[r0 + k * sK] as number,
      x1 = a[r0 + (k + 1) * sK] as number;
    const x2 = a[r0 + (k + 2) * sK] as number,
      x3 = a[r0 + (k + 3) * sK] as number;
    const b0 = k * N,
      b1 = b0 + N,
      b2 = b1 + N,
      b3 = b2 + N;
    for (let j = 0; j < N; j++) {
      c[c0 + j] =
        (c[c0 + j] as number) +
        x0 * (b[b0 + j] as number) +
        x1 * (b[b1 + j] as number) +
        x2 * (b[b2 + j] as number) +
        x3 * (b[b3 + j] as number);
    }
  }
  for (; k < K; k++) {
    const x = a[r0 + k * sK] as number;
    const bRow = k * N;
    for (let j = 0; j < N; j++) c[c0 + j] = (c[c0 + j] as number) + x * (b[bRow + j] as number);
  }
}

/**
 * C[i,j] (+)= A[i,:] · B[j,:] with A stored [M,K], B stored [N,K]: dot products of
 * contiguous rows, summed in float64. A 2×2 block of C at a time, so each loaded element
 * of A and of B is used twice; odd edges fall back to single dot products.
 */
function matmulNT(
  c: FloatArray,
  a: FloatArray,
  b: FloatArray,
  M: number,
  N: number,
  K: number,
  accumulate: boolean,
): void {
  let i = 0;
  for (; i + 1 < M; i += 2) {
    const a0 = i * K,
      a1 = a0 + K;
    const c0 = i * N,
      c1 = c0 + N;
    let j = 0;
    for (; j + 1 < N; j += 2) {
      const b0 = j * K,
        b1 = b0 + K;
      let s00 = 0,
        s01 = 0,
        s10 = 0,
        s11 = 0;
      for (let k = 0; k < K; k++) {
        const x0 = a[a0 + k] as number,
          x1 = a[a1 + k] as number;
        const y0 = b[b0 + k] as number,
          y1 = b[b1 + k] as number;
        s00 += x0 * y0;
        s01 += x0 * y1;
        s10 += x1 * y0;
        s11 += x1 * y1;
      }
      store(c, c0 + j, s00, accumulate);
      store(c, c0 + j + 1, s01, accumulate);
      store(c, c1 + j, s10, accumulate);
      store(c, c1 + j + 1, s11, accumulate);
    }
    if (j < N) {
      store(c, c0 + j, dot(a, a0, b, j * K, K), accumulate);
      store(c, c1 + j, dot(a, a1, b, j * K, K), accumulate);
    }
  }
  if (i < M) {
    for (let j = 0; j < N; j++) store(c, i * N + j, dot(a, i * K, b, j * K, K), accumulate);
  }
}

/** Σ_k x[xOff + k] · y[yOff + k] over k < n, in float64. */
function dot(x: FloatArray, xOff: number, y: FloatArray, yOff: number, n: number): number {
  let s = 0;
  for (let k = 0; k < n; k++) s += (x[xOff + k] as number) * (y[yOff + k] as number);
  return s;
}

/** c[idx] = s, or c[idx] += s when accumulating. */
function store(c: FloatArray, idx: number, s: number, accumulate: boolean): void {
  c[idx] = accumulate ? (c[idx] as number) + s : s;
}

/**
 * C[i,j] (+)= Σ_k A[k,i] · B[j,k] with A stored [K,M], B stored [N,K]. No layer uses this
 * variant; it exists for completeness, so it is the plain dot product (A read strided).
 */
function matmulTT(
  c: FloatArray,
  a: FloatArray,
  b: FloatArray,
  M: number,
  N: number,
  K: number,
  accumulate: boolean,
): void {
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      const bRow = j * K;
      let s = 0;
      for (let k = 0; k < K; k++) s += (a[k * M + i] as number) * (b[bRow + k] as number);
      store(c, i * N + j, s, accumulate);
    }
  }
}

/** y[r, c] += bias[c] for r < rows, c < cols. */
export function addBias(y: FloatArray, bias: FloatArray, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const row = r * cols;
    for (let c = 0; c < cols; c++) y[row + c] = (y[row + c] as number) + (bias[c] as number);
  }
}

/** Differentiates y[r, c] += bias[c]: dbias[c] += Σ_r dy[r, c] (accumulates). */
export function biasBackward(dbias: FloatArray, dy: FloatArray, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const row = r * cols;
    for (let c = 0; c < cols; c++) dbias[c] = (dbias[c] as number) + (dy[row + c] as number);
  }
}
