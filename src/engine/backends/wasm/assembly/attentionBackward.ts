/**
 * Fused attention, backward: accumulates dq, dk, dv from dout and the saved probs, per
 * (batch, head) tile. With w = keep/(1 − p_drop) (or 1) and p̃ = p·w (forward: out = p̃ V):
 *   dP = dout · Vᵀ,  dp = w ⊙ dP                        (gradient of p)
 *   dz = scale · p ⊙ (dp − Σ_s p·dp)   per query row     (through the softmax)
 *   dq += dz · K,   dk += dzᵀ · Q,   dv += p̃ᵀ · dout
 * Same contract as src/engine/ops/attention.ts: entries with p = 0 (masked) contribute
 * nothing, and keys no row attends are never read (packed as zeros).
 *
 * The tile's p̃ and dz are kept whole ([T][Sp] each) because dk and dv sum over every query
 * row; a key's sum starts at the first row that attends it (causal: its own position).
 * Chunks split tiles, which needs tiles to own disjoint k/v rows: the TypeScript side runs
 * this in one chunk when k/v are shared between batch items (batch stride 0).
 *
 * Leaves out: the projections' backward (matmuls).
 */

import {
  gB, gC, gD, gDk, gDout, gDv, gH, gK, gKappa, gKeep, gKvbs, gOut, gProbs, gQ, gQbs, gS, gScale, gSp, gT, gV,
  layoutScratch, loadShapeArgs, packHead, sDz, sFirst, sLim, sPanel, sPt, sRows, sSc, sUsed,
} from './attentionShared';
import { gemmRows, mk1x8, mk4x8 } from './microKernels';
import { myScratch, partStart } from './threads';
import { hsum, keepLanes } from './vmath';

@inline function off(i: i32): usize {
  return <usize>i << 2;
}

/**
 * From the saved probs: lim per row, first and used per key, and p̃ rows (zero-padded to Sp).
 * `first` is min over rows with p ≠ 0, vectorized as a lane-wise select.
 */
function scanProbs(pBase: usize, keepBase: usize): void {
  const T = gT, S = gS, Sp = gSp;
  for (let s = 0; s < Sp; s += 4) v128.store(sFirst + off(s), i32x4.splat(T));
  const zero = f32x4.splat(0);
  const kv = f32x4.splat(gKappa);
  for (let t = 0; t < T; t++) {
    const prow = pBase + off(t * S);
    let l = S;
    while (l > 0 && load<f32>(prow + off(l - 1)) == 0) l--;
    store<i32>(sLim + off(t), l);
    const tv = i32x4.splat(t);
    const pt = sPt + off(t * Sp);
    const keep = keepBase == 0 ? <usize>0 : keepBase + <usize>(t * S);
    let s = 0;
    for (; s + 4 <= l; s += 4) {
      const p = v128.load(prow + off(s));
      const nz = f32x4.ne(p, zero);
      const f = v128.load(sFirst + off(s));
      v128.store(sFirst + off(s), v128.bitselect(i32x4.min_s(f, tv), f, nz));
      v128.store(pt + off(s), keep == 0 ? p : v128.and(f32x4.mul(p, kv), keepLanes(keep + <usize>s)));
    }
    for (; s < l; s++) {
      const p = load<f32>(prow + off(s));
      if (p != 0 && load<i32>(sFirst + off(s)) > t) store<i32>(sFirst + off(s), t);
      store<f32>(pt + off(s), keep == 0 ? p : load<u8>(keep + <usize>s) == 1 ? p * gKappa : 0);
    }
    for (; s < Sp; s++) store<f32>(pt + off(s), 0);
  }
  for (let s = 0; s < Sp; s++) store<u8>(sUsed + <usize>s, load<i32>(sFirst + off(s)) < T ? 1 : 0);
}

