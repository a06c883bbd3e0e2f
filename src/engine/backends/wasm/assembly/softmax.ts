/**
 * Row softmax with an optional mask (1 = may attend), forward and backward, and the masked
 * softmax row that fused attention uses. Same contract as src/engine/ops/softmax.ts:
 * max-subtracted (stable for logits of 1e4), masked entries exactly 0 and never read (a
 * masked lane is replaced before it reaches max or exp, so NaN or 1e30 there is harmless),
 * and a row with nothing to attend to is all zeros, never NaN.
 *
 * The dense row (denseSoftmaxRow) is fused attention's common case: every entry below lim
 * allowed (causal and padding masks), so no mask byte is read, and the last partial vector
 * is masked by lane index instead of running scalar.
 *
 * Leaves out: log-softmax (cross-entropy has its own logsumexp).
 */

import { partStart } from './threads';
import { byteLanes, exps, expv, hmax, hsum, iota, K_NEG_INF, kc } from './vmath';

@inline function off(i: i32): usize {
  return (<usize>i) << 2;
}

/**
 * y[0..n) = softmax over the allowed entries of scale·x[0..n) (m: mask bytes, 0 = none);
 * entries ≥ lim are treated as masked (callers pass lim = n when they know nothing better).
 * y may be x. Returns false (and writes zeros) when no entry is allowed.
 */
export function maskedSoftmaxRow(x: usize, y: usize, n: i32, lim: i32, m: usize, scale: f32): bool {
  const ninf = kc(K_NEG_INF);
  const sv = f32x4.splat(scale);
  let mx = ninf;
  let s = 0;
  for (; s + 4 <= lim; s += 4) {
    let z = f32x4.mul(v128.load(x + off(s)), sv);
    if (m != 0) z = v128.bitselect(z, ninf, byteLanes(m + <usize>s));
    mx = f32x4.pmax(mx, z);
  }
  let best = hmax(mx);
  for (; s < lim; s++) {
    if (m != 0 && load<u8>(m + <usize>s) == 0) continue;
    const z = load<f32>(x + off(s)) * scale;
    if (z > best) best = z;
  }
  if (best == -Infinity) {
    for (s = 0; s < n; s++) store<f32>(y + off(s), 0);
    return false;
  }
  const bv = f32x4.splat(best);
  let sum = f32x4.splat(0);
  const zero = f32x4.splat(0);
  s = 0;
  for (; s + 4 <= lim; s += 4) {
    let e = expv(f32x4.sub(f32x4.mul(v128.load(x + off(s)), sv), bv));
    if (m != 0) e = v128.bitselect(e, zero, byteLanes(m + <usize>s));
    v128.store(y + off(s), e);
    sum = f32x4.add(sum, e);
  }
  let total = hsum(sum);
  for (; s < lim; s++) {
    let e: f32 = 0;
    if (m == 0 || load<u8>(m + <usize>s) != 0) e = exps(load<f32>(x + off(s)) * scale - best);
    store<f32>(y + off(s), e);
    total += e;
  }
  // total ≥ 1: the largest entry contributes e^0.
  const inv = f32x4.splat(<f32>1 / total);
  s = 0;
  for (; s + 4 <= lim; s += 4) v128.store(y + off(s), f32x4.mul(v128.load(y + off(s)), inv));
  const invs = <f32>1 / total;
  for (; s < lim; s++) store<f32>(y + off(s), load<f32>(y + off(s)) * invs);
  zeroRow(y, lim, n);
  return true;
}

/** Zeros on y[from..to) (vector stores, then a scalar tail). */
@inline function zeroRow(y: usize, from: i32, to: i32): void {
  let s = from;
  const z = f32x4.splat(0);
  for (; s + 4 <= to; s += 4) v128.store(y + off(s), z);
  for (; s < to; s++) store<f32>(y + off(s), 0);
}

/**
 * y[0..n) = softmax of x[0..lim) (already scaled), zeros from lim on, for a row whose
 * entries below lim are all allowed (0 < lim ≤ n). x is scratch readable up to lim rounded
 * up to 4 (lanes past lim are masked out, not read as scores); it is overwritten with the
 * exponentials. Same results as maskedSoftmaxRow with an all-ones mask, up to the order
 * of the sum.
 */
