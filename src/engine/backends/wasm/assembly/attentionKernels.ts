/**
 * The register-blocked micro-kernel of microKernels.ts (mk4x8) specialized to the three
 * operand layouts of fused attention. With head sizes of 16–64 the products are short, and
 * the generic kernel's bookkeeping (a pointer per A row, advanced every step, as many
 * instructions as its 8 multiply-adds) is a large share of their time; here operands are
 * reached through constant offsets where the layout allows it:
 *   panel  A rows r at a + r·rs, steps contiguous; B an 8-key panel [K][8] —
 *          scores = Q·(scale·K)ᵀ and dP = dout·(scale·V)ᵀ, K = D
 *   rows   A rows r at a + r·rs, steps contiguous; B rows at b + k·bs — p̃·V and dz·K;
 *          2 rows × 16 columns when the width allows (three pointers to advance, not five)
 *   cols   A (row r, step k) at a + 4r + k·ks (a transposed p̃ or dz: one pointer for the
 *          four rows); B rows at b + k·bs — p̃ᵀ·dout and dzᵀ·Q
 * Unrolling the step loop does not pay here: V8 issues all the unrolled loads first, and
 * with the eight accumulators they no longer fit in registers (measured slower).
 * Every element is the same sequence of operations as in mk4x8/mk1x8 (Σ over k in order
 * from 0, fused or not as fmadd is, then added to C when accumulating), so which kernel
 * or edge path computed it never changes a result.
 *
 * Leaves out: blocks narrower than the kernels (gemmRows and the 1-row kernels take them).
 */

import { gemmRows, mk1x4, mk1x8, mk4x4, store4x8 } from './microKernels';
import { fmadd } from './vmath';

/** C[0..4, 0..8) = Σ_k A[r,k]·P[k,0..8) for a panel P ([K][8], 32-byte rows). */
@inline export function mkPanel4x8(a: usize, rs: usize, b: usize, K: i32, c: usize, ldc: usize): void {
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
    b += 32;
    a0 += 4;
    a1 += 4;
    a2 += 4;
    a3 += 4;
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

/** C (+)= A·B for 4 rows × 8 columns, A rows at a + r·rs (steps contiguous), B rows at b + k·bs. */
@inline function mkRows4x8(
  a: usize,
  rs: usize,
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
    a0 += 4;
    a1 += 4;
    a2 += 4;
    a3 += 4;
  }
  store4x8(c, ldc, add, c00, c01, c10, c11, c20, c21, c30, c31);
}

/**
 * C (+)= A·B for 2 rows × 16 columns, A rows at a and a + rs (steps contiguous), B rows at
 * b + k·bs: per step 2 broadcasts and 4 loads of B feed 8 multiply-adds, with 3 pointers
 * to advance instead of the 4 × 8 kernel's 5.
 */
@inline function mkRows2x16(
  a: usize,
  rs: usize,
  b: usize,
  bs: usize,
  K: i32,
  c: usize,
  ldc: usize,
  add: bool,
): void {
  let c00 = f32x4.splat(0),
    c01 = f32x4.splat(0),
    c02 = f32x4.splat(0),
    c03 = f32x4.splat(0);
  let c10 = f32x4.splat(0),
    c11 = f32x4.splat(0),
    c12 = f32x4.splat(0),
    c13 = f32x4.splat(0);
  let a0 = a,
    a1 = a + rs;
  for (let k = 0; k < K; k++) {
    const b0 = v128.load(b),
      b1 = v128.load(b, 16),
      b2 = v128.load(b, 32),
      b3 = v128.load(b, 48);
    let x = v128.load32_splat(a0);
    c00 = fmadd(x, b0, c00);
    c01 = fmadd(x, b1, c01);
    c02 = fmadd(x, b2, c02);
    c03 = fmadd(x, b3, c03);
    x = v128.load32_splat(a1);
    c10 = fmadd(x, b0, c10);
    c11 = fmadd(x, b1, c11);
    c12 = fmadd(x, b2, c12);
    c13 = fmadd(x, b3, c13);
    b += bs;
    a0 += 4;
    a1 += 4;
  }
  if (add) {
    c00 = f32x4.add(c00, v128.load(c));
    c01 = f32x4.add(c01, v128.load(c, 16));
    c02 = f32x4.add(c02, v128.load(c, 32));
    c03 = f32x4.add(c03, v128.load(c, 48));
    c10 = f32x4.add(c10, v128.load(c + ldc));
    c11 = f32x4.add(c11, v128.load(c + ldc, 16));
    c12 = f32x4.add(c12, v128.load(c + ldc, 32));
    c13 = f32x4.add(c13, v128.load(c + ldc, 48));
  }
  v128.store(c, c00);
  v128.store(c, c01, 16);
  v128.store(c, c02, 32);
  v128.store(c, c03, 48);
  v128.store(c + ldc, c10);
  v128.store(c + ldc, c11, 16);
  v128.store(c + ldc, c12, 32);
  v128.store(c + ldc, c13, 48);
}

