/**
 * Fused multi-head scaled dot-product attention, forward (Vaswani et al. 2017 §3.2.1–3.2.2):
 * for each (batch, head) tile, scores = scale·Q Kᵀ, masked stable softmax → probs (saved),
 * p̃ = p·keep/(1 − p_drop), out = p̃ V. Same contract as src/engine/ops/attention.ts.
 *
 * Per tile: the mask is summarized (once per distinct mask: a causal mask shared by the
 * whole batch is scanned once per call) into each query row's last allowed key (lim),
 * whether every key below lim is allowed (a dense row: causal and padding rows are), and
 * the keys no row may attend (never read: packed as zeros). Keys, times the scale, are
 * packed into 8-key panels (4 × 4 register transposes); values are read in place unless an
 * unused key lies below the largest lim, when they are copied with zeros there. Then, 4
 * query rows at a time, the 4 × 8 micro-kernel computes the scores only up to the block's
 * last allowed key (a causal mask skips the upper triangle), the softmax writes probs (the
 * four rows at once when they are dense; and p̃ under dropout), and p̃·V lands in the
 * head's slice of out, reading probs in place when there is no dropout.
 *
 * With a soft-cap or ALiBi (attentionShared.ts) the block's scores are transformed before
 * the softmax. With grouped-query attention the tiles of one kv head follow each other and
 * share its packed keys and values (packed once per batch item and kv head).
 *
 * Chunks split the B·H tiles; each tile writes only its own slice of out and probs.
 *
 * Leaves out: the projections (matmuls) and the drawing of dropout masks (the caller's).
 */

import {
  adjustScores,
  findHoles,
  gAdjust,
  gB,
  gC,
  gD,
  gGroup,
  gH,
  gHkv,
  gK,
  gKappa,
  gKeep,
  gMask,
  gMaxLim,
  gMbs,
  gMrs,
  gOut,
  gProbs,
  gQ,
  gQbs,
  gRows,
  gRowStride,
  gS,
  gScale,
  gSp,
  gT,
  gKvbs,
  gV,
  layoutScratch,
  loadShapeArgs,
  packPanel,
  placeRows,
  sLim,
  sPanel,
  sPt,
  sRmask,
  sSc,
  sUsed,
  zeroFloats,
} from './attentionShared';
import { panelScores, rowsGemm } from './attentionKernels';
import { denseSoftmax4, denseSoftmaxRow, maskedSoftmaxRow } from './softmax';
import { myScratch, partStart } from './threads';
import { keepLanes } from './vmath';

export { attentionScratchBytes } from './attentionShared';

@inline function off(i: i32): usize {
  return (<usize>i) << 2;
}

/** Mask bytes of query row t of batch b (0 when there is no mask). */
@inline function maskRow(b: i32, t: i32): usize {
  return gMask == 0 ? 0 : gMask + <usize>(b * gMbs + t * gMrs);
}

/** Mask data of the batch item scanMask last summarized (items sharing it share the summary). */
let scannedAt: usize = 0;
let scanned: bool = false;

/** 1 + the last non-zero byte of m[0..n), 0 if none (16 bytes at a time from the end). */
function lastAllowed(m: usize, n: i32): i32 {
  let l = n;
  for (; (l & 15) != 0; l--) if (load<u8>(m + <usize>(l - 1)) != 0) return l;
  while (l > 0 && !v128.any_true(v128.load(m + <usize>(l - 16)))) l -= 16;
  while (l > 0 && load<u8>(m + <usize>(l - 1)) == 0) l--;
  return l;
}

/** True when every byte of m[0..n) is non-zero. */
function allAllowed(m: usize, n: i32): bool {
  let s = 0;
  for (; s + 16 <= n; s += 16) if (!i8x16.all_true(v128.load(m + <usize>s))) return false;
  for (; s < n; s++) if (load<u8>(m + <usize>s) == 0) return false;
  return true;
}

/** lim[t] and rmask[t] for every row, used[s] for every key, gMaxLim and gHoles, for batch b. */
function scanMask(b: i32): void {
  const at = maskRow(b, 0);
  if (scanned && at == scannedAt) return;
  scanned = true;
  scannedAt = at;
  const S = gS;
  if (gMask == 0) {
    for (let t = 0; t < gT; t++) {
      store<i32>(sLim + off(t), S);
      store<i32>(sRmask + off(t), 0);
    }
    for (let s = 0; s < gSp; s++) store<u8>(sUsed + <usize>s, s < S ? 1 : 0);
    gMaxLim = S;
    findHoles();
    return;
  }
  for (let s = 0; s < gSp; s++) store<u8>(sUsed + <usize>s, 0);
  let maxLim = 0;
  for (let t = 0; t < gT; t++) {
    const m = maskRow(b, t);
    const l = lastAllowed(m, S);
    store<i32>(sLim + off(t), l);
    store<i32>(sRmask + off(t), allAllowed(m, l) ? 0 : <i32>m);
    maxLim = max(maxLim, l);
    let s = 0;
    for (; s + 16 <= l; s += 16)
      v128.store(sUsed + <usize>s, v128.or(v128.load(sUsed + <usize>s), v128.load(m + <usize>s)));
    for (; s < l; s++) store<u8>(sUsed + <usize>s, load<u8>(sUsed + <usize>s) | load<u8>(m + <usize>s));
  }
  gMaxLim = maxLim;
  findHoles();
}

