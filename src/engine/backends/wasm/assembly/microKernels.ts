/**
 * Register-blocked micro-kernels: the inner loops every matrix product here runs
 * (GotoBLAS / BLIS structure: Goto & van de Geijn, "Anatomy of High-Performance Matrix
 * Multiplication", ACM TOMS 2008).
 *
 * mk4x8 keeps a 4 × 8 block of C in eight f32x4 accumulators; each step over k loads two
 * vectors of B and broadcasts one element of each of the four A rows (4 mul + 4 add per
 * broadcast), so every loaded value is used 4 or 8 times. Four rows × two vectors fits in
 * the 16 SIMD registers V8 has on x64 with room for the operands; a 6 × 8 block measured
 * slower (spills). WebAssembly SIMD has no fused multiply-add (relaxed-simd is behind a
 * flag in Node 20), so each step is a mul and an add.
 *
 * Operands are addressed by byte strides so one kernel serves every layout:
 *   A element (row r, step k) at a + r·rs + k·ks   (rows of A, or columns of a transposed A)
 *   B vector  (step k, cols j..j+3) at b + k·bs + 16·(j/4)  (a packed panel, or rows of B)
 *   C element (row r, col j) at c + r·ldc + 4·j
 * `add` = true accumulates into C, false overwrites it. Within one element the sum runs
 * over k in order, so the result does not depend on how rows and columns were split
 * between threads or blocks.
 *
 * Also here, shared by the kernels that pack operands for these: the 4 × 8 block's store
 * (store4x8) and the 4 × 4 register transpose (transpose4). gemmRows takes any column
 * count: the last 1–3 columns go through mk4xPart / mk1xPart, which load and store only
 * those lanes (so nothing past the last column is read or written: attention's head
 * slices sit side by side) and give each element the same operations as the full kernels.
 *
 * Leaves out: edges narrower than the block in the packed kernels (callers use the 1-row
 * kernels, or compute into a scratch block and copy the valid part), and the packing loops.
 */

import { fmadd } from './vmath';

/** C[0..4, 0..8) (+)= Σ_k A[r,k]·B[k,0..8). */
@inline export function mk4x8(
  a: usize,
  rs: usize,
  ks: usize,
  b: usize,
  bs: usize,
  K: i32,
  c: usize,
  ldc: usize,
  add: bool,
): void {
  let c00 = f32x4.splat(0),
    c01 = f32x4.splat(0);
  let c10 = f32x4.splat(0),
    c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0),
    c21 = f32x4.splat(0);
  let c30 = f32x4.splat(0),
    c31 = f32x4.splat(0);
  let a0 = a,
    a1 = a + rs,
    a2 = a + 2 * rs,
    a3 = a + 3 * rs;
  for (let k = 0; k < K; k++) {
    const b0 = v128.load(b),
      b1 = v128.load(b, 16);
    let x = v128.load32_splat(a0);
    c00 = fmadd(x, b0, c00);
    c01 = fmadd(x, b1, c01);
    x = v128.load32_splat(a1);
    c10 = fmadd(x, b0, c10);
    c11 = fmadd(x, b1, c11);
    x = v128.load32_splat(a2);
    c20 = fmadd(x, b0, c20);
    c21 = fmadd(x, b1, c21);
    x = v128.load32_splat(a3);
    c30 = fmadd(x, b0, c30);
    c31 = fmadd(x, b1, c31);
    b += bs;
    a0 += ks;
    a1 += ks;
    a2 += ks;
    a3 += ks;
  }
  store4x8(c, ldc, add, c00, c01, c10, c11, c20, c21, c30, c31);
}

/** Writes (or, with add, adds to C) the 4 × 8 accumulators. */
@inline export function store4x8(
  c: usize,
  ldc: usize,
  add: bool,
  c00: v128,
  c01: v128,
  c10: v128,
  c11: v128,
  c20: v128,
  c21: v128,
  c30: v128,
  c31: v128,
): void {
  if (add) {
    c00 = f32x4.add(c00, v128.load(c));
    c01 = f32x4.add(c01, v128.load(c, 16));
    c10 = f32x4.add(c10, v128.load(c + ldc));
    c11 = f32x4.add(c11, v128.load(c + ldc, 16));
    c20 = f32x4.add(c20, v128.load(c + 2 * ldc));
    c21 = f32x4.add(c21, v128.load(c + 2 * ldc, 16));
    c30 = f32x4.add(c30, v128.load(c + 3 * ldc));
    c31 = f32x4.add(c31, v128.load(c + 3 * ldc, 16));
  }
  v128.store(c, c00);
  v128.store(c, c01, 16);
  v128.store(c + ldc, c10);
  v128.store(c + ldc, c11, 16);
  v128.store(c + 2 * ldc, c20);
  v128.store(c + 2 * ldc, c21, 16);
  v128.store(c + 3 * ldc, c30);
  v128.store(c + 3 * ldc, c31, 16);
}

