/**
 * Element-wise and row-wise bookkeeping kernels: fill, scale, add, mul, ReLU, exact GELU
 * (Hendrycks & Gimpel 2016; Φ from vmath.ts) and its tanh approximation (GPT-2's), SiLU,
 * squared ReLU, the soft-cap cap · tanh(x / cap) (tanh from vmath.ts),
 * inverted dropout (Srivastava et al. 2014) and its counter-based keep-mask (the hash is
 * explained in src/engine/ops/dropout.ts), bias add and its backward, token embedding
 * gather/scatter and positional encodings (Vaswani et al. §3.4–3.5). Same contracts as the
 * reference kernels in src/engine/ops/.
 *
 * Chunks (run by any thread, see threads.ts): element ranges aligned to 16, or whole rows;
 * a backward that sums over rows (bias, embedding, positions) splits columns or output rows
 * instead, so no two chunks write one element and the order of every sum is fixed (results
 * do not depend on the thread count).
 *
 * Leaves out: validation (token ids are checked on the TypeScript side before the call).
 */

import {
  expv,
  fmadd,
  halfGauss,
  iota,
  K_GELU_TANH_2K,
  K_GELU_TANH_3A,
  K_GELU_TANH_A,
  K_GELU_TANH_M2K,
  K_GELU_TANH_XMAX,
  K_GELU_TANH_XMIN,
  K_INV_SQRT_2PI,
  K_ONE,
  kc,
  kci,
  keepLanes,
  KI_FOUR,
  KI_LOWBIAS_M1,
  KI_LOWBIAS_M2,
  phiv,
  rangeLo,
  tanhv,
} from './vmath';
import { partStart } from './threads';

@inline function off(i: i32): usize {
  return (<usize>i) << 2;
}

/** x[i] = value over this chunk's part of [0, n); zeros via memory.fill (a memset). */
export function fillPart(part: i32, parts: i32, x: usize, n: i32, value: f32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  if (value == 0 && reinterpret<i32>(value) == 0) {
    memory.fill(x + off(i), 0, off(hi - i));
    return;
  }
  const v = f32x4.splat(value);
  for (; i + 4 <= hi; i += 4) v128.store(x + off(i), v);
  for (; i < hi; i++) store<f32>(x + off(i), value);
}

/** x[i] *= s. */
export function scalePart(part: i32, parts: i32, x: usize, n: i32, s: f32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  const v = f32x4.splat(s);
  for (; i + 4 <= hi; i += 4) v128.store(x + off(i), f32x4.mul(v128.load(x + off(i)), v));
  for (; i < hi; i++) store<f32>(x + off(i), load<f32>(x + off(i)) * s);
}

/** out[i] = a[i] + b[i] (out may alias a or b: same index read, then written). */
export function addPart(part: i32, parts: i32, out: usize, a: usize, b: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  for (; i + 4 <= hi; i += 4) v128.store(out + off(i), f32x4.add(v128.load(a + off(i)), v128.load(b + off(i))));
  for (; i < hi; i++) store<f32>(out + off(i), load<f32>(a + off(i)) + load<f32>(b + off(i)));
}

/** y = x > 0 ? x : 0 (NaN and −0 give +0, as the reference's comparison does). */
export function reluForwardPart(part: i32, parts: i32, y: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  const zero = f32x4.splat(0);
  for (; i + 4 <= hi; i += 4) {
    const v = v128.load(x + off(i));
    v128.store(y + off(i), v128.bitselect(v, zero, f32x4.gt(v, zero)));
  }
  for (; i < hi; i++) {
    const v = load<f32>(x + off(i));
    store<f32>(y + off(i), v > 0 ? v : 0);
  }
}

/** dx += x > 0 ? dy : 0. */
export function reluBackwardPart(part: i32, parts: i32, dx: usize, dy: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  const zero = f32x4.splat(0);
  for (; i + 4 <= hi; i += 4) {
    const pass = f32x4.gt(v128.load(x + off(i)), zero);
    v128.store(dx + off(i), f32x4.add(v128.load(dx + off(i)), v128.and(v128.load(dy + off(i)), pass)));
  }
  for (; i < hi; i++)
    if (load<f32>(x + off(i)) > 0) store<f32>(dx + off(i), load<f32>(dx + off(i)) + load<f32>(dy + off(i)));
}

