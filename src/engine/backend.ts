/**
 * The kernel layer: every numeric loop the models run, behind one interface.
 *
 * Two implementations share these exact signatures: the `reference` backend
 * (`backends/reference.ts`, plain TypeScript, readable — the spec and the test oracle)
 * and the fast WebAssembly backend (`backends/wasm/`); the WebGPU kernels (`backends/webgpu/`)
 * follow the same contracts on a GPU (docs/ARCHITECTURE.md, "WebGPU"). Models never loop over numbers
 * themselves; they call kernels on preallocated arrays, so a training step allocates
 * nothing.
 *
 * Conventions shared by every kernel:
 * - Arrays are row-major. A kernel reads and writes only the prefix its sizes describe, so
 *   a buffer planned for the largest batch serves every smaller one.
 * - Forward kernels OVERWRITE their outputs.
 * - Backward kernels ACCUMULATE (`+=`) into every gradient they produce, inputs and
 *   parameters alike: the caller zeroes gradients once per step, and two branches that
 *   read one tensor (a residual, q/k/v from one input) simply add into one buffer.
 *   Two documented exceptions work in place on a gradient: `rope` (with inverse) and
 *   `softcapBackward`.
 * - Shape legend: N rows (= B·T), B batch, T query positions, S key positions, C channels
 *   (d_model), H heads, D head size (C / H unless headDim sets it), V vocabulary, I/O linear in/out features.
 * - Masks: 1 = may attend, 0 = masked (docs/ARCHITECTURE.md, "Masks"). A fully masked row gives zeros.
 */

/** A float buffer. The reference backend may run in float64 for exact gradient checks. */
export type FloatArray = Float32Array | Float64Array;

/**
 * A boolean attention mask broadcast to scores [B,H,T,S] without copying: the value for
 * (b, h, t, s) is `data[b * batchStride + t * rowStride + s]`, the same for every head.
 * A padding mask [B,1,1,S] has rowStride 0; a causal mask [1,1,T,T] has batchStride 0;
 * their combination [B,1,T,T] has both.
 */
export interface MaskView {
  readonly data: Uint8Array;
  readonly batchStride: number;
  readonly rowStride: number;
}

/** Shape and layout of one multi-head attention call. */
export interface AttentionDims {
  readonly B: number;
  readonly T: number; // query positions
  readonly S: number; // key/value positions
  readonly H: number;
  readonly D: number; // head size; C = H * D
  /** Elements between batch items in q/out (normally T * C). */
  readonly qBatchStride: number;
  /** Elements between batch items in k/v (S·Hkv·D, or maxT·Hkv·D for a key/value cache). */
  readonly kvBatchStride: number;
  /** Softmax scale, normally 1 / sqrt(D). */
  readonly scale: number;
  /**
   * Key/value heads (grouped-query attention; 1 = multi-query): query head h reads kv head
   * floor(h / (H / Hkv)), and k/v rows are Hkv·D wide. Must divide H. Default H.
   */
  readonly Hkv?: number;
  /** Soft-cap c of the scaled scores: s = c·tanh(s/c) before ALiBi and the mask; 0 or absent = off. */
  readonly softCap?: number;
  /** ALiBi slopes [H]: s += slope[h]·(j − (qStart + t)) for key j, query row t; null or absent = none. */
  readonly alibi?: FloatArray | null;
  /** Absolute position of query row t = 0 (keys are at 0..S−1); default 0. ALiBi's distances use it. */
  readonly qStart?: number;
}

/** Hyper-parameters of one Adam/AdamW update over a contiguous parameter range. */
export interface AdamParams {
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  /** Decoupled weight decay (AdamW); 0 for plain Adam. */
  readonly weightDecay: number;
  /** 1-based step count, for bias correction. */
  readonly step: number;
}

/**
 * The kernels. Every `*Backward` accumulates into its gradient outputs (see file header).
 */
export interface Kernels {
  /** x[0..n) = value. */
  fill(x: FloatArray, n: number, value: number): void;
  /** x[0..n) *= s. */
  scale(x: FloatArray, n: number, s: number): void;
  /** out = a + b over n elements (out may alias a or b). */
  add(out: FloatArray, a: FloatArray, b: FloatArray, n: number): void;
  /** Sum of squares of x[0..n), accumulated in float64 (used for the global grad norm). */
  sumSquares(x: FloatArray, n: number): number;

