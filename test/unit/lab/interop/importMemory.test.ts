/**
 * A GPT-2-layout checkpoint generated at test time (src/bench/randomGpt2.ts, the generator
 * the import bench uses for the 124M model) goes through the model worker's service as the
 * dashboard asks it: imported, the attention of a text of its whole context but one token,
 * the logit lens of that text, 20 tokens decoded with the key/value cache, and the text
 * scored. The sizes are smaller than GPT-2 small's (2 layers, d 64, 1257 ids) to keep the
 * test's memory sane; `attention-lab bench --import` runs the same path at 124M.
 */

import { describe, expect, it } from 'vitest';
import { runImportBench } from '../../../../src/bench/benchImport';

describe('import of a generated GPT-2-layout model, through the model worker', () => {
  it('imports; answers attention, lens, decode and score of a text of the context', async () => {
    const r = await runImportBench(
      { nLayer: 2, nEmbd: 64, nHead: 4, nPositions: 128, merges: 1000 },
      () => undefined,
      1000,
    );
    expect(r.params).toBe(1257 * 64 + 128 * 64 + 2 * (12 * 64 * 64 + 13 * 64) + 2 * 64);
    expect(r.textTokens).toBe(127); // capped at the context less BOS
    expect(r.attentionTokens).toBe(128);
    expect(r.attentionShape).toEqual([4, 128, 128]);
    expect(r.heads).toBe(2 * 4);
    expect(r.layerBytes).toBe(4 * 128 * 128); // one byte per weight
    expect(r.overviewBytes).toBe(2 * r.layerBytes); // 128 positions fit an overview whole
    expect(r.lensPositions).toBe(128);
    expect(r.decodeTokens).toBe(20);
    expect(r.scoredTokens).toBe(127);
    expect(r.msPerToken).toBeGreaterThan(0);
    expect(r.peakMiB.score).toBeGreaterThanOrEqual(r.peakMiB.import);
  }, 120_000);
});