/** y = x · Φ(x), the exact (erf) GELU. */
export function geluForwardPart(part: i32, parts: i32, y: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  for (; i + 4 <= hi; i += 4) {
    const v = v128.load(x + off(i));
    v128.store(y + off(i), f32x4.mul(v, phiv(v, halfGauss(v))));
  }
  for (; i < hi; i++) {
    const v = f32x4.splat(load<f32>(x + off(i)));
    store<f32>(y + off(i), f32x4.extract_lane(f32x4.mul(v, phiv(v, halfGauss(v))), 0));
  }
}

/** dx += dy · (Φ(x) + x·φ(x)), φ(x) = e^(−x²/2)/√(2π). */
export function geluBackwardPart(part: i32, parts: i32, dx: usize, dy: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  for (; i + 4 <= hi; i += 4) {
    const c = kc(K_INV_SQRT_2PI);
    const v = v128.load(x + off(i));
    const e = halfGauss(v);
    const g = f32x4.add(phiv(v, e), f32x4.mul(v, f32x4.mul(e, c)));
    v128.store(dx + off(i), f32x4.add(v128.load(dx + off(i)), f32x4.mul(v128.load(dy + off(i)), g)));
  }
  for (; i < hi; i++) {
    const v = f32x4.splat(load<f32>(x + off(i)));
    const e = halfGauss(v);
    const g = f32x4.extract_lane(f32x4.add(phiv(v, e), f32x4.mul(v, f32x4.mul(e, kc(K_INV_SQRT_2PI)))), 0);
    store<f32>(dx + off(i), load<f32>(dx + off(i)) + load<f32>(dy + off(i)) * g);
  }
}

/**
 * e = exp(−2u), u = √(2/π)(x + 0.044715 x³): the tanh GELU's one exponential. Since
 * ½(1 + tanh u) = 1 / (1 + e^(−2u)) (a sigmoid), y = x / (1 + e) needs no tanh, and is
 * accurate in relative terms on both tails (1 + tanh u cancels for very negative x; the
 * sigmoid does not). expv clamps: e = 0 for x ≫ 0 (y = x) and e = e^88 for x ≪ 0 (y ≈ 0).
 */
@inline function geluTanhExp(x: v128): v128 {
  const p = fmadd(kc(K_GELU_TANH_A), f32x4.mul(x, x), kc(K_ONE)); // 1 + a·x²
  return expv(f32x4.mul(f32x4.mul(x, p), kc(K_GELU_TANH_M2K)));
}

/** y = ½ · x · (1 + tanh(u)) = x · s, s = 1 / (1 + e). */
@inline function geluTanhv(x: v128): v128 {
  return f32x4.div(x, f32x4.add(kc(K_ONE), geluTanhExp(x)));
}

/**
 * dy/dx = s + 2√(2/π) · x · (1 + 3a·x²) · s(1 − s), with s(1 − s) = (e·s)·s (no 1 − s, which
 * would round to 0 as s → 1). x in the second term is clamped to ±20, where that term is
 * already below 1e-30: without it x·x² overflows for |x| > 1e12 and gives ∞ · 0.
 */
@inline function geluTanhGradv(x: v128): v128 {
  const e = geluTanhExp(x);
  const s = f32x4.div(kc(K_ONE), f32x4.add(kc(K_ONE), e));
  const xc = f32x4.pmin(f32x4.pmax(x, kc(K_GELU_TANH_XMIN)), kc(K_GELU_TANH_XMAX));
  const q = fmadd(kc(K_GELU_TANH_3A), f32x4.mul(xc, xc), kc(K_ONE)); // 1 + 3a·x²
  const w = f32x4.mul(f32x4.mul(e, s), s);
  return fmadd(f32x4.mul(f32x4.mul(xc, q), kc(K_GELU_TANH_2K)), w, s);
}

/** y = ½ · x · (1 + tanh(√(2/π)(x + 0.044715 x³))), GPT-2's tanh GELU (gelu_new). */
export function geluTanhForwardPart(part: i32, parts: i32, y: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  for (; i + 4 <= hi; i += 4) v128.store(y + off(i), geluTanhv(v128.load(x + off(i))));
  for (; i < hi; i++) store<f32>(y + off(i), f32x4.extract_lane(geluTanhv(f32x4.splat(load<f32>(x + off(i)))), 0));
}

