/**
 * What fused attention's forward and backward share: the arguments of the current call,
 * the per-thread scratch layout of one (batch, head) tile, the packing of keys and values
 * into the layouts the micro-kernels read, the optional score transforms (soft-cap, ALiBi),
 * and small vector helpers.
 *
 * Grouped-query attention: k/v rows are gKC = Hkv·D floats wide, and query head h reads
 * kv head h / gGroup. Soft-cap: s = c·tanh(s/c), tanh as Cephes' tanhf (an odd polynomial
 * below 0.625, 1 − 2/(e^2x + 1) above; a few float32 ulps). ALiBi: s += slope[h]·(j − pos).
 *
 * Arguments live in module globals, loaded from the control block at the start of each
 * chunk: every thread runs its own instance of this module, so globals are per thread,
 * never shared.
 *
 * Scratch of one tile (Sp = S rounded up to 8, Tp = T rounded up to 4), all 16-byte aligned:
 *   lim   i32[Tp]     per query row: 1 + the last key it may attend (0: none)
 *   rmask i32[Tp]     per query row: its mask bytes when some key below lim is masked, else 0
 *                     (forward: such rows take the masked softmax, the rest the dense one);
 *                     backward: how far row t of dz (and p̃) may hold non-zeros from an
 *                     earlier tile of this call (Sp at the start of a call)
 *   first i32[Sp]     per key: the first query row whose lim passes it (T: none) — backward
 *   bits  i32[Sp]     per key: the OR of the probs' bits over the rows — backward
 *   used  u8[Sp]      per key: attended by any row (unused keys are read as zeros); in backward,
 *                     every key below the largest lim until the dz passes have told which
 *   zero  f32[D]      zeros: the row an unused key is packed from
 *   rd    f32[4]      per-row constants of a block, read back with broadcast loads (kept in
 *                     memory so that V8 cannot recompute them inside the loop that uses them)
 *   panel f32[Sp·D]   keys (forward) or values (backward), times the scale, as 8-key panels
 *                     [Sp/8][D][8]
 *   rows  f32[Sp·D]   values (forward) or keys (backward) as rows [Sp][D], zero if unused —
 *                     only when some key below the tile's largest lim is unused; otherwise
 *                     the micro-kernels read those rows in place (gRows, gRowStride)
 *   sc    f32[4·Sp]   one block of 4 rows of scores / dP
 *   pt    f32[Tp·Sp]  p̃ = p·keep/(1−p_drop), the weights applied to the values (dropout only:
 *                     without it p̃ is the saved probs, read in place)
 *   dz    f32[Tp·Sp]  gradient of the scores (backward)
 *   panelK f32[Sp·D]  backward with a soft-cap: keys times the scale, as panels (to recompute
 *                     the scores whose tanh the gradient needs)
 *   sc2   f32[4·Sp]   backward with a soft-cap: the block's recomputed scores
 *
 * Leaves out: the loops over tiles and row blocks (attentionForward.ts, attentionBackward.ts)
 * and the micro-kernels (attentionKernels.ts).
 */

import { transpose4 } from './microKernels';
import { argF, argI, argP } from './threads';
import { expv, fmadd } from './vmath';

export let gOut: usize = 0; // out (forward) or dq (backward)
export let gProbs: usize = 0;
export let gQ: usize = 0;
export let gK: usize = 0;
export let gV: usize = 0;
export let gDk: usize = 0;
export let gDv: usize = 0;
export let gDout: usize = 0;
export let gB: i32 = 0;
export let gT: i32 = 0;
export let gS: i32 = 0;
export let gH: i32 = 0;
export let gD: i32 = 0;
export let gC: i32 = 0;
export let gQbs: i32 = 0;
export let gKvbs: i32 = 0;
export let gScale: f32 = 0;
export let gMask: usize = 0;
export let gMbs: i32 = 0;
export let gMrs: i32 = 0;
export let gKeep: usize = 0;
export let gKappa: f32 = 0;
/** Key/value heads, query heads per kv head, and the k/v row width Hkv·D. */
export let gHkv: i32 = 0;
export let gGroup: i32 = 1;
export let gKC: i32 = 0;
/** Soft-cap of the scores (0: off) and its inverse. */
export let gCap: f32 = 0;
export let gInvCap: f32 = 0;
/** ALiBi slopes f32[H] (0: none), and the absolute position of query row 0. */
export let gAlibi: usize = 0;
export let gQstart: i32 = 0;
/** Some score transform is on (soft-cap or ALiBi). */
export let gAdjust: bool = false;

