/**
 * A second, deliberately naive implementation of both models' forward pass — plain loops in
 * float64 over the parameters read by name — written from the semantics of issue 29's shared
 * decisions (norms, feed-forward activations, parallel residual, embedding norm, logit soft-cap),
 * so the model's logits can be checked against something that shares none of its code. Causal
 * and source masks only: the batches it is given have no padding.
 *
 * Attention takes grouped-query heads, headDim and attnScale (issue 30).
 *
 * Leaves out: dropout, the exact GELU (no erf in JavaScript) and the positions of m-attn's options.
 */

import type { ModelConfig } from '../../../../src/engine/config';
import { sinusoidalTable } from '../../../../src/engine/ops/embedding';

type Vec = number[];
type Mat = Vec[]; // rows

/** What the naive model reads of a model: its config and a parameter's values by name (null when absent). */
export interface NaiveSource {
  readonly config: ModelConfig;
  get(name: string): ArrayLike<number> | null;
}

function need(src: NaiveSource, name: string): ArrayLike<number> {
  const p = src.get(name);
  if (!p) throw new Error(`naive model: no parameter ${name}`);
  return p;
}

/** y = x Wᵀ + b for W [O, I] stored row-major (the bias `${name}.bias` unless another is named). */
function linear(src: NaiveSource, name: string, x: Mat, O: number, biasName = `${name}.bias`): Mat {
  const w = need(src, `${name}.weight`);
  const b = src.get(biasName);
  return x.map((row) => {
    const I = row.length;
    const out: Vec = [];
    for (let o = 0; o < O; o++) {
      let s = b ? (b[o] as number) : 0;
      for (let i = 0; i < I; i++) s += (row[i] as number) * (w[o * I + i] as number);
      out.push(s);
    }
    return out;
  });
}

function norm(src: NaiveSource, name: string, x: Mat): Mat {
  const c = src.config;
  const w = src.get(`${name}.weight`);
  const b = src.get(`${name}.bias`);
  return x.map((row) => {
    const C = row.length;
    if (c.normType === 'rmsnorm') {
      const ms = row.reduce((a, v) => a + v * v, 0) / C;
      const r = 1 / Math.sqrt(ms + c.layerNormEps);
      return row.map((v, i) => v * r * (w ? (w[i] as number) : 1));
    }
    const mean = row.reduce((a, v) => a + v, 0) / C;
    const vr = row.reduce((a, v) => a + (v - mean) ** 2, 0) / C;
    const r = 1 / Math.sqrt(vr + c.layerNormEps);
    return row.map((v, i) => (v - mean) * r * (w ? (w[i] as number) : 1) + (b ? (b[i] as number) : 0));
  });
}

const geluTanh = (x: number): number => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
const silu = (x: number): number => x / (1 + Math.exp(-x));

function act(name: ModelConfig['activation'], x: number): number {
  switch (name) {
    case 'relu':
      return Math.max(x, 0);
    case 'relu2':
      return Math.max(x, 0) ** 2;
    case 'silu':
    case 'swiglu':
      return silu(x);
    case 'geluTanh':
    case 'geglu':
      return geluTanh(x);
    default:
      throw new Error(`naive model: no ${name}`);
  }
}

function mlp(src: NaiveSource, names: { up: string; gate: string; down: string }, x: Mat): Mat {
  const c = src.config;
  const up = linear(src, names.up, x, c.dFF);
  const gated = c.activation === 'swiglu' || c.activation === 'geglu';
  const gate = gated ? linear(src, names.gate, x, c.dFF) : null;
  const a = up.map((row, t) =>
    row.map((u, f) => (gate ? act(c.activation, gate[t]?.[f] as number) * u : act(c.activation, u))),
  );
  return linear(src, names.down, a, c.dModel);
}

/** Multi-head attention of queries xq over xkv; query t sees key s when `causal` is off or s ≤ t. */
function attention(
  src: NaiveSource,
  p: { q: string; k: string; v: string; o: string },
  xq: Mat,
  xkv: Mat,
  causal: boolean,
): Mat {
  const c = src.config;
  const C = c.dModel;
  const H = c.nHeads;
  // Head size and scale written out from ROUND30's decisions, not read from the engine's headSize.
  const D = c.headDim > 0 ? c.headDim : C / H;
  const Hkv = c.nKvHeads > 0 ? c.nKvHeads : H;
  const scale = c.attnScale > 0 ? c.attnScale : 1 / Math.sqrt(D);
  const q = linear(src, p.q, xq, H * D);
  const k = linear(src, p.k, xkv, Hkv * D);
  const v = linear(src, p.v, xkv, Hkv * D);
  const att: Mat = xq.map(() => new Array<number>(H * D).fill(0));
  for (let h = 0; h < H; h++) {
    const g = Math.floor(h / (H / Hkv)); // the key/value head query head h reads
    for (let t = 0; t < xq.length; t++) {
      const S = causal ? t + 1 : xkv.length;
      const s: Vec = [];
      for (let j = 0; j < S; j++) {
        let d = 0;
        for (let e = 0; e < D; e++) d += (q[t]?.[h * D + e] as number) * (k[j]?.[g * D + e] as number);
        s.push(d * scale);
      }
      const m = Math.max(...s);
      const ex = s.map((x) => Math.exp(x - m));
      const z = ex.reduce((a, b) => a + b, 0);
      for (let j = 0; j < S; j++)
        for (let e = 0; e < D; e++)
          (att[t] as Vec)[h * D + e] += ((ex[j] as number) / z) * (v[j]?.[g * D + e] as number);
    }
  }
  return linear(src, p.o, att, C);
}

