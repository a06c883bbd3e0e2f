/**
 * Layer normalization (Ba, Kiros & Hinton 2016) over rows of C, as nn.LayerNorm computes
 * it (biased variance, eps inside the root), and RMSNorm (Zhang & Sennrich 2019: no mean,
 * optional weight, no bias), forward and backward; same contracts as
 * src/engine/ops/layernorm.ts and src/engine/ops/rmsnorm.ts.
 *
 * Row statistics: f32x4 partial sums combined in f64, two passes (mean, then squared
 * deviations), since E[x²] − E[x]² cancels badly when |mean| ≫ std.
 *
 * Backward runs as two kernels so no two chunks (threads) ever add into one element:
 *   dx (chunks split rows):     dx += rstd·(g − mean_c(g) − x̂·mean_c(g ⊙ x̂)),  g = dy ⊙ w
 *   dw, db (chunks split columns): dw += Σ_n dy ⊙ x̂,  db += Σ_n dy  (rows in order)
 * and RMSNorm's likewise: dx += rstd·(g − x̂·mean_c(g ⊙ x̂)) by rows, dw += Σ_n dy ⊙ x̂ by columns.
 *
 * Leaves out: fusing the residual add.
 */

import { partStart } from './threads';
import { hsum, rangeLo } from './vmath';

@inline function off(i: i32): usize {
  return (<usize>i) << 2;
}

/** Σ x[0..C) with f32x4 partials, in f64. */
@inline function rowSum(x: usize, C: i32): f64 {
  let s = f32x4.splat(0);
  let c = 0;
  for (; c + 4 <= C; c += 4) s = f32x4.add(s, v128.load(x + off(c)));
  let r = <f64>hsum(s);
  for (; c < C; c++) r += <f64>load<f32>(x + off(c));
  return r;
}

/** y = (x − mean)·rstd·w + b per row; saves mean, rstd. b = 0 means no bias. */
export function layernormForwardPart(
  part: i32,
  parts: i32,
  y: usize,
  mean: usize,
  rstd: usize,
  x: usize,
  w: usize,
  b: usize,
  N: i32,
  C: i32,
  eps: f64,
): void {
  const n1 = partStart(N, part + 1, parts);
  for (let n = partStart(N, part, parts); n < n1; n++) {
    const xr = x + off(n * C);
    const yr = y + off(n * C);
    const mu = rowSum(xr, C) / <f64>C;
    const m32 = <f32>mu;
    const mv = f32x4.splat(m32);
    let sq = f32x4.splat(0);
    let c = 0;
    for (; c + 4 <= C; c += 4) {
      const d = f32x4.sub(v128.load(xr + off(c)), mv);
      sq = f32x4.add(sq, f32x4.mul(d, d));
    }
    let sq64 = <f64>hsum(sq);
    for (; c < C; c++) {
      const d = load<f32>(xr + off(c)) - m32;
      sq64 += <f64>(d * d);
    }
    const rs = 1.0 / Math.sqrt(sq64 / <f64>C + eps);
    const r32 = <f32>rs;
    const rv = f32x4.splat(r32);
    c = 0;
    for (; c + 4 <= C; c += 4) {
      let v = f32x4.mul(f32x4.mul(f32x4.sub(v128.load(xr + off(c)), mv), rv), v128.load(w + off(c)));
      if (b != 0) v = f32x4.add(v, v128.load(b + off(c)));
      v128.store(yr + off(c), v);
    }
    for (; c < C; c++) {
      let v = (load<f32>(xr + off(c)) - m32) * r32 * load<f32>(w + off(c));
      if (b != 0) v += load<f32>(b + off(c));
      store<f32>(yr + off(c), v);
    }
    store<f32>(mean + off(n), m32);
    store<f32>(rstd + off(n), r32);
  }
}