/** Loads the shape arguments shared by both directions (slots 8..24). */
export function loadShapeArgs(): void {
  gB = argI(8);
  gT = argI(9);
  gS = argI(10);
  gH = argI(11);
  gD = argI(12);
  gC = gH * gD;
  gQbs = argI(13);
  gKvbs = argI(14);
  gScale = <f32>argF(15);
  gMask = argP(16);
  gMbs = argI(17);
  gMrs = argI(18);
  gKeep = argP(19);
  gKappa = <f32>argF(20);
  gHkv = argI(21);
  gGroup = gH / gHkv;
  gKC = gHkv * gD;
  gCap = <f32>argF(22);
  gInvCap = gCap > 0 ? <f32>1 / gCap : 0;
  gAlibi = argP(23);
  gQstart = argI(24);
  gAdjust = gCap > 0 || gAlibi != 0;
  gOut = argP(0);
  gProbs = argP(1);
  gQ = argP(2);
  gK = argP(3);
  gV = argP(4);
  gDk = argP(5);
  gDv = argP(6);
  gDout = argP(7);
}

// Scratch offsets of the current call (set by layoutScratch).
export let sLim: usize = 0;
export let sRmask: usize = 0;
export let sFirst: usize = 0;
export let sBits: usize = 0;
export let sUsed: usize = 0;
export let sZero: usize = 0;
export let sRd: usize = 0;
export let sPanel: usize = 0;
export let sPanelK: usize = 0;
export let sRows: usize = 0;
export let sSc: usize = 0;
export let sSc2: usize = 0;
export let sPt: usize = 0;
export let sDz: usize = 0;
export let gSp: i32 = 0;
export let gTp: i32 = 0;

/** Largest lim of the tile's rows (set by the scans), and whether a key below it is unused. */
export let gMaxLim: i32 = 0;
export let gHoles: bool = false;
/** Where the row operand of the tile (values forward, keys backward) is read: base and row stride in bytes. */
export let gRows: usize = 0;
export let gRowStride: usize = 0;

@inline function align16(n: usize): usize {
  return (n + 15) & ~(<usize>15);
}

@inline function off(i: i32): usize {
  return (<usize>i) << 2;
}

/** Bytes of one thread's attention scratch for these sizes. */
export function attentionScratchBytes(T: i32, S: i32, D: i32): usize {
  const Sp = <usize>((S + 7) & ~7);
  const Tp = <usize>((T + 3) & ~3);
  const d = <usize>D;
  return 8 * Tp + 8 * Sp + align16(Sp) + align16(4 * d) + 16 + 12 * Sp * d + 32 * Sp + 8 * Tp * Sp;
}

/** Sets the scratch offsets for the current sizes, starting at `base`, and clears the zero row. */
export function layoutScratch(base: usize): void {
  gSp = (gS + 7) & ~7;
  gTp = (gT + 3) & ~3;
  const Sp = <usize>gSp;
  const Tp = <usize>gTp;
  sLim = base;
  sRmask = sLim + 4 * Tp;
  sFirst = sRmask + 4 * Tp;
  sBits = sFirst + 4 * Sp;
  sUsed = sBits + 4 * Sp;
  sZero = sUsed + align16(Sp);
  sRd = sZero + align16(4 * <usize>gD);
  sPanel = sRd + 16;
  sRows = sPanel + 4 * Sp * <usize>gD;
  sSc = sRows + 4 * Sp * <usize>gD;
  sPt = sSc + 16 * Sp;
  sDz = sPt + 4 * Tp * Sp;
  sPanelK = sDz + 4 * Tp * Sp; // last, so that the plain call's layout is the same as without them
  sSc2 = sPanelK + 4 * Sp * <usize>gD;
  zeroFloats(sZero, 0, gD);
}

