/**
 * Feed-forward activations: ReLU (Vaswani et al. §3.3) and the exact GELU of Hendrycks &
 * Gimpel, "Gaussian Error Linear Units" (2016), GELU(x) = x · Φ(x) with Φ the standard
 * normal CDF — what PyTorch's nn.GELU() computes by default, and what nanoGPT uses — and
 * the same paper's tanh approximation x · ½(1 + tanh(√(2/π)(x + 0.044715 x³))), which
 * GPT-2 was trained with (OpenAI's `gelu`, Hugging Face's `gelu_new`, PyTorch's
 * `gelu(approximate='tanh')`): a checkpoint keeps the activation it was trained with.
 * Also SiLU/swish x · σ(x) (Elfwing et al. 2018; Ramachandran et al. 2017), the activation
 * of Llama's SwiGLU, and the squared ReLU max(x, 0)² of So et al., "Primer" (2021), which
 * nanochat uses.
 *
 * JavaScript has no erf, so `erfc` below evaluates W. J. Cody's rational Chebyshev
 * approximations ("Rational Chebyshev Approximations for the Error Function", Math. Comp.
 * 23 (1969) 631–638), whose published coefficients give close to full double precision
 * (here ~1e-15 relative; the contract asks for 1e-7 absolute).
 *
 * Leaves out: fused bias+activation kernels, and the gating product of GLU variants
 * (`mul`, elementwise.ts).
 */

import type { FloatArray } from '../backend';

// Cody (1969), erf on |x| ≤ 0.46875: erf(x) = x · P(x²) / Q(x²).
const ERF_P = [
  3.1611237438705656, 1.13864154151050156e2, 3.77485237685302021e2, 3.20937758913846947e3, 1.85777706184603153e-1,
] as const;
const ERF_Q = [2.36012909523441209e1, 2.44024637934444173e2, 1.28261652607737228e3, 2.84423683343917062e3] as const;
// Cody (1969), erfc on 0.46875 < x ≤ 4: erfc(x) = exp(−x²) · P(x) / Q(x).
const ERFC_P = [
  5.64188496988670089e-1, 8.88314979438837594, 6.61191906371416295e1, 2.98635138197400131e2, 8.8195222124176909e2,
  1.71204761263407058e3, 2.05107837782607147e3, 1.23033935479799725e3, 2.15311535474403846e-8,
] as const;
const ERFC_Q = [
  1.57449261107098347e1, 1.17693950891312499e2, 5.37181101862009858e2, 1.62138957456669019e3, 3.29079923573345963e3,
  4.36261909014324716e3, 3.43936767414372164e3, 1.23033935480374942e3,
] as const;
// Cody (1969), erfc on x > 4: erfc(x) = exp(−x²)/x · (1/√π + z · P(z) / Q(z)), z = 1/x².
const ERFC_TAIL_P = [
  3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1, 1.60837851487422766e-2,
  6.58749161529837803e-4, 1.63153871373020978e-2,
] as const;
const ERFC_TAIL_Q = [
  2.56852019228982242, 1.87295284992346725, 5.27905102951428412e-1, 6.05183413124413191e-2, 2.33520497626869185e-3,
] as const;
const INV_SQRT_PI = 0.5641895835477563;
const INV_SQRT_2 = Math.SQRT1_2;
const INV_SQRT_2PI = 0.3989422804014327;
/** √(2/π) and the cubic coefficient of the tanh GELU (Hendrycks & Gimpel 2016, §2). */
const GELU_TANH_K = 0.7978845608028654;
const GELU_TANH_A = 0.044715;

/** erf(x) for |x| ≤ 0.46875 (Cody's first interval). */
function erfSmall(x: number): number {
  const z = x * x;
  let num = ERF_P[4] * z;
  let den = z;
  for (let i = 0; i < 3; i++) {
    num = (num + (ERF_P[i] as number)) * z;
    den = (den + (ERF_Q[i] as number)) * z;
  }
  return (x * (num + ERF_P[3])) / (den + ERF_Q[3]);
}

/** erfc(y) for y > 0.46875 (Cody's second and third intervals); 0 beyond y = 27 (underflow). */
function erfcLarge(y: number): number {
  if (y >= 27) return 0;
  let r: number;
  if (y <= 4) {
    let num = ERFC_P[8] * y;
    let den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + (ERFC_P[i] as number)) * y;
      den = (den + (ERFC_Q[i] as number)) * y;
    }
    r = (num + ERFC_P[7]) / (den + ERFC_Q[7]);
  } else {
    const z = 1 / (y * y);
    let num = ERFC_TAIL_P[5] * z;
    let den = z;
    for (let i = 0; i < 4; i++) {
      num = (num + (ERFC_TAIL_P[i] as number)) * z;
      den = (den + (ERFC_TAIL_Q[i] as number)) * z;
    }
    r = (INV_SQRT_PI - (z * (num + ERFC_TAIL_P[4])) / (den + ERFC_TAIL_Q[4])) / y;
  }
  return Math.exp(-y * y) * r;
}

