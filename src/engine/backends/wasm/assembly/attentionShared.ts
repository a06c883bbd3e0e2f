/**
 * What fused attention's forward and backward share: the arguments of the current call,
 * the per-thread scratch layout of one (batch, head) tile, and the packing of keys and
 * values into the layouts the micro-kernels read.
 *
 * Arguments live in module globals, loaded from the control block at the start of each
 * chunk: every thread runs its own instance of this module, so globals are per thread,
 * never shared.
 *
 * Scratch of one tile (Sp = S rounded up to 8, Tp = T rounded up to 4), all 16-byte aligned:
 *   lim   i32[Tp]     per query row: 1 + the last key it may attend (0: none)
 *   first i32[Sp]     per key: the first query row that attends it (T: none) — backward
 *   used  u8[Sp]      per key: attended by any row (unused keys are never read)
 *   panel f32[Sp·D]   keys (forward) or values (backward) as 8-key panels [Sp/8][D][8]
 *   rows  f32[Sp·D]   values (forward) or keys (backward) as rows [Sp][D], zero if unused
 *   sc    f32[4·Sp]   one block of 4 rows of scores / dP
 *   pt    f32[Tp·Sp]  p̃ = p·keep/(1−p_drop), the weights applied to the values
 *   dz    f32[Tp·Sp]  gradient of the scores (backward)
 */

import { argF, argI, argP } from './threads';

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

/** Loads the shape arguments shared by both directions (slots 8..20). */
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
export let sFirst: usize = 0;
export let sUsed: usize = 0;
export let sPanel: usize = 0;
export let sRows: usize = 0;
export let sSc: usize = 0;
export let sPt: usize = 0;
export let sDz: usize = 0;
export let gSp: i32 = 0;
export let gTp: i32 = 0;

@inline function align16(n: usize): usize {
  return (n + 15) & ~(<usize>15);
}

/** Bytes of one thread's attention scratch for these sizes. */
export function attentionScratchBytes(T: i32, S: i32, D: i32): usize {
  const Sp = <usize>((S + 7) & ~7);
  const Tp = <usize>((T + 3) & ~3);
  const d = <usize>D;
  return 4 * Tp + 4 * Sp + align16(Sp) + 8 * Sp * d + 16 * Sp + 8 * Tp * Sp;
}

/** Sets the scratch offsets for the current sizes, starting at `base`. */
export function layoutScratch(base: usize): void {
  gSp = (gS + 7) & ~7;
  gTp = (gT + 3) & ~3;
  const Sp = <usize>gSp;
  const Tp = <usize>gTp;
  sLim = base;
  sFirst = sLim + 4 * Tp;
  sUsed = sFirst + 4 * Sp;
  sPanel = sUsed + align16(Sp);
  sRows = sPanel + 4 * Sp * <usize>gD;
  sSc = sRows + 4 * Sp * <usize>gD;
  sPt = sSc + 16 * Sp;
  sDz = sPt + 4 * Tp * Sp;
}

/**
 * Packs the D-wide head slices of rows s < S of `src` (row s at src + 4·s·C) into the
 * panel layout [Sp/8][D][8] and the row layout [Sp][D]; keys that are unused, and the
 * padding up to Sp, become zeros, so nothing at a masked position is ever read.
 */
export function packHead(src: usize, panelDst: usize, rowSrc: usize, rowDst: usize): void {
  const D = gD;
  const rowBytes = <usize>gC << 2;
  for (let s = 0; s < gSp; s++) {
    const pd = panelDst + (<usize>((s >> 3) * D * 8 + (s & 7)) << 2);
    const rd = rowDst + (<usize>(s * D) << 2);
    if (s < gS && load<u8>(sUsed + <usize>s) != 0) {
      const ps = src + <usize>s * rowBytes;
      for (let d = 0; d < D; d++) store<f32>(pd + (<usize>d << 5), load<f32>(ps + (<usize>d << 2)));
      const rs = rowSrc + <usize>s * rowBytes;
      for (let d = 0; d < D; d += 4) v128.store(rd + (<usize>d << 2), v128.load(rs + (<usize>d << 2)));
    } else {
      for (let d = 0; d < D; d++) store<f32>(pd + (<usize>d << 5), 0);
      for (let d = 0; d < D; d += 4) v128.store(rd + (<usize>d << 2), f32x4.splat(0));
    }
  }
}
