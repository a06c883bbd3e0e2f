/**
 * WGSL of the row kernels: LayerNorm and RMSNorm forward/backward, the masked softmax and its
 * backward, cross-entropy forward/backward, and the sum of squares (the global gradient norm).
 * Contracts and formulas: backend.ts and ops/layernorm.ts, ops/rmsnorm.ts, ops/softmax.ts,
 * ops/crossEntropy.ts. One workgroup of 64 threads per row: each thread strides over the row's
 * columns, then a tree in workgroup memory sums (or maxes) the 64 partials.
 *
 * Two kernels cannot keep their reference signature on a GPU, because WebGPU reads results back
 * only asynchronously: cross-entropy writes its loss sum and counted rows into a 2-float device
 * buffer (a second pass adds the rows in order), and the sum of squares writes one float. The
 * host reads them when it reports (the loss), or never (the clip factor stays on the device).
 * A target outside the vocabulary makes that row's loss NaN, which the non-finite check stops on.
 *
 * Leaves out: subgroup reductions (faster where the adapter has them).
 */

import { IDX, WG } from './wgslDense';

/** Threads per row. */
export const ROW_WG = 64;

const ROW_PRELUDE = /* wgsl */ `
var<workgroup> red: array<f32, ${ROW_WG}>;
fn rowOf(wid: vec3u, nwg: vec3u) -> u32 { return wid.y * nwg.x + wid.x; }
// Sum (op 0) or max (op 1) of every thread's v, returned to all threads.
fn reduce(v: f32, lid: u32, op: u32) -> f32 {
  workgroupBarrier();
  red[lid] = v;
  workgroupBarrier();
  for (var s = ${ROW_WG / 2}u; s > 0u; s >>= 1u) {
    if (lid < s) {
      if (op == 0u) { red[lid] = red[lid] + red[lid + s]; } else { red[lid] = max(red[lid], red[lid + s]); }
    }
    workgroupBarrier();
  }
  return red[0];
}
`;
const ROW_MAIN = `@compute @workgroup_size(${ROW_WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lidv: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let row = rowOf(wid, nwg);
  let lid = lidv.x;
  // Rows past N return together (the whole workgroup), so the barriers below stay uniform.
  if (row >= u.N) { return; }`;

/** LayerNorm (norm 0) or RMSNorm (norm 1) forward; hasW/hasB select the optional weight and bias. */
export const NORM_FORWARD = /* wgsl */ `
struct U {
  N: u32,
  C: u32,
  norm: u32,
  hasW: u32,
  hasB: u32,
  oy: u32,
  omean: u32,
  orstd: u32,
  ox: u32,
  ow: u32,
  ob: u32,
  eps: f32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> mean: array<f32>;
@group(0) @binding(3) var<storage, read_write> rstd: array<f32>;
@group(0) @binding(4) var<storage, read_write> x: array<f32>;
@group(0) @binding(5) var<storage, read_write> w: array<f32>;
@group(0) @binding(6) var<storage, read_write> b: array<f32>;
${ROW_PRELUDE}
${ROW_MAIN}
  let base = u.ox + row * u.C;
  var mu = 0.0;
  if (u.norm == 0u) {
    var s = 0.0;
    for (var c = lid; c < u.C; c += ${ROW_WG}u) { s += x[base + c]; }
    mu = reduce(s, lid, 0u) / f32(u.C);
  }
  var sq = 0.0;
  for (var c = lid; c < u.C; c += ${ROW_WG}u) { let d = x[base + c] - mu; sq += d * d; }
  let rs = 1.0 / sqrt(reduce(sq, lid, 0u) / f32(u.C) + u.eps);
  for (var c = lid; c < u.C; c += ${ROW_WG}u) {
    var v = (x[base + c] - mu) * rs;
    if (u.hasW != 0u) { v *= w[u.ow + c]; }
    if (u.hasB != 0u) { v += b[u.ob + c]; }
    y[u.oy + row * u.C + c] = v;
  }
  if (lid == 0u) {
    if (u.norm == 0u) { mean[u.omean + row] = mu; }
    rstd[u.orstd + row] = rs;
  }
}
`;

/** dx of LayerNorm (norm 0) / RMSNorm (norm 1), accumulated; one workgroup per row. */
export const NORM_BACKWARD_DX = /* wgsl */ `
struct U { N: u32, C: u32, norm: u32, hasW: u32, odx: u32, ody: u32, ox: u32, omean: u32, orstd: u32, ow: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dx: array<f32>;
@group(0) @binding(2) var<storage, read_write> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;
@group(0) @binding(4) var<storage, read_write> mean: array<f32>;
@group(0) @binding(5) var<storage, read_write> rstd: array<f32>;
@group(0) @binding(6) var<storage, read_write> w: array<f32>;
${ROW_PRELUDE}
fn wAt(c: u32) -> f32 { if (u.hasW != 0u) { return w[u.ow + c]; } return 1.0; }
${ROW_MAIN}
  let base = row * u.C;
  var mu = 0.0;
  if (u.norm == 0u) { mu = mean[u.omean + row]; }
  let rs = rstd[u.orstd + row];
  var gs = 0.0;
  var gxs = 0.0;
  for (var c = lid; c < u.C; c += ${ROW_WG}u) {
    let g = dy[u.ody + base + c] * wAt(c);
    gs += g;
    gxs += g * (x[u.ox + base + c] - mu) * rs;
  }
  var gMean = 0.0;
  if (u.norm == 0u) { gMean = reduce(gs, lid, 0u) / f32(u.C); }
  let gxMean = reduce(gxs, lid, 0u) / f32(u.C);
  for (var c = lid; c < u.C; c += ${ROW_WG}u) {
    let xHat = (x[u.ox + base + c] - mu) * rs;
    let g = dy[u.ody + base + c] * wAt(c);
    dx[u.odx + base + c] = dx[u.odx + base + c] + rs * (g - gMean - xHat * gxMean);
  }
}
`;

