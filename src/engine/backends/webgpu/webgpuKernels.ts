/**
 * The WebGPU kernels: the operations of the `Kernels` interface (backend.ts) recorded as
 * compute dispatches on a GPUDevice the platform layer opened (Dawn's `create()` in Node
 * workers, `navigator.gpu` in the web worker); the engine never opens one itself.
 *
 * Arguments are the models' own views (Float32Array, Uint8Array masks, Int32Array ids), resolved
 * to GPU buffers by WebGpuMemory; a view the backend did not allocate (a batch's ids) is copied in
 * for that call. Calls only record work; nothing waits on the GPU. The two kernels whose
 * reference returns a number write it to a device buffer instead (`crossEntropyForward`: the
 * loss sum and counted rows; `sumSquares`), so a training step reads back only what it reports,
 * asynchronously (docs/ARCHITECTURE.md, "WebGPU").
 *
 * Built: fill, scale, add, mul, matmul, addBias, biasBackward, embedding and positions forward and
 * backward, LayerNorm and RMSNorm forward and backward, the five activations forward and backward,
 * soft-cap, softmax forward and backward, cross-entropy forward and backward, sumSquares, adamStep,
 * the fused attention forward and backward (GQA, masks, soft-cap, ALiBi, a dropout keep-mask), RoPE,
 * dropout (its mask bit-identical to the reference's), and Muon's update of a hidden matrix
 * (Newton–Schulz on the tiled matmul). Leaves out: the `Backend` object the models bind to
 * (webgpuBackend.ts).
 *
 * Shape legend as in backend.ts.
 */

/// <reference types="@webgpu/types" />

import type { AdamParams, AttentionDims, MaskView, MuonMatrixUpdate } from '../../backend';
import { attentionOptions } from '../../ops/attention';
import { keepScale, keepThreshold } from '../../ops/dropout';
import type { HostView, UniformField } from './webgpuMemory';
import { WebGpuMemory } from './webgpuMemory';
import { ATTENTION_BACKWARD_KV, ATTENTION_BACKWARD_Q, ATTENTION_FORWARD } from './wgslAttention';
import { MUON_APPLY, MUON_COMBINE, MUON_MOMENTUM, MUON_NORMALIZE } from './wgslMuon';
import { ADD_BIAS, BIAS_BACKWARD, MATMUL, MM_TILE, WG } from './wgslDense';
import {
  ACTIVATION,
  ACTIVATIONS,
  ADAM,
  BINARY,
  DROPOUT,
  DROPOUT_MASK,
  EMBEDDING_BACKWARD,
  EMBEDDING_FORWARD,
  FILL,
  GATE,
  POSITIONAL,
  ROPE,
  SCALE,
  SOFTCAP,
} from './wgslPointwise';
import {
  CE_BACKWARD,
  CE_ROWS,
  NORM_BACKWARD_DW,
  NORM_BACKWARD_DX,
  NORM_FORWARD,
  PAIR_SUM,
  SOFTMAX_BACKWARD,
  SOFTMAX_FORWARD,
  SUM_SQUARES,
} from './wgslRows';

/** An activation the kernels compute (wgslPointwise.ts ACTIVATIONS). */
export type Activation = (typeof ACTIVATIONS)[number];

const MAX_GROUPS = 65535;

/** A grid of `n` workgroups as rows of at most 65535 (the WebGPU per-dimension limit). */
function grid(n: number): [number, number] {
  const g = Math.max(1, n);
  return g <= MAX_GROUPS ? [g, 1] : [MAX_GROUPS, Math.ceil(g / MAX_GROUPS)];
}

const u = (v: number): UniformField => ['u', v];
const f = (v: number): UniformField => ['f', v];
const i = (v: number): UniformField => ['i', v];

/** The WebGPU kernels on one device (see the file comment). */
export class WebGpuKernels {
  readonly mem: WebGpuMemory;
  /** Attention backward's dz [B,H,T,S], grown to the largest call (GPU-only in use). */
  private dz: Float32Array | null = null;
  /** Muon's Σ X² (one float, on the device). */
  private muonNorm: Float32Array | null = null;