/** dx += dy · d/dx[½ · x · (1 + tanh(u))] (see geluTanhGradv). */
export function geluTanhBackwardPart(part: i32, parts: i32, dx: usize, dy: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  for (; i + 4 <= hi; i += 4) {
    const g = geluTanhGradv(v128.load(x + off(i)));
    v128.store(dx + off(i), f32x4.add(v128.load(dx + off(i)), f32x4.mul(v128.load(dy + off(i)), g)));
  }
  for (; i < hi; i++) {
    const g = f32x4.extract_lane(geluTanhGradv(f32x4.splat(load<f32>(x + off(i)))), 0);
    store<f32>(dx + off(i), load<f32>(dx + off(i)) + load<f32>(dy + off(i)) * g);
  }
}

/** lowbias32 (Wellons 2018) of one word; the reference's lowbias32 in ops/dropout.ts. */
@inline function lowbias32(x: u32): u32 {
  x ^= x >> 16;
  x *= 0x7feb352d;
  x ^= x >> 15;
  x *= 0x846ca68b;
  x ^= x >> 16;
  return x;
}

/** lowbias32 per u32 lane, with its multipliers m1, m2 passed in (hoisted). */
@inline function lowbias32x4(x: v128, m1: v128, m2: v128): v128 {
  x = v128.xor(x, i32x4.shr_u(x, 16));
  x = i32x4.mul(x, m1);
  x = v128.xor(x, i32x4.shr_u(x, 15));
  x = i32x4.mul(x, m2);
  return v128.xor(x, i32x4.shr_u(x, 16));
}

/** All-ones lanes where hash(key, idx) ≥ threshold (unsigned), for 4 indices. */
@inline function keepCompare(idx: v128, k0: v128, k1: v128, m1: v128, m2: v128, thr: v128): v128 {
  const h = lowbias32x4(v128.xor(lowbias32x4(v128.xor(idx, k0), m1, m2), k1), m1, m2);
  return i32x4.ge_u(h, thr);
}

/**
 * keep[i] = lowbias32(lowbias32(i ⊕ key0) ⊕ key1) ≥ threshold ? 1 : 0 over this chunk of
 * [0, n) (chunks are multiples of 16). Sixteen bytes per step: four i32x4 hashes, compared
 * (all-ones/zero lanes), narrowed with signed saturation to 16 bytes of −1/0, negated to 1/0.
 */
export function dropoutMaskPart(
  part: i32,
  parts: i32,
  keep: usize,
  n: i32,
  threshold: u32,
  key0: u32,
  key1: u32,
): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  // Loaded once per chunk, kept in registers (see vmath.ts KI).
  const four = kci(KI_FOUR);
  const m1 = kci(KI_LOWBIAS_M1);
  const m2 = kci(KI_LOWBIAS_M2);
  const k0 = i32x4.splat(key0);
  const k1 = i32x4.splat(key1);
  const thr = i32x4.splat(threshold);
  let idx = i32x4.add(iota(), i32x4.splat(i)); // i, i+1, i+2, i+3
  for (; i + 16 <= hi; i += 16) {
    const c0 = keepCompare(idx, k0, k1, m1, m2, thr);
    idx = i32x4.add(idx, four);
    const c1 = keepCompare(idx, k0, k1, m1, m2, thr);
    idx = i32x4.add(idx, four);
    const c2 = keepCompare(idx, k0, k1, m1, m2, thr);
    idx = i32x4.add(idx, four);
    const c3 = keepCompare(idx, k0, k1, m1, m2, thr);
    idx = i32x4.add(idx, four);
    const bytes = i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(c0, c1), i16x8.narrow_i32x4_s(c2, c3));
    v128.store(keep + <usize>i, i8x16.neg(bytes));
  }
  for (; i < hi; i++) store<u8>(keep + <usize>i, lowbias32(lowbias32((<u32>i) ^ key0) ^ key1) >= threshold ? 1 : 0);
}

/** y = keep ? x·s : 0 with s = 1/(1−p); p = 0 copies x (keep is not read). */
export function dropoutForwardPart(part: i32, parts: i32, y: usize, x: usize, keep: usize, n: i32, s: f32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  if (keep == 0) {
    for (; i + 4 <= hi; i += 4) v128.store(y + off(i), v128.load(x + off(i)));
    for (; i < hi; i++) store<f32>(y + off(i), load<f32>(x + off(i)));
    return;
  }
  const sv = f32x4.splat(s);
  for (; i + 4 <= hi; i += 4) {
    v128.store(y + off(i), v128.and(f32x4.mul(v128.load(x + off(i)), sv), keepLanes(keep + <usize>i)));
  }
  for (; i < hi; i++) store<f32>(y + off(i), load<u8>(keep + <usize>i) == 1 ? load<f32>(x + off(i)) * s : 0);
}

