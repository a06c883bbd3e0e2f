/**
 * A GPT-2-layout checkpoint generated at test time (src/bench/randomGpt2.ts, the generator
 * the import bench uses for the 124M model) imports, decodes 20 tokens with the key/value
 * cache and returns attention for 64 tokens on the WebAssembly backend. The sizes are
 * smaller than GPT-2 small's (2 layers, d 64, 1257 ids) to keep the test's memory sane;
 * `attention-lab bench --import` runs the same path at 124M.
 */

import { describe, expect, it } from 'vitest';
import { runImportBench } from '../../../../src/bench/benchImport';

describe('import of a generated GPT-2-layout model', () => {
  it('loads, decodes 20 tokens with the cache and returns attention for 64 tokens', async () => {
    const r = await runImportBench({ nLayer: 2, nEmbd: 64, nHead: 4, nPositions: 128, merges: 1000 });
    expect(r.params).toBe(1257 * 64 + 128 * 64 + 2 * (12 * 64 * 64 + 13 * 64) + 2 * 64);
    expect(r.decodeTokens).toBe(20);
    expect(r.attentionTokens).toBe(64);
    expect(r.attentionShape).toEqual([4, 64, 64]);
    expect(r.msPerToken).toBeGreaterThan(0);
  }, 120_000);
});