  constructor(device: GPUDevice) {
    this.mem = new WebGpuMemory(device);
  }

  private at(view: HostView): [GPUBuffer, number] {
    const r = this.mem.resolve(view);
    return [r.buffer, r.offset];
  }

  /** x[0..n) = value. */
  fill(x: Float32Array, n: number, value: number): void {
    const [bx, ox] = this.at(x);
    if (n > 0) this.mem.dispatch(FILL, [u(n), u(ox), f(value)], [bx], grid(Math.ceil(n / WG)));
  }

  /** x[0..n) *= s. */
  scale(x: Float32Array, n: number, s: number): void {
    const [bx, ox] = this.at(x);
    if (n > 0) this.mem.dispatch(SCALE, [u(n), u(ox), f(s)], [bx], grid(Math.ceil(n / WG)));
  }

  private binary(o: Float32Array, a: Float32Array, b: Float32Array, n: number, mode: number): void {
    const [bo, oo] = this.at(o);
    const [ba, oa] = this.at(a);
    const [bb, ob] = this.at(b);
    if (n > 0) this.mem.dispatch(BINARY, [u(n), u(oo), u(oa), u(ob), u(mode)], [bo, ba, bb], grid(Math.ceil(n / WG)));
  }

  /** out = a + b. */
  add(out: Float32Array, a: Float32Array, b: Float32Array, n: number): void {
    this.binary(out, a, b, n, 0);
  }

  /** out[0..n) = a[0..n) (the two must not overlap). */
  copy(out: Float32Array, a: Float32Array, n: number): void {
    this.binary(out, a, a, n, 3);
  }

  /** out = a ⊙ b (accumulate: out += a ⊙ b). */
  mul(out: Float32Array, a: Float32Array, b: Float32Array, n: number, accumulate: boolean): void {
    this.binary(out, a, b, n, accumulate ? 2 : 1);
  }

  /** C[M,N] = (accumulate ? C : 0) + op(A)·op(B) (backend.ts `matmul`). */
  matmul(
    c: Float32Array,
    a: Float32Array,
    b: Float32Array,
    M: number,
    N: number,
    K: number,
    transA: boolean,
    transB: boolean,
    accumulate: boolean,
  ): void {
    if (M <= 0 || N <= 0) return;
    const [bc, oc] = this.at(c);
    const [ba, oa] = this.at(a);
    const [bb, ob] = this.at(b);
    const fields = [u(M), u(N), u(K), u(+transA), u(+transB), u(+accumulate), u(oc), u(oa), u(ob)];
    this.mem.dispatch(MATMUL, fields, [bc, ba, bb], [Math.ceil(N / MM_TILE), Math.ceil(M / MM_TILE)]);
  }

  /** y[r, c] += bias[c]. */
  addBias(y: Float32Array, bias: Float32Array, rows: number, cols: number): void {
    const [by, oy] = this.at(y);
    const [bb, ob] = this.at(bias);
    const n = rows * cols;
    if (n > 0) this.mem.dispatch(ADD_BIAS, [u(rows), u(cols), u(oy), u(ob)], [by, bb], grid(Math.ceil(n / WG)));
  }

  /** dbias[c] += Σ_r dy[r, c]. */
  biasBackward(dbias: Float32Array, dy: Float32Array, rows: number, cols: number): void {
    const [bd, od] = this.at(dbias);
    const [by, oy] = this.at(dy);
    if (cols > 0)
      this.mem.dispatch(BIAS_BACKWARD, [u(rows), u(cols), u(od), u(oy)], [bd, by], grid(Math.ceil(cols / WG)));
  }

  /** out[n, :] = table[ids[n], :] · scale. */
  embeddingForward(out: Float32Array, ids: Int32Array, table: Float32Array, N: number, C: number, scale: number): void {
    const [bo, oo] = this.at(out);
    const [bt, ot] = this.at(table);
    const [bi, oi] = this.at(ids.subarray(0, N));
    const fields = [u(N * C), u(C), u(Math.floor(table.length / C)), u(oo), u(ot), u(oi), f(scale)];
    if (N * C > 0) this.mem.dispatch(EMBEDDING_FORWARD, fields, [bo, bt, bi], grid(Math.ceil((N * C) / WG)));
  }

