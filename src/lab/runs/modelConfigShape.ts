/**
 * The engine and the protocol (src/protocol/model.ts and analysis.ts, which may not import
 * the engine) declare the same model types twice: the ModelConfig fields, and which
 * attention a map or head belongs to (AttentionStack) with the maps and head references
 * that carry it. This file, which may import both, fails to compile when they drift apart:
 * a field or stack added, renamed or retyped on one side only. The protocol's config fields
 * are optional (only `kind` is required), so the check is that the engine's config fills
 * the shape exactly when every field is present.
 *
 * Leaves out: runtime checks (the engine's validateConfig, the protocol's validators).
 */

import type { ModelConfig } from '../../engine/config';
import type { AttentionStack as EngineAttentionStack, HeadRef } from '../../engine/models/heads';
import type { AttentionMap } from '../../engine/models/readouts';
import type { HeadRefData } from '../../protocol/analysis';
import type { AttentionMapData, AttentionStack, ModelConfigData } from '../../protocol/model';
import type { SPLIT_MARK as ENGINE_SPLIT_MARK } from '../../engine/tokenizers/tokenDisplay';
import type { SPLIT_MARK as COMMON_SPLIT_MARK } from '../../common/tokenLabels';

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

/** The engine's and the protocol's attention stacks are the same union of the same spellings. */
export type SameAttentionStacks = Holds<Same<EngineAttentionStack, AttentionStack>>;

/**
 * A captured attention map is a snapshot's map (the protocol adds only the optional `pool` of an overview), with the
 * same stacks; `kvHeads` (grouped-query attention) is on both sides.
 */
export type SameAttentionMapFields = Holds<Same<keyof AttentionMap | 'pool', keyof AttentionMapData>> &
  Holds<Same<AttentionMap['stack'], AttentionMapData['stack']>>;

/** A head named on the wire is a head the engine can switch off, and back. */
export type SameHeadRefs = Holds<Same<HeadRef, HeadRefData>>;

/** The token labels' split mark is the one the engine writes (src/common/tokenLabels.ts reads it back). */
export type SameSplitMark = Holds<Same<typeof ENGINE_SPLIT_MARK, typeof COMMON_SPLIT_MARK>>;