  /**
   * C[M,N] = (accumulate ? C : 0) + op(A) · op(B).
   * op(A) is A stored [M,K], or with transA Aᵀ where A is stored [K,M].
   * op(B) is B stored [K,N], or with transB Bᵀ where B is stored [N,K].
   */
  matmul(
    c: FloatArray,
    a: FloatArray,
    b: FloatArray,
    M: number,
    N: number,
    K: number,
    transA: boolean,
    transB: boolean,
    accumulate: boolean,
  ): void;
  /** y[r, c] += bias[c] for r < rows, c < cols. */
  addBias(y: FloatArray, bias: FloatArray, rows: number, cols: number): void;
  /** dbias[c] += Σ_r dy[r, c]. */
  biasBackward(dbias: FloatArray, dy: FloatArray, rows: number, cols: number): void;

  /**
   * out[n, :] = table[ids[n], :] · scale.
   */
  embeddingForward(out: FloatArray, ids: Int32Array, table: FloatArray, N: number, C: number, scale: number): void;
  /**
   * dtable[ids[n], :] += dout[n, :] · scale, except rows whose id equals paddingIdx
   * (pass -1 for none): the padding embedding gets no gradient.
   */
  embeddingBackward(
    dtable: FloatArray,
    dout: FloatArray,
    ids: Int32Array,
    N: number,
    C: number,
    scale: number,
    paddingIdx: number,
  ): void;
  /** x[b, t, :] += pe[start + t, :] (positional encoding, sinusoidal or learned). */
  positionalForward(x: FloatArray, pe: FloatArray, B: number, T: number, C: number, start: number): void;
  /** dpe[start + t, :] += Σ_b dx[b, t, :] (learned positions only). */
  positionalBackward(dpe: FloatArray, dx: FloatArray, B: number, T: number, C: number, start: number): void;

  /**
   * y = (x - mean) · rstd · w + b per row of C, with mean/rstd [N] saved for backward.
   * `b` is null for a LayerNorm without bias. rstd = 1 / sqrt(var + eps), biased variance.
   */
  layernormForward(
    y: FloatArray,
    mean: FloatArray,
    rstd: FloatArray,
    x: FloatArray,
    w: FloatArray,
    b: FloatArray | null,
    N: number,
    C: number,
    eps: number,
  ): void;
  /** Accumulates dx, dw and (unless null) db. */
  layernormBackward(
    dx: FloatArray,
    dw: FloatArray,
    db: FloatArray | null,
    dy: FloatArray,
    x: FloatArray,
    mean: FloatArray,
    rstd: FloatArray,
    w: FloatArray,
    N: number,
    C: number,
  ): void;

  /** RMSNorm: y = x · rstd · w per row of C (w null: no scale); rstd [N] = 1/sqrt(mean(x²)+eps), saved. */
  rmsnormForward(
    y: FloatArray,
    rstd: FloatArray,
    x: FloatArray,
    w: FloatArray | null,
    N: number,
    C: number,
    eps: number,
  ): void;
  /** Accumulates dx and (unless null) dw. */
  rmsnormBackward(
    dx: FloatArray,
    dw: FloatArray | null,
    dy: FloatArray,
    x: FloatArray,
    rstd: FloatArray,
    w: FloatArray | null,
    N: number,
    C: number,
  ): void;
  /**
   * RoPE in place on x; element (b, t, h, c) at b·batchStride + t·rowStride + h·D + c; position
   * p = start + t; tables cos/sin [positions, R/2]. inverse = rotate by −angle (the backward, applied
   * in place to a gradient). An exception to "backward accumulates": documented as in place.
   */
  rope(
    x: FloatArray,
    cos: FloatArray,
    sin: FloatArray,
    B: number,
    T: number,
    H: number,
    D: number,
    R: number,
    start: number,
    batchStride: number,
    rowStride: number,
    inverse: boolean,
  ): void;

  /** y = max(x, 0). */
  reluForward(y: FloatArray, x: FloatArray, n: number): void;
  reluBackward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void;
  /** Exact GELU: y = x · Φ(x) = 0.5 · x · (1 + erf(x / √2)) (not the tanh approximation). */
  geluForward(y: FloatArray, x: FloatArray, n: number): void;
  geluBackward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void;
  /** GPT-2's tanh GELU: y = 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))) (gelu_new). */
  geluTanhForward(y: FloatArray, x: FloatArray, n: number): void;
  geluTanhBackward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void;