  /** dtable[ids[n], :] += dout[n, :] · scale, except rows whose id is paddingIdx. */
  embeddingBackward(
    dtable: Float32Array,
    dout: Float32Array,
    ids: Int32Array,
    N: number,
    C: number,
    scale: number,
    paddingIdx: number,
  ): void {
    const [bt, ot] = this.at(dtable);
    const [bo, oo] = this.at(dout);
    const [bi, oi] = this.at(ids.subarray(0, N));
    const fields = [u(N), u(C), u(Math.floor(dtable.length / C)), i(paddingIdx), u(ot), u(oo), u(oi), f(scale)];
    if (N > 0 && C > 0) this.mem.dispatch(EMBEDDING_BACKWARD, fields, [bt, bo, bi], grid(Math.ceil(C / WG)));
  }

  /** x[b, t, :] += pe[start + t, :]. */
  positionalForward(x: Float32Array, pe: Float32Array, B: number, T: number, C: number, start: number): void {
    this.positional(x, pe, B, T, C, start, 0);
  }

  /** dpe[start + t, :] += Σ_b dx[b, t, :]. */
  positionalBackward(dpe: Float32Array, dx: Float32Array, B: number, T: number, C: number, start: number): void {
    this.positional(dx, dpe, B, T, C, start, 1);
  }

  private positional(x: Float32Array, pe: Float32Array, B: number, T: number, C: number, start: number, mode: number) {
    const [bx, ox] = this.at(x);
    const [bp, op] = this.at(pe);
    const n = B * T * C;
    const fields = [u(n), u(B), u(T), u(C), u(start), u(mode), u(ox), u(op)];
    if (n > 0) this.mem.dispatch(POSITIONAL, fields, [bx, bp], grid(Math.ceil(n / WG)));
  }

  /** LayerNorm forward (b null: no bias); mean, rstd [N] saved. */
  layernormForward(
    y: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    x: Float32Array,
    w: Float32Array,
    b: Float32Array | null,
    N: number,
    C: number,
    eps: number,
  ): void {
    this.normForward(0, y, mean, rstd, x, w, b, N, C, eps);
  }

  /** RMSNorm forward (w null: no scale); rstd [N] saved. */
  rmsnormForward(
    y: Float32Array,
    rstd: Float32Array,
    x: Float32Array,
    w: Float32Array | null,
    N: number,
    C: number,
    eps: number,
  ): void {
    this.normForward(1, y, rstd, rstd, x, w, null, N, C, eps);
  }

  private normForward(
    norm: number,
    y: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    x: Float32Array,
    w: Float32Array | null,
    b: Float32Array | null,
    N: number,
    C: number,
    eps: number,
  ): void {
    if (N <= 0) return;
    const [by, oy] = this.at(y);
    const [bm, om] = this.at(mean);
    const [br, or] = this.at(rstd);
    const [bx, ox] = this.at(x);
    const [bw, ow] = this.at(w ?? x); // unused stand-ins keep the binding valid
    const [bb, ob] = this.at(b ?? x);
    const fields = [u(N), u(C), u(norm), u(+(w !== null)), u(+(b !== null)), u(oy), u(om), u(or), u(ox), u(ow), u(ob)];
    this.mem.dispatch(NORM_FORWARD, [...fields, f(eps)], [by, bm, br, bx, bw, bb], grid(N));
  }

  /** LayerNorm backward: accumulates dx, dw and (unless null) db. */
  layernormBackward(
    dx: Float32Array,
    dw: Float32Array,
    db: Float32Array | null,
    dy: Float32Array,
    x: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    w: Float32Array,
    N: number,
    C: number,
  ): void {
    this.normBackward(0, dx, dw, db, dy, x, mean, rstd, w, N, C);
  }

