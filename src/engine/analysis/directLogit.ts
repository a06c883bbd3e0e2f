/**
 * Direct logit attribution and the accumulated residual stream (Elhage et al. 2021, "A
 * Mathematical Framework for Transformer Circuits"; TransformerLens's `logit_attrs` and
 * `accumulated_resid`) of one decoder-only forward. The final stream is the sum of the
 * embeddings, every head's result z_h·W_o[:, h·D:(h+1)·D]ᵀ, every attention output bias and
 * every MLP's output; each term c is read at each position p through the final norm with the
 * statistics of THIS (the clean) run, which makes the norm linear, and onto the logit
 * direction W_U[answer] − W_U[wrong]:
 *   LayerNorm: rstd_p · ((c_p − mean(c_p)) ⊙ w) · (W_U[a] − W_U[b])
 *   RMSNorm:   rstd_p · (c_p ⊙ w) · (W_U[a] − W_U[b])
 * The biases of the final norm and of the unembedding belong to no component: they are
 * `excluded`, so Σ components + excluded = the logit difference before any logit soft-cap.
 * The accumulated residual is the same projection of resid_pre of every layer 0..L (the
 * logit lens of the metric; layer L + excluded is the model's own logit difference).
 *
 * An encoder-decoder's decoder stream is the same sum with each layer's cross-attention heads
 * (z_h of cross_z through the cross-attention's W_o) and its output bias added; the encoder has
 * no direct path to the logits (it reaches them only through those heads), so it has no term.
 *
 * Leaves out: post-norm models and postNorms (every layer's output passes through its own norm,
 * so the heads' results do not add up to the final stream: refused).
 *
 * Shape legend: T positions, C d_model, L decoder layers, H heads, D head size, V vocabulary.
 */

import type { FloatArray } from '../backend';
import { EngineError } from '../errors';
import type { Batch } from '../models/inputs';
import type { Captured } from './capture';
import { captureForward, capturedAt } from './capture';
import type { Transformer } from '../models/transformer';

/** Every component's contribution to logit[answer] − logit[wrong] at every position (float64, pre-cap). */
export interface DirectLogitResult {
  readonly T: number;
  readonly L: number;
  readonly H: number;
  /** The embeddings (token + position, after the embedding norm where there is one) [T]. */
  readonly embed: Float64Array;
  /** Each head's result [L, H, T]. */
  readonly heads: Float64Array;
  /** Each attention's output bias [L, T], or null when the attention has none. */
  readonly attnBias: Float64Array | null;
  /** An encoder-decoder's cross-attention heads' results [L, H, T], else null. */
  readonly crossHeads: Float64Array | null;
  /** An encoder-decoder's cross-attention output biases [L, T], else null (or none). */
  readonly crossBias: Float64Array | null;
  /** Each MLP's output [L, T]. */
  readonly mlp: Float64Array;
  /** The final norm's bias and the unembedding's bias, which no component owns [T]. */
  readonly excluded: Float64Array;
  /** resid_pre of layers 0..L projected the same way [L + 1, T] (without `excluded`). */
  readonly accumulated: Float64Array;
  /** The model's logit[answer] − logit[wrong] at every position, before the logit soft-cap [T]. */
  readonly logitDiff: Float64Array;
}

/** Refuses a model whose final stream is not a sum of its components read through one final norm. */
export function checkDecomposable(model: Transformer, what: string): void {
  if (model.config.postNorms)
    throw new EngineError(
      'input/invalid',
      `${what} needs the heads' results to add up to the final stream, and postNorms passes every sublayer's ` +
        'output through its own norm. Use attribution patching (--what attribution) instead.',
    );
  if (!model.decNorm)
    throw new EngineError(
      'input/invalid',
      `${what} needs a pre-norm model: in a post-norm model every layer ends in its own norm, so the layers' ` +
        'outputs do not add up to the final stream. Use attribution patching (--what attribution) instead.',
    );
}

/** The final norm read as linear with the clean run's statistics, onto one logit direction. */
interface Projection {
  /** (w ⊙ (W_U[a] − W_U[b])) [C]. */
  readonly dw: Float64Array;
  /** Σ dw (LayerNorm's centring subtracts mean(c) · Σ dw). */
  readonly sumDw: number;
  /** 1 / std (LayerNorm) or 1 / rms (RMSNorm) of the clean final stream per position [T]. */
  readonly rstd: Float64Array;
  readonly centre: boolean;
}

function projection(model: Transformer, top: FloatArray, T: number, answer: number, wrong: number): Projection {
  const norm = model.decNorm;
  if (!norm) throw new Error('checkDecomposable first');
  const C = model.config.dModel;
  const W = model.headW.data;
  const dw = new Float64Array(C);
  for (let i = 0; i < C; i++)
    dw[i] = ((W[answer * C + i] as number) - (W[wrong * C + i] as number)) * (norm.w ? (norm.w.data[i] as number) : 1);
  const centre = norm.type === 'layernorm';
  const rstd = new Float64Array(T);
  for (let p = 0; p < T; p++) {
    let mean = 0;
    if (centre) {
      for (let i = 0; i < C; i++) mean += top[p * C + i] as number;
      mean /= C;
    }
    let sq = 0;
    for (let i = 0; i < C; i++) sq += ((top[p * C + i] as number) - mean) ** 2;
    rstd[p] = 1 / Math.sqrt(sq / C + norm.eps);
  }
  return { dw, sumDw: dw.reduce((s, x) => s + x, 0), rstd, centre };
}

