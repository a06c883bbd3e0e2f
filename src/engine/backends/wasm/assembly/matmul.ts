/**
 * C[M,N] = (accumulate ? C : 0) + op(A) · op(B) for the four transpose variants, one chunk
 * of C at a time (kernel `matmulPart`).
 *
 * Structure (Goto & van de Geijn 2008): op(B) is packed, KC steps × NC columns at a time,
 * into 8-column panels laid out [k][8] — contiguous for the micro-kernel, whatever the
 * transpose (Bᵀ is transposed 4 × 4 blocks at a time in registers) — except B stored
 * [K, N] with short rows, read in place. A stored [M, K] is read in place through byte
 * strides (four sequential rows); Aᵀ's 4-row strips are copied to [k][4] first. The 4 × 8
 * micro-kernel (microKernels.ts) then sweeps each 4-row strip of A (4·KC floats, in L1)
 * across the B block (in L2).
 *
 * Chunks split C into contiguous row blocks (multiples of 4) or column panels (multiples
 * of 8), whichever has more pieces; each packs what it reads into its thread's scratch.
 * Every C element is the same sequence of f32 operations however C is split (per K block:
 * Σ_k in order from 0, then added to C), so results are identical for 1 or 2 threads.
 *
 * Products with fewer than 4 rows (decoding one token) take matmulSmall.ts, without packing.
 *
 * Leaves out: K = 0 (the caller fills), and aliasing of C with A or B (not supported,
 * as in the reference).
 */

import { mk1x8, mk4x8, transpose4 } from './microKernels';
import { smallM } from './matmulSmall';
import { myScratch, partStart } from './threads';

const KC: i32 = 256;
const NC: i32 = 512;
const PACK_BYTES: usize = (<usize>(KC * NC)) << 2;
const TMP_BYTES: usize = 128;
const A_STRIP_BYTES: usize = (<usize>KC) << 4;
/** Widest B stored [K, N] that is read in place rather than packed (rows up to 1 KiB). */
const DIRECT_MAX_N: i32 = 256;

/** Scratch bytes per thread that matmulPart needs for inner dimension K. */
export function matmulScratchBytes(K: i32): usize {
  return PACK_BYTES + TMP_BYTES + A_STRIP_BYTES + ((((<usize>K) << 2) + 63) & ~63);
}

/**
 * Packs op(B)[pc..pc+kc, jc..jc+nc) into ⌈nc/8⌉ panels of kc × 8 floats, zero-padding
 * columns past nc. op(B)[k, j] = b[k·N + j], or b[j·K + k] when transB.
 */
function packB(bp: usize, b: usize, transB: bool, N: i32, K: i32, pc: i32, kc: i32, jc: i32, nc: i32): void {
  for (let jp = 0; jp < nc; jp += 8) {
    const nr = min(8, nc - jp);
    const col0 = jc + jp;
    let dst = bp + ((<usize>(jp * kc)) << 2);
    if (!transB) {
      let src = b + ((<usize>pc * <usize>N + <usize>col0) << 2);
      const ld = (<usize>N) << 2;
      if (nr == 8) {
        for (let kk = 0; kk < kc; kk++) {
          v128.store(dst, v128.load(src));
          v128.store(dst, v128.load(src, 16), 16);
          src += ld;
          dst += 32;
        }
      } else {
        for (let kk = 0; kk < kc; kk++) {
          for (let j = 0; j < 8; j++)
            store<f32>(dst + ((<usize>j) << 2), j < nr ? load<f32>(src + ((<usize>j) << 2)) : 0);
          src += ld;
          dst += 32;
        }
      }
    } else if (nr == 8) {
      // Bᵀ: column j of op(B) is row j of b. Transpose 4 × 4 blocks in registers.
      const ld = (<usize>K) << 2;
      const src = b + ((<usize>col0 * <usize>K + <usize>pc) << 2);
      let kk = 0;
      for (; kk + 4 <= kc; kk += 4) {
        const s = src + ((<usize>kk) << 2);
        const d = dst + ((<usize>kk) << 5);
        transpose4(v128.load(s), v128.load(s + ld), v128.load(s + 2 * ld), v128.load(s + 3 * ld), d);
        transpose4(v128.load(s + 4 * ld), v128.load(s + 5 * ld), v128.load(s + 6 * ld), v128.load(s + 7 * ld), d + 16);
      }
      for (; kk < kc; kk++) {
        for (let j = 0; j < 8; j++)
          store<f32>(dst + ((<usize>(kk * 8 + j)) << 2), load<f32>(src + <usize>j * ld + ((<usize>kk) << 2)));
      }
    } else {
      for (let j = 0; j < 8; j++) {
        let d = dst + ((<usize>j) << 2);
        if (j < nr) {
          let src = b + ((<usize>(col0 + j) * <usize>K + <usize>pc) << 2);
          for (let kk = 0; kk < kc; kk++) {
            store<f32>(d, load<f32>(src));
            src += 4;
            d += 32;
          }
        } else {
          for (let kk = 0; kk < kc; kk++) {
            store<f32>(d, 0);
            d += 32;
          }
        }
      }
    }
  }
}

