/**
 * The TensorFlow.js comparison of the benchmark: the tiny-decoder (nanoGPT's architecture:
 * learned positions, pre-LN blocks, causal multi-head attention, exact-GELU MLP, tied
 * embeddings) written with @tensorflow/tfjs-core ops on its WebAssembly backend
 * (@tensorflow/tfjs-backend-wasm, SIMD; its threads are unavailable in Node), trained with
 * tf.train.adam on the same random batches. Training tokens/s per step after warm-up.
 *
 * Differences forced by the library, which favour neither side much: the token embedding is
 * a one-hot matmul (the wasm backend has no UnsortedSegmentSum kernel, which gather's
 * gradient needs), Adam instead of AdamW (tfjs has no decoupled decay), and no gradient
 * clipping.
 *
 * It runs in its own process (benchTfjsMain.ts, bundled separately as dist/benchTfjs.js by scripts/build.mjs),
 * so tfjs and its global engine never load into the CLI or the extension.
 *
 * Leaves out: decoding and the other configs (one training config is enough to compare).
 */

import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
// tfjs-core's Node bundle registers no gradients; the umbrella @tensorflow/tfjs would. These
// register into tfjs's global registry, shared with the Node bundle.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import type { Stats } from './benchRun';
import { summarize } from './benchRun';

type Tensor = tf.Tensor;
type Variable = tf.Variable;

/** tiny-decoder's sizes (benchConfigs.ts). */
const V = 256,
  C = 64,
  H = 4,
  L = 2,
  F = 256,
  T = 64,
  B = 32;

/** Starts tfjs's wasm backend, loading its .wasm files from `wasmDir`; returns why not on failure. */
async function startWasm(wasmDir: string): Promise<string | null> {
  setWasmPaths(wasmDir.endsWith(path.sep) ? wasmDir : wasmDir + path.sep);
  if (!(await tf.setBackend('wasm'))) return 'tfjs could not start its wasm backend';
  await tf.ready();
  return null;
}

interface Params {
  readonly wte: Variable;
  readonly wpe: Variable;
  readonly blocks: readonly Record<
    'g1' | 'b1' | 'wqkv' | 'bqkv' | 'wo' | 'bo' | 'g2' | 'b2' | 'wfc' | 'bfc' | 'wproj' | 'bproj',
    Variable
  >[];
  readonly gf: Variable;
  readonly bf: Variable;
}

function initParams(): Params {
  const n = (shape: number[], std = 0.02): Variable => tf.variable(tf.randomNormal(shape, 0, std, 'float32', 7));
  const k = (shape: number[], v: number): Variable => tf.variable(tf.fill(shape, v));
  const blocks = Array.from({ length: L }, () => ({
    g1: k([C], 1),
    b1: k([C], 0),
    wqkv: n([C, 3 * C]),
    bqkv: k([3 * C], 0),
    wo: n([C, C], 0.02 / Math.sqrt(2 * L)),
    bo: k([C], 0),
    g2: k([C], 1),
    b2: k([C], 0),
    wfc: n([C, F]),
    bfc: k([F], 0),
    wproj: n([F, C], 0.02 / Math.sqrt(2 * L)),
    bproj: k([C], 0),
  }));
  return { wte: n([V, C]), wpe: n([T, C]), blocks, gf: k([C], 1), bf: k([C], 0) };
}

function layerNorm(x: Tensor, g: Tensor, b: Tensor): Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, 1e-5))), g), b);
}

/** Mean cross-entropy of the tiny decoder on (idx, targets), both [B·T] int32. */
function loss(p: Params, idx: Tensor, targets: Tensor, causalBias: Tensor): tf.Scalar {
  const D = C / H;
  const emb = tf.matMul(tf.cast(tf.oneHot(idx, V), 'float32'), p.wte);
  let x = tf.add(tf.reshape(emb, [B, T, C]), p.wpe); // [B,T,C]
  const heads = (t: Tensor): Tensor => tf.transpose(tf.reshape(t, [B, T, H, D]), [0, 2, 1, 3]); // [B,H,T,D]
  for (const blk of p.blocks) {
    const h = tf.reshape(layerNorm(x, blk.g1, blk.b1), [B * T, C]);
    const qkv = tf.add(tf.matMul(h, blk.wqkv), blk.bqkv); // [B·T, 3C]: q, k, v side by side
    const [q, k, v] = tf.split(qkv, 3, 1).map(heads) as [Tensor, Tensor, Tensor];
    const att = tf.softmax(tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(D)), causalBias));
    const y = tf.reshape(tf.transpose(tf.matMul(att, v), [0, 2, 1, 3]), [B * T, C]);
    x = tf.add(x, tf.reshape(tf.add(tf.matMul(y, blk.wo), blk.bo), [B, T, C]));
    const h2 = tf.reshape(layerNorm(x, blk.g2, blk.b2), [B * T, C]);
    const u = tf.add(tf.matMul(h2, blk.wfc), blk.bfc);
    const gelu = tf.mul(tf.mul(u, 0.5), tf.add(tf.erf(tf.mul(u, Math.SQRT1_2)), 1));
    x = tf.add(x, tf.reshape(tf.add(tf.matMul(gelu, blk.wproj), blk.bproj), [B, T, C]));
  }
  const logits = tf.matMul(tf.reshape(layerNorm(x, p.gf, p.bf), [B * T, C]), p.wte, false, true);
  return tf.losses.softmaxCrossEntropy(tf.oneHot(targets, V), logits) as tf.Scalar;
}

/** tfjs wasm training tokens/s on tiny-decoder (wasm files from `wasmDir`), or the reason it could not run. */
export async function measureTfjsTraining(
  wasmDir: string,
  warmup: number,
  steps: number,
  now: () => number,
): Promise<{ backend: string; train: Stats } | string> {
  const failed = await startWasm(wasmDir);
  if (failed !== null) return failed;
  const params = initParams();
  const rand = (): Tensor => tf.randomUniform([B * T], 4, V, 'int32', 3);
  const idx = rand();
  const targets = rand();
  const causalBias = tf.tensor2d(
    Array.from({ length: T * T }, (_, i) => (i % T <= Math.floor(i / T) ? 0 : -1e9)),
    [T, T],
  );
  const opt = tf.train.adam(1e-3, 0.9, 0.99, 1e-8);
  const rates: number[] = [];
  for (let i = 0; i < warmup + steps; i++) {
    const t0 = now();
    const l = opt.minimize(() => loss(params, idx, targets, causalBias), true);
    l?.dataSync();
    l?.dispose();
    const dt = (now() - t0) / 1000;
    if (i >= warmup) rates.push((B * T) / dt);
  }
  const backend = tf.getBackend();
  tf.disposeVariables();
  opt.dispose();
  for (const t of [idx, targets, causalBias]) t.dispose();
  return { backend, train: summarize(rates) };
}