/** Writes the projection of c [T, C] at every position into out[off .. off + T). */
function project(pr: Projection, c: ArrayLike<number>, T: number, C: number, out: Float64Array, off: number): void {
  for (let p = 0; p < T; p++) {
    let dot = 0;
    let sum = 0;
    for (let i = 0; i < C; i++) {
      const x = c[p * C + i] as number;
      dot += x * (pr.dw[i] as number);
      sum += x;
    }
    out[off + p] = (pr.rstd[p] as number) * (pr.centre ? dot - (sum / C) * pr.sumDw : dot);
  }
}

/**
 * Each head's result of layer `layer`'s self-attention (or, `cross`, cross-attention) projected, into
 * heads[layer, h, ·], without forming z_h·W_oᵀ.
 */
function projectHeads(
  model: Transformer,
  acts: Captured,
  pr: Projection,
  layer: number,
  T: number,
  heads: Float64Array,
  cross = false,
): void {
  const blk = model.decoder[layer];
  const attn = cross ? blk?.crossAttn : blk?.selfAttn;
  if (!attn) throw new Error(`no layer ${layer}`);
  const { H, D } = attn;
  const C = model.config.dModel;
  const HD = attn.o.inF;
  const Wo = attn.o.w.data; // [C, H·D]
  const z = capturedAt(acts, cross ? 'cross_z' : 'z', layer); // [T, H·D]
  // Per column j of W_o: g_j = Σ_i W_o[i, j] dw_i and its mean over the C rows (LayerNorm's centring).
  const g = new Float64Array(HD);
  const m = new Float64Array(HD);
  for (let i = 0; i < C; i++)
    for (let j = 0; j < HD; j++) {
      const w = Wo[i * HD + j] as number;
      g[j] = (g[j] as number) + w * (pr.dw[i] as number);
      m[j] = (m[j] as number) + w / C;
    }
  for (let h = 0; h < H; h++)
    for (let p = 0; p < T; p++) {
      let dot = 0;
      let mean = 0;
      for (let j = h * D; j < (h + 1) * D; j++) {
        const x = z[p * HD + j] as number;
        dot += x * (g[j] as number);
        mean += x * (m[j] as number);
      }
      heads[(layer * H + h) * T + p] = (pr.rstd[p] as number) * (pr.centre ? dot - mean * pr.sumDw : dot);
    }
}

/**
 * Direct logit attribution of `batch` (one sequence) for logit[answer] − logit[wrong] (see the file
 * comment): runs one forward, its activations captured through the hook points (models/hooks.ts).
 */
export function directLogitAttribution(
  model: Transformer,
  batch: Batch,
  answer: number,
  wrong: number,
): DirectLogitResult {
  checkDecomposable(model, 'Direct logit attribution');
  const cfg = model.config;
  const { dModel: C, vocabSize: V, nHeads: H } = cfg;
  const L = model.decoder.length;
  const T = batch.T;
  if (batch.B !== 1) throw new Error('direct logit attribution reads one sequence');
  const encdec = cfg.kind === 'encoder-decoder';
  const acts = captureForward(model, batch, ['resid_pre', 'z', 'mlp_out', ...(encdec ? (['cross_z'] as const) : [])]);
  const pr = projection(model, capturedAt(acts, 'resid_pre', L), T, answer, wrong);
  const embed = new Float64Array(T);
  project(pr, capturedAt(acts, 'resid_pre', 0), T, C, embed, 0);
  const heads = new Float64Array(L * H * T);
  const mlp = new Float64Array(L * T);
  const attnBias = cfg.attnOutBias ? new Float64Array(L * T) : null;
  const crossHeads = encdec ? new Float64Array(L * H * T) : null;
  const crossBias = encdec && cfg.attnOutBias ? new Float64Array(L * T) : null;
  const projectBias = (b: { data: FloatArray }, out: Float64Array, l: number): void =>
    project(
      pr,
      Array.from({ length: T * C }, (_, i) => b.data[i % C] as number),
      T,
      C,
      out,
      l * T,
    );
  const accumulated = new Float64Array((L + 1) * T);
  for (let l = 0; l <= L; l++) project(pr, capturedAt(acts, 'resid_pre', l), T, C, accumulated, l * T);
  for (let l = 0; l < L; l++) {
    projectHeads(model, acts, pr, l, T, heads);
    project(pr, capturedAt(acts, 'mlp_out', l), T, C, mlp, l * T);
    const b = model.decoder[l]?.selfAttn.o.b;
    if (attnBias && b) projectBias(b, attnBias, l);
    if (crossHeads) projectHeads(model, acts, pr, l, T, crossHeads, true);
    const cb = model.decoder[l]?.crossAttn?.o.b;
    if (crossBias && cb) projectBias(cb, crossBias, l);
  }
  const excluded = new Float64Array(T);
  const norm = model.decNorm;
  let bias = model.headB ? (model.headB.data[answer] as number) - (model.headB.data[wrong] as number) : 0;
  if (norm?.b)
    for (let i = 0; i < C; i++) {
      const W = model.headW.data;
      bias += (norm.b.data[i] as number) * ((W[answer * C + i] as number) - (W[wrong * C + i] as number));
    }
  excluded.fill(bias);
  const cap = cfg.logitSoftCap;
  const logitDiff = new Float64Array(T);
  const preCap = (x: number): number => (cap > 0 ? cap * Math.atanh(x / cap) : x);
  for (let p0 = 0; p0 < T; p0 += model.logitRows) {
    const rows = Array.from({ length: Math.min(model.logitRows, T - p0) }, (_, i) => p0 + i);
    const logits = model.logitsAt(rows); // in chunks: [T, V] is never needed whole
    for (let i = 0; i < rows.length; i++)
      logitDiff[p0 + i] = preCap(logits[i * V + answer] as number) - preCap(logits[i * V + wrong] as number);
  }
  return { T, L, H, embed, heads, attnBias, crossHeads, crossBias, mlp, excluded, accumulated, logitDiff };
}