/** Copies mr ≤ 4 adjacent columns of A (stored [K, M]) over kc steps of `ks` bytes into [kc][4], zero-padded. */
function packAStrip(ap: usize, a: usize, ks: usize, kc: i32, mr: i32): void {
  if (mr == 4) {
    for (let kk = 0; kk < kc; kk++) v128.store(ap + ((<usize>kk) << 4), v128.load(a + <usize>kk * ks));
    return;
  }
  for (let kk = 0; kk < kc; kk++) {
    const src = a + <usize>kk * ks;
    const dst = ap + ((<usize>kk) << 4);
    for (let r = 0; r < 4; r++) store<f32>(dst + ((<usize>r) << 2), r < mr ? load<f32>(src + ((<usize>r) << 2)) : 0);
  }
}

/** A block narrower than 4 × 8: computed into `tmp` ([4][8]), then merged into C. */
function edgeBlock(
  a: usize,
  rs: usize,
  ks: usize,
  panel: usize,
  bs: usize,
  kc: i32,
  c: usize,
  ldc: usize,
  mr: i32,
  nr: i32,
  add: bool,
  tmp: usize,
): void {
  if (mr == 4) mk4x8(a, rs, ks, panel, bs, kc, tmp, 32, false);
  else for (let r = 0; r < mr; r++) mk1x8(a + <usize>r * rs, ks, panel, bs, kc, tmp + ((<usize>r) << 5), false);
  for (let r = 0; r < mr; r++) {
    const cr = c + <usize>r * ldc;
    const tr = tmp + ((<usize>r) << 5);
    for (let j = 0; j < nr; j++) {
      const v = load<f32>(tr + ((<usize>j) << 2));
      store<f32>(cr + ((<usize>j) << 2), add ? load<f32>(cr + ((<usize>j) << 2)) + v : v);
    }
  }
}

/** C[i0..i1, j0..j1) of the packed-B product (see file header). */
function gemmBlock(
  c: usize,
  a: usize,
  b: usize,
  M: i32,
  N: i32,
  K: i32,
  transA: bool,
  transB: bool,
  accumulate: bool,
  i0: i32,
  i1: i32,
  j0: i32,
  j1: i32,
  scratch: usize,
): void {
  const bp = scratch;
  const tmp = scratch + PACK_BYTES;
  const ap = tmp + TMP_BYTES;
  const rs: usize = transA ? 4 : (<usize>K) << 2; // bytes between rows of op(A)
  const ks: usize = transA ? (<usize>M) << 2 : 4; // bytes between k steps of op(A)
  const ldc: usize = (<usize>N) << 2;
  // B stored [K, N] with short rows is read in place: a panel is 8 columns of consecutive
  // rows, already regular enough, and packing it again in every chunk would cost more than
  // it saves. Long rows (a row per 4 KiB page and L1 set) and Bᵀ are packed.
  const direct = !transB && N % 8 == 0 && N <= DIRECT_MAX_N;
  const bs: usize = direct ? (<usize>N) << 2 : 32;
  for (let jc = j0; jc < j1; jc += NC) {
    const nc = min(NC, j1 - jc);
    for (let pc = 0; pc < K; pc += KC) {
      const kc = min(KC, K - pc);
      if (!direct) packB(bp, b, transB, N, K, pc, kc, jc, nc);
      const add = accumulate || pc > 0;
      for (let i = i0; i < i1; i += 4) {
        const mr = min(4, i1 - i);
        let ai = a + <usize>i * rs + <usize>pc * ks;
        let ars = rs,
          aks = ks;
        if (transA) {
          // Aᵀ's strip is 4 adjacent floats per k, one row of A apart (M·4 bytes, a TLB
          // entry per step for large M): copy it once into [kc][4] instead of re-reading it
          // for every panel.
          packAStrip(ap, ai, ks, kc, mr);
          ai = ap;
          ars = 4;
          aks = 16;
        }
        const ci = c + ((<usize>i * <usize>N + <usize>jc) << 2);
        for (let jp = 0; jp < nc; jp += 8) {
          const nr = min(8, nc - jp);
          const panel = direct ? b + ((<usize>pc * <usize>N + <usize>(jc + jp)) << 2) : bp + ((<usize>(jp * kc)) << 2);
          const cij = ci + ((<usize>jp) << 2);
          if (mr == 4 && nr == 8) {
            if (add) mk4x8(ai, ars, aks, panel, bs, kc, cij, ldc, true);
            else mk4x8(ai, ars, aks, panel, bs, kc, cij, ldc, false);
          } else edgeBlock(ai, ars, aks, panel, bs, kc, cij, ldc, mr, nr, add, tmp);
        }
      }
    }
  }
}

/** Part `part` of `parts` of C (+)= op(A)·op(B) (see the file header). K ≥ 1; M, N ≥ 1. */
export function matmulPart(
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
): void {
  const scratch = myScratch();
  if (M < 4) {
    smallM(part, parts, c, a, b, M, N, K, transA, transB, accumulate, scratch + PACK_BYTES + TMP_BYTES + A_STRIP_BYTES);
    return;
  }
  const nb = (M + 3) >> 2;
  const np = (N + 7) >> 3;
  let i0 = 0,
    i1 = M,
    j0 = 0,
    j1 = N;
  if (nb >= np) {
    i0 = partStart(nb, part, parts) << 2;
    i1 = min(M, partStart(nb, part + 1, parts) << 2);
  } else {
    j0 = partStart(np, part, parts) << 3;
    j1 = min(N, partStart(np, part + 1, parts) << 3);
  }
  if (i0 >= i1 || j0 >= j1) return;
  gemmBlock(c, a, b, M, N, K, transA, transB, accumulate, i0, i1, j0, j1, scratch);
}