  /** SiLU: y = x · σ(x). */
  siluForward(y: FloatArray, x: FloatArray, n: number): void;
  siluBackward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void;
  /** Squared ReLU: y = max(x, 0)². */
  relu2Forward(y: FloatArray, x: FloatArray, n: number): void;
  relu2Backward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void;
  /** out = a ⊙ b (accumulate: out += a ⊙ b). out may alias a or b when not accumulating. */
  mul(out: FloatArray, a: FloatArray, b: FloatArray, n: number, accumulate: boolean): void;
  /** y = cap·tanh(x/cap) (y may alias x). */
  softcapForward(y: FloatArray, x: FloatArray, n: number, cap: number): void;
  /** In place: d[i] *= 1 − (y[i]/cap)², y the capped output (not accumulating; documented). */
  softcapBackward(d: FloatArray, y: FloatArray, n: number, cap: number): void;

  /**
   * keep[i] = 1 with probability 1 − p, else 0, for i < n (overwrites keep[0..n)): the
   * counter-based mask of ops/dropout.ts, keep[i] = hash(key0, key1, i) ≥ ⌈p · 2³²⌉, a pure
   * function of its arguments (the same bytes on every backend and thread count). The key
   * words (taken mod 2³²) come from the caller's Rng: see `drawKeepMask` (ops/dropout.ts).
   */
  dropoutMask(keep: Uint8Array, n: number, p: number, key0: number, key1: number): void;
  /** y = x · keep / (1 - p), keep[i] ∈ {0, 1} from `dropoutMask` (see `ops/dropout.ts`). */
  dropoutForward(y: FloatArray, x: FloatArray, keep: Uint8Array, n: number, p: number): void;
  dropoutBackward(dx: FloatArray, dy: FloatArray, keep: Uint8Array, n: number, p: number): void;

  /**
   * Row-wise softmax over `cols`, with an optional mask applied before it (masked entries
   * get probability exactly 0; a fully masked row is all zeros, never NaN). Numerically
   * stable (max subtracted). Rows are grouped [batch, rowsPerBatch]; the mask element for
   * (row r, col c) is mask.data[floor(r / rowsPerBatch) * batchStride + (r % rowsPerBatch) * rowStride + c].
   * (Rows laid out [B, H, T] would mix the head into the mask row: apply a [B,1,T,S] mask
   * per head, or use the fused attentionForward, which broadcasts over heads itself.)
   */
  softmaxForward(
    y: FloatArray,
    x: FloatArray,
    rows: number,
    cols: number,
    mask: MaskView | null,
    rowsPerBatch: number,
  ): void;
  /** dx += y ⊙ (dy − Σ_c dy·y) per row. */
  softmaxBackward(dx: FloatArray, dy: FloatArray, y: FloatArray, rows: number, cols: number): void;

  /**
   * Fused multi-head scaled dot-product attention (Vaswani et al. §3.2.1–3.2.2):
   * for each b, h, t: p = softmax_mask(scale · q[b,t,h] · k[b,:,h]ᵀ) over s < S;
   * out[b,t,h·D:(h+1)·D] = Σ_s (p[s] · keep[s] / (1 − dropP)) · v[b,s,h].
   * q/out are [B, T, C] with batch stride qBatchStride; k/v are [B, S, Hkv·D] with batch
   * stride kvBatchStride (Hkv = H unless dims.Hkv says otherwise: grouped-query attention);
   * the optional dims.softCap and dims.alibi change the scores (see AttentionDims) in the
   * order scale → soft-cap → ALiBi → mask; probs [B,H,T,S] (contiguous) receives the post-softmax,
   * pre-dropout probabilities (what the dashboard shows, and what backward needs).
   * `keep` [B,H,T,S] is null when dropout is off (dropP = 0).
   */
  attentionForward(
    out: FloatArray,
    probs: FloatArray,
    q: FloatArray,
    k: FloatArray,
    v: FloatArray,
    dims: AttentionDims,
    mask: MaskView | null,
    keep: Uint8Array | null,
    dropP: number,
  ): void;
  /**
   * Accumulates dq, dk, dv from dout, using the probs (and keep) saved by forward (with a
   * soft-cap, the capped scores are recomputed from q and k). A kv head's dk/dv receive
   * the sum over every query head of its group.
   */
  attentionBackward(
    dq: FloatArray,
    dk: FloatArray,
    dv: FloatArray,
    dout: FloatArray,
    probs: FloatArray,
    q: FloatArray,
    k: FloatArray,
    v: FloatArray,
    dims: AttentionDims,
    keep: Uint8Array | null,
    dropP: number,
  ): void;

