/**
 * WGSL of Muon's elementwise steps on the GPU (the math is optim/optimizer.ts's file comment):
 * the momentum and Nesterov blend written into X (transposed when the matrix is tall), X divided
 * by its Frobenius norm read from the device, Newton–Schulz's B = b·A + c·A·A + a·I, and the
 * update of the parameters (decoupled decay, then the step, read back from X's layout); the
 * momentum reads its gradients through the step's gate (clip factor; 0 changes nothing), and so
 * does the update. The
 * products themselves are the tiled matmul (wgslDense.ts). Float32, as the host's buffers are.
 *
 * Leaves out: the AdamW runs between the hidden matrices (wgslPointwise.ts ADAM).
 */

import { IDX, WG } from './wgslDense';

const MAIN = `@compute @workgroup_size(${WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let e = idx(wid, lid, nwg);
  if (e >= u.n) { return; }`;

/** The update's gate (wgslPointwise.ts GATE): gs the clip factor; 0 leaves the buffers untouched. */
const GATED = `var gs = 1.0;
  if (u.hasGate != 0u) {
    gs = gate[u.ogate];
    if (gs == 0.0) { return; }
  }`;

/** buf ← β·buf + (1−β)·g; x[at(e)] = (1−β)·g + β·buf, at(e) = j·rows + i when tall (Xᵀ), else e. */
export const MUON_MOMENTUM = `struct U {
  n: u32, rows: u32, cols: u32, tall: u32, og: u32, ob: u32, ox: u32, hasGate: u32, ogate: u32, beta: f32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> buf: array<f32>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;
@group(0) @binding(4) var<storage, read_write> gate: array<f32>;
${IDX}
${MAIN}
  ${GATED}
  let gi = g[u.og + e] * gs;
  let b = u.beta * buf[u.ob + e] + (1.0 - u.beta) * gi;
  buf[u.ob + e] = b;
  var at = e;
  if (u.tall == 1u) { at = (e % u.cols) * u.rows + e / u.cols; }
  x[u.ox + at] = (1.0 - u.beta) * gi + u.beta * b;
}`;

/** x[e] *= 1 / (√s + 1e−7), s = Σ x² already on the device. */
export const MUON_NORMALIZE = `struct U { n: u32, ox: u32, os: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> s: array<f32>;
${IDX}
${MAIN}
  x[u.ox + e] = x[u.ox + e] * (1.0 / (sqrt(s[u.os]) + 1e-7));
}`;

/** B = c·(A·A) + b·A, then + a on the diagonal, over r × r (bb holds A·A on entry). */
export const MUON_COMBINE = `struct U { n: u32, r: u32, oa: u32, ob: u32, qa: f32, qb: f32, qc: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> bb: array<f32>;
${IDX}
${MAIN}
  var v = u.qc * bb[u.ob + e] + u.qb * a[u.oa + e];
  if (e / u.r == e % u.r) { v = v + u.qa; }
  bb[u.ob + e] = v;
}`;

/** p[e] ← p[e]·keep (decay on), then p[e] − step·x[at(e)] (at as in MUON_MOMENTUM). */
export const MUON_APPLY = `struct U {
  n: u32, rows: u32, cols: u32, tall: u32, op: u32, ox: u32, decay: u32, hasGate: u32, ogate: u32, keep: f32, step: f32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> p: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> gate: array<f32>;
${IDX}
${MAIN}
  ${GATED}
  var at = e;
  if (u.tall == 1u) { at = (e % u.cols) * u.rows + e / u.cols; }
  var w = p[u.op + e];
  if (u.decay == 1u) { w = w * u.keep; }
  p[u.op + e] = w - u.step * x[u.ox + at];
}`;