  /** RMSNorm backward: accumulates dx and (unless null) dw. */
  rmsnormBackward(
    dx: Float32Array,
    dw: Float32Array | null,
    dy: Float32Array,
    x: Float32Array,
    rstd: Float32Array,
    w: Float32Array | null,
    N: number,
    C: number,
  ): void {
    this.normBackward(1, dx, dw, null, dy, x, rstd, rstd, w, N, C);
  }

  private normBackward(
    norm: number,
    dx: Float32Array,
    dw: Float32Array | null,
    db: Float32Array | null,
    dy: Float32Array,
    x: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    w: Float32Array | null,
    N: number,
    C: number,
  ): void {
    if (N <= 0) return;
    const [bdx, odx] = this.at(dx);
    const [bdy, ody] = this.at(dy);
    const [bx, ox] = this.at(x);
    const [bm, om] = this.at(mean);
    const [br, or] = this.at(rstd);
    const [bw, ow] = this.at(w ?? x);
    const dxFields = [u(N), u(C), u(norm), u(+(w !== null)), u(odx), u(ody), u(ox), u(om), u(or), u(ow)];
    this.mem.dispatch(NORM_BACKWARD_DX, dxFields, [bdx, bdy, bx, bm, br, bw], grid(N));
    if (dw === null) return;
    const [bdw, odw] = this.at(dw);
    const [bdb, odb] = this.at(db ?? dw);
    const dwFields = [u(C), u(N), u(norm), u(+(db !== null)), u(odw), u(odb), u(ody), u(ox), u(om), u(or)];
    this.mem.dispatch(NORM_BACKWARD_DW, dwFields, [bdw, bdb, bdy, bx, bm, br], grid(Math.ceil(C / WG)));
  }

  /** y = act(x) over n elements. */
  activationForward(act: Activation, y: Float32Array, x: Float32Array, n: number): void {
    this.activation(act, 0, y, x, x, n);
  }

  /** dx += dy · act'(x) over n elements. */
  activationBackward(act: Activation, dx: Float32Array, dy: Float32Array, x: Float32Array, n: number): void {
    this.activation(act, 1, dx, dy, x, n);
  }

  private activation(act: Activation, mode: number, o: Float32Array, a: Float32Array, b: Float32Array, n: number) {
    const [bo, oo] = this.at(o);
    const [ba, oa] = this.at(a);
    const [bb, ob] = this.at(b);
    const fields = [u(n), u(ACTIVATIONS.indexOf(act)), u(mode), u(oo), u(oa), u(ob)];
    if (n > 0) this.mem.dispatch(ACTIVATION, fields, [bo, ba, bb], grid(Math.ceil(n / WG)));
  }

  /** y = cap·tanh(x/cap) (y may alias x). */
  softcapForward(y: Float32Array, x: Float32Array, n: number, cap: number): void {
    const [by, oy] = this.at(y);
    const [bx, ox] = this.at(x);
    if (n > 0) this.mem.dispatch(SOFTCAP, [u(n), u(0), u(oy), u(ox), f(cap)], [by, bx], grid(Math.ceil(n / WG)));
  }

  /** In place: d *= 1 − (y/cap)² (y the capped output). */
  softcapBackward(d: Float32Array, y: Float32Array, n: number, cap: number): void {
    const [bd, od] = this.at(d);
    const [by, oy] = this.at(y);
    if (n > 0) this.mem.dispatch(SOFTCAP, [u(n), u(1), u(od), u(oy), f(cap)], [bd, by], grid(Math.ceil(n / WG)));
  }

  /**
   * Row softmax with an optional byte mask (backend.ts `softmaxForward`). The mask's bytes are
   * uploaded first: the models write masks on the host each batch.
   */
  softmaxForward(
    y: Float32Array,
    x: Float32Array,
    rows: number,
    cols: number,
    mask: MaskView | null,
    rowsPerBatch: number,
  ): void {
    if (rows <= 0) return;
    const [by, oy] = this.at(y);
    const [bx, ox] = this.at(x);
    let bm = this.mem.spare;
    let om = 0;
    if (mask) {
      if (this.mem.owns(mask.data)) this.mem.upload(mask.data);
      [bm, om] = this.at(mask.data);
    }
    const fields = [u(rows), u(cols), u(oy), u(ox), u(+(mask !== null)), u(om), u(rowsPerBatch)];
    fields.push(u(mask?.batchStride ?? 0), u(mask?.rowStride ?? 0));
    this.mem.dispatch(SOFTMAX_FORWARD, fields, [by, bx, bm], grid(rows));
  }

