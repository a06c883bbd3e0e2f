/**
 * The memory check before a model is bound: on the WebAssembly backend everything lives in
 * one 4 GiB address space, so a model that cannot fit is refused from its estimate
 * (engine/models/estimate.ts) before a float is allocated, with what to lower.
 */

import type { Backend } from '../../engine/backend';
import type { ModelConfig } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import type { MemoryOptions } from '../../engine/models/estimate';
import { memoryProblem } from '../../engine/models/estimate';
import type { ModelShape } from '../../engine/models/inputs';

/**
 * Before a model is bound to the WebAssembly backend: throws EngineError('config/invalid')
 * when the estimate says it cannot fit in WebAssembly's 4 GiB, naming what to lower (`opts`:
 * the decoding rows to count and what the person can lower, memoryProblem's).
 */
export function checkMemory(
  config: ModelConfig,
  shape: ModelShape,
  backend: Backend,
  use: 'inference' | 'training',
  opts: MemoryOptions = {},
): void {
  if (backend.name !== 'wasm') return;
  const problem = memoryProblem(config, shape, use, opts);
  if (problem) throw new EngineError('config/invalid', problem);
}

/**
 * The most rows, from `most` down to 1, whose inference model `shapeOf(rows)` fits WebAssembly's memory (1 when
 * none does: the caller's check then refuses it, naming what to lower).
 */
export function mostRowsThatFit(
  config: ModelConfig,
  most: number,
  shapeOf: (rows: number) => ModelShape,
  opts: MemoryOptions = {},
): number {
  let rows = most;
  while (rows > 1 && memoryProblem(config, shapeOf(rows), 'inference', opts) !== null) rows--;
  return rows;
}
