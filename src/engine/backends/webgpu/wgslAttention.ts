/**
 * WGSL of the fused multi-head attention forward and backward (backend.ts `attentionForward`,
 * `attentionBackward`; ops/attention.ts is the reference): grouped-query heads, a byte mask
 * broadcast over heads (causal, padding, sliding window, or their combination), soft-capped
 * scores, ALiBi, a dropout keep-mask, and q/out and k/v batch strides (a key/value cache).
 *
 * Forward: one workgroup of 64 threads per query row (b, h, t): the threads compute the row's
 * scores s-strided into probs (which the contract keeps: the dashboard shows them, backward reads
 * them), the masked softmax in place as in wgslRows.ts, then out = Σ_s w_s·v_s with threads over d
 * and s ascending (the reference's order).
 * Backward, in two passes because WGSL has no float atomics and many query rows add into one key:
 * pass 1, one workgroup per query row, writes dz = scale·p·(dp − Σ p·dp)·(soft-cap factor) into a
 * scratch of probs' shape and adds dq = Σ_s dz·k; pass 2, one thread per element of k/v, adds
 * dk = Σ dz·q and dv = Σ p·w·dout over the group's query heads and the rows in the reference's
 * order (h, then t).
 *
 * Leaves out: tiling S in workgroup memory (FlashAttention's online softmax), which saves the
 * probs' memory traffic but not the probs, which the contract keeps anyway.
 */

import { IDX, WG } from './wgslDense';

const DIMS = `B: u32, T: u32, S: u32, H: u32, D: u32, Hkv: u32, qbs: u32, kvbs: u32,
  scale: f32, softCap: f32, kappa: f32, hasKeep: u32, okeep: u32`;

const ROW_MAIN = `@compute @workgroup_size(64)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lidv: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {`;

const PRELUDE = /* wgsl */ `
var<workgroup> red: array<f32, 64>;
fn reduce(v: f32, lid: u32, op: u32) -> f32 {
  workgroupBarrier();
  red[lid] = v;
  workgroupBarrier();
  for (var s = 32u; s > 0u; s >>= 1u) {
    if (lid < s) {
      if (op == 0u) { red[lid] = red[lid] + red[lid + s]; } else { red[lid] = max(red[lid], red[lid + s]); }
    }
    workgroupBarrier();
  }
  return red[0];
}
`;

