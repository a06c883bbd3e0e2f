/**
 * Fused attention, backward: accumulates dq, dk, dv from dout and the saved probs, per
 * (batch, head) tile. With w = keep/(1 − p_drop) (or 1) and p̃ = p·w (forward: out = p̃ V):
 *   dP = dout · Vᵀ,  dp = w ⊙ dP                        (gradient of p)
 *   dz = scale · p ⊙ (dp − Σ_s p·dp)   per query row     (through the softmax)
 *   dq += dz · K,   dk += dzᵀ · Q,   dv += p̃ᵀ · dout
 * Same contract as src/engine/ops/attention.ts: entries with p = 0 (masked) contribute
 * nothing, and nothing at a key no row attends reaches a result (keys and values there are
 * taken as zeros).
 *
 * Per tile: each row's lim (1 + its last non-zero p) bounds the work, 4 rows at a time: dP
 * by the 4 × 8 micro-kernel against 8-key panels of the values (times the scale, so dP and
 * dz come out scaled), then dz for the 4 rows in two fused passes (Σ p·dp, then dz), which
 * also OR the probs' bits per key to learn which keys some row attends. The tile's dz is
 * kept whole ([T][Sp]) because dk and dv sum over every query row; a key's sum starts at
 * the first row whose lim passes it (causal: its own position). Without dropout p̃ is the
 * saved probs, read in place; with it p̃ is written whole ([T][Sp]) too. Keys (for dq) are
 * read in place unless an unused key lies below the largest lim (then copied, zeros there).
 * With a soft-cap, each block's scores are recomputed from a second panel of the keys and
 * dz is multiplied by 1 − tanh²(u/c) (ALiBi adds constants: nothing changes here).
 *
 * Chunks split the (batch, kv head) pairs; each runs the tiles of its group's query heads
 * in order, so the heads that share a kv head add into its dk/dv rows on one thread, in a
 * fixed order (results do not depend on the thread count). That needs pairs to own
 * disjoint k/v rows: the TypeScript side runs this in one chunk when k/v are shared
 * between batch items (batch stride 0).
 *
 * Leaves out: the projections' backward (matmuls).
 */

import {
  capGradient,
  findHoles,
  gB,
  gC,
  gD,
  gDk,
  gDout,
  gDv,
  gCap,
  gGroup,
  gH,
  gHkv,
  gHoles,
  gK,
  gKappa,
  gKC,
  gKeep,
  gKvbs,
  gMaxLim,
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
  gV,
  layoutScratch,
  loadShapeArgs,
  packPanel,
  placeRows,
  sDz,
  sFirst,
  sBits,
  sLim,
  sPanel,
  sPanelK,
  sPt,
  sRd,
  sRmask,
  sSc,
  sSc2,
  sUsed,
  zeroFloats,
} from './attentionShared';
import { colsGemm, panelScores, rowsGemm } from './attentionKernels';
import { myScratch, partStart } from './threads';
import { fmadd, hsum, keepLanes } from './vmath';

@inline function off(i: i32): usize {
  return (<usize>i) << 2;
}

/**
 * 1 + the index of the last entry of p[0..n) whose bits are non-zero (0 if none), searched
 * from the end 16 floats at a time, then by vectors (lane bitmask). A −0 counts as
 * non-zero: lim only bounds the work, and every entry past it is +0.
 */
function lastNonZero(p: usize, n: i32): i32 {
  let l = n;
  for (; (l & 3) != 0; l--) if (load<i32>(p + off(l - 1)) != 0) return l;
  for (; (l & 15) != 0; l -= 4) if (v128.any_true(v128.load(p + off(l - 4)))) return lastInVector(p, l);
  while (l > 0) {
    const q = p + off(l - 16);
    if (v128.any_true(v128.or(v128.or(v128.load(q), v128.load(q, 16)), v128.or(v128.load(q, 32), v128.load(q, 48)))))
      break;
    l -= 16;
  }
  if (l == 0) return 0;
  while (!v128.any_true(v128.load(p + off(l - 4)))) l -= 4;
  return lastInVector(p, l);
}