/** dx += rstd·(g − mean(g) − x̂·mean(g ⊙ x̂)) per row, g = dy ⊙ w. */
export function layernormBackwardDxPart(
  part: i32,
  parts: i32,
  dx: usize,
  dy: usize,
  x: usize,
  mean: usize,
  rstd: usize,
  w: usize,
  N: i32,
  C: i32,
): void {
  const n1 = partStart(N, part + 1, parts);
  const invC: f64 = 1.0 / <f64>C;
  for (let n = partStart(N, part, parts); n < n1; n++) {
    const base = off(n * C);
    const m32 = load<f32>(mean + off(n));
    const r32 = load<f32>(rstd + off(n));
    const mv = f32x4.splat(m32);
    const rv = f32x4.splat(r32);
    let gs = f32x4.splat(0);
    let gxs = f32x4.splat(0);
    let c = 0;
    for (; c + 4 <= C; c += 4) {
      const g = f32x4.mul(v128.load(dy + base + off(c)), v128.load(w + off(c)));
      const xh = f32x4.mul(f32x4.sub(v128.load(x + base + off(c)), mv), rv);
      gs = f32x4.add(gs, g);
      gxs = f32x4.add(gxs, f32x4.mul(g, xh));
    }
    let gSum = <f64>hsum(gs);
    let gxSum = <f64>hsum(gxs);
    for (; c < C; c++) {
      const g = load<f32>(dy + base + off(c)) * load<f32>(w + off(c));
      gSum += <f64>g;
      gxSum += <f64>(g * (load<f32>(x + base + off(c)) - m32) * r32);
    }
    const gMean = <f32>(gSum * invC);
    const gxMean = <f32>(gxSum * invC);
    const gm = f32x4.splat(gMean);
    const gxm = f32x4.splat(gxMean);
    c = 0;
    for (; c + 4 <= C; c += 4) {
      const g = f32x4.mul(v128.load(dy + base + off(c)), v128.load(w + off(c)));
      const xh = f32x4.mul(f32x4.sub(v128.load(x + base + off(c)), mv), rv);
      const d = f32x4.mul(rv, f32x4.sub(f32x4.sub(g, gm), f32x4.mul(xh, gxm)));
      v128.store(dx + base + off(c), f32x4.add(v128.load(dx + base + off(c)), d));
    }
    for (; c < C; c++) {
      const g = load<f32>(dy + base + off(c)) * load<f32>(w + off(c));
      const xh = (load<f32>(x + base + off(c)) - m32) * r32;
      store<f32>(dx + base + off(c), load<f32>(dx + base + off(c)) + r32 * (g - gMean - xh * gxMean));
    }
  }
}

/** dw[c] += Σ_n dy·x̂ and db[c] += Σ_n dy (db = 0: no bias) for this chunk's columns. */
export function layernormBackwardDwPart(
  part: i32,
  parts: i32,
  dw: usize,
  db: usize,
  dy: usize,
  x: usize,
  mean: usize,
  rstd: usize,
  N: i32,
  C: i32,
): void {
  let c = rangeLo(C, part, parts);
  const c1 = rangeLo(C, part + 1, parts);
  const ld = off(C);
  for (; c + 8 <= c1; c += 8) {
    let w0 = f32x4.splat(0),
      w1 = f32x4.splat(0),
      b0 = f32x4.splat(0),
      b1 = f32x4.splat(0);
    let py = dy + off(c);
    let px = x + off(c);
    for (let n = 0; n < N; n++) {
      const mv = v128.load32_splat(mean + off(n));
      const rv = v128.load32_splat(rstd + off(n));
      const d0 = v128.load(py),
        d1 = v128.load(py, 16);
      w0 = f32x4.add(w0, f32x4.mul(d0, f32x4.mul(f32x4.sub(v128.load(px), mv), rv)));
      w1 = f32x4.add(w1, f32x4.mul(d1, f32x4.mul(f32x4.sub(v128.load(px, 16), mv), rv)));
      b0 = f32x4.add(b0, d0);
      b1 = f32x4.add(b1, d1);
      py += ld;
      px += ld;
    }
    v128.store(dw + off(c), f32x4.add(v128.load(dw + off(c)), w0));
    v128.store(dw + off(c), f32x4.add(v128.load(dw + off(c), 16), w1), 16);
    if (db != 0) {
      v128.store(db + off(c), f32x4.add(v128.load(db + off(c)), b0));
      v128.store(db + off(c), f32x4.add(v128.load(db + off(c), 16), b1), 16);
    }
  }
  for (; c < c1; c++) {
    let sw: f32 = 0,
      sb: f32 = 0;
    let py = dy + off(c);
    let px = x + off(c);
    for (let n = 0; n < N; n++) {
      const d = load<f32>(py);
      sw += d * ((load<f32>(px) - load<f32>(mean + off(n))) * load<f32>(rstd + off(n)));
      sb += d;
      py += ld;
      px += ld;
    }
    store<f32>(dw + off(c), load<f32>(dw + off(c)) + sw);
    if (db != 0) store<f32>(db + off(c), load<f32>(db + off(c)) + sb);
  }
}

/** y = x · rstd · w per row (w = 0: no weight), rstd = 1/sqrt(mean(x²) + eps), saved. y may alias x. */
export function rmsnormForwardPart(
  part: i32,
  parts: i32,
  y: usize,
  rstd: usize,
  x: usize,
  w: usize,
  N: i32,
  C: i32,
  eps: f64,
): void {
  const n1 = partStart(N, part + 1, parts);
  for (let n = partStart(N, part, parts); n < n1; n++) {
    const xr = x + off(n * C);
    const yr = y + off(n * C);
    let sq = f32x4.splat(0);
    let c = 0;
    for (; c + 4 <= C; c += 4) {
      const v = v128.load(xr + off(c));
      sq = f32x4.add(sq, f32x4.mul(v, v));
    }
    let sq64 = <f64>hsum(sq);
    for (; c < C; c++) {
      const v = load<f32>(xr + off(c));
      sq64 += <f64>(v * v);
    }
    const r32 = <f32>(1.0 / Math.sqrt(sq64 / <f64>C + eps));
    const rv = f32x4.splat(r32);
    c = 0;
    if (w != 0) {
      for (; c + 4 <= C; c += 4)
        v128.store(yr + off(c), f32x4.mul(f32x4.mul(v128.load(xr + off(c)), rv), v128.load(w + off(c))));
      for (; c < C; c++) store<f32>(yr + off(c), load<f32>(xr + off(c)) * r32 * load<f32>(w + off(c)));
    } else {
      for (; c + 4 <= C; c += 4) v128.store(yr + off(c), f32x4.mul(v128.load(xr + off(c)), rv));
      for (; c < C; c++) store<f32>(yr + off(c), load<f32>(xr + off(c)) * r32);
    }
    store<f32>(rstd + off(n), r32);
  }
}

