/**
 * Fused multi-head scaled dot-product attention, forward (Vaswani et al. 2017 §3.2.1–3.2.2):
 * for each (batch, head) tile, scores = scale·Q Kᵀ, masked stable softmax → probs (saved),
 * p̃ = p·keep/(1 − p_drop), out = p̃ V. Same contract as src/engine/ops/attention.ts.
 *
 * Per tile: the mask is scanned once for each query row's last allowed key (lim) and for
 * keys no row may attend (never read: packed as zeros); keys are packed into 8-key panels
 * and values into rows. Then, 4 query rows at a time, the 4 × 8 micro-kernel computes the
 * scores only up to the block's last allowed key (a causal mask skips the upper triangle),
 * the softmax writes probs (and p̃ under dropout), and p̃·V lands in the head's slice of out.
 *
 * Chunks split the B·H tiles; each tile writes only its own slice of out and probs.
 *
 * Leaves out: the projections (matmuls) and the drawing of dropout masks (the caller's).
 */

import {
  gB, gC, gD, gH, gK, gKappa, gKeep, gMask, gMbs, gMrs, gOut, gProbs, gQ, gQbs, gS, gScale, gSp, gT, gKvbs, gV,
  layoutScratch, loadShapeArgs, packHead, sLim, sPanel, sPt, sRows, sSc, sUsed,
} from './attentionShared';
import { gemmRows, mk1x8, mk4x8 } from './microKernels';
import { maskedSoftmaxRow } from './softmax';
import { myScratch, partStart } from './threads';
import { keepLanes } from './vmath';

export { attentionScratchBytes } from './attentionShared';

@inline function off(i: i32): usize {
  return <usize>i << 2;
}

/** Mask bytes of query row t of batch b (0 when there is no mask). */
@inline function maskRow(b: i32, t: i32): usize {
  return gMask == 0 ? 0 : gMask + <usize>(b * gMbs + t * gMrs);
}

/** Batch item whose mask scanMask last summarized (heads of one item share it); −1: none. */
let scannedB: i32 = -1;

/** lim[t] for every row and used[s] for every key of batch b. */
function scanMask(b: i32): void {
  if (b == scannedB) return;
  scannedB = b;
  const S = gS;
  if (gMask == 0) {
    for (let t = 0; t < gT; t++) store<i32>(sLim + off(t), S);
    for (let s = 0; s < gSp; s++) store<u8>(sUsed + <usize>s, s < S ? 1 : 0);
    return;
  }
  for (let s = 0; s < gSp; s++) store<u8>(sUsed + <usize>s, 0);
  for (let t = 0; t < gT; t++) {
    const m = maskRow(b, t);
    let l = S;
    while (l > 0 && load<u8>(m + <usize>(l - 1)) == 0) l--;
    store<i32>(sLim + off(t), l);
    let s = 0;
    for (; s + 16 <= l; s += 16) v128.store(sUsed + <usize>s, v128.or(v128.load(sUsed + <usize>s), v128.load(m + <usize>s)));
    for (; s < l; s++) store<u8>(sUsed + <usize>s, load<u8>(sUsed + <usize>s) | load<u8>(m + <usize>s));
  }
}

/** p̃ row with dropout: probs·keep·kappa for s < lim, zeros on [lim, end). */
function weightRow(probs: usize, keep: usize, pt: usize, lim: i32, end: i32): void {
  let s = 0;
  const kv = f32x4.splat(gKappa);
  for (; s + 4 <= lim; s += 4) {
    v128.store(pt + off(s), v128.and(f32x4.mul(v128.load(probs + off(s)), kv), keepLanes(keep + <usize>s)));
  }
  for (; s < lim; s++) store<f32>(pt + off(s), load<u8>(keep + <usize>s) == 1 ? load<f32>(probs + off(s)) * gKappa : 0);
  for (; s < end; s++) store<f32>(pt + off(s), 0);
}

function forwardTile(b: i32, h: i32): void {
  const T = gT, S = gS, D = gD, C = gC;
  const rowBytes = off(C);
  scanMask(b);
  const kvBase = off(b * gKvbs + h * D);
  packHead(gK + kvBase, sPanel, gV + kvBase, sRows);
  const qBase = gQ + off(b * gQbs + h * D);
  const oBase = gOut + off(b * gQbs + h * D);
  const pBase = gProbs + off((b * gH + h) * T * S);
  const keepBase = gKeep == 0 ? <usize>0 : gKeep + <usize>((b * gH + h) * T * S);
  const scStride = off(gSp);
  for (let t0 = 0; t0 < T; t0 += 4) {
    const mr = min(4, T - t0);
    let sl = 0;
    for (let r = 0; r < mr; r++) sl = max(sl, load<i32>(sLim + off(t0 + r)));
    const qRow = qBase + <usize>t0 * rowBytes;
    const oRow = oBase + <usize>t0 * rowBytes;
    if (sl == 0) {
      for (let r = 0; r < mr; r++) {
        for (let s = 0; s < S; s++) store<f32>(pBase + off((t0 + r) * S + s), 0);
        for (let d = 0; d < D; d++) store<f32>(oRow + <usize>r * rowBytes + off(d), 0);
      }
      continue;
    }
    const np = (sl + 7) >> 3;
    // Scores (unscaled) of the block's rows against key panels 0..np.
    for (let p = 0; p < np; p++) {
      const panel = sPanel + off(p * D * 8);
      if (mr == 4) mk4x8(qRow, rowBytes, 4, panel, 32, D, sSc + off(p * 8), scStride, false);
      else for (let r = 0; r < mr; r++) mk1x8(qRow + <usize>r * rowBytes, 4, panel, 32, D, sSc + <usize>r * scStride + off(p * 8), false);
    }
    for (let r = 0; r < mr; r++) {
      const t = t0 + r;
      const lim = load<i32>(sLim + off(t));
      const prow = pBase + off(t * S);
      maskedSoftmaxRow(sSc + <usize>r * scStride, prow, S, lim, maskRow(b, t), gScale);
      if (keepBase != 0) weightRow(prow, keepBase + <usize>(t * S), sPt + <usize>r * scStride, lim, np * 8);
    }
    // out rows = p̃ · V over the keys the block may attend. Without dropout p̃ is probs
    // itself (zero past each row's limit), read in place.
    if (keepBase != 0) gemmRows(sPt, scStride, 4, sRows, off(D), sl, oRow, rowBytes, mr, D, false);
    else gemmRows(pBase + off(t0 * S), off(S), 4, sRows, off(D), sl, oRow, rowBytes, mr, D, false);
  }
}

/** Part `part` of `parts` of the (batch, head) tiles of the forward call in the control block. */
export function attentionForwardPart(part: i32, parts: i32): void {
  loadShapeArgs();
  layoutScratch(myScratch());
  scannedB = -1;
  const tiles = gB * gH;
  const i1 = partStart(tiles, part + 1, parts);
  for (let i = partStart(tiles, part, parts); i < i1; i++) forwardTile(i / gH, i % gH);
}