/** The forward (see the file comment). */
export const ATTENTION_FORWARD = /* wgsl */ `
struct U {
  ${DIMS},
  qStart: u32, hasAlibi: u32, hasMask: u32, omask: u32, mbs: u32, mrs: u32,
  oo: u32, op: u32, oq: u32, ok: u32, ov: u32, oa: u32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> probs: array<f32>;
@group(0) @binding(3) var<storage, read_write> q: array<f32>;
@group(0) @binding(4) var<storage, read_write> k: array<f32>;
@group(0) @binding(5) var<storage, read_write> v: array<f32>;
@group(0) @binding(6) var<storage, read_write> alibi: array<f32>;
@group(0) @binding(7) var<storage, read_write> mask: array<u32>;
@group(0) @binding(8) var<storage, read_write> keep: array<u32>;
${PRELUDE}
fn maskAt(i: u32) -> u32 { return (mask[i / 4u] >> ((i % 4u) * 8u)) & 0xffu; }
fn keepAt(i: u32) -> u32 { return (keep[i / 4u] >> ((i % 4u) * 8u)) & 0xffu; }
${ROW_MAIN}
  let row = wid.y * nwg.x + wid.x; // ((b·H + h)·T + t)
  let lid = lidv.x;
  if (row >= u.B * u.H * u.T) { return; }
  let t = row % u.T;
  let h = (row / u.T) % u.H;
  let b = row / (u.T * u.H);
  let C = u.H * u.D;
  let KC = u.Hkv * u.D;
  let qOff = u.oq + b * u.qbs + t * C + h * u.D;
  let kvBase = b * u.kvbs + (h / (u.H / u.Hkv)) * u.D;
  let pOff = u.op + row * u.S;
  let mOff = u.omask + b * u.mbs + t * u.mrs;
  var mx = -3.4028234e38;
  var kept = 0.0;
  for (var s = lid; s < u.S; s += 64u) {
    if (u.hasMask != 0u && maskAt(mOff + s) == 0u) { probs[pOff + s] = 0.0; continue; }
    var z = 0.0;
    for (var d = 0u; d < u.D; d++) { z += q[qOff + d] * k[u.ok + kvBase + s * KC + d]; }
    z *= u.scale;
    if (u.softCap > 0.0) { z = u.softCap * tanh(clamp(z / u.softCap, -15.0, 15.0)); }
    if (u.hasAlibi != 0u) { z += alibi[u.oa + h] * (f32(s) - f32(u.qStart + t)); }
    probs[pOff + s] = z;
    mx = max(mx, z);
    kept = 1.0;
  }
  mx = reduce(mx, lid, 1u);
  let anyKept = reduce(kept, lid, 1u);
  var sum = 0.0;
  for (var s = lid; s < u.S; s += 64u) {
    var e = 0.0;
    if (anyKept > 0.0 && !(u.hasMask != 0u && maskAt(mOff + s) == 0u)) { e = exp(probs[pOff + s] - mx); }
    probs[pOff + s] = e;
    sum += e;
  }
  let total = reduce(sum, lid, 0u);
  var inv = 0.0;
  if (anyKept > 0.0) { inv = 1.0 / total; }
  for (var s = lid; s < u.S; s += 64u) { probs[pOff + s] = probs[pOff + s] * inv; }
  storageBarrier();
  workgroupBarrier();
  for (var d = lid; d < u.D; d += 64u) {
    var acc = 0.0;
    for (var s = 0u; s < u.S; s++) {
      var w = probs[pOff + s];
      if (u.hasKeep != 0u) { w = select(0.0, w * u.kappa, keepAt(u.okeep + row * u.S + s) == 1u); }
      if (w == 0.0) { continue; }
      acc += w * v[u.ov + kvBase + s * KC + d];
    }
    o[u.oo + b * u.qbs + t * C + h * u.D + d] = acc;
  }
}
`;