  /** dx += y ⊙ (dy − Σ dy·y) per row. */
  softmaxBackward(dx: Float32Array, dy: Float32Array, y: Float32Array, rows: number, cols: number): void {
    if (rows <= 0) return;
    const [bdx, odx] = this.at(dx);
    const [bdy, ody] = this.at(dy);
    const [by, oy] = this.at(y);
    this.mem.dispatch(SOFTMAX_BACKWARD, [u(rows), u(cols), u(odx), u(ody), u(oy)], [bdx, bdy, by], grid(rows));
  }

  /**
   * Cross-entropy forward (backend.ts `crossEntropyForward`), its result on the device:
   * out[0] = the summed loss of counted rows, out[1] = their number; lse [N] saved. `rows` is a
   * scratch of 2·N floats (per-row loss and count) that the ordered sum reads.
   */
  crossEntropyForward(
    out: Float32Array,
    rows: Float32Array,
    lse: Float32Array,
    logits: Float32Array,
    targets: Int32Array,
    N: number,
    V: number,
    ignoreIndex: number,
    smoothing: number,
  ): void {
    if (N <= 0) return;
    const [bl, ol] = this.at(lse);
    const [bz, oz] = this.at(logits);
    const [bt, ot] = this.at(targets.subarray(0, N));
    const [br, or] = this.at(rows);
    const [bo, oo] = this.at(out);
    const fields = [u(N), u(V), u(ol), u(oz), u(ot), u(or), i(ignoreIndex), f(smoothing)];
    this.mem.dispatch(CE_ROWS, fields, [bl, bz, bt, br], grid(N));
    this.mem.dispatch(PAIR_SUM, [u(N), u(oo), u(or)], [bo, br], [1]);
  }

  /** dlogits[n, :] += gradScale · (softmax(logits[n]) − q), zero for ignored rows. */
  crossEntropyBackward(
    dlogits: Float32Array,
    logits: Float32Array,
    lse: Float32Array,
    targets: Int32Array,
    N: number,
    V: number,
    ignoreIndex: number,
    smoothing: number,
    gradScale: number,
  ): void {
    const n = N * V;
    if (n <= 0) return;
    const [bd, od] = this.at(dlogits);
    const [bz, oz] = this.at(logits);
    const [bl, ol] = this.at(lse);
    const [bt, ot] = this.at(targets.subarray(0, N));
    const fields = [u(n), u(V), u(od), u(oz), u(ol), u(ot), i(ignoreIndex), f(smoothing), f(gradScale)];
    this.mem.dispatch(CE_BACKWARD, fields, [bd, bz, bl, bt], grid(Math.ceil(n / WG)));
  }

  /** out[0] = Σ x[i]² over i < n (float32 partial sums, then a tree), on the device. */
  sumSquares(out: Float32Array, x: Float32Array, n: number): void {
    const [bo, oo] = this.at(out);
    const [bx, ox] = this.at(x);
    this.mem.dispatch(SUM_SQUARES, [u(n), u(oo), u(ox)], [bo, bx], [1]);
  }

