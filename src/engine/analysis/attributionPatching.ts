/**
 * Attribution patching (Nanda 2023, "Attribution Patching: Activation Patching At Industrial
 * Scale"; Syed et al. 2023): the first-order estimate of every activation patch of the
 * denoising sweep at once. Patching activation A of the corrupted run with the clean run's
 * moves the metric by about (A_clean − A_corrupt) · ∂metric/∂A, the gradient taken on the
 * corrupted run. One forward of the clean prompt, its activations captured through the hook
 * points (models/hooks.ts), then one forward of the corrupted prompt whose read-only hook
 * captures its activations and one backward of it (the metric's gradient seeded at the logits,
 * the activations' gradients read by the model's gradient tap) give the estimate for: the
 * residual stream (resid_pre) per (layer, position), each head's z per (layer, head, position)
 * and summed over positions per (layer, head), attn_out and mlp_out per (layer, position).
 *
 * An encoder-decoder's clean and corrupted inputs are two sources of the same token length with
 * the same target prefix (its decoder's input; the metric at its last position); besides the
 * decoder's points above, it estimates each decoder layer's cross-attention (cross_z per head,
 * cross_out per position) and every encoder layer's enc_resid_pre, enc_z, enc_attn_out and
 * enc_mlp_out per source position.
 *
 * Leaves out: normalising by (clean − corrupted) metric and naming tokens (the lab's job,
 * src/lab/inference/attribute.ts), full patching (the `patching` sweep).
 *
 * Shape legend: T target positions, S source positions, C d_model, L layers of a stack, H heads,
 * D head size, V vocabulary.
 */

import type { FloatArray } from '../backend';
import { EngineError } from '../errors';
import type { Batch } from '../models/inputs';
import type { HookPoint } from '../models/hooks';
import type { TappedPoint, Transformer } from '../models/transformer';
import { captureForward, capturedAt } from './capture';
import type { LogitMetric } from './logitMetric';
import { metricOf, metricSeed } from './logitMetric';

/** One stack's estimates over its positions (T, or S for the encoder). */
export interface StackAttribution {
  /** Positions. */
  readonly T: number;
  /** Layers. */
  readonly L: number;
  /** resid_pre of layers 0..L − 1 [L, T]. */
  readonly resid: Float64Array;
  /** Each self-attention head's z at each position [L, H, T]. */
  readonly headPos: Float64Array;
  /** Each head's z at every position at once [L, H] (the sum over positions of headPos). */
  readonly head: Float64Array;
  readonly attnOut: Float64Array;
  readonly mlpOut: Float64Array;
}

/** An encoder-decoder's decoder cross-attention estimates. */
export interface CrossAttribution {
  /** Each cross-attention head's z at each target position [L, H, T]. */
  readonly headPos: Float64Array;
  /** [L, H], summed over positions. */
  readonly head: Float64Array;
  /** cross_out per (layer, target position) [L, T]. */
  readonly out: Float64Array;
}

/**
 * The raw estimates of patched − corrupted metric (not normalised) and the two runs' metrics: the decoder's
 * (every field of {@link StackAttribution}), and an encoder-decoder's encoder and cross-attention.
 */
export interface AttributionPatchingResult extends StackAttribution {
  readonly H: number;
  readonly clean: number;
  readonly corrupted: number;
  readonly encoder: StackAttribution | null;
  readonly cross: CrossAttribution | null;
}

/** The passes, in order, for progress and cancelling (`onPass` is called before each). */
export type AttributionPass = 'clean' | 'corrupted' | 'backward';

const DECODER_POINTS: readonly TappedPoint[] = ['resid_pre', 'z', 'attn_out', 'mlp_out'];
const ENCDEC_POINTS: readonly TappedPoint[] = [
  ...DECODER_POINTS,
  'cross_z',
  'cross_out',
  'enc_resid_pre',
  'enc_z',
  'enc_attn_out',
  'enc_mlp_out',
];

function stackArrays(L: number, H: number, T: number): StackAttribution {
  return {
    T,
    L,
    resid: new Float64Array(L * T),
    headPos: new Float64Array(L * H * T),
    head: new Float64Array(L * H),
    attnOut: new Float64Array(L * T),
    mlpOut: new Float64Array(L * T),
  };
}

/** head[l, h] = Σ_p headPos[l, h, p]. */
function sumPositions(headPos: Float64Array, head: Float64Array, T: number): void {
  for (let i = 0; i < head.length; i++) {
    let s = 0;
    for (let p = 0; p < T; p++) s += headPos[i * T + p] as number;
    head[i] = s;
  }
}

/**
 * Attribution patching of `corrupted` towards `clean` (one sequence each, the same length; an encoder-decoder's:
 * sources of the same length, the same target length) under `metric` at the last position; `onPass` may throw to
 * cancel between passes.
 */