/** Backward pass 1: dz into the scratch, dq += Σ_s dz·k (see the file comment). */
export const ATTENTION_BACKWARD_Q = /* wgsl */ `
struct U { ${DIMS}, odq: u32, odo: u32, op: u32, oq: u32, ok: u32, ov: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dq: array<f32>;
@group(0) @binding(2) var<storage, read_write> dout: array<f32>;
@group(0) @binding(3) var<storage, read_write> probs: array<f32>;
@group(0) @binding(4) var<storage, read_write> q: array<f32>;
@group(0) @binding(5) var<storage, read_write> k: array<f32>;
@group(0) @binding(6) var<storage, read_write> v: array<f32>;
@group(0) @binding(7) var<storage, read_write> dz: array<f32>;
@group(0) @binding(8) var<storage, read_write> keep: array<u32>;
${PRELUDE}
fn keepAt(i: u32) -> u32 { return (keep[i / 4u] >> ((i % 4u) * 8u)) & 0xffu; }
${ROW_MAIN}
  let row = wid.y * nwg.x + wid.x;
  let lid = lidv.x;
  if (row >= u.B * u.H * u.T) { return; }
  let t = row % u.T;
  let h = (row / u.T) % u.H;
  let b = row / (u.T * u.H);
  let C = u.H * u.D;
  let KC = u.Hkv * u.D;
  let qRow = b * u.qbs + t * C + h * u.D;
  let kvBase = b * u.kvbs + (h / (u.H / u.Hkv)) * u.D;
  let pOff = u.op + row * u.S;
  let zOff = row * u.S;
  var part = 0.0;
  for (var s = lid; s < u.S; s += 64u) {
    let p = probs[pOff + s];
    var w = 1.0;
    if (u.hasKeep != 0u) { w = select(0.0, u.kappa, keepAt(u.okeep + row * u.S + s) == 1u); }
    var dp = 0.0;
    if (p != 0.0 && w != 0.0) {
      for (var d = 0u; d < u.D; d++) { dp += dout[u.odo + qRow + d] * v[u.ov + kvBase + s * KC + d]; }
      dp *= w;
    }
    dz[zOff + s] = dp;
    part += p * dp;
  }
  let pDot = reduce(part, lid, 0u);
  for (var s = lid; s < u.S; s += 64u) {
    let p = probs[pOff + s];
    var g = 0.0;
    if (p != 0.0) {
      g = u.scale * p * (dz[zOff + s] - pDot);
      if (u.softCap > 0.0) {
        var z = 0.0;
        for (var d = 0u; d < u.D; d++) { z += q[u.oq + qRow + d] * k[u.ok + kvBase + s * KC + d]; }
        let th = tanh(clamp(u.scale * z / u.softCap, -15.0, 15.0));
        g *= 1.0 - th * th;
      }
    }
    dz[zOff + s] = g;
  }
  storageBarrier();
  workgroupBarrier();
  for (var d = lid; d < u.D; d += 64u) {
    var acc = dq[u.odq + qRow + d];
    for (var s = 0u; s < u.S; s++) {
      let g = dz[zOff + s];
      if (g != 0.0) { acc += g * k[u.ok + kvBase + s * KC + d]; }
    }
    dq[u.odq + qRow + d] = acc;
  }
}
`;

/** Backward pass 2: dk += Σ dz·q, dv += Σ p·w·dout, one thread per (b, s, kv head, d). */
export const ATTENTION_BACKWARD_KV = /* wgsl */ `
struct U { ${DIMS}, n: u32, odk: u32, odv: u32, odo: u32, op: u32, oq: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dk: array<f32>;
@group(0) @binding(2) var<storage, read_write> dv: array<f32>;
@group(0) @binding(3) var<storage, read_write> dout: array<f32>;
@group(0) @binding(4) var<storage, read_write> probs: array<f32>;
@group(0) @binding(5) var<storage, read_write> q: array<f32>;
@group(0) @binding(6) var<storage, read_write> dz: array<f32>;
@group(0) @binding(7) var<storage, read_write> keep: array<u32>;
fn keepAt(i: u32) -> u32 { return (keep[i / 4u] >> ((i % 4u) * 8u)) & 0xffu; }
${IDX}
@compute @workgroup_size(${WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let i = idx(wid, lid, nwg); // over B·S·Hkv·D
  if (i >= u.n) { return; }
  let KC = u.Hkv * u.D;
  let d = i % u.D;
  let g = (i / u.D) % u.Hkv;
  let s = (i / KC) % u.S;
  let b = i / (KC * u.S);
  let C = u.H * u.D;
  let group = u.H / u.Hkv;
  let at = b * u.kvbs + s * KC + g * u.D + d;
  var accK = dk[u.odk + at];
  var accV = dv[u.odv + at];
  for (var h = g * group; h < (g + 1u) * group; h++) {
    for (var t = 0u; t < u.T; t++) {
      let row = (b * u.H + h) * u.T + t;
      let p = probs[u.op + row * u.S + s];
      if (p == 0.0) { continue; }
      let qAt = b * u.qbs + t * C + h * u.D + d;
      var w = 1.0;
      if (u.hasKeep != 0u) { w = select(0.0, u.kappa, keepAt(u.okeep + row * u.S + s) == 1u); }
      if (w != 0.0) { accV += p * w * dout[u.odo + qAt]; }
      accK += dz[row * u.S + s] * q[u.oq + qAt];
    }
  }
  dk[u.odk + at] = accK;
  dv[u.odv + at] = accV;
}
`;
