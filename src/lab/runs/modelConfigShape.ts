/**
 * The engine's ModelConfig and the protocol's model config shape (src/protocol/model.ts,
 * which may not import the engine) declare the same fields; this file, which may import
 * both, fails to compile when they drift apart: a field added, renamed or retyped on one
 * side only. The protocol's fields are optional (only `kind` is required), so the check is
 * that the engine's config fills the shape exactly when every field is present.
 *
 * Leaves out: runtime checks (the engine's validateConfig, the protocol's modelConfig).
 */

import type { ModelConfig } from '../../engine/config';
import type { ModelConfigData } from '../../protocol/model';

/** True when A and B are assignable to each other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** Compiles only with `true`. */
type Holds<T extends true> = T;

/** A run's engine config goes into ModelInfo.config as it is. */
export type EngineConfigFitsProtocol = Holds<ModelConfig extends ModelConfigData ? true : false>;

/** Neither side has a field the other lacks. */
export type SameConfigFields = Holds<Same<keyof ModelConfig, keyof ModelConfigData>>;

/** Each field, when present, has exactly the engine's type (no wider, no narrower). */
export type SameConfigFieldTypes = Holds<Same<Required<ModelConfigData>, ModelConfig>>;