/** f32 zeros on [from, to) of the row at p (vector stores, then a scalar tail). */
@inline export function zeroFloats(p: usize, from: i32, to: i32): void {
  let s = from;
  const z = f32x4.splat(0);
  for (; s + 4 <= to; s += 4) v128.store(p + off(s), z);
  for (; s < to; s++) store<f32>(p + off(s), 0);
}

/** gHoles = some key below gMaxLim is unused (then rows must be packed, with zeros there). */
export function findHoles(): void {
  const n = gMaxLim;
  let s = 0;
  let all = true;
  for (; s + 16 <= n; s += 16) if (!i8x16.all_true(v128.load(sUsed + <usize>s))) all = false;
  for (; s < n; s++) if (load<u8>(sUsed + <usize>s) == 0) all = false;
  gHoles = !all;
}

/** Row of key s in `src` (row s at src + s·rowBytes), or the zero row when s is unused or padding. */
@inline function keyRow(src: usize, s: i32, rowBytes: usize): usize {
  return s < gS && load<u8>(sUsed + <usize>s) != 0 ? src + <usize>s * rowBytes : sZero;
}

/**
 * Packs the D-wide head slices of keys s < ⌈gMaxLim⌉₈ of `src` (rows gKC floats apart),
 * times `scale`, into the panel layout [Sp/8][D][8] at `panel`, four keys × four dimensions at a time (transposed in
 * registers), the last D mod 4 dimensions one by one (nothing past the head slice is
 * read). Keys marked unused, and the padding, come from the zero row: nothing there is
 * read. Panels past gMaxLim are never read.
 */
export function packPanel(src: usize, scale: f32, panel: usize): void {
  const D = gD;
  const rowBytes = off(gKC);
  const sv = f32x4.splat(scale);
  const end = min(gSp, (gMaxLim + 7) & ~7);
  for (let s0 = 0; s0 < end; s0 += 4) {
    const k0 = keyRow(src, s0, rowBytes),
      k1 = keyRow(src, s0 + 1, rowBytes);
    const k2 = keyRow(src, s0 + 2, rowBytes),
      k3 = keyRow(src, s0 + 3, rowBytes);
    const dst = panel + off((s0 >> 3) * D * 8 + (s0 & 4));
    let d = 0;
    for (; d + 4 <= D; d += 4) {
      const x0 = f32x4.mul(v128.load(k0 + off(d)), sv),
        x1 = f32x4.mul(v128.load(k1 + off(d)), sv);
      const x2 = f32x4.mul(v128.load(k2 + off(d)), sv),
        x3 = f32x4.mul(v128.load(k3 + off(d)), sv);
      transpose4(x0, x1, x2, x3, dst + off(d * 8));
    }
    for (; d < D; d++) {
      const row = dst + off(d * 8);
      store<f32>(row, load<f32>(k0 + off(d)) * scale);
      store<f32>(row, load<f32>(k1 + off(d)) * scale, 4);
      store<f32>(row, load<f32>(k2 + off(d)) * scale, 8);
      store<f32>(row, load<f32>(k3 + off(d)) * scale, 12);
    }
  }
}

/**
 * Sets gRows/gRowStride to the head slice of `src` read in place when no key below gMaxLim
 * is unused; otherwise packs keys s < gMaxLim into rows [Sp][D] (unused ones as zeros).
 */
