/**
 * Characters split across tokens in the logit lens: with a byte-level BPE (a small random
 * GPT-2-layout model, src/bench/randomGpt2.ts, whose merges cover no CJK), 映画 is six byte
 * tokens. The lens's columns are the text's tokens as the Attention axes label them (映…,
 * …映…, …映), and a cell's candidate that is the text's own next token reads as that token's
 * column does — not as byte codes (<0xE6><0x98>…).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { tokenLabels } from '../../../../src/engine/tokenizers/tokenDisplay';
import { writeRandomGpt2 } from '../../../../src/bench/randomGpt2';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { inputBatch, logitLens, topTokens } from '../../../../src/lab/inference/lens';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { openRun } from '../../../../src/lab/inference/openRun';

let root = '';
let r: OpenRun;
beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-lens-partial-'));
  writeRandomGpt2(path.join(root, 'gpt2'), { nLayer: 1, nEmbd: 16, nHead: 2, nPositions: 32, merges: 20 }, 7);
  await importCheckpoint(NODE_FS, { from: path.join(root, 'gpt2'), out: path.join(root, 'run') });
  r = await openRun(NODE_FS, path.join(root, 'run'), createReferenceBackend());
}, 60_000);
afterAll(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe('logit lens: a character split across tokens', () => {
  it("a candidate that is the text's next token reads as its column does (the Attention axes' label), never as byte codes", () => {
    const prompt = '映画';
    const ids = r.tok.encode(prompt);
    expect(ids).toHaveLength(6); // E6 98 A0 E7 94 BB, one byte each
    const lens = logitLens(r, { prompt }, { topK: 50 });
    const axis = tokenLabels(r.tok, Int32Array.of(r.tok.specialIds.bos, ...ids));
    expect(lens.tokens).toEqual(axis);
    expect(axis.slice(1)).toEqual(['映…', '…映…', '…映', '画…', '…画…', '…画']);
    // Where the text's next token begins or continues a character (映…, …映…, 画…, …画…), that
    // candidate reads as the axis does: every candidate of the vocabulary is listed, so it is there.
    const batch = inputBatch(r, { prompt });
    r.model.forward(batch, { train: false, labelSmoothing: 0 });
    const logits = Float32Array.from(r.model.logits());
    const V = r.model.config.vocabSize;
    for (let t = 0; t + 1 < axis.length; t++) {
      const next = axis[t + 1] as string;
      const all = topTokens(r, logits, t, V, batch.input.subarray(0, t + 1), batch.input.subarray(t + 1)).map(
        (c) => c.token,
      );
      expect(all).toContain(next);
      expect(all.filter((c) => c === next)).toHaveLength(1);
    }
  });
});
