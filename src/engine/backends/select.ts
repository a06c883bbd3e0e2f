/**
 * Picks the kernel backend. 'auto' prefers the fast WebAssembly backend when it is
 * available (its own issue) and falls back to the readable reference backend.
 */

import type { Backend } from '../backend';
import { createReferenceBackend } from './reference';

/** Which backend to use. */
export type BackendKind = 'auto' | 'wasm' | 'reference';

/** A backend of the asked kind. */
export function createBackend(kind: BackendKind): Backend {
  // TODO(issue 4): the WebAssembly backend replaces this for 'auto' and 'wasm'.
  void kind;
  return createReferenceBackend();
}
