/**
 * The progress measures of grokking on modular addition (Nanda et al. 2023, "Progress measures
 * for grokking via mechanistic interpretability"), as pure functions over arrays: the Fourier
 * basis of Z_p, the embedding's spectrum over it, the key frequencies that spectrum singles
 * out, and the restricted and excluded losses.
 *
 * Legend: p the modulus, C d_model, V the output vocabulary, N = p² pairs (a, b) at index
 * a·p + b. θ_k = 2πk / p for frequency k = 1 … ⌊(p − 1)/2⌋.
 *
 * - Fourier basis: rows 1/√p; √(2/p)·cos(θ_k x) and √(2/p)·sin(θ_k x) for each k; with p even
 *   also (−1)^x / √p. The p rows are orthonormal.
 * - spectrum[k − 1] = ‖(cos_k, sin_k)ᵀ W_E‖: the Frobenius norm of the number tokens'
 *   embedding rows [p, C] projected on frequency k's two basis rows.
 * - key frequencies: those whose squared norm is at least KEY_FACTOR times the mean squared norm
 *   over all frequencies, largest first, at most MAX_KEY. A random embedding spreads its energy
 *   evenly (none qualify); a grokked one concentrates it on a handful.
 * - restricted / excluded loss: for each output column c, the logits as a function of (a, b)
 *   are projected on the directions cos(θ_k(a + b)) and sin(θ_k(a + b)) of every key frequency
 *   (each normalised over the p² pairs; ‖cos(θ_k(a + b))‖² = p²/2). Restricted: the column's
 *   mean plus that projection, cross-entropy over every pair. Excluded: the logits minus the
 *   projection, cross-entropy over the training pairs. The paper projects the MLP's neuron
 *   activations and maps them through W_out·W_U; we project the logits themselves (the same
 *   directions in the output), which needs no hook into the model.
 *
 * Leaves out: running the model (src/lab/evaluation/grokking.ts gathers the logits).
 */

/** Squared norm, relative to the mean over frequencies, from which a frequency is key. */
export const KEY_FACTOR = 3;
/** Most key frequencies reported. */
export const MAX_KEY = 10;

/** Frequencies k = 1 … ⌊(p − 1)/2⌋ (the Nyquist row of an even p is left out of the spectrum). */
export function frequencyCount(p: number): number {
  return Math.floor((p - 1) / 2);
}

/** The orthonormal Fourier basis of Z_p: [p, p] row-major, rows as in the file comment. */
export function fourierBasis(p: number): Float64Array {
  const out = new Float64Array(p * p);
  const K = frequencyCount(p);
  for (let x = 0; x < p; x++) {
    out[x] = 1 / Math.sqrt(p);
    for (let k = 1; k <= K; k++) {
      const t = (2 * Math.PI * k * x) / p;
      out[(2 * k - 1) * p + x] = Math.sqrt(2 / p) * Math.cos(t);
      out[2 * k * p + x] = Math.sqrt(2 / p) * Math.sin(t);
    }
    if (p % 2 === 0) out[(p - 1) * p + x] = (x % 2 === 0 ? 1 : -1) / Math.sqrt(p);
  }
  return out;
}

/**
 * The spectrum of an embedding: `w` holds at least p rows of C channels (row x = token of the
 * number x, starting at row `rows[x]`'s offset), one norm per frequency k = 1 … ⌊(p − 1)/2⌋.
 */
export function embeddingSpectrum(w: ArrayLike<number>, C: number, rows: readonly number[]): number[] {
  const p = rows.length;
  const basis = fourierBasis(p);
  const K = frequencyCount(p);
  const out: number[] = [];
  for (let k = 1; k <= K; k++) {
    let sq = 0;
    for (const r of [2 * k - 1, 2 * k]) {
      for (let c = 0; c < C; c++) {
        let dot = 0;
        for (let x = 0; x < p; x++) dot += (basis[r * p + x] as number) * (w[(rows[x] as number) * C + c] as number);
        sq += dot * dot;
      }
    }
    out.push(Math.sqrt(sq));
  }
  return out;
}

/** The key frequencies (1-based k) of a spectrum, largest first (see the file comment). */
export function keyFrequencies(spectrum: readonly number[]): number[] {
  if (spectrum.length === 0) return [];
  const sq = spectrum.map((s) => s * s);
  const mean = sq.reduce((a, b) => a + b, 0) / sq.length;
  if (!(mean > 0)) return [];
  return sq
    .map((v, i) => ({ v, k: i + 1 }))
    .filter((e) => e.v >= KEY_FACTOR * mean)
    .sort((a, b) => b.v - a.v)
    .slice(0, MAX_KEY)
    .map((e) => e.k);
}

