/**
 * Adam / AdamW over a flat parameter range (Kingma & Ba 2015, Alg. 1; decoupled decay of
 * Loshchilov & Hutter 2019), and the sum of squares behind the global gradient norm.
 * Same contracts as src/engine/ops/adam.ts and ops/elementwise.ts.
 *
 * Adam runs in f32 lanes (the reference in f64, then rounds); the bias corrections
 * 1 − β^t are computed once by the caller in f64. sumSquares accumulates in f64 over
 * fixed chunks of 4096 elements — the chunking, not the thread count, decides the order of
 * the sum, so the norm (and gradient clipping) is identical for 1 or 2 threads.
 *
 * Leaves out: schedules, clipping and the non-finite check (optim/optimizer.ts).
 */

import { argF, argI, argP, partStart } from './threads';
import { rangeLo } from './vmath';

const CHUNK: i32 = 4096;

@inline function off(i: i32): usize {
  return (<usize>i) << 2;
}

/**
 * Adam arguments: 0 params, 1 grads, 2 m, 3 v, 4 n, 5 lr, 6 beta1, 7 beta2, 8 eps,
 * 9 lr·weightDecay, 10 1 − beta1^t, 11 1 − beta2^t, 12 decayMask (0 = none).
 */
export function adamPart(part: i32, parts: i32): void {
  const params = argP(0),
    grads = argP(1),
    m = argP(2),
    v = argP(3);
  const n = argI(4);
  const lr = <f32>argF(5),
    b1 = <f32>argF(6),
    b2 = <f32>argF(7),
    eps = <f32>argF(8);
  const decay = <f32>argF(9),
    bc1 = <f32>argF(10),
    bc2 = <f32>argF(11);
  const mask = argP(12);
  const useDecay = decay != 0 && mask != 0;
  let i = rangeLo(n, part, parts);
  const hi = rangeLo(n, part + 1, parts);
  const vb1 = f32x4.splat(b1),
    vb2 = f32x4.splat(b2),
    va1 = f32x4.splat(1 - b1),
    va2 = f32x4.splat(1 - b2);
  const vlr = f32x4.splat(lr),
    veps = f32x4.splat(eps),
    vbc1 = f32x4.splat(bc1),
    vbc2 = f32x4.splat(bc2);
  const vdecay = f32x4.splat(decay);
  for (; i + 4 <= hi; i += 4) {
    let p = v128.load(params + off(i));
    if (useDecay) {
      const lanes = i32x4.eq(
        i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(mask + <usize>i))),
        i32x4.splat(1),
      );
      p = v128.bitselect(f32x4.sub(p, f32x4.mul(vdecay, p)), p, lanes);
    }
    const g = v128.load(grads + off(i));
    const mi = f32x4.add(f32x4.mul(vb1, v128.load(m + off(i))), f32x4.mul(va1, g));
    const vi = f32x4.add(f32x4.mul(vb2, v128.load(v + off(i))), f32x4.mul(va2, f32x4.mul(g, g)));
    v128.store(m + off(i), mi);
    v128.store(v + off(i), vi);
    const step = f32x4.div(f32x4.mul(vlr, f32x4.div(mi, vbc1)), f32x4.add(f32x4.sqrt(f32x4.div(vi, vbc2)), veps));
    v128.store(params + off(i), f32x4.sub(p, step));
  }
  for (; i < hi; i++) {
    let p = load<f32>(params + off(i));
    if (useDecay && load<u8>(mask + <usize>i) == 1) p -= decay * p;
    const g = load<f32>(grads + off(i));
    const mi = b1 * load<f32>(m + off(i)) + (1 - b1) * g;
    const vi = b2 * load<f32>(v + off(i)) + (1 - b2) * g * g;
    store<f32>(m + off(i), mi);
    store<f32>(v + off(i), vi);
    store<f32>(params + off(i), p - (lr * (mi / bc1)) / (Mathf.sqrt(vi / bc2) + eps));
  }
}

/** Number of partial sums sumSquaresPart writes for n elements. */
export function sumSquaresChunks(n: i32): i32 {
  return (n + CHUNK - 1) / CHUNK;
}

/** partials[c] = Σ x² over block c of 4096 (f64, two lanes), for this chunk's blocks. */
export function sumSquaresPart(part: i32, parts: i32, x: usize, n: i32, partials: usize): void {
  const chunks = sumSquaresChunks(n);
  const c1 = partStart(chunks, part + 1, parts);
  for (let c = partStart(chunks, part, parts); c < c1; c++) {
    let i = c * CHUNK;
    const hi = min(n, i + CHUNK);
    let s = f64x2.splat(0);
    for (; i + 4 <= hi; i += 4) {
      const v = v128.load(x + off(i));
      const lo = f64x2.promote_low_f32x4(v);
      const up = f64x2.promote_low_f32x4(i32x4.shuffle(v, v, 2, 3, 0, 1));
      s = f64x2.add(s, f64x2.add(f64x2.mul(lo, lo), f64x2.mul(up, up)));
    }
    let r = f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
    for (; i < hi; i++) {
      const e = <f64>load<f32>(x + off(i));
      r += e * e;
    }
    store<f64>(partials + ((<usize>c) << 3), r);
  }
}