export function denseSoftmaxRow(x: usize, y: usize, n: i32, lim: i32): void {
  const ninf = kc(K_NEG_INF);
  const lo = lim & ~3,
    hi = (lim + 3) & ~3;
  const limv = i32x4.splat(lim);
  let mx = ninf;
  let s = 0;
  for (; s < lo; s += 4) mx = f32x4.pmax(mx, v128.load(x + off(s)));
  if (lo < hi) mx = maskedMax(v128.load(x + off(lo)), laneIndex(lo), limv, mx, ninf);
  const best = vmax(mx);
  if (best == -Infinity) {
    zeroRow(y, 0, n);
    return;
  }
  scaleRow(x, y, n, lim, expRow(x, lo, hi, best, limv));
}

/**
 * denseSoftmaxRow for the 4 rows of a score block (row r of x at x + r·xs, of y at y + r·ys,
 * with lims l0..l3 ≥ 1): one pass finds the four maxima (vectors below the smallest lim
 * need no masking; the rest mask lanes at or past each row's lim). Returns false, having
 * written nothing, when a row's scores are all −∞ (the caller then takes the rows one at
 * a time).
 */
export function denseSoftmax4(
  x: usize,
  xs: usize,
  y: usize,
  ys: usize,
  n: i32,
  l0: i32,
  l1: i32,
  l2: i32,
  l3: i32,
): bool {
  const ninf = kc(K_NEG_INF);
  const x1 = x + xs,
    x2 = x + 2 * xs,
    x3 = x + 3 * xs;
  const lo = min(min(l0, l1), min(l2, l3)) & ~3;
  const hi = (max(max(l0, l1), max(l2, l3)) + 3) & ~3;
  let m0 = ninf,
    m1 = ninf,
    m2 = ninf,
    m3 = ninf;
  let s = 0;
  for (; s < lo; s += 4) {
    const o = off(s);
    m0 = f32x4.pmax(m0, v128.load(x + o));
    m1 = f32x4.pmax(m1, v128.load(x1 + o));
    m2 = f32x4.pmax(m2, v128.load(x2 + o));
    m3 = f32x4.pmax(m3, v128.load(x3 + o));
  }
  const v0 = i32x4.splat(l0),
    v1 = i32x4.splat(l1),
    v2 = i32x4.splat(l2),
    v3 = i32x4.splat(l3);
  for (; s < hi; s += 4) {
    const o = off(s);
    const si = laneIndex(s);
    m0 = maskedMax(v128.load(x + o), si, v0, m0, ninf);
    m1 = maskedMax(v128.load(x1 + o), si, v1, m1, ninf);
    m2 = maskedMax(v128.load(x2 + o), si, v2, m2, ninf);
    m3 = maskedMax(v128.load(x3 + o), si, v3, m3, ninf);
  }
  const b0 = vmax(m0),
    b1 = vmax(m1),
    b2 = vmax(m2),
    b3 = vmax(m3);
  if (b0 == -Infinity || b1 == -Infinity || b2 == -Infinity || b3 == -Infinity) return false;
  scaleRow(x, y, n, l0, expRow(x, lo, hi, b0, v0));
  scaleRow(x1, y + ys, n, l1, expRow(x1, lo, hi, b1, v1));
  scaleRow(x2, y + 2 * ys, n, l2, expRow(x2, lo, hi, b2, v2));
  scaleRow(x3, y + 3 * ys, n, l3, expRow(x3, lo, hi, b3, v3));
  return true;
}

/** i32 lanes s, s + 1, s + 2, s + 3. */
@inline function laneIndex(s: i32): v128 {
  return i32x4.add(iota(), i32x4.splat(s));
}

/** mx lane-wise raised by x, except at lanes whose index (si) is at or past lim. */
@inline function maskedMax(x: v128, si: v128, lim: v128, mx: v128, ninf: v128): v128 {
  return f32x4.pmax(mx, v128.bitselect(x, ninf, i32x4.lt_s(si, lim)));
}