const add = (...xs: Mat[]): Mat =>
  (xs[0] as Mat).map((row, t) => row.map((_, i) => xs.reduce((a, x) => a + (x[t]?.[i] as number), 0)));

/** One stack's layer: its sublayers (each x → f(x)) wired by the config's norm placement. */
function layer(src: NaiveSource, norms: readonly string[], subs: readonly ((x: Mat) => Mat)[], x: Mat): Mat {
  const c = src.config;
  if (c.norm === 'pre' && c.parallelResidual) return add(x, ...subs.map((f, i) => f(norm(src, norms[i] as string, x))));
  let y = x;
  subs.forEach((f, i) => {
    const n = norms[i] as string;
    if (c.norm === 'pre') {
      const out = f(norm(src, n, y));
      y = add(y, c.postNorms ? norm(src, `${n}_post`, out) : out); // Gemma's sandwich: a norm on the output too
    } else y = norm(src, n, add(y, f(y)));
  });
  return y;
}

function embed(src: NaiveSource, ids: ArrayLike<number>, table: string, positions: string, normName: string): Mat {
  const c = src.config;
  const C = c.dModel;
  const tab = need(src, table);
  const pe =
    c.positional === 'sinusoidal'
      ? sinusoidalTable(c.maxLen, C)
      : c.positional === 'learned'
        ? need(src, positions)
        : null;
  const scale = c.embedScale ? Math.sqrt(C) : 1;
  const x = Array.from(ids, (id, t) =>
    Array.from({ length: C }, (_, i) => (tab[id * C + i] as number) * scale + (pe ? (pe[t * C + i] as number) : 0)),
  );
  return c.embedNorm ? norm(src, normName, x) : x;
}

/** Logits [T][V] of one sequence (decoder-only: `ids`; encoder-decoder: `srcIds` encoded, `ids` decoded). */
export function naiveLogits(src: NaiveSource, ids: ArrayLike<number>, srcIds?: ArrayLike<number>): Mat {
  const c = src.config;
  const V = c.vocabSize;
  let logits: Mat;
  if (c.kind === 'decoder-only') {
    let x = embed(src, ids, 'transformer.wte.weight', 'transformer.wpe.weight', 'transformer.ln_e');
    for (let i = 0; i < c.nDecoderLayers; i++) {
      const p = `transformer.h.${i}`;
      const attn = (h: Mat): Mat =>
        attention(
          src,
          { q: `${p}.attn.c_attn_q`, k: `${p}.attn.c_attn_k`, v: `${p}.attn.c_attn_v`, o: `${p}.attn.c_proj` },
          h,
          h,
          true,
        );
      const ff = (h: Mat): Mat =>
        mlp(src, { up: `${p}.mlp.c_fc`, gate: `${p}.mlp.c_gate`, down: `${p}.mlp.c_proj` }, h);
      x = layer(src, [`${p}.ln_1`, `${p}.ln_2`], [attn, ff], x);
    }
    if (c.norm === 'pre') x = norm(src, 'transformer.ln_f', x);
    logits = linear(src, c.tieEmbeddings ? 'transformer.wte' : 'lm_head', x, V);
  } else {
    if (!srcIds) throw new Error('naive model: an encoder-decoder needs source ids');
    const names = (p: string, n: string): { q: string; k: string; v: string; o: string } => ({
      q: `${p}.${n}.W_q`,
      k: `${p}.${n}.W_k`,
      v: `${p}.${n}.W_v`,
      o: `${p}.${n}.W_o`,
    });
    const ffNames = (p: string): { up: string; gate: string; down: string } => ({
      up: `${p}.feed_forward.fc1`,
      gate: `${p}.feed_forward.gate`,
      down: `${p}.feed_forward.fc2`,
    });
    let m = embed(src, srcIds, 'encoder_embedding.weight', 'encoder_positions.weight', 'encoder_embedding_norm');
    for (let i = 0; i < c.nEncoderLayers; i++) {
      const p = `encoder_layers.${i}`;
      const self = (h: Mat): Mat => attention(src, names(p, 'self_attn'), h, h, false);
      m = layer(src, [`${p}.norm1`, `${p}.norm2`], [self, (h) => mlp(src, ffNames(p), h)], m);
    }
    if (c.norm === 'pre') m = norm(src, 'encoder_norm', m);
    let x = embed(src, ids, 'decoder_embedding.weight', 'decoder_positions.weight', 'decoder_embedding_norm');
    for (let i = 0; i < c.nDecoderLayers; i++) {
      const p = `decoder_layers.${i}`;
      const self = (h: Mat): Mat => attention(src, names(p, 'self_attn'), h, h, true);
      const cross = (h: Mat): Mat => attention(src, names(p, 'cross_attn'), h, m, false);
      x = layer(src, [`${p}.norm1`, `${p}.norm2`, `${p}.norm3`], [self, cross, (h) => mlp(src, ffNames(p), h)], x);
    }
    if (c.norm === 'pre') x = norm(src, 'decoder_norm', x);
    logits = linear(src, c.tieEmbeddings ? 'decoder_embedding' : 'fc', x, V, 'fc.bias');
  }
  const cap = c.logitSoftCap;
  return cap > 0 ? logits.map((row) => row.map((z) => cap * Math.tanh(z / cap))) : logits;
}
