/**
 * Checks the model tests run on a whole model: backward against central finite differences of
 * the loss (float64, through ../gradcheck.ts), and one backend's loss and gradients against
 * the float64 reference.
 */

import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { ModelConfig } from '../../../../src/engine/config';
import type { Batch } from '../../../../src/engine/models/inputs';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import type { GradCheckResult } from '../gradcheck';
import { gradCheck } from '../gradcheck';

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

/** Backward of `m` (float64) on `batch` against central differences of its loss, every parameter. */
export function finiteDifferenceCheck(m: Transformer, batch: Batch, train: boolean): GradCheckResult & { at: string } {
  lossOf(m, batch, train);
  m.backward();
  const r = gradCheck(() => lossOf(m, batch, train), m.params, Float64Array.from(m.grads), {
    eps: 1e-5,
    rtol: 1e-5,
    atol: 1e-9,
  });
  const seg = m.paramList.find((p) => r.worstIndex >= p.offset && r.worstIndex < p.offset + p.size);
  return { ...r, at: seg ? `${seg.name}[${r.worstIndex - seg.offset}]: ${r.message}` : r.message };
}

/** How many of the last backward's gradients are non-zero (a check that most parameters are reached). */
export function nonzeroGrads(m: Transformer): number {
  let n = 0;
  for (const g of m.grads) if (Math.abs(g) > 1e-9) n++;
  return n;
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