  /**
   * Cross-entropy over logits [N, V] with integer targets [N], label smoothing ε as
   * PyTorch's CrossEntropyLoss computes it: per row, with lse = logsumexp(logits),
   * loss = (1 − ε)(lse − logits[t]) + ε · (lse − mean(logits)). Rows whose target equals
   * ignoreIndex (pass -1 for none) contribute nothing. Saves lse [N] for backward.
   * Returns the summed loss over counted rows and the number of counted rows.
   */
  crossEntropyForward(
    lse: FloatArray,
    logits: FloatArray,
    targets: Int32Array,
    N: number,
    V: number,
    ignoreIndex: number,
    smoothing: number,
  ): { sum: number; count: number };
  /**
   * dlogits[n, :] += gradScale · (softmax(logits[n]) − ((1 − ε)·onehot(t) + ε / V)),
   * zero for ignored rows. For the mean loss, gradScale = 1 / count.
   */
  crossEntropyBackward(
    dlogits: FloatArray,
    logits: FloatArray,
    lse: FloatArray,
    targets: Int32Array,
    N: number,
    V: number,
    ignoreIndex: number,
    smoothing: number,
    gradScale: number,
  ): void;

  /**
   * One Adam(W) update (Kingma & Ba, Alg. 1; Loshchilov & Hutter for decoupled decay) of
   * params[0..n) in place, with moment buffers m, v. Decay applies where decayMask[i] = 1
   * (weight matrices; not biases, norms or — by nanoGPT's convention — nothing 1-D);
   * decayMask null = decay nowhere.
   * p ← p − lr·wd·p (if decayed); m ← β1 m + (1−β1) g; v ← β2 v + (1−β2) g²;
   * p ← p − lr · (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + eps).
   */
  adamStep(
    params: FloatArray,
    grads: FloatArray,
    m: FloatArray,
    v: FloatArray,
    n: number,
    opts: AdamParams,
    decayMask: Uint8Array | null,
  ): void;
}

/** A set of kernels plus the allocator whose buffers they can use without copies. */
export interface Backend extends Kernels {
  readonly name: string;
  /** Allocates a zeroed float buffer of n elements that this backend's kernels accept. */
  alloc(n: number): FloatArray;
  /**
   * Allocates a zeroed byte buffer of n elements (masks, dropout keep-masks) that this
   * backend's kernels read and write in place. Optional: without it, callers use a plain
   * Uint8Array, which every kernel accepts (a backend with its own memory copies it in).
   */
  allocBytes?(n: number): Uint8Array;
  /**
   * The most floats one `alloc` may hold (a GPU's largest storage buffer), absent where memory is the
   * only limit: plan.ts's Arena then splits the activations into allocations of at most this many.
   */
  readonly maxAllocFloats?: number;
  /**
   * A backend whose memory lives on a device (WebGPU): Muon's update of one hidden matrix there
   * (optim/optimizer.ts: momentum, Newton–Schulz, decay and step), so no host loop reads its
   * buffers. Absent: the optimizer runs those loops on the host arrays.
   */
  muonMatrix?(m: MuonMatrixUpdate): void;
  /**
   * A backend whose memory lives on a device (WebGPU): dst[0..n) = src[0..n), recorded on the
   * device (two views of one buffer must not overlap). Absent: the host copies (`dst.set`).
   */
  copy?(dst: FloatArray, src: FloatArray, n: number): void;
  /**
   * A backend whose memory lives on a device: runs what was recorded, then copies `view` from the
   * device into its host array. Absent: the host arrays are the memory (nothing to wait for).
   */
  download?(view: FloatArray): Promise<void>;
}

/** One hidden matrix's Muon update (`Backend.muonMatrix`; the math is optim/optimizer.ts's file comment). */
export interface MuonMatrixUpdate {
  readonly rows: number;
  readonly cols: number;
  /** The parameters, gradients and momentum buffer [rows·cols]. */
  readonly p: FloatArray;
  readonly g: FloatArray;
  readonly buf: FloatArray;
  /** Newton–Schulz scratch: X and the next X [rows·cols], A and B [min(rows, cols)²]. */
  readonly x: FloatArray;
  readonly y: FloatArray;
  readonly a: FloatArray;
  readonly bb: FloatArray;
  /** Momentum β; the factor the parameters keep under decay (null: no decay); the step's scale. */
  readonly beta: number;
  readonly keep: number | null;
  readonly step: number;
  /** Newton–Schulz coefficients (a, b, c) and iterations. */
  readonly coeffs: readonly [number, number, number];
  readonly iterations: number;
}

/** dst[0..n) = src[0..n) on `k`'s memory: on the device where it has one, else on the host. */
export function copyOn(k: Backend, dst: FloatArray, src: FloatArray, n: number): void {
  if (k.copy) k.copy(dst, src, n);
  else (dst as Float32Array).set(src.subarray(0, n));
}
