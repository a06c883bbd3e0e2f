/**
 * WGSL of the kernels that touch each element once: fill/scale/add/mul, the activations and
 * their backwards, the logit soft-cap, embeddings and positions, and the Adam(W) update
 * (contracts in backend.ts; formulas as in ops/activations.ts, ops/embedding.ts, ops/adam.ts).
 * Storage bindings are all `read_write` (see wgslDense.ts for why); offsets travel in uniforms.
 *
 * Float32 throughout. Exact GELU uses W. J. Cody's rational erf/erfc (as ops/activations.ts does
 * in float64); tanh's argument is clamped to ±15, where float32 tanh is already ±1, because some
 * drivers form tanh from exp and overflow beyond ~44.
 *
 * Dropout's mask is the counter hash of ops/dropout.ts (lowbias32 twice), bit-identical on the
 * GPU, so a run's dropout pattern is the same on every backend.
 */

import { IDX, WG } from './wgslDense';

const HEAD = (fields: string): string => `struct U { n: u32, ${fields} }
@group(0) @binding(0) var<uniform> u: U;`;
const MAIN = `@compute @workgroup_size(${WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let i = idx(wid, lid, nwg);
  if (i >= u.n) { return; }`;

/** x[i] = value. */
export const FILL = `${HEAD('ox: u32, value: f32')}
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
${IDX}
${MAIN}
  x[u.ox + i] = u.value;
}`;

/** x[i] *= s. */
export const SCALE = `${HEAD('ox: u32, s: f32')}
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
${IDX}
${MAIN}
  x[u.ox + i] = x[u.ox + i] * u.s;
}`;

/** out = a + b, or with mode 1 out = a ⊙ b, mode 2 out += a ⊙ b, mode 3 out = a (a copy). */
export const BINARY = `${HEAD('oo: u32, oa: u32, ob: u32, mode: u32')}
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> a: array<f32>;
@group(0) @binding(3) var<storage, read_write> b: array<f32>;
${IDX}
${MAIN}
  let x = a[u.oa + i];
  let y = b[u.ob + i];
  if (u.mode == 0u) { o[u.oo + i] = x + y; }
  else if (u.mode == 1u) { o[u.oo + i] = x * y; }
  else if (u.mode == 3u) { o[u.oo + i] = x; }
  else { o[u.oo + i] = o[u.oo + i] + x * y; }
}`;