export function placeRows(src: usize): void {
  const rowBytes = off(gKC);
  if (!gHoles) {
    gRows = src;
    gRowStride = rowBytes;
    return;
  }
  const D = gD;
  for (let s = 0; s < gMaxLim; s++) {
    const rs = keyRow(src, s, rowBytes);
    const rd = sRows + off(s * D);
    let d = 0;
    for (; d + 4 <= D; d += 4) v128.store(rd + off(d), v128.load(rs + off(d)));
    for (; d < D; d++) store<f32>(rd + off(d), load<f32>(rs + off(d)));
  }
  gRows = sRows;
  gRowStride = off(D);
}

/** Cephes tanhf: odd polynomial coefficients below 0.625 (highest first), then 0.625, 1, 2. */
const TANH_K: usize = memory.data<f32>([
  -5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1, 0.625, 1.0, 2.0,
]);

@inline function tk(i: i32): v128 {
  return v128.load32_splat(TANH_K + ((<usize>i) << 2));
}

/** tanh per lane (see file header); NaN stays NaN, ±large gives ±1. */
@inline export function tanhv(x: v128): v128 {
  const a = f32x4.abs(x);
  const z = f32x4.mul(x, x);
  let p = fmadd(tk(0), z, tk(1));
  p = fmadd(p, z, tk(2));
  p = fmadd(p, z, tk(3));
  p = fmadd(p, z, tk(4));
  const small = fmadd(f32x4.mul(p, z), x, x);
  const e = expv(f32x4.add(a, a));
  const big = f32x4.sub(tk(6), f32x4.div(tk(7), f32x4.add(e, tk(6))));
  const signed = v128.or(big, v128.and(x, i32x4.splat(0x80000000)));
  return v128.bitselect(small, signed, f32x4.lt(a, tk(5)));
}

/**
 * Applies the score transforms to `rows` rows of scores at sc (row stride scStride; query
 * rows t0.. of head h), keys s < ⌈n⌉₄: s = c·tanh(s/c) with a soft-cap, then
 * s += slope[h]·(s − (qStart + t)) with ALiBi. Rows hold Sp ≥ ⌈n⌉₄ floats.
 */
export function adjustScores(sc: usize, scStride: usize, rows: i32, t0: i32, n: i32, h: i32): void {
  const end = (n + 3) & ~3;
  const cap = f32x4.splat(gCap),
    inv = f32x4.splat(gInvCap);
  const slope = gAlibi == 0 ? f32x4.splat(0) : v128.load32_splat(gAlibi + off(h));
  for (let r = 0; r < rows; r++) {
    const row = sc + <usize>r * scStride;
    let dist = i32x4.add(v128.load(TANH_I), i32x4.splat(-(gQstart + t0 + r))); // s − pos for lanes 0..3
    const four = i32x4.splat(4);
    for (let s = 0; s < end; s += 4) {
      let z = v128.load(row + off(s));
      if (gCap > 0) z = f32x4.mul(cap, tanhv(f32x4.mul(z, inv)));
      if (gAlibi != 0) z = fmadd(slope, f32x4.convert_i32x4_s(dist), z);
      v128.store(row + off(s), z);
      dist = i32x4.add(dist, four);
    }
  }
}

/** Lanes 0..3 as i32. */
const TANH_I: usize = memory.data<i32>([0, 1, 2, 3]);

/**
 * Backward with a soft-cap: dz rows (stride ds) of the block from t0 times 1 − tanh²(u/c),
 * u the block's scores recomputed in sc2 (stride ds), keys s < ⌈n⌉₄.
 */
export function capGradient(dz: usize, sc2: usize, ds: usize, rows: i32, n: i32): void {
  const end = (n + 3) & ~3;
  const inv = f32x4.splat(gInvCap),
    one = f32x4.splat(1);
  for (let r = 0; r < rows; r++) {
    const zr = dz + <usize>r * ds,
      ur = sc2 + <usize>r * ds;
    for (let s = 0; s < end; s += 4) {
      const th = tanhv(f32x4.mul(v128.load(ur + off(s)), inv));
      v128.store(zr + off(s), f32x4.mul(v128.load(zr + off(s)), f32x4.sub(one, f32x4.mul(th, th))));
    }
  }
}
