/**
 * Planning a trained model for what a request needs (src/lab/inference/requestPlan.ts): a
 * GPT-2-small-shaped model opened for the one sequence of a 1,000-token text fits in
 * WebAssembly's memory where 4 sequences of its whole context did not; the advice when it
 * does not fit names only what the person can change where they asked (the text, the beam
 * width); and the model worker and the CLI plan by it alike — a generated model whose whole
 * context at 4 sequences cannot fit answers the worker's lens and score, with the CLI's
 * numbers.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headSize, presetConfig } from '../../../../src/engine/config';
import type { ModelConfig } from '../../../../src/engine/config';
import type { Backend } from '../../../../src/engine/backend';
import { estimateModel, memoryProblem } from '../../../../src/engine/models/estimate';
import { qwen25Config } from '../../engine/models/hubShapes';
import { CharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { Transformer } from '../../../../src/engine/models/transformer';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { covers, planRequest } from '../../../../src/lab/inference/requestPlan';
import { checkMemory } from '../../../../src/lab/runs/memoryCheck';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { writeRandomGpt2 } from '../../../../src/bench/randomGpt2';
import type { LensOutputData } from '../../../../src/protocol/analysis';
import type { WorkerDoor } from './frontDoors';
import { cliJson, startModelWorker } from './frontDoors';

const gpt2 = { ...presetConfig('decoder-only', 'gpt', 50257), activation: 'geluTanh' as const };
const tok = new CharTokenizer(['a', 'b', ' ']);
const text = 'ab'.repeat(500); // 1,000 tokens of this tokenizer
const WASM = { name: 'wasm' } as Backend;

/** The message checkMemory refuses `plan` with on the WebAssembly backend ('' when it fits). */
function refusal(config: ModelConfig, plan: ReturnType<typeof planRequest>): string {
  try {
    checkMemory(config, plan.shape, WASM, 'inference', {
      ...(plan.decodeRows ? { decodeRows: plan.decodeRows } : {}),
      ...(plan.lower ? { lower: plan.lower } : {}),
    });
    return '';
  } catch (e) {
    return (e as Error).message;
  }
}