  /**
   * One Adam(W) update of params[0..n) in place (backend.ts `adamStep`); with `gate` (GATE's
   * output), the gradients scaled by it, and nothing changed where it is 0.
   */
  adamStep(
    params: Float32Array,
    grads: Float32Array,
    m: Float32Array,
    v: Float32Array,
    n: number,
    opts: AdamParams,
    decayMask: Uint8Array | null,
    gate: Float32Array | null = null,
  ): void {
    if (n <= 0) return;
    const [bp, op] = this.at(params);
    const [bg, og] = this.at(grads);
    const [bm, om] = this.at(m);
    const [bv, ov] = this.at(v);
    const [bk, ok] = decayMask ? this.at(decayMask) : [this.mem.spare, 0];
    // Without a gate the gradients' buffer stands in (a float operand: the spare is the mask's).
    const [bq, oq] = gate ? this.at(gate) : [bg, 0];
    const { lr, beta1, beta2, eps, weightDecay, step } = opts;
    const fields = [u(n), u(op), u(og), u(om), u(ov), u(ok), u(+(decayMask !== null)), u(+(gate !== null)), u(oq)];
    fields.push(f(lr), f(beta1), f(beta2), f(eps), f(lr * weightDecay));
    fields.push(f(1 - Math.pow(beta1, step)), f(1 - Math.pow(beta2, step)));
    this.mem.dispatch(ADAM, fields, [bp, bg, bm, bv, bk, bq], grid(Math.ceil(n / WG)));
  }

  /** stats[3] = the gate of a step's update from stats[0] (loss sum) and stats[2] (Σ g²): see wgslPointwise.ts GATE. */
  gate(stats: Float32Array, clip: number): void {
    const [bs, os] = this.at(stats);
    this.mem.dispatch(GATE, [u(os), f(clip)], [bs], [1]);
  }

  /**
   * Muon's update of one hidden matrix (backend.ts `muonMatrix`), all on the device: momentum and
   * Nesterov blend into X (Xᵀ when tall), X/‖X‖_F, the Newton–Schulz iterations (A = X·Xᵀ and A·A
   * as full products: the tiled matmul sums every element in k order, so both are exactly
   * symmetric, the numbers of the host's half products), decay and the step.
   */
  muonMatrix(m: MuonMatrixUpdate, gate: Float32Array | null = null): void {
    const { rows, cols } = m;
    const n = rows * cols;
    if (n <= 0) return;
    const tall = rows > cols;
    const r = tall ? cols : rows;
    const c = tall ? rows : cols;
    const f32 = (x: unknown): Float32Array => x as Float32Array;
    const [bg, og] = this.at(f32(m.g));
    const [bb, ob] = this.at(f32(m.buf));
    const [bx, ox] = this.at(f32(m.x));
    const groups = grid(Math.ceil(n / WG));
    const shape = [u(n), u(rows), u(cols), u(+tall)];
    const [bk, ok] = gate ? this.at(gate) : [bg, 0];
    const gated = [u(+(gate !== null)), u(ok)];
    const momentum = [...shape, u(og), u(ob), u(ox), ...gated, f(m.beta)];
    this.mem.dispatch(MUON_MOMENTUM, momentum, [bg, bb, bx, bk], groups);
    this.muonNorm ??= this.mem.alloc(1);
    this.sumSquares(this.muonNorm, f32(m.x), n);
    const [bs, os] = this.at(this.muonNorm);
    this.mem.dispatch(MUON_NORMALIZE, [u(n), u(ox), u(os)], [bx, bs], groups);
    const [qa, qb, qc] = m.coeffs;
    let x = f32(m.x).subarray(0, n);
    let y = f32(m.y).subarray(0, n);
    const a = f32(m.a);
    const bbv = f32(m.bb);
    const [ba, oa] = this.at(a);
    const [bB, oB] = this.at(bbv);
    for (let it = 0; it < m.iterations; it++) {
      this.matmul(a, x, x, r, r, c, false, true, false); // A = X·Xᵀ
      this.matmul(bbv, a, a, r, r, r, false, true, false); // A·Aᵀ = A·A
      const rr = r * r;
      const fields = [u(rr), u(r), u(oa), u(oB), f(qa), f(qb), f(qc)];
      this.mem.dispatch(MUON_COMBINE, fields, [ba, bB], grid(Math.ceil(rr / WG)));
      this.matmul(y, bbv, x, r, c, r, false, false, false); // (a·I + B)·X
      [x, y] = [y, x];
    }
    const [bp, op] = this.at(f32(m.p));
    const [bo, oo] = this.at(x);
    const apply = [...shape, u(op), u(oo), u(+(m.keep !== null)), ...gated, f(m.keep ?? 1), f(m.step)];
    this.mem.dispatch(MUON_APPLY, apply, [bp, bo, bk], groups);
  }

