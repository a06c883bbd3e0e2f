/**
 * Grouped-query attention in the head scores: each head says the key/value head it reads
 * (`kvGroup`), from the layer's `kvHeads` (a captured map's, or the model's), and nothing when
 * every head has its own.
 */
import { describe, expect, it } from 'vitest';
import type { ProbeExtent } from '../../../../src/lab/inference/headScores';
import { scoreHeads, scoreLayer } from '../../../../src/lab/inference/headScores';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { validateConfig } from '../../../../src/engine/config';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { OWN_SPECIAL_IDS } from '../../../../src/engine/tokenizers/special';
import { readSnapshot, saveSnapshot } from '../../../../src/lab/runs/snapshotFiles';
import { memoryTestFs } from '../files/fileSystems';

const n = 3;
const extent: ProbeExtent = { srcLen: n, tgtLen: n, alignRows: n, alignCols: n };
/** H heads of uniform causal attention over n positions. */
function uniform(H: number): Float32Array {
  const data = new Float32Array(H * n * n);
  for (let h = 0; h < H; h++)
    for (let t = 0; t < n; t++) for (let s = 0; s <= t; s++) data[(h * n + t) * n + s] = 1 / (t + 1);
  return data;
}

describe('head scores under grouped-query attention', () => {
  it('name the key/value head each query head reads: floor(h / (H / kvHeads))', () => {
    const heads = scoreLayer('decoder.self', 0, uniform(6), [6, n, n], extent, null, 2);
    expect(heads.map((h) => h.kvGroup)).toEqual([0, 0, 0, 1, 1, 1]);
    const mq = scoreLayer('decoder.cross', 1, uniform(4), [4, n, n], extent, null, 1);
    expect(mq.map((h) => h.kvGroup)).toEqual([0, 0, 0, 0]);
  });

  it('leave kvGroup out when every head has its own keys, or nothing says', () => {
    for (const kv of [4, undefined]) {
      const heads = scoreLayer('decoder.self', 0, uniform(4), [4, n, n], extent, null, kv);
      expect(heads.every((h) => !('kvGroup' in h))).toBe(true);
    }
  });

  it("take kvHeads from a training forward's captured maps, and keep both in a snapshot file", async () => {
    const cfg = validateConfig({
      kind: 'decoder-only',
      vocabSize: 11,
      srcVocabSize: 0,
      nEncoderLayers: 0,
      nDecoderLayers: 1,
      dModel: 8,
      nHeads: 4,
      nKvHeads: 2,
      dFF: 8,
      maxLen: 8,
      dropout: 0,
      norm: 'pre',
      positional: 'rope',
      activation: 'gelu',
      tieEmbeddings: true,
      bias: true,
      layerNormEps: 1e-5,
      embedScale: false,
      labelSmoothing: 0,
    });
    const m = new Transformer(cfg, { maxBatch: 1 }).bind(createReferenceBackend());
    m.initialize(new Rng(1));
    const batch = { B: 1, T: 4, input: Int32Array.of(1, 5, 6, 7), targets: Int32Array.of(5, 6, 7, 2) };
    m.forward(batch, { train: false });
    const maps = m.captureAttention(0).maps;
    expect(maps.map((x) => x.kvHeads)).toEqual([2]);
    const scores = scoreHeads({ batch, maps }, null, OWN_SPECIAL_IDS);
    expect(scores.map((h) => h.kvGroup)).toEqual([0, 0, 1, 1]);
    // A snapshot file keeps both: the maps' kvHeads in its metadata, kvGroup in the head scores.
    const t = memoryTestFs();
    const dir = await t.dir();
    const masks = m.captureAttention(0).masks.map((x) => ({ name: x.name, shape: x.shape, data: x.data }));
    await saveSnapshot(t.fs, dir, {
      step: 3,
      srcTokens: [],
      tgtTokens: ['a', 'b', 'c', 'd'],
      maps,
      masks,
      headScores: scores,
    });
    const back = await readSnapshot(t.fs, dir, 3);
    expect(back.maps.map((x) => x.kvHeads)).toEqual([2]);
    expect(back.headScores?.map((h) => h.kvGroup)).toEqual([0, 0, 1, 1]);
  });
});