/** dx += keep ? dy·s : 0; p = 0 (keep = 0 pointer): dx += dy. */
export function dropoutBackwardPart(part: i32, parts: i32, dx: usize, dy: usize, keep: usize, n: i32, s: f32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  if (keep == 0) {
    for (; i + 4 <= hi; i += 4) v128.store(dx + off(i), f32x4.add(v128.load(dx + off(i)), v128.load(dy + off(i))));
    for (; i < hi; i++) store<f32>(dx + off(i), load<f32>(dx + off(i)) + load<f32>(dy + off(i)));
    return;
  }
  const sv = f32x4.splat(s);
  for (; i + 4 <= hi; i += 4) {
    const d = v128.and(f32x4.mul(v128.load(dy + off(i)), sv), keepLanes(keep + <usize>i));
    v128.store(dx + off(i), f32x4.add(v128.load(dx + off(i)), d));
  }
  for (; i < hi; i++)
    if (load<u8>(keep + <usize>i) == 1) store<f32>(dx + off(i), load<f32>(dx + off(i)) + load<f32>(dy + off(i)) * s);
}

/** dst[0..n) += src[0..n) · s (a row). */
@inline function axpyRow(dst: usize, src: usize, n: i32, s: f32): void {
  const sv = f32x4.splat(s);
  let c = 0;
  for (; c + 4 <= n; c += 4)
    v128.store(dst + off(c), f32x4.add(v128.load(dst + off(c)), f32x4.mul(v128.load(src + off(c)), sv)));
  for (; c < n; c++) store<f32>(dst + off(c), load<f32>(dst + off(c)) + load<f32>(src + off(c)) * s);
}

/** dst[0..n) += src[0..n). */
@inline function addRow(dst: usize, src: usize, n: i32): void {
  let c = 0;
  for (; c + 4 <= n; c += 4) v128.store(dst + off(c), f32x4.add(v128.load(dst + off(c)), v128.load(src + off(c))));
  for (; c < n; c++) store<f32>(dst + off(c), load<f32>(dst + off(c)) + load<f32>(src + off(c)));
}

/** y[r, :] += bias for this chunk's rows. */
export function addBiasPart(part: i32, parts: i32, y: usize, bias: usize, rows: i32, cols: i32): void {
  const r1 = partStart(rows, part + 1, parts);
  for (let r = partStart(rows, part, parts); r < r1; r++) addRow(y + off(r * cols), bias, cols);
}

/** dbias[c] += Σ_r dy[r, c] for this chunk's columns (multiples of 16), rows in order. */
export function biasBackwardPart(part: i32, parts: i32, dbias: usize, dy: usize, rows: i32, cols: i32): void {
  let c = rangeLo(cols, part, parts);
  const c1 = rangeLo(cols, part + 1, parts);
  const ld = off(cols);
  for (; c + 16 <= c1; c += 16) {
    let s0 = f32x4.splat(0),
      s1 = f32x4.splat(0),
      s2 = f32x4.splat(0),
      s3 = f32x4.splat(0);
    let p = dy + off(c);
    for (let r = 0; r < rows; r++) {
      s0 = f32x4.add(s0, v128.load(p));
      s1 = f32x4.add(s1, v128.load(p, 16));
      s2 = f32x4.add(s2, v128.load(p, 32));
      s3 = f32x4.add(s3, v128.load(p, 48));
      p += ld;
    }
    const d = dbias + off(c);
    v128.store(d, f32x4.add(v128.load(d), s0));
    v128.store(d, f32x4.add(v128.load(d, 16), s1), 16);
    v128.store(d, f32x4.add(v128.load(d, 32), s2), 32);
    v128.store(d, f32x4.add(v128.load(d, 48), s3), 48);
  }
  for (; c < c1; c++) {
    let s: f32 = 0;
    let p = dy + off(c);
    for (let r = 0; r < rows; r++) {
      s += load<f32>(p);
      p += ld;
    }
    store<f32>(dbias + off(c), load<f32>(dbias + off(c)) + s);
  }
}