  /** An attention mask's bytes, which the models fill on the host per batch: uploaded when they live here. */
  private bytes(data: Uint8Array | null): [GPUBuffer, number] {
    if (data === null) return [this.mem.spare, 0];
    if (this.mem.owns(data)) this.mem.upload(data);
    return this.at(data);
  }

  /** A dropout keep-mask, which lives on the device (`dropoutMask` writes it there): never uploaded. */
  private keepMask(keep: Uint8Array | null): [GPUBuffer, number] {
    return keep === null ? [this.mem.spare, 0] : this.at(keep);
  }

  private attentionFields(dims: AttentionDims, keep: Uint8Array | null, dropP: number, okeep: number): UniformField[] {
    const { B, T, S, H, D, qBatchStride, kvBatchStride, scale } = dims;
    const { Hkv, softCap } = attentionOptions(dims);
    const kappa = keep === null ? 1 : keepScale(dropP);
    return [
      u(B),
      u(T),
      u(S),
      u(H),
      u(D),
      u(Hkv),
      u(qBatchStride),
      u(kvBatchStride),
      f(scale),
      f(softCap),
      f(kappa),
    ].concat([u(+(keep !== null)), u(okeep)]);
  }

  /**
   * Fused multi-head attention forward (backend.ts `attentionForward`): probs [B,H,T,S] receives
   * the post-softmax, pre-dropout probabilities; `keep` (null without dropout) is read as bytes.
   */
  attentionForward(
    out: Float32Array,
    probs: Float32Array,
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    dims: AttentionDims,
    mask: MaskView | null,
    keep: Uint8Array | null,
    dropP: number,
  ): void {
    const { B, T, H } = dims;
    if (B * H * T <= 0) return;
    const opts = attentionOptions(dims);
    const [bk, okeep] = this.keepMask(keep);
    const [bm, omask] = this.bytes(mask ? mask.data : null);
    const [bo, oo] = this.at(out);
    const [bp, op] = this.at(probs);
    const [bq, oq] = this.at(q);
    const [bkk, ok] = this.at(k);
    const [bv, ov] = this.at(v);
    const alibi =
      opts.alibi === null || opts.alibi instanceof Float32Array ? opts.alibi : Float32Array.from(opts.alibi);
    const [ba, oa] = alibi ? this.at(alibi) : [bq, 0];
    const fields = this.attentionFields(dims, keep, dropP, okeep).concat([
      u(opts.qStart),
      u(+(opts.alibi !== null)),
      u(+(mask !== null)),
      u(omask),
      u(mask?.batchStride ?? 0),
      u(mask?.rowStride ?? 0),
      u(oo),
      u(op),
      u(oq),
      u(ok),
      u(ov),
      u(oa),
    ]);
    this.mem.dispatch(ATTENTION_FORWARD, fields, [bo, bp, bq, bkk, bv, ba, bm, bk], grid(B * H * T));
  }

