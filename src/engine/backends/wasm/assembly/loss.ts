/**
 * Cross-entropy over logits with integer targets and label smoothing, as PyTorch's
 * CrossEntropyLoss computes it (Szegedy et al. 2016; Vaswani et al. §5.4). Same contract
 * as src/engine/ops/crossEntropy.ts: per row lse = logsumexp(z) (saved for every row),
 * loss = (1 − ε)(lse − z_t) + ε(lse − mean z); backward dz += gradScale·(softmax(z) − q).
 *
 * The forward writes each row's loss (f64; 0 for ignored rows) so the caller sums them
 * in row order — the same total for any thread count. Targets were validated by the
 * caller. exp runs in f32 lanes; the max and the log are exact.
 *
 * Leaves out: the reduction (the caller divides by the count).
 */

import { partStart } from './threads';
import { expv, exps, hmax, hsum } from './vmath';

@inline function off(i: i32): usize {
  return (<usize>i) << 2;
}

/** Per row: lse[n], and rowLoss[n] (f64, 0 for ignored rows). */
export function crossEntropyForwardPart(
  part: i32,
  parts: i32,
  lse: usize,
  logits: usize,
  targets: usize,
  N: i32,
  V: i32,
  ignoreIndex: i32,
  smoothing: f32,
  rowLoss: usize,
): void {
  const n1 = partStart(N, part + 1, parts);
  for (let n = partStart(N, part, parts); n < n1; n++) {
    const z = logits + off(n * V);
    let mv = f32x4.splat(-Infinity);
    let v = 0;
    for (; v + 4 <= V; v += 4) mv = f32x4.pmax(mv, v128.load(z + off(v)));
    let mx = hmax(mv);
    for (; v < V; v++) mx = max(mx, load<f32>(z + off(v)));
    let l: f64;
    if (mx == -Infinity) l = -Infinity;
    else {
      const bv = f32x4.splat(mx);
      let sv = f32x4.splat(0);
      v = 0;
      for (; v + 4 <= V; v += 4) sv = f32x4.add(sv, expv(f32x4.sub(v128.load(z + off(v)), bv)));
      let sum = <f64>hsum(sv);
      for (; v < V; v++) sum += <f64>exps(load<f32>(z + off(v)) - mx);
      l = <f64>mx + Math.log(sum);
    }
    store<f32>(lse + off(n), <f32>l);
    const t = load<i32>(targets + off(n));
    let loss: f64 = 0;
    if (t != ignoreIndex) {
      loss = (1 - <f64>smoothing) * (l - <f64>load<f32>(z + off(t)));
      if (smoothing != 0) {
        let zs = f32x4.splat(0);
        v = 0;
        for (; v + 4 <= V; v += 4) zs = f32x4.add(zs, v128.load(z + off(v)));
        let zSum = <f64>hsum(zs);
        for (; v < V; v++) zSum += <f64>load<f32>(z + off(v));
        loss += <f64>smoothing * (l - zSum / <f64>V);
      }
    }
    store<f64>(rowLoss + ((<usize>n) << 3), loss);
  }
}

/** dlogits[n, :] += gradScale·(exp(z − lse) − q) for rows whose target is not ignored. */
export function crossEntropyBackwardPart(
  part: i32,
  parts: i32,
  dlogits: usize,
  logits: usize,
  lse: usize,
  targets: usize,
  N: i32,
  V: i32,
  ignoreIndex: i32,
  smoothing: f32,
  gradScale: f32,
): void {
  const n1 = partStart(N, part + 1, parts);
  const uniform = smoothing / <f32>V;
  const gs = f32x4.splat(gradScale);
  const uv = f32x4.splat(uniform);
  for (let n = partStart(N, part, parts); n < n1; n++) {
    const t = load<i32>(targets + off(n));
    if (t == ignoreIndex) continue;
    const z = logits + off(n * V);
    const d = dlogits + off(n * V);
    const l = load<f32>(lse + off(n));
    const lv = f32x4.splat(l);
    let v = 0;
    for (; v + 4 <= V; v += 4) {
      const p = expv(f32x4.sub(v128.load(z + off(v)), lv));
      v128.store(d + off(v), f32x4.add(v128.load(d + off(v)), f32x4.mul(gs, f32x4.sub(p, uv))));
    }
    for (; v < V; v++) {
      const p = exps(load<f32>(z + off(v)) - l);
      store<f32>(d + off(v), load<f32>(d + off(v)) + gradScale * (p - uniform));
    }
    // The target's own term: q_t = 1 − ε + ε/V, i.e. subtract gradScale·(1 − ε) more.
    store<f32>(d + off(t), load<f32>(d + off(t)) - gradScale * (1 - smoothing));
  }
}

/** Σ x[0..n) of f64 values, in order. */
export function sumF64(x: usize, n: i32): f64 {
  let s: f64 = 0;
  for (let i = 0; i < n; i++) s += load<f64>(x + ((<usize>i) << 3));
  return s;
}
