/**
 * Small synthetic runs for the browser tests, built in code where the recorded fixtures lack a
 * case: a probe batch with padding (the recorded reverse-task probe is one unpadded sample),
 * so PAD tokens, padded key columns and a [B,1,T,T] combination with padding can be asserted.
 *
 * Batch of B = 2, one layer, H = 2 heads: item 0 has source "a b c <eos> <pad> <pad>"
 * (S = 6, 2 PAD) and target "<bos> c b a <pad>" (T = 5, 1 PAD); item 1 has no padding.
 * Head 0 spreads attention evenly over the keys it may see; head 1 puts 0.7 on one of them.
 *
 * Leaves out: realism (the values only need to be known exactly).
 */

import type { StepMetrics } from '../../src/protocol/data';
import type {
  AttentionMapData,
  AttentionSnapshot,
  AttentionStack,
  HeadScoreData,
  MaskData,
} from '../../src/protocol/model';
import type { RunState } from '../../src/protocol/webview';

export const PADDED = {
  srcTokens: ['a', 'b', 'c', '<eos>', '<pad>', '<pad>'],
  tgtTokens: ['<bos>', 'c', 'b', 'a', '<pad>'],
  srcPad: [
    [1, 1, 1, 1, 0, 0],
    [1, 1, 1, 1, 1, 1],
  ],
  tgtPad: [
    [1, 1, 1, 1, 0],
    [1, 1, 1, 1, 1],
  ],
  H: 2,
  S: 6,
  T: 5,
  B: 2,
} as const;

/** Attention rows for item 0: uniform (head 0) or 0.7 on one allowed key (head 1) over `allowed(t, s)`. */
function map(
  stack: AttentionStack,
  rows: number,
  cols: number,
  allowed: (t: number, s: number) => boolean,
): AttentionMapData {
  const H = PADDED.H;
  const data = new Float32Array(H * rows * cols);
  for (let h = 0; h < H; h++) {
    for (let t = 0; t < rows; t++) {
      const keys = Array.from({ length: cols }, (_, s) => s).filter((s) => allowed(t, s));
      keys.forEach((s, i) => {
        let p = 1 / keys.length;
        if (h === 1 && keys.length > 1) p = i === t % keys.length ? 0.7 : 0.3 / (keys.length - 1);
        data[(h * rows + t) * cols + s] = p;
      });
    }
  }
  return { stack, layer: 0, shape: [H, rows, cols], data };
}

function mask(name: string, shape: number[], f: (b: number, t: number, s: number) => number): MaskData {
  const [B = 1, , R = 1, C = 1] = shape;
  const data = new Uint8Array(B * R * C);
  for (let b = 0; b < B; b++)
    for (let t = 0; t < R; t++) for (let s = 0; s < C; s++) data[(b * R + t) * C + s] = f(b, t, s);
  return { name, shape, data };
}

/** The padded probe snapshot at `step`. */
export function paddedSnapshot(step: number): AttentionSnapshot {
  const { B, S, T, srcPad, tgtPad } = PADDED;
  const sp = (b: number, s: number): number => srcPad[b]?.[s] ?? 0;
  const tp = (b: number, s: number): number => tgtPad[b]?.[s] ?? 0;
  return {
    step,
    srcTokens: [...PADDED.srcTokens],
    tgtTokens: [...PADDED.tgtTokens],
    maps: [
      map('encoder.self', S, S, (_t, s) => sp(0, s) === 1),
      map('decoder.self', T, T, (t, s) => s <= t && tp(0, s) === 1),
      map('decoder.cross', T, S, (_t, s) => sp(0, s) === 1),
    ],
    masks: [
      mask('source.padding', [B, 1, 1, S], (b, _t, s) => sp(b, s)),
      mask('target.padding', [B, 1, 1, T], (b, _t, s) => tp(b, s)),
      mask('decoder.causal', [1, 1, T, T], (_b, t, s) => (s <= t ? 1 : 0)),
      mask('decoder.self', [B, 1, T, T], (b, t, s) => (s <= t && tp(b, s) === 1 ? 1 : 0)),
    ],
  };
}