/** C += A·B for 4 rows × 8 columns, A (row r, step k) at a + 4r + k·ks, B rows at b + k·bs. */
@inline function mkCols4x8(a: usize, ks: usize, b: usize, bs: usize, K: i32, c: usize, ldc: usize): void {
  let c00 = f32x4.splat(0),
    c01 = f32x4.splat(0);
  let c10 = f32x4.splat(0),
    c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0),
    c21 = f32x4.splat(0);
  let c30 = f32x4.splat(0),
    c31 = f32x4.splat(0);
  for (let k = 0; k < K; k++) {
    const b0 = v128.load(b),
      b1 = v128.load(b, 16);
    let x = v128.load32_splat(a);
    c00 = fmadd(x, b0, c00);
    c01 = fmadd(x, b1, c01);
    x = v128.load32_splat(a, 4);
    c10 = fmadd(x, b0, c10);
    c11 = fmadd(x, b1, c11);
    x = v128.load32_splat(a, 8);
    c20 = fmadd(x, b0, c20);
    c21 = fmadd(x, b1, c21);
    x = v128.load32_splat(a, 12);
    c30 = fmadd(x, b0, c30);
    c31 = fmadd(x, b1, c31);
    a += ks;
    b += bs;
  }
  store4x8(c, ldc, true, c00, c01, c10, c11, c20, c21, c30, c31);
}

/**
 * Scores of `rows` ≤ 4 rows of A (row r at a + r·rs, D contiguous floats) against keys
 * 0..cols, read from 8-key panels (each [D][8]), into C (row stride ldc): whole panels,
 * and the last one only 4 keys wide when that covers cols (a causal block often needs it).
 */
export function panelScores(
  a: usize,
  rs: usize,
  rows: i32,
  panels: usize,
  D: i32,
  cols: i32,
  c: usize,
  ldc: usize,
): void {
  const pb = <usize>(D * 32);
  const full = (cols + 3) >> 3; // panels computed 8 keys wide
  const half = (cols + 7) >> 3 > full; // then one more, 4 keys wide
  if (rows == 4) {
    for (let p = 0; p < full; p++) mkPanel4x8(a, rs, panels + <usize>p * pb, D, c + ((<usize>p) << 5), ldc);
    if (half) mk4x4(a, rs, 4, panels + <usize>full * pb, 32, D, c + ((<usize>full) << 5), ldc, false);
    return;
  }
  for (let r = 0; r < rows; r++) {
    const ar = a + <usize>r * rs,
      cr = c + <usize>r * ldc;
    for (let p = 0; p < full; p++) mk1x8(ar, 4, panels + <usize>p * pb, 32, D, cr + ((<usize>p) << 5), false);
    if (half) mk1x4(ar, 4, panels + <usize>full * pb, 32, D, cr + ((<usize>full) << 5), false);
  }
}

/**
 * C rows (+)= A · B (gemmRows' contract, steps of A contiguous): pairs of rows × 16 columns
 * take mkRows2x16 when cols is a multiple of 16, else 4-row blocks × 8 columns mkRows4x8;
 * edges, and column counts that are not a multiple of 8, gemmRows.
 */
export function rowsGemm(
  a: usize,
  rs: usize,
  b: usize,
  bs: usize,
  K: i32,
  c: usize,
  ldc: usize,
  rows: i32,
  cols: i32,
  add: bool,
): void {
  if ((cols & 7) != 0) {
    gemmRows(a, rs, 4, b, bs, K, c, ldc, rows, cols, add);
    return;
  }
  let r = 0;
  if ((cols & 15) == 0) {
    for (; r + 2 <= rows; r += 2) {
      const ar = a + <usize>r * rs,
        cr = c + <usize>r * ldc;
      for (let j = 0; j < cols; j += 16) {
        if (add) mkRows2x16(ar, rs, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, true);
        else mkRows2x16(ar, rs, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, false);
      }
    }
  }
  for (; r + 4 <= rows; r += 4) {
    const ar = a + <usize>r * rs,
      cr = c + <usize>r * ldc;
    for (let j = 0; j < cols; j += 8) {
      if (add) mkRows4x8(ar, rs, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, true);
      else mkRows4x8(ar, rs, b + ((<usize>j) << 2), bs, K, cr + ((<usize>j) << 2), ldc, false);
    }
  }
  if (r < rows) gemmRows(a + <usize>r * rs, rs, 4, b, bs, K, c + <usize>r * ldc, ldc, rows - r, cols, add);
}

/**
 * C rows += Aᵀ · B for `rows` ≤ 4 rows, A (row r, step k) at a + 4r + k·ks: 4 rows of 8
 * columns take mkCols4x8; fewer rows, and column counts that are not a multiple of 8,
 * gemmRows.
 */
export function colsGemm(
  a: usize,
  ks: usize,
  b: usize,
  bs: usize,
  K: i32,
  c: usize,
  ldc: usize,
  rows: i32,
  cols: i32,
): void {
  if (rows < 4 || (cols & 7) != 0) {
    gemmRows(a, 4, ks, b, bs, K, c, ldc, rows, cols, true);
    return;
  }
  for (let j = 0; j < cols; j += 8) mkCols4x8(a, ks, b + ((<usize>j) << 2), bs, K, c + ((<usize>j) << 2), ldc);
}