/** Mean cross-entropy and accuracy of rows of `logits` [N, V] whose `mask` is 1 (all when null). */
export function lossAndAccuracy(
  logits: ArrayLike<number>,
  V: number,
  targets: ArrayLike<number>,
  mask: ArrayLike<number> | null,
): { loss: number; acc: number } {
  let sum = 0;
  let right = 0;
  let n = 0;
  for (let i = 0; i < targets.length; i++) {
    if (mask && !mask[i]) continue;
    const o = i * V;
    let best = 0;
    for (let c = 1; c < V; c++) if ((logits[o + c] as number) > (logits[o + best] as number)) best = c;
    const max = logits[o + best] as number;
    let z = 0;
    for (let c = 0; c < V; c++) z += Math.exp((logits[o + c] as number) - max);
    const t = targets[i] as number;
    sum += max + Math.log(z) - (logits[o + t] as number);
    if (best === t) right++;
    n++;
  }
  return { loss: n ? sum / n : 0, acc: n ? right / n : 0 };
}

/**
 * The part of the logits [p², V] along the key frequencies' directions cos/sin(θ_k(a + b)),
 * which depends on (a + b) mod p only: [p, V], row s for every pair with a + b ≡ s.
 */
export function keyProjection(
  logits: ArrayLike<number>,
  p: number,
  V: number,
  keyFreqs: readonly number[],
): Float64Array {
  // g[s, c] = Σ over pairs with (a + b) mod p = s of logits[a·p + b, c]
  const g = new Float64Array(p * V);
  for (let a = 0; a < p; a++)
    for (let b = 0; b < p; b++) {
      const s = (a + b) % p;
      const o = (a * p + b) * V;
      for (let c = 0; c < V; c++) g[s * V + c] = (g[s * V + c] as number) + (logits[o + c] as number);
    }
  const proj = new Float64Array(p * V);
  for (const k of keyFreqs) {
    const cos = Array.from({ length: p }, (_, s) => Math.cos((2 * Math.PI * k * s) / p));
    const sin = Array.from({ length: p }, (_, s) => Math.sin((2 * Math.PI * k * s) / p));
    for (let c = 0; c < V; c++) {
      // coefficient of the unit direction u = cos(θ(a + b)) / (p/√2), times u again: (ℓ·cos)·cos / (p²/2)
      let ac = 0;
      let as = 0;
      for (let s = 0; s < p; s++) {
        ac += (g[s * V + c] as number) * (cos[s] as number);
        as += (g[s * V + c] as number) * (sin[s] as number);
      }
      ac *= 2 / (p * p);
      as *= 2 / (p * p);
      for (let s = 0; s < p; s++)
        proj[s * V + c] = (proj[s * V + c] as number) + ac * (cos[s] as number) + as * (sin[s] as number);
    }
  }
  return proj;
}

/**
 * Restricted loss (every pair, logits kept only along the key frequencies plus each column's
 * mean) and excluded loss (the pairs whose `train` is 1, logits with those directions
 * removed). `logits` [p², V] at pair index a·p + b, `targets` [p²] the answer's column.
 */
export function fourierLosses(
  logits: ArrayLike<number>,
  p: number,
  V: number,
  targets: ArrayLike<number>,
  train: ArrayLike<number>,
  keyFreqs: readonly number[],
): { restrictedLoss: number; excludedLoss: number } {
  const N = p * p;
  const proj = keyProjection(logits, p, V, keyFreqs);
  const mean = new Float64Array(V);
  for (let i = 0; i < N; i++) for (let c = 0; c < V; c++) mean[c] = (mean[c] as number) + (logits[i * V + c] as number);
  for (let c = 0; c < V; c++) mean[c] = (mean[c] as number) / N;
  const restricted = new Float64Array(N * V);
  const excluded = new Float64Array(N * V);
  for (let a = 0; a < p; a++)
    for (let b = 0; b < p; b++) {
      const i = a * p + b;
      const s = (a + b) % p;
      for (let c = 0; c < V; c++) {
        const pc = proj[s * V + c] as number;
        restricted[i * V + c] = (mean[c] as number) + pc;
        excluded[i * V + c] = (logits[i * V + c] as number) - pc;
      }
    }
  return {
    restrictedLoss: lossAndAccuracy(restricted, V, targets, null).loss,
    excludedLoss: lossAndAccuracy(excluded, V, targets, train).loss,
  };
}