/** One row: C[0, 0..8) (+)= Σ_k A[k]·B[k,0..8) (edge rows only: two accumulators leave it add-latency bound). */
@inline export function mk1x8(a: usize, ks: usize, b: usize, bs: usize, K: i32, c: usize, add: bool): void {
  let c0 = f32x4.splat(0),
    c1 = f32x4.splat(0);
  for (let k = 0; k < K; k++) {
    const x = v128.load32_splat(a);
    c0 = fmadd(x, v128.load(b), c0);
    c1 = fmadd(x, v128.load(b, 16), c1);
    b += bs;
    a += ks;
  }
  if (add) {
    c0 = f32x4.add(c0, v128.load(c));
    c1 = f32x4.add(c1, v128.load(c, 16));
  }
  v128.store(c, c0);
  v128.store(c, c1, 16);
}

/** C[0..4, 0..4) (+)= Σ_k A[r,k]·B[k,0..4). */
@inline export function mk4x4(
  a: usize,
  rs: usize,
  ks: usize,
  b: usize,
  bs: usize,
  K: i32,
  c: usize,
  ldc: usize,
  add: bool,
): void {
  let c0 = f32x4.splat(0),
    c1 = f32x4.splat(0),
    c2 = f32x4.splat(0),
    c3 = f32x4.splat(0);
  let a0 = a,
    a1 = a + rs,
    a2 = a + 2 * rs,
    a3 = a + 3 * rs;
  for (let k = 0; k < K; k++) {
    const b0 = v128.load(b);
    c0 = fmadd(v128.load32_splat(a0), b0, c0);
    c1 = fmadd(v128.load32_splat(a1), b0, c1);
    c2 = fmadd(v128.load32_splat(a2), b0, c2);
    c3 = fmadd(v128.load32_splat(a3), b0, c3);
    b += bs;
    a0 += ks;
    a1 += ks;
    a2 += ks;
    a3 += ks;
  }
  if (add) {
    c0 = f32x4.add(c0, v128.load(c));
    c1 = f32x4.add(c1, v128.load(c + ldc));
    c2 = f32x4.add(c2, v128.load(c + 2 * ldc));
    c3 = f32x4.add(c3, v128.load(c + 3 * ldc));
  }
  v128.store(c, c0);
  v128.store(c + ldc, c1);
  v128.store(c + 2 * ldc, c2);
  v128.store(c + 3 * ldc, c3);
}

/** One row, four columns: C[0, 0..4) (+)= Σ_k A[k]·B[k,0..4). */
@inline export function mk1x4(a: usize, ks: usize, b: usize, bs: usize, K: i32, c: usize, add: bool): void {
  let c0 = f32x4.splat(0);
  for (let k = 0; k < K; k++) {
    c0 = fmadd(v128.load32_splat(a), v128.load(b), c0);
    b += bs;
    a += ks;
  }
  if (add) c0 = f32x4.add(c0, v128.load(c));
  v128.store(c, c0);
}

/** The first w (1–3) floats at p in the low lanes, zeros above: nothing past them is read. */
@inline function loadPart(p: usize, w: i32): v128 {
  if (w == 1) return v128.load32_zero(p);
  const lo = v128.load64_zero(p);
  return w == 2 ? lo : v128.load32_lane(p, lo, 2, 8);
}

/** Stores the low w (1–3) lanes of x at p: nothing past them is written. */
@inline function storePart(p: usize, x: v128, w: i32): void {
  if (w == 1) {
    v128.store32_lane(p, x, 0);
    return;
  }
  v128.store64_lane(p, x, 0);
  if (w == 3) v128.store32_lane(p, x, 2, 8);
}

