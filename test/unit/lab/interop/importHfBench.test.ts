/**
 * `bench --import <family>` at a small size: a random Qwen2-layout folder (bf16, sharded with an
 * index, q/k/v biases, grouped-query heads, tied) is written, imported through the model worker's
 * service, its attention, logit lens and scores over a text of the context less one taken and 20 tokens decoded.
 */

import { describe, expect, it } from 'vitest';
import { runImportBench } from '../../../../src/bench/benchImport';
import { RANDOM_HF } from '../../../../src/bench/randomHf';

describe('import bench of a random Hugging Face family folder, through the model worker', () => {
  it('imports a sharded bf16 Qwen2-layout folder; answers attention of every layer and head, lens, score and decode', async () => {
    const spec = {
      ...RANDOM_HF['qwen2.5'],
      name: 'Qwen2.5-tiny-random',
      layers: 2,
      hidden: 64,
      heads: 4,
      kvHeads: 2,
      intermediate: 96,
      vocab: 1024,
      context: 256,
      shardBytes: 64 * 1024,
    };
    const r = await runImportBench(spec, () => undefined, 1024);
    const kv = 2 * 16;
    const layer = 2 * 64 * 64 + 2 * kv * 64 + 64 + 2 * kv + 3 * 96 * 64 + 2 * 64;
    expect(r.params).toBe(1024 * 64 + 2 * layer + 64);
    expect(r.fileBytes).toBe(2 * r.params);
    expect(r.model).toMatch(/Qwen2\.5-tiny-random .*sharded/);
    expect(r.textTokens).toBe(255); // the context less one
    expect(r.attentionShape).toEqual([4, 255, 255]); // Qwen's tokenizer adds no BOS, so neither does the lab
    expect(r.heads).toBe(2 * 4);
    expect(r.decodeTokens).toBe(20);
    expect(r.lensPositions).toBe(255); // the lens and the scores too (their layers reuse buffers)
    expect(r.scoredTokens).toBe(254); // no BOS: the first token is not scored
    expect(r.openSeconds).toBeGreaterThan(0); // the run opened once more, as the attention opens it
    expect(r.openCpuSeconds).toBeGreaterThan(0);
  }, 120_000);
});