describe('planRequest: each request planned for what it runs', () => {
  it('GPT-2 small: the lens, score and ablation of a 1,000-token text plan one sequence of its length and fit; 4 × the context did not', () => {
    expect(tok.encode(text)).toHaveLength(1000);
    const lens = planRequest(gpt2, tok, { job: 'lens', input: { prompt: text } });
    // logits in chunks of 166 rows (32 MiB of 50,257 floats each), never [1024, V] whole
    expect(lens.shape).toEqual({ maxBatch: 1, maxLen: 1024, logitRows: 166, activations: 'streams' });
    expect(refusal(gpt2, lens)).toBe('');
    expect(planRequest(gpt2, tok, { job: 'score', text }).shape).toEqual({
      maxBatch: 1,
      maxLen: 1024,
      logitRows: 166,
      activations: 'top',
    });
    expect(memoryProblem(gpt2, { maxBatch: 4 }, 'inference')).toMatch(/needs 7\.\d\d GiB/);
    // A short text plans a short forward.
    expect(planRequest(gpt2, tok, { job: 'lens', input: { prompt: 'ab' } }).shape).toEqual({
      maxBatch: 1,
      maxLen: 64,
      logitRows: 64,
      activations: 'streams',
    });
    expect(planRequest(gpt2, tok, { job: 'score', text: 'ab'.repeat(50) }).shape).toEqual({
      maxBatch: 1,
      maxLen: 128,
      logitRows: 128,
      activations: 'top',
    });
  });

  it('attention and decoding run the key/value-cache path: one forward position, the beam width as decoding rows', () => {
    const attend = planRequest(gpt2, tok, { job: 'attend', text });
    // The forward of the same text (its lens and scores) is planned ahead when it fits, so the model is not reopened.
    expect(attend).toMatchObject({ shape: { maxBatch: 1, maxLen: 1024 }, decodeRows: 1 });
    expect(refusal(gpt2, attend)).toBe('');
    const wide = { ...gpt2, maxLen: 8192 };
    expect(planRequest(wide, tok, { job: 'attend', text: 'ab'.repeat(4000) }).shape).toEqual({
      maxBatch: 1,
      maxLen: 1,
      activations: 'top',
    });
    expect(planRequest(gpt2, tok, { job: 'decode', input: text, beam: 1 })).toEqual({
      shape: { maxBatch: 1, maxLen: 1, activations: 'top' },
      decodeRows: 1,
      decodePositions: 1024, // the prompt and 4096 tokens, at most the context
      decodePrompt: 1024,
    });
    // The key/value cache is counted for what the job feeds: a short prompt prefills little.
    expect(planRequest(wide, tok, { job: 'decode', input: 'ab', beam: 1 })).toMatchObject({
      decodePositions: 8192,
      decodePrompt: 64,
    });
    expect(planRequest(wide, tok, { job: 'attend', text: 'ab' })).toMatchObject({ decodePositions: 64 });
    expect(planRequest(gpt2, tok, { job: 'decode', input: 'ab', beam: 8 })).toMatchObject({
      decodeRows: 8,
      lower: 'lower the beam width (8)',
    });
    expect(refusal(gpt2, planRequest(gpt2, tok, { job: 'decode', input: 'ab', beam: 8 }))).toBe('');
  });

  it('when it does not fit, the advice names only the text or the beam width: no batch, flag or model setting', () => {
    const wide = { ...gpt2, maxLen: 8192 }; // a longer context: 8,000 positions of activations cannot fit
    const long = 'ab'.repeat(4000);
    const msg = refusal(wide, planRequest(wide, tok, { job: 'lens', input: { prompt: long } }));
    expect(msg).toMatch(/; shorten the text \(8,000 tokens\) until the rest fits in [\d.]+ GiB\.$/);
    expect(msg).toMatch(/for 1 × 8192 positions/);
    for (const other of [/batch/i, /--\w/, /maxLen/, /nDecoderLayers|dModel|fewer layers/, /positions planned/])
      expect(msg).not.toMatch(other);
    const beam = refusal(wide, planRequest(wide, tok, { job: 'decode', input: 'ab', beam: 64 }));
    expect(beam).toMatch(/lower the beam width \(64\)/);
    expect(beam).not.toMatch(/batch|--\w|shorten/);
  });

  it('Qwen2.5-0.5B: the lens and scores of a 300-token text fit with logits in chunks (refused whole before)', () => {
    const qwen = qwen25Config();
    const prompt = 'ab'.repeat(150); // 300 tokens: planned for 512 positions
    for (const plan of [
      planRequest(qwen, tok, { job: 'lens', input: { prompt } }),
      planRequest(qwen, tok, { job: 'score', text: prompt }),
    ]) {
      expect(plan.shape).toMatchObject({ maxBatch: 1, maxLen: 512, logitRows: 55 });
      expect(refusal(qwen, plan)).toBe('');
      const { logitRows: _whole, activations: _kept, ...whole } = plan.shape;
      expect(refusal(qwen, { ...plan, shape: whole })).toMatch(/shorten the text \(300 tokens\)/);
    }
  });

  it('Qwen2.5-0.5B: the lens and scores of a 1,000-token text fit, their layers reusing buffers (refused before)', () => {
    const qwen = qwen25Config();
    const { nDecoderLayers: L, dModel: C, dFF: F, nHeads: H, vocabSize: V } = qwen;
    const D = headSize(qwen);
    const T = 1024;
    const prompt = 'ab'.repeat(500); // 1,000 tokens: planned for 1,024 positions
    const lens = planRequest(qwen, tok, { job: 'lens', input: { prompt } });
    const score = planRequest(qwen, tok, { job: 'score', text: prompt });
    expect(lens.shape).toEqual({ maxBatch: 1, maxLen: T, logitRows: 55, activations: 'streams' });
    expect(score.shape).toEqual({ maxBatch: 1, maxLen: T, logitRows: 55, activations: 'top' });
    // A bound from the shape alone: two layers' activations at most (probabilities H·T², the feed-forward's 3·T·F,
    // 24 [T, C]-sized and 4 [T, H·D]-sized buffers and their gradient scratch, generously), the lens's L + 1 streams,
    // the logits chunk and its gradient, the masks and the model's own [T, C] buffers.
    const layer = 4 * T * (H * T + 3 * F + 24 * C + 4 * H * D);
    const bound = 3 * layer + 4 * (L + 1) * T * C + 2 * 4 * 55 * V + 3 * T * T + 4 * 8 * T * C;
    const lensBytes = estimateModel(qwen, lens.shape).activationBytes;
    const scoreBytes = estimateModel(qwen, score.shape).activationBytes;
    expect(lensBytes).toBeLessThan(bound);
    expect(scoreBytes).toBeLessThan(lensBytes); // no streams kept
    expect(lensBytes - scoreBytes).toBe(4 * (L - 1) * T * C); // the streams inside the model, exactly
    // Every layer keeping its own (what both planned before) needs more than 3.5 GB of activations alone.
    const { activations: _kept, ...before } = lens.shape;
    expect(estimateModel(qwen, before).activationBytes).toBeGreaterThan(3.5e9);
    expect(lensBytes).toBeLessThan(estimateModel(qwen, before).activationBytes / 5);
    for (const plan of [lens, score]) {
      expect(refusal(qwen, plan)).toBe('');
      expect(refusal(qwen, { ...plan, shape: before })).toMatch(/shorten the text \(1,000 tokens\)/);
      // parameters and activations within 4 GB (not GiB)
      expect(4 * estimateModel(qwen, plan.shape).params + estimateModel(qwen, plan.shape).activationBytes).toBeLessThan(
        4e9,
      );
    }
  });

  it("Qwen2.5-0.5B: the model opened for a 1,000-token text's attention serves its lens, decode and score", () => {
    // The model worker reopens a model that does not cover a request (each reopening held two models at once).
    const qwen = qwen25Config();
    const prompt = 'ab'.repeat(500);
    const attend = planRequest(qwen, tok, { job: 'attend', text: prompt });
    expect(attend.shape).toMatchObject({ maxLen: 1024, activations: 'streams' });
    const opened = { model: new Transformer(qwen, attend.shape), gradients: false } as unknown as OpenRun; // unbound
    for (const req of [
      { job: 'lens', input: { prompt } },
      { job: 'decode', input: prompt, beam: 1 },
      { job: 'score', text: prompt },
      { job: 'export' },
    ] as const)
      expect(covers(opened, planRequest(qwen, tok, req)), req.job).toBe(true);
    // patching and attribution plan for themselves, every layer's activations: a reopening
    expect(covers(opened, { shape: { maxBatch: 1, maxLen: 64 } })).toBe(false);
  });

  it('an encoder-decoder plans its source for its encoder', () => {
    const mt = { ...presetConfig('encoder-decoder', 'tiny', 40, 40) };
    for (const job of [
      { job: 'attend', text: 'ab' } as const,
      { job: 'lens', input: { src: 'ab', tgt: 'ba' } } as const,
    ])
      expect(planRequest(mt, tok, job).shape).toEqual({
        maxBatch: 1,
        maxLen: 64,
        maxSrcLen: 64,
        logitRows: 64,
        activations: 'streams',
      });
  });
});

