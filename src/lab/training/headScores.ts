/**
 * The head scores of a snapshot: the positional scores and cross-attention alignment of
 * every head on the probe sample, and induction on the run's diagnostic sequences — seeded
 * random tokens repeated twice, with eight periods and starts, run through the model at
 * snapshot time (never per step); a head's induction is its mean over them.
 * The score definitions live in the engine (src/engine/analysis/headScores.ts); this file
 * only decides which batch each is measured on and which rows and keys are real tokens.
 *
 * Leaves out: storing the scores (snapshots.ts) and printing them (src/cli/heads.ts).
 */

import type { HeadMap, Repeat } from '../../engine/analysis/headScores';
import { crossHeadScores, selfHeadScores } from '../../engine/analysis/headScores';
import type { Batch } from '../../engine/models/inputs';
import type { AttentionMap } from '../../engine/models/readouts';
import type { Transformer } from '../../engine/models/transformer';
import type { SpecialIds } from '../../engine/tokenizers/special';
import { BASE_VOCAB, NUM_SPECIAL } from '../../engine/tokenizers/special';
import type { HeadScoreData } from '../../protocol/model';
import { STREAMS, stepRng } from '../data/dataset';
import { randomSegment, repeatBatch, repeatOf } from '../data/inductionTask';

/** Longest random segment of a diagnostic sequence (it is seen twice). */
const MAX_SEGMENT = 32;
/** Fewest learned entries (characters, merges) the segments are drawn from before byte tokens stand in. */
const MIN_LEARNED = 4;
/** Diagnostic sequences induction is averaged over (each with its own period and start). */
const DIAGNOSTIC_ROWS = 8;
/** Shortest period: at 2 the token after the earlier occurrence is the previous token, so a previous-token head would score. */
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
 * small for a repeat of 3.
 */
export function diagnosticRows(model: Transformer, ids: SpecialIds, seed: number): DiagnosticRow[] | null {
  const cfg = model.config;
  const maxLen = cfg.kind === 'encoder-decoder' ? Math.min(model.maxLen, model.maxSrcLen) : model.maxLen;
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
    return { batch: cfg.kind === 'encoder-decoder' ? { ...b, S: b.T, src: b.input.slice() } : b, repeat: repeatOf(L, P) };
  });
}

/** Real tokens at the start of row 0 of `ids` [B, n]: up to the first `pad` (the tokenizer's PAD; −1, none, in GPT-2's vocabulary). */
function realLength(ids: Int32Array | undefined, n: number, pad: number): number {
  let k = 0;
  while (ids && k < n && ids[k] !== pad) k++;
  return k;
}

function headMap(m: AttentionMap, rows: number, cols: number): HeadMap {
  return { probs: m.data, shape: m.shape, rows, cols };
}

/** The captured attention of one diagnostic sequence. */
export interface DiagnosticMaps {
  readonly repeat: Repeat;
  readonly maps: readonly AttentionMap[];
}

/** Induction of every head of one self-attention layer: its mean over the diagnostic sequences. */
function meanInduction(diag: readonly DiagnosticMaps[], m: AttentionMap): number[] | null {
  const per = diag.flatMap((d) => {
    const x = d.maps.find((y) => y.stack === m.stack && y.layer === m.layer);
    return x ? [selfHeadScores(headMap(x, x.shape[1], x.shape[2]), d.repeat).map((s) => s.induction)] : [];
  });
  if (per.length === 0) return null;
  return Array.from({ length: m.shape[0] }, (_, h) => per.reduce((a, r) => a + (r[h] ?? 0), 0) / per.length);
}

/**
 * Scores of every head, from the captured maps of the probe (`probe`, item 0) and, when
 * given, of the diagnostic sequences (`diag`), which only supply induction (their mean).
 * `ids` are the tokenizer's special ids, which say where the probe's text ends.
 */
export function scoreHeads(probe: { batch: Batch; maps: readonly AttentionMap[] }, diag: readonly DiagnosticMaps[] | null, ids: SpecialIds): HeadScoreData[] {
  const { batch } = probe;
  const { pad, eos } = ids;
  const S = batch.S ?? 0;
  const srcLen = realLength(batch.src, S, pad);
  const tgtLen = realLength(batch.input, batch.T, pad);
  // Alignment: rows that predict a target token (not EOS), keys of source tokens (not EOS).
  let alignRows = 0;
  while (alignRows < tgtLen && batch.targets[alignRows] !== eos && batch.targets[alignRows] !== pad) alignRows++;
  const alignCols = srcLen > 0 && batch.src?.[srcLen - 1] === eos ? srcLen - 1 : srcLen;
  const out: HeadScoreData[] = [];
  for (const m of probe.maps) {
    const { stack, layer } = m;
    if (stack === 'decoder.cross') {
      crossHeadScores(headMap(m, alignRows, alignCols)).forEach((scores, head) => out.push({ stack, layer, head, scores }));
      continue;
    }
    const n = stack === 'encoder.self' ? srcLen : tgtLen;
    const induction = diag ? meanInduction(diag, m) : null;
    selfHeadScores(headMap(m, n, n)).forEach((s, head) => {
      out.push({ stack, layer, head, scores: { ...s, induction: induction?.[head] ?? 0 } });
    });
  }
  return out;
}