/** 1 + the last lane with non-zero bits of the vector ending at l (some lane is non-zero). */
@inline function lastInVector(p: usize, l: i32): i32 {
  const bits = i32x4.bitmask(i32x4.ne(v128.load(p + off(l - 4)), i32x4.splat(0)));
  return l - 4 + 32 - clz<i32>(bits);
}

/**
 * From the saved probs: lim per row, gMaxLim, and first per key, the first row whose lim
 * passes it — where the key's dk/dv sums start (rows after it with p = 0 at the key add
 * exact zeros: their p̃ and dz are 0 there). Clears bits[] for the dz passes, and takes
 * every key below gMaxLim as used until they have told which are (see backwardTile).
 */
function scanLims(pBase: usize): void {
  const T = gT,
    S = gS,
    Sp = gSp;
  let maxLim = 0;
  let reach = 0;
  for (let t = 0; t < T; t++) {
    const l = lastNonZero(pBase + off(t * S), S);
    store<i32>(sLim + off(t), l);
    maxLim = max(maxLim, l);
    // first[s] = min{t : lim[t] > s}: each row claims the keys past the largest lim so far.
    for (; reach < l; reach++) store<i32>(sFirst + off(reach), t);
  }
  for (; reach < Sp; reach++) store<i32>(sFirst + off(reach), T);
  gMaxLim = maxLim;
  zeroFloats(sBits, 0, Sp);
  for (let s = 0; s < Sp; s++) store<u8>(sUsed + <usize>s, s < maxLim ? 1 : 0);
}

/** used[s] = some row has p ≠ 0 at s (bits[] from the dz passes), and gHoles. */
function usedFromBits(): void {
  const S = gS;
  for (let s = 0; s < gSp; s++) store<u8>(sUsed + <usize>s, s < S && load<i32>(sBits + off(s)) != 0 ? 1 : 0);
  findHoles();
}

/** dp = w·dP at the 4 lanes from s of a row (keep: the row's keep bytes, 0 without dropout). */
@inline function dpAt(dP: usize, keep: usize, s: i32, kv: v128): v128 {
  const d = v128.load(dP + off(s));
  return keep == 0 ? d : v128.and(f32x4.mul(d, kv), keepLanes(keep + <usize>s));
}

/** p̃ = p·w at the 4 lanes from s (with dropout only). */
@inline function ptAt(p: v128, keep: usize, s: i32, kv: v128): v128 {
  return v128.and(f32x4.mul(p, kv), keepLanes(keep + <usize>s));
}

/**
 * One dz row from its dP row (dP already carries the scale: the values were packed times
 * it): dz = p·(dp − Σ p·dp), dp = w·dP, over s < lim; ORs p's bits into bits[]; with dropout
 * also writes the p̃ row. Vectors run to lim rounded up to 4 where that stays inside the
 * probs row (p is 0 past lim), a scalar tail otherwise. Returns where the written part ends.
 */
function dzRow(dP: usize, prow: usize, keep: usize, dz: usize, pt: usize, lim: i32): i32 {
  const kv = f32x4.splat(gKappa);
  const vEnd = min((lim + 3) & ~3, gS & ~3);
  let acc = f32x4.splat(0);
  let s = 0;
  for (; s < vEnd; s += 4) {
    const p = v128.load(prow + off(s));
    acc = fmadd(p, dpAt(dP, keep, s, kv), acc);
    v128.store(sBits + off(s), v128.or(v128.load(sBits + off(s)), p));
  }
  let rowDot = hsum(acc);
  for (; s < lim; s++) {
    rowDot += load<f32>(prow + off(s)) * dpScalar(dP, keep, s);
    store<i32>(sBits + off(s), load<i32>(sBits + off(s)) | load<i32>(prow + off(s)));
  }
  store<f32>(sRd, rowDot);
  for (s = 0; s < vEnd; s += 4) {
    const p = v128.load(prow + off(s));
    v128.store(dz + off(s), f32x4.mul(p, f32x4.sub(dpAt(dP, keep, s, kv), v128.load32_splat(sRd))));
    if (keep != 0) v128.store(pt + off(s), ptAt(p, keep, s, kv));
  }
  for (; s < lim; s++) {
    const p = load<f32>(prow + off(s));
    store<f32>(dz + off(s), p * (dpScalar(dP, keep, s) - rowDot));
    if (keep != 0) store<f32>(pt + off(s), load<u8>(keep + <usize>s) == 1 ? p * gKappa : 0);
  }
  return s;
}

