/**
 * Activation addition (Turner et al. 2023, "Steering Language Models With Activation
 * Engineering"): a vector added to the residual stream entering one decoder layer at every
 * position, the same numbers in the batch forward (through a hook, hooks.ts) and in the
 * key/value-cache stepper (its `residAdd` option, stepper.ts), so a steered decode and a
 * steered forward of the same tokens give the same logits.
 *
 * The stepper takes the vector as an option instead of calling the forward's hook: a hook's
 * site is a whole [B, T, C] batch, while the stepper runs a prompt's T rows in one prefill and
 * then one row per beam per step; an option is one vector checked once when the stepper is
 * made, and without it the stepper does nothing extra (one null check per layer).
 *
 * Leaves out: where the vector comes from (lab/inference/steer.ts) and the encoder.
 */

import type { FloatArray } from '../backend';
import { EngineError } from '../errors';
import type { ForwardHook } from './hooks';

/** A vector added to resid_pre of one decoder layer (0-based; L = the stream entering the final norm). */
export interface ResidAdd {
  readonly layer: number;
  /** [C], already scaled (α·v). */
  readonly vector: Float32Array;
}

/** Refuses `add` for a model of `layers` decoder layers and width `C`. */
export function checkResidAdd(add: ResidAdd, layers: number, C: number): void {
  if (!Number.isInteger(add.layer) || add.layer < 0 || add.layer > layers)
    throw new EngineError(
      'input/invalid',
      `Steering adds at the stream entering layer 0 to ${layers} (${layers}: the final norm's input); ` +
        `got ${add.layer}.`,
    );
  if (add.vector.length !== C)
    throw new EngineError('input/invalid', `A steering vector has d_model = ${C} numbers; got ${add.vector.length}.`);
  for (const x of add.vector)
    if (!Number.isFinite(x)) throw new EngineError('input/invalid', 'A steering vector must be finite numbers.');
}

/** x [rows, C] += vector [C] on every row. */
export function addToRows(x: FloatArray, rows: number, vector: Float32Array): void {
  const C = vector.length;
  for (let r = 0; r < rows; r++) {
    const o = r * C;
    for (let c = 0; c < C; c++) x[o + c] = (x[o + c] as number) + (vector[c] as number);
  }
}

/** The forward hook that adds `add.vector` to resid_pre of `add.layer` at every position of the batch. */
export function residAddHook(add: ResidAdd): ForwardHook {
  return (site, data) => {
    if (site.point === 'resid_pre' && site.layer === add.layer) addToRows(data, site.B * site.T, add.vector);
  };
}