const ACT_FNS = /* wgsl */ `
const INV_SQRT_2 = 0.70710678118654752;
const INV_SQRT_2PI = 0.3989422804014327;
const INV_SQRT_PI = 0.5641895835477563;
const GK = 0.7978845608028654;
const GA = 0.044715;
fn tanhc(x: f32) -> f32 { return tanh(clamp(x, -15.0, 15.0)); }
fn erfSmall(x: f32) -> f32 {
  let z = x * x;
  var num = 1.85777706184603153e-1 * z;
  var den = z;
  num = (num + 3.1611237438705656) * z; den = (den + 2.36012909523441209e1) * z;
  num = (num + 1.13864154151050156e2) * z; den = (den + 2.44024637934444173e2) * z;
  num = (num + 3.77485237685302021e2) * z; den = (den + 1.28261652607737228e3) * z;
  return x * (num + 3.20937758913846947e3) / (den + 2.84423683343917062e3);
}
fn erfcLarge(y: f32) -> f32 {
  if (y >= 27.0) { return 0.0; }
  var r: f32;
  if (y <= 4.0) {
    var num = 2.15311535474403846e-8 * y;
    var den = y;
    num = (num + 5.64188496988670089e-1) * y; den = (den + 1.57449261107098347e1) * y;
    num = (num + 8.88314979438837594) * y; den = (den + 1.17693950891312499e2) * y;
    num = (num + 6.61191906371416295e1) * y; den = (den + 5.37181101862009858e2) * y;
    num = (num + 2.98635138197400131e2) * y; den = (den + 1.62138957456669019e3) * y;
    num = (num + 8.8195222124176909e2) * y; den = (den + 3.29079923573345963e3) * y;
    num = (num + 1.71204761263407058e3) * y; den = (den + 4.36261909014324716e3) * y;
    num = (num + 2.05107837782607147e3) * y; den = (den + 3.43936767414372164e3) * y;
    r = (num + 1.23033935479799725e3) / (den + 1.23033935480374942e3);
  } else {
    let z = 1.0 / (y * y);
    var num = 1.63153871373020978e-2 * z;
    var den = z;
    num = (num + 3.05326634961232344e-1) * z; den = (den + 2.56852019228982242) * z;
    num = (num + 3.60344899949804439e-1) * z; den = (den + 1.87295284992346725) * z;
    num = (num + 1.25781726111229246e-1) * z; den = (den + 5.27905102951428412e-1) * z;
    num = (num + 1.60837851487422766e-2) * z; den = (den + 6.05183413124413191e-2) * z;
    r = (INV_SQRT_PI - z * (num + 6.58749161529837803e-4) / (den + 2.33520497626869185e-3)) / y;
  }
  return exp(-y * y) * r;
}
fn normalCdf(x: f32) -> f32 {
  let v = x * INV_SQRT_2;
  if (abs(v) <= 0.46875) { return 0.5 + 0.5 * erfSmall(v); }
  let tail = 0.5 * erfcLarge(abs(v));
  if (v < 0.0) { return tail; }
  return 1.0 - tail;
}
fn sigmoid(x: f32) -> f32 {
  if (x >= 0.0) { return 1.0 / (1.0 + exp(-x)); }
  let e = exp(x);
  return e / (1.0 + e);
}
fn fwd(op: u32, v: f32) -> f32 {
  switch op {
    case 0u: { return max(v, 0.0); }
    case 1u: { return v * normalCdf(v); }
    case 2u: { return 0.5 * v * (1.0 + tanhc(GK * (v + GA * v * v * v))); }
    case 3u: { return v * sigmoid(v); }
    default: { if (v > 0.0) { return v * v; } return 0.0; }
  }
}
fn grad(op: u32, v: f32) -> f32 {
  switch op {
    case 0u: { return select(0.0, 1.0, v > 0.0); }
    case 1u: { return normalCdf(v) + v * INV_SQRT_2PI * exp(-0.5 * v * v); }
    case 2u: {
      let t = tanhc(GK * (v + GA * v * v * v));
      return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * GK * (1.0 + 3.0 * GA * v * v);
    }
    case 3u: { let s = sigmoid(v); return s * (1.0 + v * (1.0 - s)); }
    default: { if (v > 0.0) { return 2.0 * v; } return 0.0; }
  }
}
`;

/** The activations in `fwd`/`grad` order: 0 relu, 1 gelu (erf), 2 gelu (tanh), 3 silu, 4 relu². */
export const ACTIVATIONS = ['relu', 'gelu', 'geluTanh', 'silu', 'relu2'] as const;

/** y = f(x) (mode 0), or dx += dy · f'(x) (mode 1), f chosen by `op` (ACTIVATIONS' index). */
export const ACTIVATION = `${HEAD('op: u32, mode: u32, oo: u32, oa: u32, ob: u32')}
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> a: array<f32>;
@group(0) @binding(3) var<storage, read_write> b: array<f32>;
${ACT_FNS}
${IDX}
${MAIN}
  if (u.mode == 0u) { o[u.oo + i] = fwd(u.op, a[u.oa + i]); return; }
  // backward: o = dx, a = dy, b = x. ReLU-like ops leave dx untouched where x ≤ 0, as the reference does.
  let g = grad(u.op, b[u.ob + i]);
  if (g != 0.0) { o[u.oo + i] = o[u.oo + i] + a[u.oa + i] * g; }
}`;

/** y = cap·tanh(x/cap) (mode 0; y may alias x), or in place d *= 1 − (y/cap)² (mode 1). */
export const SOFTCAP = `${HEAD('mode: u32, oo: u32, oa: u32, cap: f32')}
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> a: array<f32>;
${ACT_FNS}
${IDX}
${MAIN}
  if (u.mode == 0u) { o[u.oo + i] = u.cap * tanhc(a[u.oa + i] / u.cap); return; }
  let t = a[u.oa + i] / u.cap;
  o[u.oo + i] = o[u.oo + i] * (1.0 - t * t);
}`;