/** dp = w·dP at s, one lane. */
@inline function dpScalar(dP: usize, keep: usize, s: i32): f32 {
  const d = load<f32>(dP + off(s));
  return keep == 0 ? d : load<u8>(keep + <usize>s) == 1 ? d * gKappa : 0;
}

/**
 * dzRow for the 4 rows of a block (t0..t0+3) at once, over their common vector range hi
 * (the largest lim rounded up to 4; it must stay inside the probs rows, which are 0 past
 * their lims). Rows are at dP + r·ds, probs + 4r·S, keep + r·S, dz + r·ds and pt + r·ds.
 */
@inline function dzRows4(dP: usize, ds: usize, probs: usize, keep: usize, dz: usize, pt: usize, hi: i32): void {
  const kv = f32x4.splat(gKappa),
    zero = f32x4.splat(0);
  const S = <usize>gS;
  const k1 = keep == 0 ? <usize>0 : keep + S,
    k2 = keep == 0 ? <usize>0 : keep + 2 * S,
    k3 = keep == 0 ? <usize>0 : keep + 3 * S;
  const p1 = probs + (S << 2),
    p2 = probs + (S << 3),
    p3 = probs + 3 * (S << 2);
  const d1 = dP + ds,
    d2 = dP + 2 * ds,
    d3 = dP + 3 * ds;
  let a0 = zero,
    a1 = zero,
    a2 = zero,
    a3 = zero;
  for (let s = 0; s < hi; s += 4) {
    const o = off(s);
    const q0 = v128.load(probs + o),
      q1 = v128.load(p1 + o),
      q2 = v128.load(p2 + o),
      q3 = v128.load(p3 + o);
    a0 = fmadd(q0, dpAt(dP, keep, s, kv), a0);
    a1 = fmadd(q1, dpAt(d1, k1, s, kv), a1);
    a2 = fmadd(q2, dpAt(d2, k2, s, kv), a2);
    a3 = fmadd(q3, dpAt(d3, k3, s, kv), a3);
    v128.store(sBits + o, v128.or(v128.load(sBits + o), v128.or(v128.or(q0, q1), v128.or(q2, q3))));
  }
  store<f32>(sRd, hsum(a0));
  store<f32>(sRd, hsum(a1), 4);
  store<f32>(sRd, hsum(a2), 8);
  store<f32>(sRd, hsum(a3), 12);
  const z1 = dz + ds,
    z2 = dz + 2 * ds,
    z3 = dz + 3 * ds;
  for (let s = 0; s < hi; s += 4) {
    const o = off(s);
    const q0 = v128.load(probs + o),
      q1 = v128.load(p1 + o),
      q2 = v128.load(p2 + o),
      q3 = v128.load(p3 + o);
    v128.store(dz + o, f32x4.mul(q0, f32x4.sub(dpAt(dP, keep, s, kv), v128.load32_splat(sRd))));
    v128.store(z1 + o, f32x4.mul(q1, f32x4.sub(dpAt(d1, k1, s, kv), v128.load32_splat(sRd, 4))));
    v128.store(z2 + o, f32x4.mul(q2, f32x4.sub(dpAt(d2, k2, s, kv), v128.load32_splat(sRd, 8))));
    v128.store(z3 + o, f32x4.mul(q3, f32x4.sub(dpAt(d3, k3, s, kv), v128.load32_splat(sRd, 12))));
    if (keep != 0) {
      v128.store(pt + o, ptAt(q0, keep, s, kv));
      v128.store(pt + ds + o, ptAt(q1, k1, s, kv));
      v128.store(pt + 2 * ds + o, ptAt(q2, k2, s, kv));
      v128.store(pt + 3 * ds + o, ptAt(q3, k3, s, kv));
    }
  }
}