/** A run with `n` logged steps, a few evaluations and two padded snapshots. */
export function paddedRun(id = 'padded', n = 20): RunState {
  const steps: StepMetrics[] = Array.from({ length: n }, (_, i) => ({
    step: i + 1,
    loss: 4 / (i + 1) + 0.5,
    lr: 1e-3,
    gradNorm: 1,
    tokens: 50,
    tokensPerSec: 1000,
    elapsedMs: 10 * (i + 1),
  }));
  return {
    run: {
      id,
      name: id,
      runDir: `/runs/${id}`,
      status: 'completed',
      kind: 'encoder-decoder',
      step: n,
      totalSteps: n,
      segments: [{ fromStep: 0, toStep: n, schedule: 'cosine' }],
      bestValLoss: 0.9,
      data: null,
      model: {
        config: {
          kind: 'encoder-decoder',
          dModel: 8,
          nHeads: 2,
          dFF: 16,
          nEncoderLayers: 1,
          nDecoderLayers: 1,
          vocabSize: 270,
          srcVocabSize: 270,
          maxLen: 8,
        },
        params: 1000,
        paramsByModule: { embeddings: 600, 'encoder.0': 200, 'decoder.0': 200 },
        memoryBytes: 65536,
        flopsPerToken: 6000,
        backend: 'reference',
      },
    },
    steps,
    evals: [
      { step: n / 2, loss: 1.2, ppl: Math.exp(1.2), exactMatch: 0.1, bleu: null },
      { step: n, loss: 0.9, ppl: Math.exp(0.9), exactMatch: 0.3, bleu: null },
    ],
    snapshots: [paddedSnapshot(n / 2), paddedSnapshot(n)],
  };
}

/**
 * A decoder-only run with head scores at every snapshot, for the Heads tab: `layers` × `heads`
 * heads, a snapshot every 20 steps from step 0. Layer 2 head 3 grows into an induction head
 * (its score rises past 0.5 at step {@link INDUCTION_CROSSING}), layer 1 head 2 into a
 * previous-token head; the rest drift around 0.1. The maps are tiny (2 × 2): the Heads tab
 * reads only the scores.
 */
export const INDUCTION_CROSSING = 840;

/** Induction score of layer 2 head 3 at `step` (crosses 0.5 between 820 and 840). */
export function inductionAt(step: number): number {
  return 0.9 / (1 + Math.exp(-(step - 830) / 40));
}

/** The scored snapshot at `step`. */
export function scoredSnapshot(step: number, layers: number, heads: number): AttentionSnapshot {
  const headScores: HeadScoreData[] = [];
  for (let layer = 0; layer < layers; layer++) {
    for (let head = 0; head < heads; head++) {
      const wobble = 0.05 * Math.sin(step / 97 + layer * 3 + head);
      const base = 0.1 + wobble;
      headScores.push({
        stack: 'decoder.self',
        layer,
        head,
        scores: {
          previousToken: layer === 0 && head === 1 ? Math.min(0.95, step / 1000) : base,
          firstToken: 0.3 + wobble - (0.2 * step) / 2000,
          diagonal: base,
          induction: layer === 1 && head === 2 ? inductionAt(step) : Math.max(0, base - 0.05),
          entropy: 2.5 - step / 1000 + wobble + layer * 0.1,
        },
      });
    }
  }
  const maps = Array.from({ length: layers }, (_, layer): AttentionMapData => ({
    stack: 'decoder.self',
    layer,
    shape: [heads, 2, 2],
    data: new Float32Array(heads * 4).map((_, i) => (i % 4 === 1 ? 0 : i % 4 === 0 ? 1 : 0.5)),
  }));
  return {
    step,
    srcTokens: [],
    tgtTokens: ['<bos>', 'a'],
    maps,
    masks: [mask('decoder.causal', [1, 1, 2, 2], (_b, t, s) => (s <= t ? 1 : 0))],
    headScores,
  };
}

/** The run's start, steps and snapshots up to `last`, as a live run would send them. */
export function scoredRun(id: string, layers: number, heads: number, last: number): RunState {
  const steps: StepMetrics[] = Array.from({ length: last }, (_, i) => ({
    step: i + 1,
    loss: 3 * Math.exp(-(i + 1) / 500) + 0.4 - (i + 1 > INDUCTION_CROSSING ? 0.3 : 0),
    lr: 1e-3,
    gradNorm: 1,
    tokens: 64,
    tokensPerSec: 5000,
    elapsedMs: 20 * (i + 1),
  }));
  const snapshots = Array.from({ length: Math.floor(last / 20) + 1 }, (_, i) => scoredSnapshot(20 * i, layers, heads));
  return {
    run: {
      id,
      name: id,
      runDir: `/runs/${id}`,
      status: 'training',
      kind: 'decoder-only',
      step: last,
      totalSteps: 2000,
      segments: [{ fromStep: 0, toStep: 2000, schedule: 'cosine' }],
      bestValLoss: null,
      data: null,
      model: {
        config: {
          kind: 'decoder-only',
          dModel: 64,
          nHeads: heads,
          dFF: 256,
          nEncoderLayers: 0,
          nDecoderLayers: layers,
          vocabSize: 270,
          maxLen: 64,
        },
        params: 100000,
        paramsByModule: { embeddings: 20000, decoder: 80000 },
        memoryBytes: 1 << 20,
        flopsPerToken: 6e5,
        backend: 'wasm',
      },
    },
    steps,
    evals: [],
    snapshots,
  };
}