/** out[n, c] = table[ids[n], c] · scale; an id outside the table gives NaN (the host cannot throw mid-queue). */
export const EMBEDDING_FORWARD = `${HEAD('C: u32, rows: u32, oo: u32, ot: u32, oi: u32, scale: f32')}
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> table: array<f32>;
@group(0) @binding(3) var<storage, read_write> ids: array<i32>;
${IDX}
${MAIN}
  let n = i / u.C;
  let id = ids[u.oi + n];
  if (id < 0 || u32(id) >= u.rows) { o[u.oo + i] = bitcast<f32>(0x7fc00000u | (u.C & 0u)); return; }
  o[u.oo + i] = table[u.ot + u32(id) * u.C + i % u.C] * u.scale;
}`;

/**
 * dtable[ids[n], c] += dout[n, c] · scale (rows with id = paddingIdx skipped): one thread per
 * channel walks the N rows in order, so rows sharing an id add up without atomics (WGSL has no
 * float atomics) and in the reference's order. Parallel over C only: a sort-by-id form is the
 * faster one for long batches.
 */
export const EMBEDDING_BACKWARD = `${HEAD('C: u32, rows: u32, pad: i32, odt: u32, odo: u32, oi: u32, scale: f32')}
@group(0) @binding(1) var<storage, read_write> dt: array<f32>;
@group(0) @binding(2) var<storage, read_write> dout: array<f32>;
@group(0) @binding(3) var<storage, read_write> ids: array<i32>;
${IDX}
@compute @workgroup_size(${WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let c = idx(wid, lid, nwg);
  if (c >= u.C) { return; }
  for (var n = 0u; n < u.n; n++) {
    let id = ids[u.oi + n];
    if (id == u.pad || id < 0 || u32(id) >= u.rows) { continue; }
    let at = u.odt + u32(id) * u.C + c;
    dt[at] = dt[at] + dout[u.odo + n * u.C + c] * u.scale;
  }
}`;

/**
 * Positions, n = B·T·C: mode 0 x[b,t,:] += pe[start+t,:] (one thread per element of x);
 * mode 1 dpe[start+t,:] += Σ_b dx[b,t,:] (one thread per element of T·C, b in order).
 */
export const POSITIONAL = `${HEAD('B: u32, T: u32, C: u32, start: u32, mode: u32, ox: u32, op: u32')}
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> pe: array<f32>;
${IDX}
${MAIN}
  let tc = i % (u.T * u.C);
  let p = u.op + u.start * u.C + tc;
  if (u.mode == 0u) { x[u.ox + i] = x[u.ox + i] + pe[p]; return; }
  if (i >= u.T * u.C) { return; }
  var s = pe[p];
  for (var b = 0u; b < u.B; b++) { s += x[u.ox + b * u.T * u.C + tc]; }
  pe[p] = s;
}`;

/** One Adam(W) update (ops/adam.ts); decay where the byte decayMask[i] = 1 (hasMask 0: nowhere). */
export const ADAM = `${HEAD(
  'op: u32, og: u32, om: u32, ov: u32, omask: u32, hasMask: u32, hasGate: u32, ogate: u32, ' +
    'lr: f32, b1: f32, b2: f32, eps: f32, decay: f32, bc1: f32, bc2: f32',
)}
@group(0) @binding(1) var<storage, read_write> p: array<f32>;
@group(0) @binding(2) var<storage, read_write> g: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read_write> mask: array<u32>;
@group(0) @binding(6) var<storage, read_write> gate: array<f32>;
${IDX}
${MAIN}
  // The update's gate (GATE): the clip factor, 0 to leave everything untouched.
  var gs = 1.0;
  if (u.hasGate != 0u) {
    gs = gate[u.ogate];
    if (gs == 0.0) { return; }
  }
  var pi = p[u.op + i];
  if (u.hasMask != 0u && u.decay != 0.0) {
    let byteAt = u.omask + i;
    if (((mask[byteAt / 4u] >> ((byteAt % 4u) * 8u)) & 0xffu) == 1u) { pi -= u.decay * pi; }
  }
  let gi = g[u.og + i] * gs;
  let mi = u.b1 * m[u.om + i] + (1.0 - u.b1) * gi;
  let vi = u.b2 * v[u.ov + i] + (1.0 - u.b2) * gi * gi;
  m[u.om + i] = mi;
  v[u.ov + i] = vi;
  p[u.op + i] = pi - (u.lr * (mi / u.bc1)) / (sqrt(vi / u.bc2) + u.eps);
}`;