/** out[n, :] = table[ids[n], :] · scale for this chunk's rows (ids already validated). */
export function embeddingForwardPart(
  part: i32,
  parts: i32,
  out: usize,
  ids: usize,
  table: usize,
  N: i32,
  C: i32,
  scale: f32,
): void {
  const n1 = partStart(N, part + 1, parts);
  const sv = f32x4.splat(scale);
  for (let n = partStart(N, part, parts); n < n1; n++) {
    const src = table + off(load<i32>(ids + off(n)) * C);
    const dst = out + off(n * C);
    let c = 0;
    for (; c + 4 <= C; c += 4) v128.store(dst + off(c), f32x4.mul(v128.load(src + off(c)), sv));
    for (; c < C; c++) store<f32>(dst + off(c), load<f32>(src + off(c)) * scale);
  }
}

/**
 * dtable[ids[n], :] += dout[n, :] · scale, skipping rows whose id is paddingIdx. Repeated ids
 * add into one row, so chunks split the columns (multiples of 16), never the rows.
 */
export function embeddingBackwardPart(
  part: i32,
  parts: i32,
  dtable: usize,
  dout: usize,
  ids: usize,
  N: i32,
  C: i32,
  scale: f32,
  paddingIdx: i32,
): void {
  const c0 = rangeLo(C, part, parts);
  const c1 = rangeLo(C, part + 1, parts);
  if (c0 >= c1) return;
  for (let n = 0; n < N; n++) {
    const id = load<i32>(ids + off(n));
    if (id == paddingIdx) continue;
    axpyRow(dtable + off(id * C + c0), dout + off(n * C + c0), c1 - c0, scale);
  }
}

/** x[b, t, :] += pe[start + t, :] for this chunk's (b, t) rows. */
export function positionalForwardPart(
  part: i32,
  parts: i32,
  x: usize,
  pe: usize,
  B: i32,
  T: i32,
  C: i32,
  start: i32,
): void {
  const rows = B * T;
  const r1 = partStart(rows, part + 1, parts);
  for (let r = partStart(rows, part, parts); r < r1; r++) addRow(x + off(r * C), pe + off((start + (r % T)) * C), C);
}

/** dpe[start + t, :] += Σ_b dx[b, t, :]: chunks split t, each sums b in order. */
export function positionalBackwardPart(
  part: i32,
  parts: i32,
  dpe: usize,
  dx: usize,
  B: i32,
  T: i32,
  C: i32,
  start: i32,
): void {
  const t1 = partStart(T, part + 1, parts);
  for (let t = partStart(T, part, parts); t < t1; t++) {
    for (let b = 0; b < B; b++) addRow(dpe + off((start + t) * C), dx + off((b * T + t) * C), C);
  }
}

/** out[i] = a[i] · b[i], or out[i] += a[i] · b[i] when accumulating (out may alias a or b when not). */
export function mulPart(part: i32, parts: i32, out: usize, a: usize, b: usize, n: i32, accumulate: bool): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  if (accumulate) {
    for (; i + 4 <= hi; i += 4)
      v128.store(out + off(i), fmadd(v128.load(a + off(i)), v128.load(b + off(i)), v128.load(out + off(i))));
    for (; i < hi; i++) {
      const v = fmadd(
        f32x4.splat(load<f32>(a + off(i))),
        f32x4.splat(load<f32>(b + off(i))),
        f32x4.splat(load<f32>(out + off(i))),
      );
      store<f32>(out + off(i), f32x4.extract_lane(v, 0));
    }
    return;
  }
  for (; i + 4 <= hi; i += 4) v128.store(out + off(i), f32x4.mul(v128.load(a + off(i)), v128.load(b + off(i))));
  for (; i < hi; i++) store<f32>(out + off(i), load<f32>(a + off(i)) * load<f32>(b + off(i)));
}

/** SiLU x · σ(x) = x / (1 + e^(−x)); expv clamps, so e^(−x) is finite and x ≪ 0 gives ≈ −0. */
@inline function siluv(x: v128): v128 {
  return f32x4.div(x, f32x4.add(kc(K_ONE), expv(f32x4.neg(x))));
}

/**
 * d/dx x·σ(x) = s + x · s(1 − s), s = σ(x) = 1/(1 + e), e = e^(−x), with s(1 − s) = (e·s)·s
 * (no 1 − s, which rounds to 0 as s → 1; and e·s ≤ 1 first, so x · e never overflows).
 */
