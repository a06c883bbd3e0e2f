/**
 * One Adam / AdamW update of a contiguous parameter range.
 *
 * Math: Kingma & Ba, "Adam: A Method for Stochastic Optimization" (2015), Algorithm 1,
 * with bias-corrected moments; decoupled weight decay from Loshchilov & Hutter,
 * "Decoupled Weight Decay Regularization" (2019) — the decay multiplies the parameter
 * directly (p ← p − lr·wd·p), not the gradient, as PyTorch's AdamW does.
 *
 * Leaves out: learning-rate schedules, gradient clipping and the choice of which
 * parameters decay (the caller's `decayMask`); those live in `optim/`.
 */

import type { AdamParams, FloatArray } from '../backend';

/**
 * Updates params[0..n) in place and the moment buffers m, v. Decay applies where
 * decayMask[i] = 1; a null mask decays nothing.
 */
export function adamStep(
  params: FloatArray,
  grads: FloatArray,
  m: FloatArray,
  v: FloatArray,
  n: number,
  opts: AdamParams,
  decayMask: Uint8Array | null,
): void {
  const { lr, beta1, beta2, eps, weightDecay, step } = opts;
  // Bias corrections (Alg. 1: m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t)), computed once.
  const bc1 = 1 - Math.pow(beta1, step);
  const bc2 = 1 - Math.pow(beta2, step);
  const decay = lr * weightDecay;
  for (let i = 0; i < n; i++) {
    let p = params[i] as number;
    if (decay !== 0 && decayMask !== null && decayMask[i] === 1) p -= decay * p;
    const g = grads[i] as number;
    const mi = beta1 * (m[i] as number) + (1 - beta1) * g;
    const vi = beta2 * (v[i] as number) + (1 - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    params[i] = p - (lr * (mi / bc1)) / (Math.sqrt(vi / bc2) + eps);
  }
}
