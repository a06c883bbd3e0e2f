/**
 * Attribution patching (Nanda 2023, "Attribution Patching: Activation Patching At Industrial
 * Scale"; Syed et al. 2023): the first-order estimate of every activation patch of the
 * denoising sweep at once. Patching activation A of the corrupted run with the clean run's
 * moves the metric by about (A_clean − A_corrupt) · ∂metric/∂A, the gradient taken on the
 * corrupted run. One forward of the clean prompt and one of the corrupted prompt, their
 * activations captured through the hook points (models/hooks.ts), then one forward and one
 * backward of the corrupted prompt without hooks (the metric's gradient seeded at the logits,
 * the activations' gradients read by the model's gradient tap) give the estimate for: the residual stream (resid_pre)
 * per (layer, position), each head's z per (layer, head, position) and summed over positions
 * per (layer, head), attn_out and mlp_out per (layer, position).
 *
 * Leaves out: normalising by (clean − corrupted) metric and naming tokens (the lab's job,
 * src/lab/inference/attribute.ts), full patching (the `patching` sweep), encoder-decoders.
 *
 * Shape legend: T positions, C d_model, L decoder layers, H heads, D head size, V vocabulary.
 */

import type { FloatArray } from '../backend';
import { EngineError } from '../errors';
import type { Batch } from '../models/inputs';
import type { HookPoint } from '../models/hooks';
import type { Transformer } from '../models/transformer';
import { captureForward, capturedAt } from './capture';
import type { LogitMetric } from './logitMetric';
import { metricOf, metricSeed } from './logitMetric';

/** The raw estimates of patched − corrupted metric (not normalised) and the two runs' metrics. */
export interface AttributionPatchingResult {
  readonly T: number;
  readonly L: number;
  readonly H: number;
  readonly clean: number;
  readonly corrupted: number;
  /** resid_pre of layers 0..L − 1 [L, T]. */
  readonly resid: Float64Array;
  /** Each head's z at each position [L, H, T]. */
  readonly headPos: Float64Array;
  /** Each head's z at every position at once [L, H] (the sum over positions of headPos). */
  readonly head: Float64Array;
  readonly attnOut: Float64Array;
  readonly mlpOut: Float64Array;
}

/** The passes, in order, for progress and cancelling (`onPass` is called before each). */
export type AttributionPass = 'clean' | 'corrupted' | 'backward';

const POINTS: readonly HookPoint[] = ['resid_pre', 'z', 'attn_out', 'mlp_out'];

/**
 * Attribution patching of `corrupted` towards `clean` (one sequence each, the same length) under `metric` at the
 * last position; `onPass` may throw to cancel between passes.
 */
export function attributionPatching(
  model: Transformer,
  clean: Batch,
  corrupted: Batch,
  metric: LogitMetric,
  onPass: (pass: AttributionPass) => void = () => undefined,
): AttributionPatchingResult {
  if (model.config.kind !== 'decoder-only')
    throw new EngineError(
      'input/invalid',
      'Attribution patching reads a decoder-only model; this run is an encoder-decoder.',
    );
  if (clean.B !== 1 || corrupted.B !== 1) throw new Error('attribution patching reads one sequence of each prompt');
  const T = clean.T;
  if (corrupted.T !== T)
    throw new EngineError(
      'input/invalid',
      `The clean prompt has ${T} tokens and the corrupted ${corrupted.T}; patching swaps activations position by ` +
        'position, so give prompts of the same token length.',
    );
  const { vocabSize: V, nHeads: H } = model.config;
  const L = model.decoder.length;
  const opts = { train: false, labelSmoothing: 0 };
  onPass('clean');
  const diff = captureForward(model, clean, POINTS); // A_clean, then A_clean − A_corrupt
  const cleanMetric = metricOf(model.logitsAt([T - 1]), 0, V, metric);
  onPass('corrupted');
  const corrupt = captureForward(model, corrupted, POINTS);
  for (let l = 0; l < L; l++)
    for (const pt of POINTS) {
      const d = capturedAt(diff, pt, l);
      const a = capturedAt(corrupt, pt, l);
      for (let i = 0; i < d.length; i++) d[i] = (d[i] as number) - (a[i] as number);
    }
  // A forward with a hook refuses a backward (a hook may write), so the gradient's forward runs plain.
  model.forward(corrupted, opts);
  const logits = model.logits();
  const corruptMetric = metricOf(logits, T - 1, V, metric);
  const seed = new Float64Array(T * V);
  metricSeed(seed, logits, T - 1, V, metric);
  const out = {
    resid: new Float64Array(L * T),
    headPos: new Float64Array(L * H * T),
    attnOut: new Float64Array(L * T),
    mlpOut: new Float64Array(L * T),
  };
  /** Σ over `width` channels of d · g at each position, into target[off + p]. */
  const dots = (d: FloatArray, g: FloatArray, width: number, stride: number, target: Float64Array, off: number) => {
    for (let p = 0; p < T; p++) {
      let s = 0;
      for (let i = 0; i < width; i++) s += (d[p * stride + i] as number) * (g[p * stride + i] as number);
      target[off + p] = s;
    }
  };
  onPass('backward');
  model.setGradientTap((point, layer, grad) => {
    if (layer >= L) return; // resid_pre of the final norm's input: no patch of the sweep
    const d = capturedAt(diff, point, layer);
    const C = model.config.dModel;
    if (point === 'z') {
      const attn = model.decoder[layer]?.selfAttn;
      if (!attn) return;
      for (let h = 0; h < H; h++)
        dots(d.subarray(h * attn.D), grad.subarray(h * attn.D), attn.D, attn.o.inF, out.headPos, (layer * H + h) * T);
    } else {
      const target = point === 'resid_pre' ? out.resid : point === 'attn_out' ? out.attnOut : out.mlpOut;
      dots(d, grad, C, C, target, layer * T);
    }
  });
  try {
    model.backward(seed);
  } finally {
    model.setGradientTap(null);
  }
  const head = new Float64Array(L * H);
  for (let i = 0; i < L * H; i++)
    for (let p = 0; p < T; p++) head[i] = (head[i] as number) + (out.headPos[i * T + p] as number);
  return { T, L, H, clean: cleanMetric, corrupted: corruptMetric, ...out, head };
}