  /**
   * Accumulates dq, dk, dv (backend.ts `attentionBackward`) in two passes: per query row (dz into
   * a scratch of probs' shape, and dq), then per key/value element (dk, dv).
   */
  attentionBackward(
    dq: Float32Array,
    dk: Float32Array,
    dv: Float32Array,
    dout: Float32Array,
    probs: Float32Array,
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    dims: AttentionDims,
    keep: Uint8Array | null,
    dropP: number,
  ): void {
    const { B, T, S, H, D } = dims;
    const { Hkv } = attentionOptions(dims);
    const rows = B * H * T;
    if (rows <= 0) return;
    if (!this.dz || this.dz.length < rows * S) this.dz = this.mem.alloc(rows * S);
    const [bz] = this.at(this.dz);
    const [bk, okeep] = this.keepMask(keep);
    const [bdq, odq] = this.at(dq);
    const [bdk, odk] = this.at(dk);
    const [bdv, odv] = this.at(dv);
    const [bdo, odo] = this.at(dout);
    const [bp, op] = this.at(probs);
    const [bq, oq] = this.at(q);
    const [bkk, ok] = this.at(k);
    const [bv, ov] = this.at(v);
    const base = this.attentionFields(dims, keep, dropP, okeep);
    const qFields = base.concat([u(odq), u(odo), u(op), u(oq), u(ok), u(ov)]);
    this.mem.dispatch(ATTENTION_BACKWARD_Q, qFields, [bdq, bdo, bp, bq, bkk, bv, bz, bk], grid(rows));
    const n = B * S * Hkv * D;
    const kvFields = base.concat([u(n), u(odk), u(odv), u(odo), u(op), u(oq)]);
    this.mem.dispatch(ATTENTION_BACKWARD_KV, kvFields, [bdk, bdv, bdo, bp, bq, bz, bk], grid(Math.ceil(n / WG)));
  }

  /** RoPE in place (backend.ts `rope`); inverse rotates by −angle (the backward, on a gradient). */
  rope(
    x: Float32Array,
    cos: Float32Array,
    sin: Float32Array,
    B: number,
    T: number,
    H: number,
    D: number,
    R: number,
    start: number,
    batchStride: number,
    rowStride: number,
    inverse: boolean,
  ): void {
    const half = R >> 1;
    const n = B * T * H * half;
    if (n <= 0) return;
    const [bx, ox] = this.at(x);
    const [bc, oc] = this.at(cos);
    const [bs, os] = this.at(sin);
    const fields = [u(n), u(T), u(H), u(D), u(half), u(start), u(batchStride), u(rowStride), u(ox), u(oc), u(os)];
    fields.push(f(inverse ? -1 : 1));
    this.mem.dispatch(ROPE, fields, [bx, bc, bs], grid(Math.ceil(n / WG)));
  }

  /**
   * keep[0..n) = the counter-hash dropout mask (backend.ts `dropoutMask`), written on the device:
   * `keep` must be allocated here (its host mirror is stale until downloaded).
   */
  dropoutMask(keep: Uint8Array, n: number, p: number, key0: number, key1: number): void {
    if (n <= 0) return;
    const r = this.mem.resolve(keep, false);
    const threshold = keepThreshold(p);
    const words = Math.ceil((r.offset + n) / 4) - Math.floor(r.offset / 4);
    const fields = [u(n), u(r.offset), u(key0 >>> 0), u(key1 >>> 0), u(threshold >= 2 ** 32 ? 0 : threshold)];
    fields.push(u(+(threshold >= 2 ** 32)), u(words));
    this.mem.dispatch(DROPOUT_MASK, fields, [r.buffer], grid(Math.ceil(words / WG)));
  }

  /** y = x · keep / (1 − p) (p = 0: a copy; keep ignored). */
  dropoutForward(y: Float32Array, x: Float32Array, keep: Uint8Array, n: number, p: number): void {
    this.dropout(0, y, x, keep, n, p);
  }

  /** dx += dy · keep / (1 − p) (p = 0: dx += dy). */
  dropoutBackward(dx: Float32Array, dy: Float32Array, keep: Uint8Array, n: number, p: number): void {
    this.dropout(1, dx, dy, keep, n, p);
  }

  private dropout(mode: number, o: Float32Array, a: Float32Array, keep: Uint8Array, n: number, p: number): void {
    if (n <= 0) return;
    const [bo, oo] = this.at(o);
    const [ba, oa] = this.at(a);
    // The mask is the device's (dropoutMask wrote it there): resolve it, never upload the stale mirror.
    const [bk, ok] = p === 0 ? [this.mem.spare, 0] : this.at(keep);
    const fields = [u(n), u(mode), u(+(p === 0)), u(oo), u(oa), u(ok), f(keepScale(p))];
    this.mem.dispatch(DROPOUT, fields, [bo, ba, bk], grid(Math.ceil(n / WG)));
  }
}
