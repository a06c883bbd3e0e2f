/**
 * The samples printed after `train` (src/cli/samples.ts) continue held-out text through the
 * one decode pipeline: on a run with GPT-2's vocabulary (imported, as `train --resume`
 * continues it) they stop at its <|endoftext|>, and id 2 — "#" there — is an ordinary token.
 * The model is the shipped tiny GPT-2 with its output pinned: the final LayerNorm's gain
 * is zeroed and its bias set to a unit vector e₀, so every position's logits are column 0
 * of the (tied) embedding table, which the test writes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../src/lab/files/fs.node';
import { createReferenceBackend } from '../../../src/engine/backends/reference';
import { importCheckpoint } from '../../../src/lab/interop/importCheckpoint';
import { decodeText } from '../../../src/lab/inference/decode';
import type { OpenRun } from '../../../src/lab/inference/openRun';
import { openRun } from '../../../src/lab/inference/openRun';
import { sampleRun } from '../../../src/cli/samples';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-samples-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

let r: OpenRun;
beforeAll(async () => {
  const out = path.join(root, 'gpt2');
  await importCheckpoint(NODE_FS, { from: path.join(__dirname, '../../golden/import/hf-gpt2'), out });
  const opened = await openRun(NODE_FS, out, createReferenceBackend(), 1);
  r = { ...opened, run: { ...opened.run, data: { ...opened.run.data, prompts: ['ab', 'the station!'] } } };
  r.model.param('transformer.ln_f.weight').data.fill(0);
  const bias = r.model.param('transformer.ln_f.bias').data;
  bias.fill(0);
  bias[0] = 1;
});

/** Makes `id` the model's only choice at every position (logit 1, every other 0). */
function pin(id: number): void {
  const C = r.model.config.dModel;
  const table = r.model.param('transformer.wte.weight').data;
  for (let v = 0; v < r.model.config.vocabSize; v++) table[v * C] = v === id ? 1 : 0;
}

describe('the samples after train, on a GPT-2 vocabulary', () => {
  it("stop at the tokenizer's EOS (<|endoftext|>), leaving it out of the text", async () => {
    const { eos } = r.tok.specialIds;
    expect(eos).toBe(r.tok.vocabSize - 1);
    pin(eos);
    const samples = await sampleRun(r, 2);
    expect(samples).toEqual([
      { kind: 'text', input: 'ab', output: '' },
      { kind: 'text', input: 'the station!', output: '' },
    ]);
  });

  it('go on past id 2, an ordinary token there, up to the context', async () => {
    expect(r.tok.specialIds.eos).not.toBe(2);
    pin(2);
    const [s] = await sampleRun(r, 1);
    const L = r.model.config.maxLen;
    const prompt = r.tok.encode('ab', { bos: true }).length;
    expect(s).toEqual({ kind: 'text', input: 'ab', output: r.tok.decode(new Array<number>(L - prompt).fill(2)) });
    expect(s?.output.length).toBeGreaterThan(1);
    // The same text as the decode behind `decode`, the playground and the editor.
    const d = decodeText(r, {
      input: 'ab',
      strategy: 'greedy',
      beam: 1,
      lengthPenalty: 0.6,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: L - prompt,
      seed: 1,
    });
    expect(d.output.text).toBe(s?.output);
  });

  it('cut the held-out beginning so BOS and its tokens leave room in the context', async () => {
    const long = { ...r, run: { ...r.run, data: { ...r.run.data, prompts: ['x'.repeat(40)] } } };
    const [s] = await sampleRun(long, 1);
    const L = r.model.config.maxLen;
    expect(r.tok.encode(s?.input ?? '', { bos: true }).length).toBeLessThanOrEqual(L - 1);
    expect(r.tok.encode(`${s?.input ?? ''}x`, { bos: true }).length).toBeGreaterThan(L - 1);
    expect(s?.output.length).toBeGreaterThan(0);
  });
});
