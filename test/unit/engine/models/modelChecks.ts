/**
 * Checks the model tests run on a whole model: backward against central finite differences of
 * the loss (float64), and one backend's loss and gradients against the float64 reference.
 */

import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { ModelConfig } from '../../../../src/engine/config';
import type { Batch } from '../../../../src/engine/models/inputs';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';

/** A model of `cfg` planned for batches of 2, bound and initialized from `seed`. */
export function buildModel(cfg: ModelConfig, dtype: 'f32' | 'f64' = 'f32', seed = 7, backend?: Backend): Transformer {
  const m = new Transformer(cfg, { maxBatch: 2 }).bind(backend ?? createReferenceBackend({ dtype }));
  m.initialize(new Rng(seed));
  return m;
}

/** Loss with dropout drawn from a fresh stream each call, so finite differences see one function. */
export function lossOf(m: Transformer, batch: Batch, train: boolean): number {
  return m.forward(batch, { train, rng: new Rng(99) }).loss;
}

/** The worst relative error of backward against finite differences, where, and how many gradients are non-zero. */
export interface GradCheck {
  readonly worst: number;
  readonly worstAt: string;
  readonly nonzero: number;
}

/** Every parameter's gradient of `m` (float64) on `batch` against (L(p + ε) − L(p − ε)) / 2ε. */
export function finiteDifferenceCheck(m: Transformer, batch: Batch, train: boolean, eps = 1e-5): GradCheck {
  lossOf(m, batch, train);
  m.backward();
  const analytic = Float64Array.from(m.grads);
  const p = m.params;
  let worst = 0;
  let worstAt = '';
  let nonzero = 0;
  for (const seg of m.paramList) {
    for (let i = 0; i < seg.size; i++) {
      const j = seg.offset + i;
      const old = p[j] as number;
      p[j] = old + eps;
      const up = lossOf(m, batch, train);
      p[j] = old - eps;
      const down = lossOf(m, batch, train);
      p[j] = old;
      const num = (up - down) / (2 * eps);
      const a = analytic[j] as number;
      if (Math.abs(a) > 1e-9) nonzero++;
      const err = Math.abs(a - num) / Math.max(1e-4, Math.abs(a) + Math.abs(num));
      if (err > worst) {
        worst = err;
        worstAt = `${seg.name}[${i}] analytic ${a} numeric ${num}`;
      }
    }
  }
  return { worst, worstAt, nonzero };
}

/**
 * The first disagreement of `backend`'s loss or gradients with the float64 reference's on the
 * same weights, batch and dropout, or null (tolerances of float32 arithmetic).
 */
export function backendMismatch(cfg: ModelConfig, backend: Backend, batch: Batch): string | null {
  const ref = buildModel(cfg, 'f64');
  const other = buildModel(cfg, 'f32', 7, backend);
  other.params.set(Float32Array.from(ref.params));
  const train = cfg.dropout > 0;
  const lossRef = lossOf(ref, batch, train);
  const lossOther = lossOf(other, batch, train);
  if (!(Math.abs(lossOther - lossRef) < 1e-5 * Math.max(1, Math.abs(lossRef))))
    return `loss ${lossOther}, float64 reference ${lossRef}`;
  ref.backward();
  other.backward();
  let scale = 0;
  for (let i = 0; i < ref.grads.length; i++) scale = Math.max(scale, Math.abs(ref.grads[i] as number));
  for (const seg of ref.paramList) {
    for (let i = 0; i < seg.size; i++) {
      const j = seg.offset + i;
      const a = other.grads[j] as number;
      const b = ref.grads[j] as number;
      if (!(Math.abs(a - b) <= 1e-3 * Math.abs(b) + 2e-6 * scale))
        return `${seg.name}[${i}]: ${a}, float64 reference ${b}`;
    }
  }
  return null;
}