/** dz (and with dropout p̃) rows of the block t0..t0+mr, from its dP block in sSc. */
function blockDz(pBase: usize, keepBase: usize, t0: i32, mr: i32, sl: i32): void {
  const S = gS;
  const ds = off(gSp);
  const dz = sDz + <usize>t0 * ds,
    pt = sPt + <usize>t0 * ds;
  const keep = keepBase == 0 ? <usize>0 : keepBase + <usize>(t0 * S);
  const hi = (sl + 3) & ~3;
  if (mr == 4 && hi <= S) {
    // Two copies, so that the one without dropout carries no keep pointers.
    if (keep == 0) dzRows4(sSc, ds, pBase + off(t0 * S), 0, dz, pt, hi);
    else dzRows4(sSc, ds, pBase + off(t0 * S), keep, dz, pt, hi);
    for (let r = 0; r < 4; r++) finishRow(t0 + r, hi, keep != 0);
    return;
  }
  for (let r = 0; r < mr; r++) {
    const rk = keep == 0 ? <usize>0 : keep + <usize>(r * S);
    const ro = <usize>r * ds;
    const end = dzRow(sSc + ro, pBase + off((t0 + r) * S), rk, dz + ro, pt + ro, load<i32>(sLim + off(t0 + r)));
    finishRow(t0 + r, end, keep != 0);
  }
}

/**
 * Row t of dz (and p̃) holds this tile's values up to `end`: zeros from there to where an
 * earlier tile of this call may have left non-zeros (the dk/dv products read whole 4-key
 * columns, up to Sp). A causal mask gives every tile the same extents, so nothing is left
 * to clear after the first tile.
 */
function finishRow(t: i32, end: i32, dropout: bool): void {
  const at = sRmask + off(t);
  const dirty = load<i32>(at);
  if (end >= dirty) {
    store<i32>(at, end);
    return;
  }
  const ds = off(gSp);
  zeroFloats(sDz + <usize>t * ds, end, dirty);
  if (dropout) zeroFloats(sPt + <usize>t * ds, end, dirty);
  store<i32>(at, end);
}

/** Largest lim of the rows t0..t0+mr. */
@inline function blockLim(t0: i32, mr: i32): i32 {
  let sl = 0;
  for (let r = 0; r < mr; r++) sl = max(sl, load<i32>(sLim + off(t0 + r)));
  return sl;
}

/**
 * dP and dz (and with dropout p̃) for every block of the tile; bits[] collects the probs' bits.
 * With a soft-cap, dz times 1 − tanh² of the scores, recomputed from q (at qBase) and panelK.
 */
function tileDz(pBase: usize, keepBase: usize, doutBase: usize, qBase: usize): void {
  const T = gT,
    D = gD;
  const rowBytes = off(gC),
    scStride = off(gSp);
  for (let t0 = 0; t0 < T; t0 += 4) {
    const mr = min(4, T - t0);
    const sl = blockLim(t0, mr);
    if (sl == 0) {
      for (let r = 0; r < mr; r++) finishRow(t0 + r, 0, keepBase != 0);
      continue;
    }
    panelScores(doutBase + <usize>t0 * rowBytes, rowBytes, mr, sPanel, D, sl, sSc, scStride);
    blockDz(pBase, keepBase, t0, mr, sl);
    if (gCap > 0) {
      panelScores(qBase + <usize>t0 * rowBytes, rowBytes, mr, sPanelK, D, sl, sSc2, scStride);
      capGradient(sDz + <usize>t0 * scStride, sSc2, scStride, mr, sl);
    }
  }
}

