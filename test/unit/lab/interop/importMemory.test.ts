/**
 * A GPT-2-layout checkpoint generated at test time (src/bench/randomGpt2.ts, the generator
 * the import bench uses for the 124M model) imports, decodes 20 tokens with the key/value
 * cache and returns the attention of its whole context (128 tokens) on the WebAssembly backend. The sizes are
 * smaller than GPT-2 small's (2 layers, d 64, 1257 ids) to keep the test's memory sane;
 * `attention-lab bench --import` runs the same path at 124M.
 */

import { describe, expect, it } from 'vitest';
import { runImportBench } from '../../../../src/bench/benchImport';

describe('import of a generated GPT-2-layout model', () => {
  it('loads, decodes 20 tokens with the cache and returns the attention of its whole context', async () => {
    const r = await runImportBench({ nLayer: 2, nEmbd: 64, nHead: 4, nPositions: 128, merges: 1000 });
    expect(r.params).toBe(1257 * 64 + 128 * 64 + 2 * (12 * 64 * 64 + 13 * 64) + 2 * 64);
    expect(r.decodeTokens).toBe(20);
    expect(r.attentionTokens).toBe(128);
    expect(r.attentionShape).toEqual([4, 128, 128]);
    expect(r.heads).toBe(2 * 4);
    expect(r.attentionBytes).toBe(2 * 4 * 128 * 128); // one byte per weight
    expect(r.overviewBytes).toBe(r.attentionBytes); // 128 positions fit an overview whole
    expect(r.msPerToken).toBeGreaterThan(0);
  }, 120_000);
});