describe('the model worker and the CLI plan alike', () => {
  // 2 layers of 32 heads over a context of 2048: 4 sequences of it need 4.3 GiB, one short text a few MiB.
  let root = '';
  let runDir = '';
  let worker: WorkerDoor;
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-plan-'));
    writeRandomGpt2(path.join(root, 'gpt2'), { nLayer: 2, nEmbd: 32, nHead: 32, nPositions: 2048, merges: 30 });
    runDir = path.join(root, 'run');
    await importCheckpoint(NODE_FS, { from: path.join(root, 'gpt2'), out: runDir });
    worker = await startModelWorker();
  }, 120_000);
  afterAll(async () => {
    await worker?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('a model whose whole context at 4 sequences cannot fit answers the lens and score of a short text, as the CLI does', async () => {
    const cfg = { ...gpt2, vocabSize: 287, nDecoderLayers: 2, nHeads: 32, dModel: 32, dFF: 128, maxLen: 2048 };
    expect(memoryProblem(cfg, { maxBatch: 4 }, 'inference')).not.toBeNull(); // what the worker used to open every run for
    const prompt = 'the cat sat';
    const lens = (
      await worker.request({ type: 'model/lens', runDir, input: { kind: 'decoder-only', prompt }, topK: 3, fit: true })
    ).at(-1);
    expect(lens?.type).toBe('model/didLens');
    const fromCli = cliJson<LensOutputData>([
      'lens',
      '--run',
      runDir,
      '--prompt',
      prompt,
      '--top-k',
      '3',
      '--backend',
      'wasm',
    ]);
    expect(lens?.type === 'model/didLens' ? lens.output.tokens : null).toEqual(fromCli.tokens);
    expect(
      lens?.type === 'model/didLens'
        ? lens.output.layers.map((l) => l.positions.map((p) => p.top.map((t) => t.token)))
        : null,
    ).toEqual(fromCli.layers.map((l) => l.positions.map((p) => p.top.map((t) => t.token))));
    const score = (await worker.request({ type: 'model/score', runDir, source: null, text: prompt })).at(-1);
    expect(score?.type).toBe('model/didScore');
    const scored = cliJson<{ logprobs: number[] }>(['score', '--run', runDir, '--text', prompt, '--backend', 'wasm']);
    const got = score?.type === 'model/didScore' ? score.output.logprobs : [];
    expect(got).toHaveLength(scored.logprobs.length);
    got.forEach((lp, i) => expect(lp).toBeCloseTo(scored.logprobs[i] as number, 4));
  }, 120_000);
});