/** dz row from the dP row: dz = scale·p·(w·dP − Σ p·w·dP) for s < lim, zeros up to Sp. */
function dzRow(dP: usize, prow: usize, keep: usize, dz: usize, lim: i32): void {
  const kv = f32x4.splat(gKappa);
  let acc = f32x4.splat(0);
  let s = 0;
  // dp = w·dP is written into dz first, then turned into dz in place.
  for (; s + 4 <= lim; s += 4) {
    let dp = v128.load(dP + off(s));
    if (keep != 0) dp = v128.and(f32x4.mul(dp, kv), keepLanes(keep + <usize>s));
    v128.store(dz + off(s), dp);
    acc = f32x4.add(acc, f32x4.mul(v128.load(prow + off(s)), dp));
  }
  let rowDot = hsum(acc);
  for (; s < lim; s++) {
    let dp = load<f32>(dP + off(s));
    if (keep != 0) dp = load<u8>(keep + <usize>s) == 1 ? dp * gKappa : 0;
    store<f32>(dz + off(s), dp);
    rowDot += load<f32>(prow + off(s)) * dp;
  }
  const rd = f32x4.splat(rowDot);
  const sc = f32x4.splat(gScale);
  s = 0;
  for (; s + 4 <= lim; s += 4) {
    const g = f32x4.mul(sc, f32x4.mul(v128.load(prow + off(s)), f32x4.sub(v128.load(dz + off(s)), rd)));
    v128.store(dz + off(s), g);
  }
  for (; s < lim; s++) store<f32>(dz + off(s), gScale * (load<f32>(prow + off(s)) * (load<f32>(dz + off(s)) - rowDot)));
  for (; s < gSp; s++) store<f32>(dz + off(s), 0);
}

function backwardTile(b: i32, h: i32): void {
  const T = gT, S = gS, D = gD, C = gC, Sp = gSp;
  const rowBytes = off(C);
  const scStride = off(Sp);
  const pBase = gProbs + off((b * gH + h) * T * S);
  const keepBase = gKeep == 0 ? <usize>0 : gKeep + <usize>((b * gH + h) * T * S);
  scanProbs(pBase, keepBase);
  const kvOff = off(b * gKvbs + h * D);
  packHead(gV + kvOff, sPanel, gK + kvOff, sRows); // values as panels (dP), keys as rows (dq)
  const qOff = off(b * gQbs + h * D);
  for (let t0 = 0; t0 < T; t0 += 4) {
    const mr = min(4, T - t0);
    let sl = 0;
    for (let r = 0; r < mr; r++) sl = max(sl, load<i32>(sLim + off(t0 + r)));
    const dzBlock = sDz + <usize>t0 * scStride;
    if (sl == 0) {
      for (let i = 0; i < mr * Sp; i++) store<f32>(dzBlock + off(i), 0);
      continue;
    }
    const np = (sl + 7) >> 3;
    const doRow = gDout + qOff + <usize>t0 * rowBytes;
    for (let p = 0; p < np; p++) {
      const panel = sPanel + off(p * D * 8);
      if (mr == 4) mk4x8(doRow, rowBytes, 4, panel, 32, D, sSc + off(p * 8), scStride, false);
      else for (let r = 0; r < mr; r++) mk1x8(doRow + <usize>r * rowBytes, 4, panel, 32, D, sSc + <usize>r * scStride + off(p * 8), false);
    }
    for (let r = 0; r < mr; r++) {
      const t = t0 + r;
      const keep = keepBase == 0 ? <usize>0 : keepBase + <usize>(t * S);
      dzRow(sSc + <usize>r * scStride, pBase + off(t * S), keep, dzBlock + <usize>r * scStride, load<i32>(sLim + off(t)));
    }
    // dq rows += dz · K.
    gemmRows(dzBlock, scStride, 4, sRows, off(D), sl, gOut + qOff + <usize>t0 * rowBytes, rowBytes, mr, D, true);
  }
  // dv rows += p̃ᵀ · dout and dk rows += dzᵀ · q, each key from the first row attending it.
  for (let s0 = 0; s0 < S; s0 += 4) {
    const mr = min(4, S - s0);
    let t1 = T;
    for (let r = 0; r < mr; r++) t1 = min(t1, load<i32>(sFirst + off(s0 + r)));
    if (t1 >= T) continue;
    const kRows = T - t1;
    const kvRow = kvOff + <usize>s0 * rowBytes;
    const aOff = off(t1 * Sp + s0);
    gemmRows(sPt + aOff, 4, scStride, gDout + qOff + <usize>t1 * rowBytes, rowBytes, kRows, gDv + kvRow, rowBytes, mr, D, true);
    gemmRows(sDz + aOff, 4, scStride, gQ + qOff + <usize>t1 * rowBytes, rowBytes, kRows, gDk + kvRow, rowBytes, mr, D, true);
  }
}

/** Part `part` of `parts` of the (batch, head) tiles of the backward call in the control block. */
export function attentionBackwardPart(part: i32, parts: i32): void {
  loadShapeArgs();
  layoutScratch(myScratch());
  const tiles = gB * gH;
  const i1 = partStart(tiles, part + 1, parts);
  for (let i = partStart(tiles, part, parts); i < i1; i++) backwardTile(i / gH, i % gH);
}
