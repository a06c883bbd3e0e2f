/**
 * Matrix products with fewer than 4 rows — decoding one token, or a beam of 2–3 — where
 * packing B would cost as much as the product itself (every element of B is used only
 * M times): each row of C is a row of A times B, in axpy form when B is stored [K, N]
 * (8 vectors of C accumulate while rows of B stream by) or as dot products with the rows
 * of Bᵀ when it is stored [N, K] (four rows of Bᵀ share each load of the A row). Memory-
 * bound: B is read once per row of A.
 *
 * Every C element is summed in the same order whichever chunk computes it, as in matmul.ts.
 *
 * Leaves out: four rows or more (matmul.ts).
 */

import { fmadd } from './vmath';

import { partStart } from './threads';

/** c[j0..j1) (+)= Σ_k x[k] · B[k, j] with B [K, N] row-major: 32, then 4, then 1 column at a time. */
function rowTimesB(x: usize, b: usize, N: i32, K: i32, j0: i32, j1: i32, c: usize, add: bool): void {
  const ld = (<usize>N) << 2;
  let j = j0;
  for (; j + 32 <= j1; j += 32) {
    let s0 = f32x4.splat(0),
      s1 = f32x4.splat(0),
      s2 = f32x4.splat(0),
      s3 = f32x4.splat(0);
    let s4 = f32x4.splat(0),
      s5 = f32x4.splat(0),
      s6 = f32x4.splat(0),
      s7 = f32x4.splat(0);
    let src = b + ((<usize>j) << 2);
    for (let k = 0; k < K; k++) {
      const v = v128.load32_splat(x + ((<usize>k) << 2));
      s0 = fmadd(v, v128.load(src), s0);
      s1 = fmadd(v, v128.load(src, 16), s1);
      s2 = fmadd(v, v128.load(src, 32), s2);
      s3 = fmadd(v, v128.load(src, 48), s3);
      s4 = fmadd(v, v128.load(src, 64), s4);
      s5 = fmadd(v, v128.load(src, 80), s5);
      s6 = fmadd(v, v128.load(src, 96), s6);
      s7 = fmadd(v, v128.load(src, 112), s7);
      src += ld;
    }
    const cj = c + ((<usize>j) << 2);
    if (add) {
      s0 = f32x4.add(s0, v128.load(cj));
      s1 = f32x4.add(s1, v128.load(cj, 16));
      s2 = f32x4.add(s2, v128.load(cj, 32));
      s3 = f32x4.add(s3, v128.load(cj, 48));
      s4 = f32x4.add(s4, v128.load(cj, 64));
      s5 = f32x4.add(s5, v128.load(cj, 80));
      s6 = f32x4.add(s6, v128.load(cj, 96));
      s7 = f32x4.add(s7, v128.load(cj, 112));
    }
    v128.store(cj, s0);
    v128.store(cj, s1, 16);
    v128.store(cj, s2, 32);
    v128.store(cj, s3, 48);
    v128.store(cj, s4, 64);
    v128.store(cj, s5, 80);
    v128.store(cj, s6, 96);
    v128.store(cj, s7, 112);
  }
  for (; j + 4 <= j1; j += 4) {
    let s = f32x4.splat(0);
    let src = b + ((<usize>j) << 2);
    for (let k = 0; k < K; k++) {
      s = fmadd(v128.load32_splat(x + ((<usize>k) << 2)), v128.load(src), s);
      src += ld;
    }
    const cj = c + ((<usize>j) << 2);
    if (add) s = f32x4.add(s, v128.load(cj));
    v128.store(cj, s);
  }
  for (; j < j1; j++) {
    let s: f32 = 0;
    let src = b + ((<usize>j) << 2);
    for (let k = 0; k < K; k++) {
      s += load<f32>(x + ((<usize>k) << 2)) * load<f32>(src);
      src += ld;
    }
    const cj = c + ((<usize>j) << 2);
    store<f32>(cj, add ? load<f32>(cj) + s : s);
  }
}

/** Σ_k x[k]·y[k] over K: four lanes of partial sums, summed lane 0..3, then the K mod 4 tail. */
@inline function dotRow(x: usize, y: usize, K: i32): f32 {
  let s = f32x4.splat(0);
  let k = 0;
  for (; k + 4 <= K; k += 4) s = fmadd(v128.load(x + ((<usize>k) << 2)), v128.load(y + ((<usize>k) << 2)), s);
  let r = f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1) + f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3);
  for (; k < K; k++) r += load<f32>(x + ((<usize>k) << 2)) * load<f32>(y + ((<usize>k) << 2));
  return r;
}