export function attributionPatching(
  model: Transformer,
  clean: Batch,
  corrupted: Batch,
  metric: LogitMetric,
  onPass: (pass: AttributionPass) => void = () => undefined,
): AttributionPatchingResult {
  if (clean.B !== 1 || corrupted.B !== 1) throw new Error('attribution patching reads one sequence of each prompt');
  const encdec = model.config.kind === 'encoder-decoder';
  const T = clean.T;
  if (corrupted.T !== T)
    throw new EngineError(
      'input/invalid',
      encdec
        ? `The clean target has ${T} tokens and the corrupted ${corrupted.T}; give both sources the same target prefix.`
        : `The clean prompt has ${T} tokens and the corrupted ${corrupted.T}; patching swaps activations position ` +
            'by position, so give prompts of the same token length.',
    );
  const S = clean.S ?? 0;
  if (encdec && corrupted.S !== S)
    throw new EngineError(
      'input/invalid',
      `The clean source has ${S} tokens and the corrupted ${corrupted.S ?? 0}; patching swaps activations ` +
        'position by position, so give sources of the same token length.',
    );
  const { vocabSize: V, nHeads: H } = model.config;
  const L = model.decoder.length;
  const points = encdec ? ENCDEC_POINTS : DECODER_POINTS;
  onPass('clean');
  const diff = captureForward(model, clean, points); // A_clean, then A_clean − A_corrupt
  const cleanMetric = metricOf(model.logitsAt([T - 1]), 0, V, metric);
  onPass('corrupted');
  // One corrupted forward serves both: its read-only hook captures A_corrupt, and the backward follows it.
  const corrupt = captureForward(model, corrupted, points, true);
  for (const [key, d] of diff) {
    const a = corrupt.get(key) as FloatArray;
    for (let i = 0; i < d.length; i++) d[i] = (d[i] as number) - (a[i] as number);
  }
  const logits = model.logits();
  const corruptMetric = metricOf(logits, T - 1, V, metric);
  const seed = new Float64Array(T * V);
  metricSeed(seed, logits, T - 1, V, metric);
  const dec = stackArrays(L, H, T);
  const enc = encdec ? stackArrays(model.encoder.length, H, S) : null;
  const cross = encdec
    ? { headPos: new Float64Array(L * H * T), head: new Float64Array(L * H), out: new Float64Array(L * T) }
    : null;
  const C = model.config.dModel;
  /** Σ over `width` channels of d · g at each of `rows` positions, into target[off + p]. */
  const dots = (
    d: FloatArray,
    g: FloatArray,
    rows: number,
    width: number,
    stride: number,
    target: Float64Array,
    off: number,
  ): void => {
    for (let p = 0; p < rows; p++) {
      let s = 0;
      for (let i = 0; i < width; i++) s += (d[p * stride + i] as number) * (g[p * stride + i] as number);
      target[off + p] = s;
    }
  };
  onPass('backward');
  model.setGradientTap((point, layer, grad) => {
    const inEncoder = point.startsWith('enc_');
    const stack = inEncoder ? enc : dec;
    if (!stack || layer >= stack.L) return; // resid_pre of the final norm's input: no patch of the sweep
    const d = capturedAt(diff, point as HookPoint, layer);
    const rows = stack.T;
    if (point === 'z' || point === 'enc_z' || point === 'cross_z') {
      const blk = (inEncoder ? model.encoder : model.decoder)[layer];
      const attn = point === 'cross_z' ? blk?.crossAttn : blk?.selfAttn;
      if (!attn) return;
      const target = point === 'cross_z' ? (cross as CrossAttribution).headPos : stack.headPos;
      for (let h = 0; h < H; h++)
        dots(
          d.subarray(h * attn.D),
          grad.subarray(h * attn.D),
          rows,
          attn.D,
          attn.o.inF,
          target,
          (layer * H + h) * rows,
        );
    } else {
      const target =
        point === 'resid_pre' || point === 'enc_resid_pre'
          ? stack.resid
          : point === 'attn_out' || point === 'enc_attn_out'
            ? stack.attnOut
            : point === 'cross_out'
              ? (cross as CrossAttribution).out
              : stack.mlpOut;
      dots(d, grad, rows, C, C, target, layer * rows);
    }
  });
  try {
    model.backward(seed);
  } finally {
    model.setGradientTap(null);
  }
  sumPositions(dec.headPos, dec.head, T);
  if (enc) sumPositions(enc.headPos, enc.head, S);
  if (cross) sumPositions(cross.headPos, cross.head, T);
  return { ...dec, H, clean: cleanMetric, corrupted: corruptMetric, encoder: enc, cross };
}