/** Largest lane of a running max (it has no NaN lane: pmax leaves NaN scores out). */
@inline function vmax(m: v128): f32 {
  m = f32x4.pmax(m, i32x4.shuffle(m, m, 2, 3, 0, 1));
  m = f32x4.pmax(m, i32x4.shuffle(m, m, 1, 0, 3, 2));
  return f32x4.extract_lane(m, 0);
}

/**
 * x[s] = e^(x[s] − best) for s < hi, zero at lanes at or past lim (only the vectors from lo
 * on can have such lanes); returns Σ.
 */
@inline function expRow(x: usize, lo: i32, hi: i32, best: f32, limv: v128): f32 {
  const bv = f32x4.splat(best);
  let sum = f32x4.splat(0);
  let s = 0;
  for (; s < lo; s += 4) {
    const e = expv(f32x4.sub(v128.load(x + off(s)), bv));
    v128.store(x + off(s), e);
    sum = f32x4.add(sum, e);
  }
  for (; s < hi; s += 4) {
    const e = v128.and(expv(f32x4.sub(v128.load(x + off(s)), bv)), i32x4.lt_s(laneIndex(s), limv));
    v128.store(x + off(s), e);
    sum = f32x4.add(sum, e);
  }
  return hsum(sum);
}

/**
 * y[0..lim) = e[0..lim) / total, zeros on [lim, n); e's lanes past lim are 0, so vectors
 * may run past lim (but not past n). total ≥ 1: the largest entry contributes e^0.
 */
@inline function scaleRow(e: usize, y: usize, n: i32, lim: i32, total: f32): void {
  const invs = <f32>1 / total;
  const inv = f32x4.splat(invs);
  const vEnd = min((lim + 3) & ~3, n & ~3);
  let s = 0;
  for (; s < vEnd; s += 4) v128.store(y + off(s), f32x4.mul(v128.load(e + off(s)), inv));
  for (; s < lim; s++) store<f32>(y + off(s), load<f32>(e + off(s)) * invs);
  zeroRow(y, s, n);
}

/** y = softmax(x) per row with mask row = data + ⌊r/rpb⌋·bs + (r mod rpb)·rs (mask 0 = none). */
export function softmaxForwardPart(
  part: i32,
  parts: i32,
  y: usize,
  x: usize,
  rows: i32,
  cols: i32,
  mask: usize,
  bs: i32,
  rs: i32,
  rpb: i32,
): void {
  const r1 = partStart(rows, part + 1, parts);
  for (let r = partStart(rows, part, parts); r < r1; r++) {
    const m = mask == 0 ? <usize>0 : mask + <usize>((r / rpb) * bs + (r % rpb) * rs);
    maskedSoftmaxRow(x + off(r * cols), y + off(r * cols), cols, cols, m, 1);
  }
}

/** dx += y ⊙ (dy − Σ_c dy·y) per row. */
export function softmaxBackwardPart(part: i32, parts: i32, dx: usize, dy: usize, y: usize, rows: i32, cols: i32): void {
  const r1 = partStart(rows, part + 1, parts);
  for (let r = partStart(rows, part, parts); r < r1; r++) {
    const base = off(r * cols);
    let d = f32x4.splat(0);
    let c = 0;
    for (; c + 4 <= cols; c += 4)
      d = f32x4.add(d, f32x4.mul(v128.load(dy + base + off(c)), v128.load(y + base + off(c))));
    let dot = hsum(d);
    for (; c < cols; c++) dot += load<f32>(dy + base + off(c)) * load<f32>(y + base + off(c));
    const dv = f32x4.splat(dot);
    c = 0;
    for (; c + 4 <= cols; c += 4) {
      const yc = v128.load(y + base + off(c));
      const g = f32x4.mul(yc, f32x4.sub(v128.load(dy + base + off(c)), dv));
      v128.store(dx + base + off(c), f32x4.add(v128.load(dx + base + off(c)), g));
    }
    for (; c < cols; c++) {
      const yc = load<f32>(y + base + off(c));
      store<f32>(dx + base + off(c), load<f32>(dx + base + off(c)) + yc * (load<f32>(dy + base + off(c)) - dot));
    }
  }
}