/** c[j0..j1) (+)= x · B[j, :] with B [N, K] row-major (rows of Bᵀ): four columns share each x load. */
function rowDotB(x: usize, b: usize, K: i32, j0: i32, j1: i32, c: usize, add: bool): void {
  const ld = (<usize>K) << 2;
  let j = j0;
  for (; j + 4 <= j1; j += 4) {
    const r0 = b + <usize>j * ld;
    const r1 = r0 + ld,
      r2 = r1 + ld,
      r3 = r2 + ld;
    let s0 = f32x4.splat(0),
      s1 = f32x4.splat(0),
      s2 = f32x4.splat(0),
      s3 = f32x4.splat(0);
    let k = 0;
    for (; k + 4 <= K; k += 4) {
      const o = (<usize>k) << 2;
      const v = v128.load(x + o);
      s0 = fmadd(v, v128.load(r0 + o), s0);
      s1 = fmadd(v, v128.load(r1 + o), s1);
      s2 = fmadd(v, v128.load(r2 + o), s2);
      s3 = fmadd(v, v128.load(r3 + o), s3);
    }
    let d0 =
      f32x4.extract_lane(s0, 0) + f32x4.extract_lane(s0, 1) + f32x4.extract_lane(s0, 2) + f32x4.extract_lane(s0, 3);
    let d1 =
      f32x4.extract_lane(s1, 0) + f32x4.extract_lane(s1, 1) + f32x4.extract_lane(s1, 2) + f32x4.extract_lane(s1, 3);
    let d2 =
      f32x4.extract_lane(s2, 0) + f32x4.extract_lane(s2, 1) + f32x4.extract_lane(s2, 2) + f32x4.extract_lane(s2, 3);
    let d3 =
      f32x4.extract_lane(s3, 0) + f32x4.extract_lane(s3, 1) + f32x4.extract_lane(s3, 2) + f32x4.extract_lane(s3, 3);
    for (; k < K; k++) {
      const o = (<usize>k) << 2;
      const v = load<f32>(x + o);
      d0 += v * load<f32>(r0 + o);
      d1 += v * load<f32>(r1 + o);
      d2 += v * load<f32>(r2 + o);
      d3 += v * load<f32>(r3 + o);
    }
    const cj = c + ((<usize>j) << 2);
    if (add) {
      d0 += load<f32>(cj);
      d1 += load<f32>(cj, 4);
      d2 += load<f32>(cj, 8);
      d3 += load<f32>(cj, 12);
    }
    store<f32>(cj, d0);
    store<f32>(cj, d1, 4);
    store<f32>(cj, d2, 8);
    store<f32>(cj, d3, 12);
  }
  for (; j < j1; j++) {
    const d = dotRow(x, b + <usize>j * ld, K);
    const cj = c + ((<usize>j) << 2);
    store<f32>(cj, add ? load<f32>(cj) + d : d);
  }
}

/**
 * Fewer than 4 rows: no packing; chunks split the columns (multiples of 32, or 4 for Bᵀ).
 * `xrow` is K floats of scratch for a row of a transposed A.
 */
export function smallM(
  part: i32,
  parts: i32,
  c: usize,
  a: usize,
  b: usize,
  M: i32,
  N: i32,
  K: i32,
  transA: bool,
  transB: bool,
  accumulate: bool,
  xrow: usize,
): void {
  const unit = transB ? 4 : 32;
  const nu = (N + unit - 1) / unit;
  const j0 = partStart(nu, part, parts) * unit;
  const j1 = min(N, partStart(nu, part + 1, parts) * unit);
  if (j0 >= j1) return;
  for (let i = 0; i < M; i++) {
    let x = a + ((<usize>i * <usize>K) << 2);
    if (transA) {
      // op(A)[i, k] = a[k·M + i]: gather the row once.
      for (let k = 0; k < K; k++)
        store<f32>(xrow + ((<usize>k) << 2), load<f32>(a + ((<usize>k * <usize>M + <usize>i) << 2)));
      x = xrow;
    }
    const crow = c + ((<usize>i * <usize>N) << 2);
    if (transB) rowDotB(x, b, K, j0, j1, crow, accumulate);
    else rowTimesB(x, b, N, K, j0, j1, crow, accumulate);
  }
}
