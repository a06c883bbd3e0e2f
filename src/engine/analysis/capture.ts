/**
 * Activations of one forward, captured through the forward's hook points (models/hooks.ts):
 * copies of the views the hook receives, keyed by point and layer, for readers that need a
 * whole run's activations after it (direct logit attribution, attribution patching).
 *
 * Leaves out: replacing activations (patching writes through the same hook itself).
 *
 * Shape legend: B batch, T positions, heads·width a hook point's row (hooks.ts).
 */

import type { FloatArray } from '../backend';
import type { HookPoint } from '../models/hooks';
import type { Batch } from '../models/inputs';
import type { Transformer } from '../models/transformer';

/** Captured activations: `${point}.${layer}` → a copy of [B, T, heads·width]. */
export type Captured = Map<string, FloatArray>;

/** The key of a point's activation in {@link Captured}. */
export function capturedKey(point: HookPoint, layer: number): string {
  return `${point}.${layer}`;
}

/**
 * One evaluation forward of `batch` keeping a copy of every activation at `points` (every layer that has them);
 * with `thenBackward`, the forward is marked read-only so that a backward() may follow it.
 */
export function captureForward(
  model: Transformer,
  batch: Batch,
  points: readonly HookPoint[],
  thenBackward = false,
): Captured {
  const out: Captured = new Map();
  model.forward(batch, {
    train: false,
    labelSmoothing: 0,
    hookReadsOnly: thenBackward,
    hook: (site, data) => {
      if (points.includes(site.point)) out.set(capturedKey(site.point, site.layer), data.slice());
    },
  });
  return out;
}

/** A captured activation; throws naming it when the forward had none. */
export function capturedAt(c: Captured, point: HookPoint, layer: number): FloatArray {
  const a = c.get(capturedKey(point, layer));
  if (!a) throw new Error(`no ${point} of layer ${layer} was captured`);
  return a;
}
