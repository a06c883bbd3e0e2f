/**
 * The model as the other side of a channel sees it: its config (as JSON), its sizes,
 * attention snapshots with their masks, and decode options and results. Tensors travel as Float32Array / Uint8Array plus shape.
 *
 * Leaves out: computing any of it (the engine and src/lab), and the messages that carry it.
 */

import type { Json } from './data';
import type { Infer, Schema } from './schema';
import { arrayOf, define, f32, fail, int, nonNegInt, nullable, num, obj, oneOf, posInt, ProtocolError, record, refine, str, tuple, u8 } from './schema';

/** A JSON value, checked (a model config crosses as JSON). */
const json: Schema<Json> = define((v, p) => {
  if (v === null || typeof v === 'boolean' || typeof v === 'string' || typeof v === 'number') return;
  if (Array.isArray(v)) return v.forEach((x: unknown, i) => json.check(x, `${p}[${i}]`));
  if (typeof v === 'object') return void record(json).check(v, p);
  fail(p, 'JSON', v);
});

/** Sizes of the model being trained. */
export const modelInfo = obj({
  config: record(json),
  params: nonNegInt,
  paramsByModule: record(nonNegInt),
  memoryBytes: nonNegInt,
  flopsPerToken: num,
  backend: str,
});
export type ModelInfo = Infer<typeof modelInfo>;

function fills(data: { readonly length: number }, shape: readonly number[], p: string): void {
  const n = shape.reduce((a, b) => a * b, 1);
  if (data.length !== n) throw new ProtocolError(`${p}.data: ${data.length} values do not fill shape [${shape.join(', ')}]`);
}

/** Attention probabilities of one layer for the probe sample: [heads, rows, cols]. */
export const attentionMapData = refine(
  obj({
    stack: oneOf('encoder', 'decoder'),
    kind: oneOf('self', 'cross'),
    layer: nonNegInt,
    shape: tuple('[heads, rows, cols]', nonNegInt, nonNegInt, nonNegInt),
    data: f32,
  }),
  (m, p) => fills(m.data, m.shape, p),
);
export type AttentionMapData = Infer<typeof attentionMapData>;

/** A mask as the engine used it, with its broadcast shape ([B,1,1,S], [1,1,T,T] …). */
export const maskData = refine(obj({ name: str, shape: arrayOf(nonNegInt), data: u8 }), (m, p) => fills(m.data, m.shape, p));
export type MaskData = Infer<typeof maskData>;

/** Snapshot of the probe sample's attention at one step. */
export const attentionSnapshot = obj({
  step: nonNegInt,
  /** Token strings of the source (encoder-decoder) and of the decoder input. */
  srcTokens: arrayOf(str),
  tgtTokens: arrayOf(str),
  maps: arrayOf(attentionMapData),
  masks: arrayOf(maskData),
});
export type AttentionSnapshot = Infer<typeof attentionSnapshot>;

/** Options of one playground decode. */
export const decodeParams = obj({
  input: str,
  strategy: oneOf('greedy', 'beam', 'sample'),
  beam: posInt,
  lengthPenalty: num,
  temperature: num,
  topK: nonNegInt,
  topP: num,
  maxTokens: posInt,
  seed: int,
});
export type DecodeParams = Infer<typeof decodeParams>;

/** Attention of a decode's generated tokens, per decoder layer ([H, T, K] self, [H, T, S] cross). */
export const decodeAttentionData = obj({
  queryStart: nonNegInt,
  queries: nonNegInt,
  selfKeys: nonNegInt,
  sourceLength: nonNegInt,
  nHeads: posInt,
  self: arrayOf(f32),
  cross: arrayOf(f32),
});
export type DecodeAttentionData = Infer<typeof decodeAttentionData>;

/** A finished decode. */
export const decodeOutput = obj({
  text: str,
  promptTokens: arrayOf(str),
  tokens: arrayOf(str),
  ids: arrayOf(int),
  logprobs: arrayOf(num),
  score: num,
  attention: nullable(decodeAttentionData),
  /** Beam search: the n-best texts and scores. */
  beams: arrayOf(obj({ text: str, score: num })),
});
export type DecodeOutput = Infer<typeof decodeOutput>;

/** Validates an attention snapshot (e.g. read back from snapshots). */
export function validateSnapshot(v: unknown, where = 'snapshot'): AttentionSnapshot {
  return attentionSnapshot.check(v, where);
}

/** Validates model info. */
export function validateModelInfo(v: unknown, where = 'model'): ModelInfo {
  return modelInfo.check(v, where);
}