/** g = dy ⊙ w (w = 0: g = dy) for 4 lanes at column offset `at` (bytes). */
@inline function gradTimesWeight(dy: usize, w: usize, at: usize): v128 {
  const d = v128.load(dy + at);
  return w != 0 ? f32x4.mul(d, v128.load(w + at)) : d;
}

/** dx += rstd·(g − x̂·mean(g ⊙ x̂)) per row, g = dy ⊙ w (w = 0: g = dy), x̂ = x·rstd. */
export function rmsnormBackwardDxPart(
  part: i32,
  parts: i32,
  dx: usize,
  dy: usize,
  x: usize,
  rstd: usize,
  w: usize,
  N: i32,
  C: i32,
): void {
  const n1 = partStart(N, part + 1, parts);
  const invC: f64 = 1.0 / <f64>C;
  for (let n = partStart(N, part, parts); n < n1; n++) {
    const base = off(n * C);
    const r32 = load<f32>(rstd + off(n));
    const rv = f32x4.splat(r32);
    let gxs = f32x4.splat(0);
    let c = 0;
    for (; c + 4 <= C; c += 4) {
      const g = gradTimesWeight(dy + base, w, off(c));
      gxs = f32x4.add(gxs, f32x4.mul(g, f32x4.mul(v128.load(x + base + off(c)), rv)));
    }
    let gxSum = <f64>hsum(gxs);
    for (; c < C; c++) {
      const g = load<f32>(dy + base + off(c)) * (w != 0 ? load<f32>(w + off(c)) : 1);
      gxSum += <f64>(g * (load<f32>(x + base + off(c)) * r32));
    }
    const gxMean = <f32>(gxSum * invC);
    const gxm = f32x4.splat(gxMean);
    c = 0;
    for (; c + 4 <= C; c += 4) {
      const g = gradTimesWeight(dy + base, w, off(c));
      const xh = f32x4.mul(v128.load(x + base + off(c)), rv);
      const d = f32x4.mul(rv, f32x4.sub(g, f32x4.mul(xh, gxm)));
      v128.store(dx + base + off(c), f32x4.add(v128.load(dx + base + off(c)), d));
    }
    for (; c < C; c++) {
      const g = load<f32>(dy + base + off(c)) * (w != 0 ? load<f32>(w + off(c)) : 1);
      const xh = load<f32>(x + base + off(c)) * r32;
      store<f32>(dx + base + off(c), load<f32>(dx + base + off(c)) + r32 * (g - xh * gxMean));
    }
  }
}

/** dw[c] += Σ_n dy · x · rstd[n] for this chunk's columns (rows in order). */
export function rmsnormBackwardDwPart(
  part: i32,
  parts: i32,
  dw: usize,
  dy: usize,
  x: usize,
  rstd: usize,
  N: i32,
  C: i32,
): void {
  let c = rangeLo(C, part, parts);
  const c1 = rangeLo(C, part + 1, parts);
  const ld = off(C);
  for (; c + 8 <= c1; c += 8) {
    let w0 = f32x4.splat(0),
      w1 = f32x4.splat(0);
    let py = dy + off(c);
    let px = x + off(c);
    for (let n = 0; n < N; n++) {
      const rv = v128.load32_splat(rstd + off(n));
      w0 = f32x4.add(w0, f32x4.mul(v128.load(py), f32x4.mul(v128.load(px), rv)));
      w1 = f32x4.add(w1, f32x4.mul(v128.load(py, 16), f32x4.mul(v128.load(px, 16), rv)));
      py += ld;
      px += ld;
    }
    v128.store(dw + off(c), f32x4.add(v128.load(dw + off(c)), w0));
    v128.store(dw + off(c), f32x4.add(v128.load(dw + off(c), 16), w1), 16);
  }
  for (; c < c1; c++) {
    let sw: f32 = 0;
    let py = dy + off(c);
    let px = x + off(c);
    for (let n = 0; n < N; n++) {
      sw += load<f32>(py) * (load<f32>(px) * load<f32>(rstd + off(n)));
      py += ld;
      px += ld;
    }
    store<f32>(dw + off(c), load<f32>(dw + off(c)) + sw);
  }
}