@inline function siluGradv(x: v128): v128 {
  const e = expv(f32x4.neg(x));
  const s = f32x4.div(kc(K_ONE), f32x4.add(kc(K_ONE), e));
  return fmadd(x, f32x4.mul(f32x4.mul(e, s), s), s);
}

/** y = x · σ(x). */
export function siluForwardPart(part: i32, parts: i32, y: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  for (; i + 4 <= hi; i += 4) v128.store(y + off(i), siluv(v128.load(x + off(i))));
  for (; i < hi; i++) store<f32>(y + off(i), f32x4.extract_lane(siluv(f32x4.splat(load<f32>(x + off(i)))), 0));
}

/** dx += dy · σ(x) · (1 + x · (1 − σ(x))). */
export function siluBackwardPart(part: i32, parts: i32, dx: usize, dy: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  for (; i + 4 <= hi; i += 4) {
    const g = siluGradv(v128.load(x + off(i)));
    v128.store(dx + off(i), f32x4.add(v128.load(dx + off(i)), f32x4.mul(v128.load(dy + off(i)), g)));
  }
  for (; i < hi; i++) {
    const g = f32x4.extract_lane(siluGradv(f32x4.splat(load<f32>(x + off(i)))), 0);
    store<f32>(dx + off(i), load<f32>(dx + off(i)) + load<f32>(dy + off(i)) * g);
  }
}

/** y = x > 0 ? x² : 0 (squared ReLU; NaN gives 0, as the reference's comparison does). */
export function relu2ForwardPart(part: i32, parts: i32, y: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  const zero = f32x4.splat(0);
  for (; i + 4 <= hi; i += 4) {
    const v = v128.load(x + off(i));
    v128.store(y + off(i), v128.and(f32x4.mul(v, v), f32x4.gt(v, zero)));
  }
  for (; i < hi; i++) {
    const v = load<f32>(x + off(i));
    store<f32>(y + off(i), v > 0 ? v * v : 0);
  }
}

/** dx += x > 0 ? dy · 2x : 0. */
export function relu2BackwardPart(part: i32, parts: i32, dx: usize, dy: usize, x: usize, n: i32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  const zero = f32x4.splat(0);
  for (; i + 4 <= hi; i += 4) {
    const v = v128.load(x + off(i));
    const g = v128.and(f32x4.mul(v128.load(dy + off(i)), f32x4.add(v, v)), f32x4.gt(v, zero));
    v128.store(dx + off(i), f32x4.add(v128.load(dx + off(i)), g));
  }
  for (; i < hi; i++) {
    const v = load<f32>(x + off(i));
    if (v > 0) store<f32>(dx + off(i), load<f32>(dx + off(i)) + load<f32>(dy + off(i)) * (v + v));
  }
}

/** y = cap · tanh(x · invCap) (y may alias x). */
export function softcapForwardPart(part: i32, parts: i32, y: usize, x: usize, n: i32, cap: f32, invCap: f32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  const cv = f32x4.splat(cap);
  const iv = f32x4.splat(invCap);
  for (; i + 4 <= hi; i += 4) v128.store(y + off(i), f32x4.mul(cv, tanhv(f32x4.mul(v128.load(x + off(i)), iv))));
  for (; i < hi; i++) {
    const v = f32x4.mul(cv, tanhv(f32x4.mul(f32x4.splat(load<f32>(x + off(i))), iv)));
    store<f32>(y + off(i), f32x4.extract_lane(v, 0));
  }
}

/**
 * d *= 1 − (y/cap)², in place, as (cap − y)(cap + y) · invCap2: near saturation cap − y is
 * exact (Sterbenz), where 1 − (y/cap)² would cancel to a few correct bits.
 */
export function softcapBackwardPart(part: i32, parts: i32, d: usize, y: usize, n: i32, cap: f32, invCap2: f32): void {
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  const cv = f32x4.splat(cap);
  const iv = f32x4.splat(invCap2);
  for (; i + 4 <= hi; i += 4) {
    const v = v128.load(y + off(i));
    const g = f32x4.mul(f32x4.mul(f32x4.sub(cv, v), f32x4.add(cv, v)), iv);
    v128.store(d + off(i), f32x4.mul(v128.load(d + off(i)), g));
  }
  for (; i < hi; i++) {
    const v = load<f32>(y + off(i));
    store<f32>(d + off(i), load<f32>(d + off(i)) * ((cap - v) * (cap + v) * invCap2));
  }
}