/** mk4x4 on the last w < 4 columns: C[0..4, 0..w) (+)= Σ_k A[r,k]·B[k,0..w), touching no column past w. */
@inline function mk4xPart(
  a: usize,
  rs: usize,
  ks: usize,
  b: usize,
  bs: usize,
  K: i32,
  c: usize,
  ldc: usize,
  add: bool,
  w: i32,
): void {
  let c0 = f32x4.splat(0),
    c1 = f32x4.splat(0),
    c2 = f32x4.splat(0),
    c3 = f32x4.splat(0);
  let a0 = a,
    a1 = a + rs,
    a2 = a + 2 * rs,
    a3 = a + 3 * rs;
  for (let k = 0; k < K; k++) {
    const b0 = loadPart(b, w);
    c0 = fmadd(v128.load32_splat(a0), b0, c0);
    c1 = fmadd(v128.load32_splat(a1), b0, c1);
    c2 = fmadd(v128.load32_splat(a2), b0, c2);
    c3 = fmadd(v128.load32_splat(a3), b0, c3);
    b += bs;
    a0 += ks;
    a1 += ks;
    a2 += ks;
    a3 += ks;
  }
  if (add) {
    c0 = f32x4.add(c0, loadPart(c, w));
    c1 = f32x4.add(c1, loadPart(c + ldc, w));
    c2 = f32x4.add(c2, loadPart(c + 2 * ldc, w));
    c3 = f32x4.add(c3, loadPart(c + 3 * ldc, w));
  }
  storePart(c, c0, w);
  storePart(c + ldc, c1, w);
  storePart(c + 2 * ldc, c2, w);
  storePart(c + 3 * ldc, c3, w);
}

/** mk1x4 on the last w < 4 columns: C[0, 0..w) (+)= Σ_k A[k]·B[k,0..w), touching no column past w. */
@inline function mk1xPart(a: usize, ks: usize, b: usize, bs: usize, K: i32, c: usize, add: bool, w: i32): void {
  let c0 = f32x4.splat(0);
  for (let k = 0; k < K; k++) {
    c0 = fmadd(v128.load32_splat(a), loadPart(b, w), c0);
    b += bs;
    a += ks;
  }
  if (add) c0 = f32x4.add(c0, loadPart(c, w));
  storePart(c, c0, w);
}

/**
 * C rows (+)= A · B for `rows` rows and `cols` columns (any counts), B addressed directly
 * (bs bytes per k): blocks of 4 × 8, then 4-wide, 1–3-wide (mk4xPart) and 1-row edges.
 * Used where B is already laid out row by row (attention's values, keys and queries, whose
 * head size need not be a multiple of 4).
 */
export function gemmRows(
  a: usize,
  rs: usize,
  ks: usize,
  b: usize,
  bs: usize,
  K: i32,
  c: usize,
  ldc: usize,
  rows: i32,
  cols: i32,
  add: bool,
): void {
  let r = 0;
  for (; r + 4 <= rows; r += 4) {
    const ar = a + <usize>r * rs;
    const cr = c + <usize>r * ldc;
    let j = 0;
    if (add) {
      for (; j + 8 <= cols; j += 8) mk4x8(ar, rs, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, true);
      if (j + 4 <= cols) mk4x4(ar, rs, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, true);
    } else {
      for (; j + 8 <= cols; j += 8) mk4x8(ar, rs, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, false);
      if (j + 4 <= cols) mk4x4(ar, rs, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, false);
    }
    j = cols & ~3;
    if (j < cols) {
      if (add) mk4xPart(ar, rs, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, true, cols - j);
      else mk4xPart(ar, rs, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, false, cols - j);
    }
  }
  for (; r < rows; r++) {
    const ar = a + <usize>r * rs;
    const cr = c + <usize>r * ldc;
    let j = 0;
    if (add) {
      for (; j + 8 <= cols; j += 8) mk1x8(ar, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), true);
      if (j + 4 <= cols) mk1x4(ar, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), true);
    } else {
      for (; j + 8 <= cols; j += 8) mk1x8(ar, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), false);
      if (j + 4 <= cols) mk1x4(ar, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), false);
    }
    j = cols & ~3;
    if (j < cols) {
      if (add) mk1xPart(ar, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), true, cols - j);
      else mk1xPart(ar, ks, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), false, cols - j);
    }
  }
}

/**
 * Writes the transpose of the 4 × 4 block whose rows are r0..r3 as 4 rows of an 8-wide
 * panel starting at d (row stride 32 bytes): matmul.ts packs Bᵀ with it (rows: 4
 * consecutive k of four columns), attention packs keys and values (rows: 4 head dimensions
 * of four keys).
 */
@inline export function transpose4(r0: v128, r1: v128, r2: v128, r3: v128, d: usize): void {
  const a0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5);
  const a1 = i32x4.shuffle(r0, r1, 2, 6, 3, 7);
  const a2 = i32x4.shuffle(r2, r3, 0, 4, 1, 5);
  const a3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
  v128.store(d, i32x4.shuffle(a0, a2, 0, 1, 4, 5));
  v128.store(d, i32x4.shuffle(a0, a2, 2, 3, 6, 7), 32);
  v128.store(d, i32x4.shuffle(a1, a3, 0, 1, 4, 5), 64);
  v128.store(d, i32x4.shuffle(a1, a3, 2, 3, 6, 7), 96);
}