/**
 * The gate of a training step's update on the device: stats[o + 3] = the clip factor
 * min(1, clip / (‖g‖ + 1e-6)) (1 when clip is 0; PyTorch's clip_grad_norm_), or 0 when the loss sum
 * stats[o] or Σ g² stats[o + 2] is not finite (the update kernels then change nothing).
 */
export const GATE = `struct U { o: u32, clip: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> stats: array<f32>;
fn finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
@compute @workgroup_size(1)
fn main() {
  let s = stats[u.o + 2u];
  var coef = 1.0;
  if (u.clip > 0.0) { coef = min(1.0, u.clip / (sqrt(s) + 1e-6)); }
  if (!finite(stats[u.o]) || !finite(s)) { coef = 0.0; }
  stats[u.o + 3u] = coef;
}`;

/**
 * RoPE in place (backend.ts `rope`): one thread per rotated pair (b, t, h, i < R/2); inverse
 * (sign −1) is the backward, on a gradient.
 */
const ROPE_FIELDS =
  'T: u32, H: u32, D: u32, half: u32, start: u32, bs: u32, rs: u32, ox: u32, oc: u32, os: u32, sign: f32';
export const ROPE = `${HEAD(ROPE_FIELDS)}
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> cosT: array<f32>;
@group(0) @binding(3) var<storage, read_write> sinT: array<f32>;
${IDX}
${MAIN}
  let j = i % u.half;
  let h = (i / u.half) % u.H;
  let t = (i / (u.half * u.H)) % u.T;
  let b = i / (u.half * u.H * u.T);
  let base = u.ox + b * u.bs + t * u.rs + h * u.D;
  let table = (u.start + t) * u.half + j;
  let co = cosT[u.oc + table];
  let si = u.sign * sinT[u.os + table];
  let x1 = x[base + j];
  let x2 = x[base + u.half + j];
  x[base + j] = x1 * co - x2 * si;
  x[base + u.half + j] = x2 * co + x1 * si;
}`;

/**
 * keep[i] = 1 where lowbias32(lowbias32(i ⊕ key0) ⊕ key1) ≥ threshold, else 0, for i < n
 * (ops/dropout.ts; keepNone: the threshold is 2³², nothing kept). One thread per 32-bit word of
 * the byte buffer, so no two threads write one word; bytes outside [okeep, okeep + n) keep their
 * value (a view may start or end inside a word).
 */
export const DROPOUT_MASK = `${HEAD('okeep: u32, key0: u32, key1: u32, threshold: u32, keepNone: u32, words: u32')}
@group(0) @binding(1) var<storage, read_write> keep: array<u32>;
fn lowbias32(v: u32) -> u32 {
  var x = v;
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}
${IDX}
@compute @workgroup_size(${WG})
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
) {
  let w = idx(wid, lid, nwg) + u.okeep / 4u; // a word of the buffer
  if (w >= u.okeep / 4u + u.words) { return; }
  var word = keep[w];
  for (var k = 0u; k < 4u; k++) {
    let byteAt = w * 4u + k;
    if (byteAt < u.okeep || byteAt >= u.okeep + u.n) { continue; }
    let e = byteAt - u.okeep;
    let kept = u.keepNone == 0u && lowbias32(lowbias32(e ^ u.key0) ^ u.key1) >= u.threshold;
    word = (word & ~(0xffu << (k * 8u))) | (select(0u, 1u, kept) << (k * 8u));
  }
  keep[w] = word;
}`;

/** Dropout: mode 0 y = x·keep·s (s = 1/(1−p); p = 0: a copy), mode 1 dx += dy·keep·s. */
export const DROPOUT = `${HEAD('mode: u32, off: u32, oo: u32, oa: u32, okeep: u32, s: f32')}
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> a: array<f32>;
@group(0) @binding(3) var<storage, read_write> keep: array<u32>;
${IDX}
${MAIN}
  var w = 1.0;
  if (u.off == 0u) {
    let byteAt = u.okeep + i;
    w = select(0.0, u.s, ((keep[byteAt / 4u] >> ((byteAt % 4u) * 8u)) & 0xffu) == 1u);
  }
  if (u.mode == 0u) { o[u.oo + i] = a[u.oa + i] * w; } else { o[u.oo + i] = o[u.oo + i] + a[u.oa + i] * w; }
}`;
