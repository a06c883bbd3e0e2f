/**
 * WGSL of the matrix product and its bias kernels (see backend.ts `matmul`, `addBias`,
 * `biasBackward` for the contracts). Every storage binding is `read_write`: WebGPU lets one
 * buffer be bound several times in a dispatch only when every binding is writable storage, and
 * the models' views share one flat buffer (parameters, gradients, the activation arena).
 *
 * matmul: C[M,N] = (acc ? C : 0) + op(A)·op(B), tiled in workgroup memory: a workgroup of 16×16
 * threads computes a 64×64 tile of C, each thread a 4×4 block, stepping K by 16 with op(A)'s
 * 64×16 and op(B)'s 16×64 panels staged in workgroup memory (8 KiB). Each output's K sum runs in
 * ascending k, as the reference's does (in float32 here, float64 there).
 *
 * Leaves out: subgroup matrix operations and vectorized (vec4) loads, the next speed steps.
 */

/** Workgroup size of the 1-D kernels and how their flat index is formed from a 2-D grid. */
export const WG = 256;
/** WGSL preamble of 1-D kernels: `idx(wid, lid, nwg)` over a grid split into rows of ≤ 65535 groups. */
export const IDX = /* wgsl */ `
fn idx(wid: vec3u, lid: vec3u, nwg: vec3u) -> u32 { return (wid.y * nwg.x + wid.x) * ${WG}u + lid.x; }
`;

/** Output tile edge, K step and per-thread block of the matmul. */
export const MM_TILE = 64;
const BK = 16;

export const MATMUL = /* wgsl */ `
struct U { M: u32, N: u32, K: u32, transA: u32, transB: u32, acc: u32, oc: u32, oa: u32, ob: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@group(0) @binding(2) var<storage, read_write> a: array<f32>;
@group(0) @binding(3) var<storage, read_write> b: array<f32>;
var<workgroup> As: array<array<f32, ${MM_TILE}>, ${BK}>;
var<workgroup> Bs: array<array<f32, ${MM_TILE}>, ${BK}>;

fn opA(m: u32, k: u32) -> f32 {
  if (m >= u.M || k >= u.K) { return 0.0; }
  if (u.transA != 0u) { return a[u.oa + k * u.M + m]; }
  return a[u.oa + m * u.K + k];
}
fn opB(k: u32, n: u32) -> f32 {
  if (k >= u.K || n >= u.N) { return 0.0; }
  if (u.transB != 0u) { return b[u.ob + n * u.K + k]; }
  return b[u.ob + k * u.N + n];
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wid.y * ${MM_TILE}u;
  let col0 = wid.x * ${MM_TILE}u;
  let t = lid.y * 16u + lid.x;
  var acc: array<array<f32, 4>, 4>;
  for (var k0 = 0u; k0 < u.K; k0 += ${BK}u) {
    // 256 threads stage 64×16 of op(A) and 16×64 of op(B): four elements each.
    for (var i = 0u; i < 4u; i++) {
      let e = t + i * 256u;
      let ak = e % ${BK}u;
      let am = e / ${BK}u;
      As[ak][am] = opA(row0 + am, k0 + ak);
      let bn = e % ${MM_TILE}u;
      let bk = e / ${MM_TILE}u;
      Bs[bk][bn] = opB(k0 + bk, col0 + bn);
    }
    workgroupBarrier();
    let kn = min(${BK}u, u.K - k0);
    for (var k = 0u; k < kn; k++) {
      var av: array<f32, 4>;
      var bv: array<f32, 4>;
      for (var i = 0u; i < 4u; i++) { av[i] = As[k][lid.y * 4u + i]; bv[i] = Bs[k][lid.x * 4u + i]; }
      for (var i = 0u; i < 4u; i++) {
        for (var j = 0u; j < 4u; j++) { acc[i][j] = fma(av[i], bv[j], acc[i][j]); }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    let m = row0 + lid.y * 4u + i;
    if (m >= u.M) { continue; }
    for (var j = 0u; j < 4u; j++) {
      let n = col0 + lid.x * 4u + j;
      if (n >= u.N) { continue; }
      let at = u.oc + m * u.N + n;
      if (u.acc != 0u) { c[at] = c[at] + acc[i][j]; } else { c[at] = acc[i][j]; }
    }
  }
}
`;

/** y[r, c] += bias[c]: one thread per element. */
export const ADD_BIAS = /* wgsl */ `
struct U { rows: u32, cols: u32, oy: u32, ob: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> bias: array<f32>;
${IDX}
@compute @workgroup_size(${WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let i = idx(wid, lid, nwg);
  if (i >= u.rows * u.cols) { return; }
  y[u.oy + i] = y[u.oy + i] + bias[u.ob + i % u.cols];
}
`;

/**
 * dbias[c] += Σ_r dy[r, c]: one thread per column summing rows in ascending order (the
 * reference's order; a tree over rows is the faster form for tall matrices).
 */
export const BIAS_BACKWARD = /* wgsl */ `
struct U { rows: u32, cols: u32, odb: u32, ody: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> db: array<f32>;
@group(0) @binding(2) var<storage, read_write> dy: array<f32>;
${IDX}
@compute @workgroup_size(${WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let col = idx(wid, lid, nwg);
  if (col >= u.cols) { return; }
  var s = 0.0;
  for (var r = 0u; r < u.rows; r++) { s += dy[u.ody + r * u.cols + col]; }
  db[u.odb + col] = db[u.odb + col] + s;
}
`;