/** p̃ row with dropout: probs·keep·kappa for s < lim, zeros on [lim, end). */
function weightRow(probs: usize, keep: usize, pt: usize, lim: i32, end: i32): void {
  let s = 0;
  const kv = f32x4.splat(gKappa);
  for (; s + 4 <= lim; s += 4) {
    v128.store(pt + off(s), v128.and(f32x4.mul(v128.load(probs + off(s)), kv), keepLanes(keep + <usize>s)));
  }
  for (; s < lim; s++) store<f32>(pt + off(s), load<u8>(keep + <usize>s) == 1 ? load<f32>(probs + off(s)) * gKappa : 0);
  zeroFloats(pt, s, end);
}

/** True when the 4 rows from t0 are dense (no mask byte to read below lim) and each allows some key. */
@inline function denseBlock(t0: i32): bool {
  const m = sRmask + off(t0),
    l = sLim + off(t0);
  const masked = load<i32>(m) | load<i32>(m, 4) | load<i32>(m, 8) | load<i32>(m, 12);
  return masked == 0 && load<i32>(l) > 0 && load<i32>(l, 4) > 0 && load<i32>(l, 8) > 0 && load<i32>(l, 12) > 0;
}

/** The (batch, kv head) whose keys and values the scratch holds (−1: none). */
let packedKv: i32 = -1;

function forwardTile(b: i32, h: i32): void {
  const T = gT,
    S = gS,
    D = gD,
    C = gC;
  const rowBytes = off(C);
  scanMask(b);
  const g = h / gGroup;
  const kvBase = off(b * gKvbs + g * D);
  if (packedKv != b * gHkv + g) {
    packedKv = b * gHkv + g;
    packPanel(gK + kvBase, gScale, sPanel); // scores come out scaled
    placeRows(gV + kvBase);
  }
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
      zeroFloats(pBase + off(t0 * S), 0, mr * S);
      for (let r = 0; r < mr; r++) zeroFloats(oRow + <usize>r * rowBytes, 0, D);
      continue;
    }
    const np = (sl + 7) >> 3;
    panelScores(qRow, rowBytes, mr, sPanel, D, sl, sSc, scStride);
    if (gAdjust) adjustScores(sSc, scStride, mr, t0, sl, h);
    let r = 0;
    if (mr == 4 && denseBlock(t0)) {
      const pRow = pBase + off(t0 * S);
      const l = sLim + off(t0);
      if (
        denseSoftmax4(sSc, scStride, pRow, off(S), S, load<i32>(l), load<i32>(l, 4), load<i32>(l, 8), load<i32>(l, 12))
      )
        r = 4;
    }
    for (; r < mr; r++) {
      const t = t0 + r;
      const lim = load<i32>(sLim + off(t));
      const prow = pBase + off(t * S);
      const m = <usize>load<i32>(sRmask + off(t));
      const sc = sSc + <usize>r * scStride;
      if (lim == 0) zeroFloats(prow, 0, S);
      else if (m == 0) denseSoftmaxRow(sc, prow, S, lim);
      else maskedSoftmaxRow(sc, prow, S, lim, m, 1);
    }
    if (keepBase != 0) {
      for (r = 0; r < mr; r++) {
        const t = t0 + r;
        weightRow(
          pBase + off(t * S),
          keepBase + <usize>(t * S),
          sPt + <usize>r * scStride,
          load<i32>(sLim + off(t)),
          np * 8,
        );
      }
    }
    // out rows = p̃ · V over the keys the block may attend. Without dropout p̃ is probs
    // itself (zero past each row's limit), read in place.
    if (keepBase != 0) rowsGemm(sPt, scStride, gRows, gRowStride, sl, oRow, rowBytes, mr, D, false);
    else rowsGemm(pBase + off(t0 * S), off(S), gRows, gRowStride, sl, oRow, rowBytes, mr, D, false);
  }
}

/** Part `part` of `parts` of the (batch, head) tiles of the forward call in the control block. */
export function attentionForwardPart(part: i32, parts: i32): void {
  loadShapeArgs();
  layoutScratch(myScratch());
  scanned = false;
  packedKv = -1;
  const tiles = gB * gH;
  const i1 = partStart(tiles, part + 1, parts);
  for (let i = partStart(tiles, part, parts); i < i1; i++) forwardTile(i / gH, i % gH);
}