/**
 * dw (and db where hasB) of either norm, accumulated: one thread per column walks the rows in
 * order (the reference's order).
 */
export const NORM_BACKWARD_DW = /* wgsl */ `
struct U { n: u32, N: u32, norm: u32, hasB: u32, odw: u32, odb: u32, ody: u32, ox: u32, omean: u32, orstd: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dw: array<f32>;
@group(0) @binding(2) var<storage, read_write> db: array<f32>;
@group(0) @binding(3) var<storage, read_write> dy: array<f32>;
@group(0) @binding(4) var<storage, read_write> x: array<f32>;
@group(0) @binding(5) var<storage, read_write> mean: array<f32>;
@group(0) @binding(6) var<storage, read_write> rstd: array<f32>;
${IDX}
@compute @workgroup_size(${WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let c = idx(wid, lid, nwg);
  let C = u.n;
  if (c >= C) { return; }
  var sw = 0.0;
  var sb = 0.0;
  for (var r = 0u; r < u.N; r++) {
    var mu = 0.0;
    if (u.norm == 0u) { mu = mean[u.omean + r]; }
    let d = dy[u.ody + r * C + c];
    sw += d * (x[u.ox + r * C + c] - mu) * rstd[u.orstd + r];
    sb += d;
  }
  dw[u.odw + c] = dw[u.odw + c] + sw;
  if (u.hasB != 0u) { db[u.odb + c] = db[u.odb + c] + sb; }
}
`;

/**
 * Masked row softmax (hasMask: the byte mask element for row r, col c is at
 * omask + (r / rowsPerBatch)·batchStride + (r % rowsPerBatch)·rowStride + c). Masked entries and
 * fully masked rows give exactly 0.
 */
export const SOFTMAX_FORWARD = /* wgsl */ `
struct U {
  N: u32,
  cols: u32,
  oy: u32,
  ox: u32,
  hasMask: u32,
  omask: u32,
  rowsPerBatch: u32,
  batchStride: u32,
  rowStride: u32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> mask: array<u32>;
${ROW_PRELUDE}
${ROW_MAIN}
  let mrow = u.omask + (row / u.rowsPerBatch) * u.batchStride + (row % u.rowsPerBatch) * u.rowStride;
  let base = row * u.cols;
  var mx = -3.4028234e38;
  var kept = 0.0;
  for (var c = lid; c < u.cols; c += ${ROW_WG}u) {
    if (u.hasMask != 0u && ((mask[(mrow + c) / 4u] >> (((mrow + c) % 4u) * 8u)) & 0xffu) == 0u) { continue; }
    mx = max(mx, x[u.ox + base + c]);
    kept = 1.0;
  }
  mx = reduce(mx, lid, 1u);
  let anyKept = reduce(kept, lid, 1u);
  var s = 0.0;
  for (var c = lid; c < u.cols; c += ${ROW_WG}u) {
    var e = 0.0;
    if (anyKept > 0.0 && !(u.hasMask != 0u && ((mask[(mrow + c) / 4u] >> (((mrow + c) % 4u) * 8u)) & 0xffu) == 0u)) {
      e = exp(x[u.ox + base + c] - mx);
    }
    y[u.oy + base + c] = e;
    s += e;
  }
  let total = reduce(s, lid, 0u);
  if (anyKept == 0.0) { return; }
  let inv = 1.0 / total;
  for (var c = lid; c < u.cols; c += ${ROW_WG}u) { y[u.oy + base + c] = y[u.oy + base + c] * inv; }
}
`;

/** dx += y ⊙ (dy − Σ dy·y) per row. */
export const SOFTMAX_BACKWARD = /* wgsl */ `
struct U { N: u32, cols: u32, odx: u32, ody: u32, oy: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dx: array<f32>;
@group(0) @binding(2) var<storage, read_write> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
${ROW_PRELUDE}
${ROW_MAIN}
  let base = row * u.cols;
  var d = 0.0;
  for (var c = lid; c < u.cols; c += ${ROW_WG}u) { d += dy[u.ody + base + c] * y[u.oy + base + c]; }
  let dot = reduce(d, lid, 0u);
  for (var c = lid; c < u.cols; c += ${ROW_WG}u) {
    let yc = y[u.oy + base + c];
    dx[u.odx + base + c] = dx[u.odx + base + c] + yc * (dy[u.ody + base + c] - dot);
  }
}
`;

