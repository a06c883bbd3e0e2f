/**
 * The CPU copy of a WebGPU run's model (sessionSetup.ts): planned for inference at the most rows that fit
 * WebAssembly's memory, so nanoGPT's shakespeare-char shape at batch 64 × 256 — refused when the copy was planned
 * as a training model (4.6 GiB) — now fits; and the validation loss of a model with fewer rows than the
 * batches (evaluate.ts validationLoss, which cuts each batch) is the loss of the whole batches.
 */

import { describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { presetConfig, validateConfig } from '../../../../src/engine/config';
import { memoryProblem } from '../../../../src/engine/models/estimate';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import type { Dataset } from '../../../../src/lab/data/dataset';
import { documentDataset } from '../../../../src/lab/data/dataset';
import { rowsOf, validationLoss } from '../../../../src/lab/evaluation/evaluate';
import { hostCopyRows } from '../../../../src/lab/training/sessionSetup';
import { CharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';

describe("a WebGPU run's CPU copy", () => {
  it("takes the rows of nanoGPT's shakespeare-char shape that fit, where the training model did not", () => {
    const cfg = validateConfig({
      ...presetConfig('decoder-only', 'tiny', 65),
      dModel: 384,
      nHeads: 6,
      dFF: 1536,
      nDecoderLayers: 6,
      maxLen: 256,
      dropout: 0,
    });
    const dataset = { maxBatch: 64, maxLen: 256, maxSrcLen: 0 } as Dataset;
    const shape = (rows: number) => ({ maxBatch: rows, maxLen: 256 });
    expect(memoryProblem(cfg, shape(64), 'training')).not.toBeNull(); // what was refused
    // As an inference model it keeps every row.
    expect(hostCopyRows(cfg, dataset)).toBe(64);
    expect(memoryProblem(cfg, shape(64), 'inference')).toBeNull();
    // At a context of 2048 it cannot: the most rows that fit, one more would not.
    const long = validateConfig({ ...cfg, maxLen: 2048 });
    const longData = { ...dataset, maxLen: 2048 } as Dataset;
    const at = (rows: number) => ({ maxBatch: rows, maxLen: 2048 });
    const rows = hostCopyRows(long, longData);
    expect(rows).toBeGreaterThanOrEqual(1);
    expect(rows).toBeLessThan(64);
    expect(memoryProblem(long, at(rows), 'inference')).toBeNull();
    expect(memoryProblem(long, at(rows + 1), 'inference')).not.toBeNull();
    // A small model keeps the dataset's rows.
    expect(hostCopyRows(presetConfig('decoder-only', 'tiny', 65), { ...dataset, maxLen: 64 } as Dataset)).toBe(64);
  });

  it('evaluates batches in parts on a model of fewer rows, to the loss of the whole batches', () => {
    const tok = new CharTokenizer([...'abcdefghijklmnopqrstuvwxyz ']);
    const text = 'the quick brown fox jumps over the lazy dog again and again '.repeat(20);
    const ids = tok.encode(text);
    const cfg = { ...presetConfig('decoder-only', 'tiny', tok.vocabSize), dropout: 0 };
    const dataset = documentDataset(ids, ids, 1, 5, 24, 3);
    expect(dataset.valBatches()[0]?.B).toBe(5);
    const whole = new Transformer(cfg, { maxBatch: 5, maxLen: 24 }).bind(createReferenceBackend());
    whole.initialize(new Rng(3));
    const parts = new Transformer(cfg, { maxBatch: 2, maxLen: 24 }).bind(createReferenceBackend());
    parts.params.set(whole.params);
    const a = validationLoss(whole, dataset, tok);
    const b = validationLoss(parts, dataset, tok);
    expect(b.tokens).toBe(a.tokens);
    expect(b.bytes).toBe(a.bytes);
    expect(Math.abs(b.loss - a.loss)).toBeLessThan(1e-6);
    // Cut as 2 + 2 + 1 rows, each row whole.
    const first = dataset.valBatches()[0];
    if (!first) throw new Error('no batch');
    const cut = rowsOf(first, 2);
    expect(cut.map((c) => c.B)).toEqual([2, 2, 1]);
    expect(Array.from(cut[2]?.input ?? [])).toEqual(Array.from(first.input.subarray(4 * 24)));
  });
});