function backwardTile(b: i32, h: i32): void {
  const T = gT,
    S = gS,
    D = gD,
    C = gC,
    Sp = gSp;
  const rowBytes = off(C),
    kvRowBytes = off(gKC);
  const scStride = off(Sp);
  const pBase = gProbs + off((b * gH + h) * T * S);
  const keepBase = gKeep == 0 ? <usize>0 : gKeep + <usize>((b * gH + h) * T * S);
  const kvOff = off(b * gKvbs + (h / gGroup) * D);
  const qOff = off(b * gQbs + h * D);
  scanLims(pBase);
  // Values times the scale as panels (dP comes out scaled), every key below gMaxLim taken as
  // used. If the dz passes then find one unused (a key no row attends, below another that
  // one does: an unusual mask), dz may have read a NaN there: pack again with zeros, redo.
  packPanel(gV + kvOff, gScale, sPanel);
  if (gCap > 0) packPanel(gK + kvOff, gScale, sPanelK);
  tileDz(pBase, keepBase, gDout + qOff, gQ + qOff);
  usedFromBits();
  if (gHoles) {
    packPanel(gV + kvOff, gScale, sPanel);
    if (gCap > 0) packPanel(gK + kvOff, gScale, sPanelK);
    tileDz(pBase, keepBase, gDout + qOff, gQ + qOff);
  }
  // dq rows += dz · K, keys no row attends read as zeros.
  placeRows(gK + kvOff);
  for (let t0 = 0; t0 < T; t0 += 4) {
    const mr = min(4, T - t0);
    const sl = blockLim(t0, mr);
    const qRow = qOff + <usize>t0 * rowBytes;
    if (sl > 0)
      rowsGemm(sDz + <usize>t0 * scStride, scStride, gRows, gRowStride, sl, gOut + qRow, rowBytes, mr, D, true);
  }
  // dv rows += p̃ᵀ · dout and dk rows += dzᵀ · q, each key from the first row attending it.
  // p̃ is the probs ([T][S]) without dropout, the scratch copy ([T][Sp]) with it.
  const pt = keepBase == 0 ? pBase : sPt;
  const ptStride = keepBase == 0 ? off(S) : scStride;
  for (let s0 = 0; s0 < S; s0 += 4) {
    const mr = min(4, S - s0);
    const t1 = load<i32>(sFirst + off(s0)); // first[] never decreases with s
    if (t1 >= T) continue;
    const kRows = T - t1;
    const kvRow = kvOff + <usize>s0 * kvRowBytes;
    colsGemm(
      pt + <usize>t1 * ptStride + off(s0),
      ptStride,
      gDout + qOff + <usize>t1 * rowBytes,
      rowBytes,
      kRows,
      gDv + kvRow,
      kvRowBytes,
      mr,
      D,
    );
    colsGemm(
      sDz + <usize>t1 * scStride + off(s0),
      scStride,
      gQ + qOff + <usize>t1 * rowBytes,
      rowBytes,
      kRows,
      gDk + kvRow,
      kvRowBytes,
      mr,
      D,
    );
  }
}

/**
 * Part `part` of `parts` of the (batch, kv head) pairs of the backward call in the control
 * block: the tiles of each pair's query heads, in order.
 */
export function attentionBackwardPart(part: i32, parts: i32): void {
  loadShapeArgs();
  layoutScratch(myScratch());
  for (let t = 0; t < gT; t++) store<i32>(sRmask + off(t), gSp); // dz/p̃ rows: contents unknown
  const pairs = gB * gHkv;
  const i1 = partStart(pairs, part + 1, parts);
  for (let i = partStart(pairs, part, parts); i < i1; i++) {
    const b = i / gHkv,
      h0 = (i % gHkv) * gGroup;
    for (let h = h0; h < h0 + gGroup; h++) backwardTile(b, h);
  }
}