/**
 * Cross-entropy per row: lse[n] = logsumexp(logits[n]); rowLoss[n] = (1−ε)(lse − z_t) + ε(lse − mean z)
 * and rowCount[n] = 1, or 0 and 0 for an ignored row (NaN for a target outside the vocabulary).
 */
export const CE_ROWS = /* wgsl */ `
struct U { N: u32, V: u32, olse: u32, oz: u32, ot: u32, orows: u32, ignore: i32, smoothing: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> lse: array<f32>;
@group(0) @binding(2) var<storage, read_write> z: array<f32>;
@group(0) @binding(3) var<storage, read_write> targets: array<i32>;
@group(0) @binding(4) var<storage, read_write> rows: array<f32>;
${ROW_PRELUDE}
${ROW_MAIN}
  let base = u.oz + row * u.V;
  var mx = -3.4028234e38;
  for (var c = lid; c < u.V; c += ${ROW_WG}u) { mx = max(mx, z[base + c]); }
  mx = reduce(mx, lid, 1u);
  var s = 0.0;
  var zs = 0.0;
  for (var c = lid; c < u.V; c += ${ROW_WG}u) { s += exp(z[base + c] - mx); zs += z[base + c]; }
  let l = mx + log(reduce(s, lid, 0u));
  let zSum = reduce(zs, lid, 0u);
  if (lid != 0u) { return; }
  lse[u.olse + row] = l;
  let t = targets[u.ot + row];
  let r = u.orows + 2u * row;
  if (t == u.ignore) { rows[r] = 0.0; rows[r + 1u] = 0.0; return; }
  if (t < 0 || u32(t) >= u.V) { rows[r] = bitcast<f32>(0x7fc00000u | (u.V & 0u)); rows[r + 1u] = 1.0; return; }
  var loss = (1.0 - u.smoothing) * (l - z[base + u32(t)]);
  if (u.smoothing != 0.0) { loss += u.smoothing * (l - zSum / f32(u.V)); }
  rows[r] = loss;
  rows[r + 1u] = 1.0;
}
`;

/**
 * Adds rows[orows+2n] and rows[orows+2n+1] over n < N into out[o], out[o+1]: each of 64 threads adds a
 * contiguous run of rows in order, then the tree; a single workgroup.
 */
export const PAIR_SUM = /* wgsl */ `
struct U { N: u32, o: u32, orows: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read_write> rows: array<f32>;
${ROW_PRELUDE}
@compute @workgroup_size(${ROW_WG})
fn main(@builtin(local_invocation_id) lidv: vec3u) {
  let lid = lidv.x;
  let per = (u.N + ${ROW_WG - 1}u) / ${ROW_WG}u;
  var a = 0.0;
  var b = 0.0;
  for (var n = lid * per; n < min(u.N, (lid + 1u) * per); n++) {
    a += rows[u.orows + 2u * n];
    b += rows[u.orows + 2u * n + 1u];
  }
  let sa = reduce(a, lid, 0u);
  let sb = reduce(b, lid, 0u);
  if (lid == 0u) { out[u.o] = sa; out[u.o + 1u] = sb; }
}
`;

/** dlogits[n, v] += gradScale·(softmax(z[n])_v − q_v) for counted rows; one thread per element. */
export const CE_BACKWARD = /* wgsl */ `
struct U { n: u32, V: u32, odz: u32, oz: u32, olse: u32, ot: u32, ignore: i32, smoothing: f32, gradScale: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dz: array<f32>;
@group(0) @binding(2) var<storage, read_write> z: array<f32>;
@group(0) @binding(3) var<storage, read_write> lse: array<f32>;
@group(0) @binding(4) var<storage, read_write> targets: array<i32>;
${IDX}
@compute @workgroup_size(${WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let i = idx(wid, lid, nwg);
  if (i >= u.n) { return; }
  let row = i / u.V;
  let v = i % u.V;
  let t = targets[u.ot + row];
  if (t == u.ignore) { return; }
  let p = exp(z[u.oz + i] - lse[u.olse + row]);
  let uni = u.smoothing / f32(u.V);
  var q = uni;
  if (i32(v) == t) { q = 1.0 - u.smoothing + uni; }
  dz[u.odz + i] = dz[u.odz + i] + u.gradScale * (p - q);
}
`;

/** out[o] = Σ x[i]² over i < n: a single workgroup, each thread a contiguous run, then the tree. */
export const SUM_SQUARES = /* wgsl */ `
struct U { N: u32, o: u32, ox: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
${ROW_PRELUDE}
@compute @workgroup_size(${ROW_WG})
fn main(@builtin(local_invocation_id) lidv: vec3u) {
  let lid = lidv.x;
  let per = (u.N + ${ROW_WG - 1}u) / ${ROW_WG}u;
  var s = 0.0;
  for (var i = lid * per; i < min(u.N, (lid + 1u) * per); i++) { let v = x[u.ox + i]; s += v * v; }
  let total = reduce(s, lid, 0u);
  if (lid == 0u) { out[u.o] = total; }
}
`;
