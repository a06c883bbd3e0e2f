/**
 * The head scores of a snapshot: the positional scores and cross-attention alignment of
 * every head on the probe sample, and induction on the run's diagnostic sequences — seeded
 * random tokens repeated twice, with eight periods and starts, run through the model at
 * snapshot time (never per step), at most DIAGNOSTIC_MAX_LEN positions each; a head's
 * induction is its mean over them.
 * The score definitions live in the engine (src/engine/analysis/headScores.ts); this file
 * only decides which batch each is measured on and which rows and keys are real tokens.
 *
 * Leaves out: storing the scores (snapshots.ts) and printing them (src/cli/heads.ts).
 */

import type { HeadMap, Repeat } from '../../engine/analysis/headScores';
import { crossHeadScores, selfHeadScores } from '../../engine/analysis/headScores';
import type { AttentionStack } from '../../engine/models/heads';
import type { Batch } from '../../engine/models/inputs';
import type { Transformer } from '../../engine/models/transformer';
import type { SpecialIds } from '../../engine/tokenizers/special';
import { BASE_VOCAB, NUM_SPECIAL } from '../../engine/tokenizers/special';
import { probsOf } from '../../common/attentionCodec';
import type { AttentionMapData, HeadScoreData } from '../../protocol/model';
import { STREAMS, stepRng } from '../data/dataset';
import { randomSegment, repeatBatch, repeatOf } from '../data/inductionTask';

/** Longest random segment of a diagnostic sequence (it is seen twice). */
const MAX_SEGMENT = 32;
/** Fewest learned entries (characters, merges) the segments are drawn from before byte tokens stand in. */
const MIN_LEARNED = 4;
/**
 * Longest diagnostic sequence: a model with a longer context is still probed on at most this
 * many positions (the fillers are drawn shorter), so measuring a 1024-token model costs eight
 * short passes, not eight full contexts.
 */
export const DIAGNOSTIC_MAX_LEN = 4 * MAX_SEGMENT;
/** Diagnostic sequences induction is averaged over (each with its own period and start). */
const DIAGNOSTIC_ROWS = 8;
/**
 * Shortest period: at 2 the token after the earlier occurrence is the previous token, so a previous-token head would
 * score.
 */
const MIN_PERIOD = 3;

/** One diagnostic sequence and where it repeats. */
export interface DiagnosticRow {
  readonly batch: Batch;
  readonly repeat: Repeat;
}

/**
 * The diagnostic sequences induction is measured on: each is BOS + P random filler tokens +
 * L random tokens + the same L tokens again, drawn from (seed) alone, so every snapshot of a
 * run measures the same sequences. Their periods L are spread from max(3, Lmax/3) to Lmax
 * and their fillers P vary, so a head that attends a fixed offset or a fixed position reaches
 * the induction target in few of them: only a head that finds the earlier copy by content
 * scores high on their mean (one fixed-position repeat once let a one-layer head score
 * 0.72). Tokens are distinct non-special ids within a sequence, drawn from the learned
 * entries (characters, merges), with P + L capped at their number, so a run is not probed
 * with byte tokens it never trained (their embeddings are still random; a 26-letter run in a
 * context of 64 was once measured mostly on them); only a vocabulary with fewer than
 * MIN_LEARNED learned entries falls back to bytes. The tokenizer's special ids (`ids`: BOS
 * first, and never among the drawn tokens) are its own, e.g. GPT-2's <|endoftext|> in a
 * vocabulary loaded from its files. The encoder-decoder gets the same tokens as its source,
 * so its encoder heads are measured too. Null when the context or the vocabulary is too
 * small for a repeat of 3. `within`: the most positions a row may take (default: what the
 * model's forward is planned for; the key/value-cache path of an opened run passes its context).
 */
export function diagnosticRows(
  model: Transformer,
  ids: SpecialIds,
  seed: number,
  within: number = model.config.kind === 'encoder-decoder' ? Math.min(model.maxLen, model.maxSrcLen) : model.maxLen,
): DiagnosticRow[] | null {
  const cfg = model.config;
  const maxLen = Math.min(DIAGNOSTIC_MAX_LEN, within);
  const vocab = cfg.kind === 'encoder-decoder' ? Math.min(cfg.vocabSize, cfg.srcVocabSize) : cfg.vocabSize;
  const learned = vocab - BASE_VOCAB;
  const lo = learned >= MIN_LEARNED ? BASE_VOCAB : NUM_SPECIAL;
  const specials = new Set([ids.pad, ids.bos, ids.eos, ids.unk]);
  const pool: number[] = [];
  for (let id = lo; id < vocab; id++) if (!specials.has(id)) pool.push(id);
  const n = pool.length;
  const Lmax = Math.min(MAX_SEGMENT, Math.floor(maxLen / 2), n);
  if (Lmax < MIN_PERIOD) return null;
  const Lmin = Math.max(MIN_PERIOD, Math.floor(Lmax / 3));
  const rng = stepRng(seed, STREAMS.diagnostic, 0);
  return Array.from({ length: DIAGNOSTIC_ROWS }, (_, i) => {
    const L = Lmin + Math.round((i * (Lmax - Lmin)) / (DIAGNOSTIC_ROWS - 1));
    const P = rng.int(Math.min(maxLen - 2 * L, n - L) + 1);
    const drawn = randomSegment(rng, P + L, n).map((k) => pool[k] as number);
    const b = repeatBatch([{ filler: drawn.slice(0, P), segment: drawn.slice(P) }], ids.bos);
    return {
      batch: cfg.kind === 'encoder-decoder' ? { ...b, S: b.T, src: b.input.slice() } : b,
      repeat: repeatOf(L, P),
    };
  });
}