/** The error function erf(x) = 2/√π ∫₀ˣ e^(−t²) dt, to about 1e-15 relative. */
export function erf(x: number): number {
  const y = Math.abs(x);
  if (y <= 0.46875) return erfSmall(x);
  const r = 1 - erfcLarge(y);
  return x < 0 ? -r : r;
}

/**
 * The standard normal CDF Φ(x) = ½ · erfc(−x/√2). For x < 0 it is computed from erfc
 * directly (not 1 − erf), so its relative accuracy holds far into the left tail.
 */
export function normalCdf(x: number): number {
  const u = x * INV_SQRT_2;
  if (Math.abs(u) <= 0.46875) return 0.5 + 0.5 * erfSmall(u);
  const tail = 0.5 * erfcLarge(Math.abs(u));
  return u < 0 ? tail : 1 - tail;
}

/** y = max(x, 0) (overwrites y). */
export function reluForward(y: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    y[i] = v > 0 ? v : 0;
  }
}

/**
 * Differentiates y = max(x, 0): dx += dy · [x > 0] (accumulates; the subgradient at 0 is
 * 0, as in PyTorch).
 */
export function reluBackward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    if ((x[i] as number) > 0) dx[i] = (dx[i] as number) + (dy[i] as number);
  }
}

/** Exact GELU: y = x · Φ(x) = ½ · x · (1 + erf(x / √2)) (overwrites y; not the tanh form). */
export function geluForward(y: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    y[i] = v * normalCdf(v);
  }
}

/**
 * Differentiates y = x · Φ(x): dx += dy · (Φ(x) + x · φ(x)) (accumulates), with
 * φ(x) = exp(−x²/2) / √(2π) the standard normal density.
 */
export function geluBackward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    const grad = normalCdf(v) + v * INV_SQRT_2PI * Math.exp(-0.5 * v * v);
    dx[i] = (dx[i] as number) + (dy[i] as number) * grad;
  }
}

/**
 * GPT-2's tanh GELU: y = ½ · x · (1 + tanh(u)), u = √(2/π) · (x + 0.044715 · x³)
 * (overwrites y). Within 1e-3 of the exact GELU everywhere, but a different function.
 */
export function geluTanhForward(y: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    y[i] = 0.5 * v * (1 + Math.tanh(GELU_TANH_K * (v + GELU_TANH_A * v * v * v)));
  }
}

/**
 * Differentiates y = ½ · x · (1 + tanh(u)), u = √(2/π)(x + 0.044715 x³):
 * dx += dy · (½(1 + t) + ½ · x · (1 − t²) · √(2/π)(1 + 3 · 0.044715 · x²)), t = tanh(u)
 * (accumulates).
 */
export function geluTanhBackward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    const t = Math.tanh(GELU_TANH_K * (v + GELU_TANH_A * v * v * v));
    const grad = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * GELU_TANH_K * (1 + 3 * GELU_TANH_A * v * v);
    dx[i] = (dx[i] as number) + (dy[i] as number) * grad;
  }
}

/** The logistic sigmoid σ(x) = 1 / (1 + e^(−x)), evaluated without overflow for either sign. */
export function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

/** SiLU (swish): y = x · σ(x) (overwrites y). */
export function siluForward(y: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    y[i] = v * sigmoid(v);
  }
}

/** Differentiates y = x · σ(x): dx += dy · σ(x) · (1 + x · (1 − σ(x))) (accumulates). */
export function siluBackward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    const s = sigmoid(v);
    dx[i] = (dx[i] as number) + (dy[i] as number) * s * (1 + v * (1 - s));
  }
}

/** Squared ReLU: y = max(x, 0)² (overwrites y). */
export function relu2Forward(y: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    y[i] = v > 0 ? v * v : 0;
  }
}

/** Differentiates y = max(x, 0)²: dx += dy · 2 · max(x, 0) (accumulates). */
export function relu2Backward(dx: FloatArray, dy: FloatArray, x: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    if (v > 0) dx[i] = (dx[i] as number) + (dy[i] as number) * 2 * v;
  }
}
