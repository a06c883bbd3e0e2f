/**
 * Row softmax with an optional mask (1 = may attend), forward and backward, and the masked
 * softmax row that fused attention uses. Same contract as src/engine/ops/softmax.ts:
 * max-subtracted (stable for logits of 1e4), masked entries exactly 0 and never read (a
 * masked lane is replaced before it reaches max or exp, so NaN or 1e30 there is harmless),
 * and a row with nothing to attend to is all zeros, never NaN.
 *
 * Leaves out: log-softmax (cross-entropy has its own logsumexp).
 */

import { partStart } from './threads';
import { byteLanes, expv, exps, hmax, hsum, K_NEG_INF, kc } from './vmath';

@inline function off(i: i32): usize {
  return <usize>i << 2;
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
  for (s = lim; s < n; s++) store<f32>(y + off(s), 0);
  return true;
}

/** y = softmax(x) per row with mask row = data + ⌊r/rpb⌋·bs + (r mod rpb)·rs (mask 0 = none). */
export function softmaxForwardPart(
  part: i32, parts: i32, y: usize, x: usize, rows: i32, cols: i32, mask: usize, bs: i32, rs: i32, rpb: i32,
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
    for (; c + 4 <= cols; c += 4) d = f32x4.add(d, f32x4.mul(v128.load(dy + base + off(c)), v128.load(y + base + off(c))));
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