/**
 * Real tokens at the start of row 0 of `ids` [B, n]: up to the first `pad` (the tokenizer's PAD; −1, none, in GPT-2's
 * vocabulary).
 */
function realLength(ids: Int32Array | undefined, n: number, pad: number): number {
  let k = 0;
  while (ids && k < n && ids[k] !== pad) k++;
  return k;
}

function headMap(
  m: { readonly shape: readonly [number, number, number]; readonly data: Float32Array },
  rows: number,
  cols: number,
): HeadMap {
  return { probs: m.data, shape: m.shape, rows, cols };
}

/**
 * Receives one layer's attention [H, rows, cols] of a sequence being measured; the data is
 * valid only during the call.
 */
export type AttentionSink = (
  stack: AttentionStack,
  layer: number,
  data: Float32Array,
  shape: readonly [number, number, number],
) => void;

/** Runs a batch of one sequence through the model and hands every layer's attention to the sink. */
export type AttendBatch = (batch: Batch, sink: AttentionSink) => void;

/** Induction of every self-attention head, by `stack.layer`: per head, its mean over the diagnostic sequences. */
export type InductionByLayer = ReadonlyMap<string, readonly number[]>;

/**
 * Induction of every self-attention head of a model, measured on `rows` (the diagnostic
 * sequences) run through `attend` one at a time: each layer is scored as its attention
 * arrives, so no sequence's maps are kept.
 */
export function measureInduction(rows: readonly DiagnosticRow[], attend: AttendBatch): InductionByLayer {
  const sums = new Map<string, number[]>();
  for (const { batch, repeat } of rows) {
    attend(batch, (stack, layer, data, shape) => {
      if (stack === 'decoder.cross') return;
      const key = `${stack}.${layer}`;
      const per = selfHeadScores(headMap({ data, shape }, shape[1], shape[2]), repeat);
      const acc = sums.get(key) ?? new Array<number>(shape[0]).fill(0);
      per.forEach((x, h) => (acc[h] = (acc[h] ?? 0) + x.induction / rows.length));
      sums.set(key, acc);
    });
  }
  return sums;
}

/** The attention of a batch through a training model's forward pass (no dropout). */
export function forwardAttend(model: Transformer): AttendBatch {
  return (batch, sink) => {
    model.forward(batch, { train: false, labelSmoothing: 0, loss: false }); // the maps need no logits
    for (const m of model.captureAttention(0).maps) sink(m.stack, m.layer, m.data, m.shape);
  };
}

/** Which rows and keys of a probe are real tokens, per kind of attention. */
export interface ProbeExtent {
  /** Real tokens of the source and of the decoder input. */
  readonly srcLen: number;
  readonly tgtLen: number;
  /** Cross-attention alignment: rows that predict a target token (not EOS), keys of source tokens (not EOS). */
  readonly alignRows: number;
  readonly alignCols: number;
}

/** The extent of `batch` (item 0); `ids` are the tokenizer's special ids, which say where its text ends. */
export function probeExtent(batch: Batch, ids: SpecialIds): ProbeExtent {
  const { pad, eos } = ids;
  const srcLen = realLength(batch.src, batch.S ?? 0, pad);
  const tgtLen = realLength(batch.input, batch.T, pad);
  let alignRows = 0;
  while (alignRows < tgtLen && batch.targets[alignRows] !== eos && batch.targets[alignRows] !== pad) alignRows++;
  const alignCols = srcLen > 0 && batch.src?.[srcLen - 1] === eos ? srcLen - 1 : srcLen;
  return { srcLen, tgtLen, alignRows, alignCols };
}

/**
 * Scores of every head of one layer of the probe (its attention `data` [H, rows, cols]):
 * positional scores or cross-attention alignment on the probe's real tokens, induction from
 * `induction` (0 when it is null). With `kvHeads` (the layer's key/value heads, grouped-query
 * attention) each head also says the key/value head it reads (`kvGroup`).
 */
export function scoreLayer(
  stack: AttentionStack,
  layer: number,
  data: Float32Array,
  shape: readonly [number, number, number],
  e: ProbeExtent,
  induction: InductionByLayer | null,
  kvHeads?: number,
): HeadScoreData[] {
  const m = { data, shape };
  const H = shape[0];
  const group = (head: number): { kvGroup?: number } =>
    kvHeads !== undefined && kvHeads !== H ? { kvGroup: Math.floor(head / (H / kvHeads)) } : {};
  if (stack === 'decoder.cross')
    return crossHeadScores(headMap(m, e.alignRows, e.alignCols)).map((scores, head) => ({
      stack,
      layer,
      head,
      ...group(head),
      scores,
    }));
  const n = stack === 'encoder.self' ? e.srcLen : e.tgtLen;
  const ind = induction?.get(`${stack}.${layer}`);
  return selfHeadScores(headMap(m, n, n)).map((s, head) => ({
    stack,
    layer,
    head,
    ...group(head),
    scores: { ...s, induction: ind?.[head] ?? 0 },
  }));
}

/**
 * Scores of every head, from the captured maps of the probe (`probe`, item 0), with
 * induction from the diagnostic sequences (`induction`, see {@link measureInduction}).
 * `ids` are the tokenizer's special ids, which say where the probe's text ends.
 */
export function scoreHeads(
  probe: { batch: Batch; maps: readonly AttentionMapData[] },
  induction: InductionByLayer | null,
  ids: SpecialIds,
): HeadScoreData[] {
  const e = probeExtent(probe.batch, ids);
  return probe.maps.flatMap((m) => scoreLayer(m.stack, m.layer, probsOf(m.data), m.shape, e, induction, m.kvHeads));
}
