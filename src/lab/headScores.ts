/**
 * The head scores of a snapshot: the positional scores and cross-attention alignment of
 * every head on the probe sample, and induction on the run's diagnostic sequence — seeded
 * random tokens repeated twice, run through the model at snapshot time (never per step).
 * The score definitions live in the engine (src/engine/analysis/headScores.ts); this file
 * only decides which batch each is measured on and which rows and keys are real tokens.
 *
 * Leaves out: storing the scores (snapshots.ts) and printing them (src/cli/heads.ts).
 */

import type { HeadMap } from '../engine/analysis/headScores';
import { crossHeadScores, selfHeadScores } from '../engine/analysis/headScores';
import type { AttentionMap, Batch, Transformer } from '../engine/models/transformer';
import { BASE_VOCAB, EOS, NUM_SPECIAL, PAD } from '../engine/tokenizers/special';
import type { HeadScoreData } from '../protocol/model';
import { STREAMS, stepRng } from './dataset';
import { randomSegment, repeatBatch, repeatOf } from './inductionTask';

/** Longest random segment of the diagnostic sequence (it is seen twice). */
const MAX_SEGMENT = 32;
/** Fewest learned entries (characters, merges) the segment is drawn from before byte tokens stand in. */
const MIN_LEARNED = 4;

/**
 * The diagnostic batch: BOS + L random tokens + the same L tokens again, from (seed) alone,
 * so every snapshot of a run measures induction on the same sequence. Tokens are distinct
 * non-special ids drawn from the learned entries (characters, merges), with L capped at
 * their number, so a run is not probed with byte tokens it never trained (their embeddings
 * are still random; a 26-letter run in a context of 64 was once measured mostly on them);
 * only a vocabulary with fewer than MIN_LEARNED learned entries falls back to bytes.
 * The encoder-decoder gets the same tokens as its source, so its encoder heads are measured too.
 */
export function diagnosticBatch(model: Transformer, seed: number): Batch | null {
  const cfg = model.config;
  const maxLen = cfg.kind === 'encoder-decoder' ? Math.min(model.maxLen, model.maxSrcLen) : model.maxLen;
  const vocab = cfg.kind === 'encoder-decoder' ? Math.min(cfg.vocabSize, cfg.srcVocabSize) : cfg.vocabSize;
  const learned = vocab - BASE_VOCAB;
  const lo = learned >= MIN_LEARNED ? BASE_VOCAB : NUM_SPECIAL;
  const L = Math.min(MAX_SEGMENT, Math.floor(maxLen / 2), vocab - lo);
  if (L < 2) return null;
  const seg = randomSegment(stepRng(seed, STREAMS.diagnostic, 0), L, vocab - lo).map((i) => lo + i);
  const b = repeatBatch([{ filler: [], segment: seg }]);
  return cfg.kind === 'encoder-decoder' ? { ...b, S: b.T, src: b.input.slice() } : b;
}

/** Real (non-PAD) tokens at the start of row 0 of `ids` [B, n]. */
function realLength(ids: Int32Array | undefined, n: number): number {
  let k = 0;
  while (ids && k < n && ids[k] !== PAD) k++;
  return k;
}

function headMap(m: AttentionMap, rows: number, cols: number): HeadMap {
  return { probs: m.data, shape: m.shape, rows, cols };
}

/**
 * Scores of every head, from the captured maps of the probe (`probe`, item 0) and, when
 * given, of the diagnostic batch (`diag`), which only supplies induction.
 */
export function scoreHeads(probe: { batch: Batch; maps: readonly AttentionMap[] }, diag: { batch: Batch; maps: readonly AttentionMap[] } | null): HeadScoreData[] {
  const { batch } = probe;
  const S = batch.S ?? 0;
  const srcLen = realLength(batch.src, S);
  const tgtLen = realLength(batch.input, batch.T);
  // Alignment: rows that predict a target token (not EOS), keys of source tokens (not EOS).
  let alignRows = 0;
  while (alignRows < tgtLen && batch.targets[alignRows] !== EOS && batch.targets[alignRows] !== PAD) alignRows++;
  const alignCols = srcLen > 0 && batch.src?.[srcLen - 1] === EOS ? srcLen - 1 : srcLen;
  const out: HeadScoreData[] = [];
  for (const m of probe.maps) {
    if (m.kind === 'cross') {
      crossHeadScores(headMap(m, alignRows, alignCols)).forEach((scores, head) => out.push({ stack: 'decoder.cross', layer: m.layer, head, scores }));
      continue;
    }
    const n = m.stack === 'encoder' ? srcLen : tgtLen;
    const d = diag?.maps.find((x) => x.stack === m.stack && x.kind === 'self' && x.layer === m.layer);
    const induction = d ? selfHeadScores(headMap(d, d.shape[1], d.shape[2]), repeatOf((diag as { batch: Batch }).batch.T / 2)) : null;
    selfHeadScores(headMap(m, n, n)).forEach((s, head) => {
      out.push({ stack: m.stack === 'encoder' ? 'encoder.self' : 'decoder.self', layer: m.layer, head, scores: { ...s, induction: induction?.[head]?.induction ?? 0 } });
    });
  }
  return out;
}
