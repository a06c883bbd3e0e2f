import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import type { ModelConfig } from '../../../../src/engine/config';
import { presetConfig, presetNames, validateConfig } from '../../../../src/engine/config';
import { EngineError } from '../../../../src/engine/errors';
import { decodeSafetensors, encodeSafetensors } from '../../../../src/engine/io/safetensors';
import { isPaddedVocab } from '../../../../src/engine/models/importLayouts';
import type { Batch } from '../../../../src/engine/models/inputs';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { CancelledError } from '../../../../src/lab/base/cancelled';
import { pytorchConfig, pytorchTensors } from '../../../../src/lab/interop/exportPytorch';
import type { LabFs } from '../../../../src/lab/files/labFs';
import { exists, listNames, writeFile } from '../../../../src/lab/files/labFs';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { openRun } from '../../../../src/lab/inference/openRun';
import { readRunJson } from '../../../../src/lab/runs/runFolder';
import { writeTokenizer } from '../../../../src/lab/runs/tokenizerFile';
import type { TestFs } from '../files/fileSystems';
import { FILE_SYSTEMS, nodeTestFs } from '../files/fileSystems';
import { NODE_FS, NodeFs } from '../../../../src/lab/files/fs.node';
import { failingIo, tempFilesUnder } from '../fullDisk';

const tok = trainCharTokenizer(['the quick brown fox jumps over the lazy dog 0123456789']);

/** A batch of random real tokens (no PAD) for `c`. */
function batch(c: ModelConfig, seed: number): Batch {
  const rng = new Rng(seed);
  const T = 6;
  const ids = (n: number, V: number): Int32Array => Int32Array.from({ length: n }, () => 4 + rng.int(V - 4));
  const input = ids(T, c.vocabSize);
  const targets = ids(T, c.vocabSize);
  return c.kind === 'decoder-only'
    ? { B: 1, T, input, targets }
    : { B: 1, T, input, targets, S: 5, src: ids(5, c.srcVocabSize) };
}

function logitsOf(model: Transformer, b: Batch): Float32Array {
  model.forward(b, { train: false });
  return Float32Array.from(model.logits());
}

function errorOf(f: () => Promise<unknown>): Promise<EngineError> {
  return f().then(
    () => {
      throw new Error('expected an EngineError');
    },
    (e: unknown) => {
      if (EngineError.is(e)) return e;
      throw e;
    },
  );
}

/** Exports a randomly initialized model of `c` (with our tokenizer beside it) into `root`/`name`; returns the folder. */
async function exported(
  fs: LabFs,
  root: string,
  c: ModelConfig,
  name: string,
  seed = 5,
): Promise<{ dir: string; model: Transformer }> {
  const model = new Transformer(c, { maxBatch: 1 }).bind(createReferenceBackend());
  model.initialize(new Rng(seed));
  const dir = fs.join(root, name);
  // What export writes (lab/interop/exportFolder.ts) for weights, config and tokenizer.
  await writeFile(fs, fs.join(dir, 'model.safetensors'), pytorchTensors(model).bytes);
  await writeFile(fs, fs.join(dir, 'config.json'), JSON.stringify(pytorchConfig(c)));
  await writeTokenizer(fs, dir, tok);
  return { dir, model };
}

/** Rewrites `dir`/model.safetensors without the attention_lab_config metadata, as PyTorch would save it. */
async function asPytorchSaved(fs: LabFs, dir: string): Promise<void> {
  const file = fs.join(dir, 'model.safetensors');
  const f = decodeSafetensors(await fs.readFile(file));
  const tensors = [...f.tensors].map(([name, t]) => ({ name, dtype: t.dtype, shape: t.shape, data: t.data }));
  await writeFile(fs, file, encodeSafetensors(tensors, { format: 'pt' }));
}

/** A fresh folder of `t` for one block of tests. */
function rootOf(t: TestFs): () => string {
  let root = '';
  beforeAll(async () => {
    root = await t.dir();
  });
  return () => root;
}

describe('import: round trip of every preset through export (on Node)', () => {
  const t = nodeTestFs();
  const { fs } = t;
  const root = rootOf(t);
  // Every preset's width, heads and d_ff; layers capped at 2 and the context at 32 so the
  // big presets (gpt: 12 layers, d 768) stay a unit test's size.
  const cases = (['decoder-only', 'encoder-decoder'] as const).flatMap((kind) =>
    presetNames(kind).map((preset) => [kind, preset] as const),
  );
  it.each(cases)('%s %s gives identical logits', async (kind, preset) => {
    const p = presetConfig(kind, preset, tok.vocabSize, kind === 'encoder-decoder' ? tok.vocabSize : 0);
    const c = validateConfig({
      ...p,
      nDecoderLayers: Math.min(2, p.nDecoderLayers),
      nEncoderLayers: Math.min(2, p.nEncoderLayers),
      maxLen: 32,
    });
    const { dir, model } = await exported(fs, root(), c, `${kind}-${preset}`);
    const out = fs.join(root(), `${kind}-${preset}-run`);
    const res = await importCheckpoint(fs, { from: dir, out });
    expect(res.layout).toBe('attention-lab');
    expect(res.config).toEqual(c);
    const r = await openRun(fs, out, createReferenceBackend(), 1);
    const b = batch(c, 9);
    expect(logitsOf(r.model, b)).toEqual(logitsOf(model, b));
    expect((await readRunJson(fs, out)).step).toBe(0);
  });

  it('keeps options the PyTorch config has no field for (post-LN, ReLU, sinusoidal, untied, no bias)', async () => {
    const c = validateConfig({
      ...presetConfig('decoder-only', 'tiny', tok.vocabSize),
      norm: 'post',
      activation: 'relu',
      positional: 'sinusoidal',
      tieEmbeddings: false,
      bias: false,
      maxLen: 16,
    });
    const { dir, model } = await exported(fs, root(), c, 'odd');
    await importCheckpoint(fs, { from: fs.join(dir, 'model.safetensors'), out: fs.join(root(), 'odd-run') });
    const r = await openRun(fs, fs.join(root(), 'odd-run'), createReferenceBackend(), 1);
    expect(r.model.config).toEqual(c);
    const b = batch(c, 2);
    expect(logitsOf(r.model, b)).toEqual(logitsOf(model, b));
  });
});

describe.each(FILE_SYSTEMS)('import on $name', ({ make }) => {
  const t = make();
  const { fs } = t;
  const root = rootOf(t);

  describe("the seed notebook's Transformer and nanoGPT without our metadata", () => {
    it.each([
      ['encoder-decoder', 'seed-transformer'],
      ['decoder-only', 'nanogpt'],
    ] as const)('%s is read by its names, shapes and config.json (%s)', async (kind, layout) => {
      const c = validateConfig({
        ...presetConfig(kind, 'tiny', tok.vocabSize, kind === 'encoder-decoder' ? tok.vocabSize : 0),
        maxLen: 16,
      });
      const { dir, model } = await exported(fs, root(), c, `${layout}-plain`);
      await asPytorchSaved(fs, dir);
      const out = fs.join(root(), `${layout}-plain-run`);
      const res = await importCheckpoint(fs, { from: dir, out });
      expect(res.layout).toBe(layout);
      expect(res.config).toEqual({ ...c, dropout: kind === 'encoder-decoder' ? c.dropout : 0 });
      const r = await openRun(fs, out, createReferenceBackend(), 1);
      const b = batch(c, 4);
      expect(logitsOf(r.model, b)).toEqual(logitsOf(model, b));
    });
  });

  describe("nanoGPT's padded vocabulary", () => {
    // nanoGPT rounds its vocabulary up to a multiple of 64 (GPT-2's 50257 → 50304); the rows past
    // the tokenizer's ids are never a token. A model of that padded size, saved as PyTorch would.
    const rows = Math.ceil((tok.vocabSize + 1) / 64) * 64;
    it.each([true, false])(
      "keeps the tokenizer's rows (tied %s): logits equal the padded model's for every real id",
      async (tied) => {
        const c = validateConfig({ ...presetConfig('decoder-only', 'tiny', rows), maxLen: 16, tieEmbeddings: tied });
        const { dir, model } = await exported(fs, root(), c, `padded-${tied}`);
        await asPytorchSaved(fs, dir);
        const out = fs.join(root(), `padded-${tied}-run`);
        const res = await importCheckpoint(fs, { from: dir, out });
        expect(res.layout).toBe('nanogpt');
        expect(res.config.vocabSize).toBe(tok.vocabSize);
        expect(res.config.tieEmbeddings).toBe(tied);
        expect(res.notes.join('\n')).toMatch(
          new RegExp(
            `embedding has ${rows} rows for a tokenizer of ${tok.vocabSize} ids: the last ${rows - tok.vocabSize} are vocabulary padding`,
          ),
        );
        const r = await openRun(fs, out, createReferenceBackend(), 1);
        const b = batch(r.model.config, 3);
        const mine = logitsOf(r.model, b);
        const theirs = logitsOf(model, b);
        const V = tok.vocabSize;
        for (let t = 0; t < b.T; t++)
          expect(mine.subarray(t * V, (t + 1) * V)).toEqual(theirs.subarray(t * rows, t * rows + V));
      },
    );

    it("is nanoGPT's rule: the next multiple of 64 above the tokenizer's ids", () => {
      expect(isPaddedVocab(50304, 50257)).toBe(true);
      expect(isPaddedVocab(50257, 50257)).toBe(false);
      expect(isPaddedVocab(50368, 50257)).toBe(false);
      expect(isPaddedVocab(320, 300)).toBe(true);
    });

    it('still refuses rows that are not padding of the tokenizer', async () => {
      const c = validateConfig({ ...presetConfig('decoder-only', 'tiny', rows + 64), maxLen: 16 });
      const { dir } = await exported(fs, root(), c, 'padded-too-far');
      await asPytorchSaved(fs, dir);
      const e = await errorOf(() => importCheckpoint(fs, { from: dir, out: fs.join(root(), 'padded-too-far-run') }));
      expect(e.message).toMatch(new RegExp(`has ${tok.vocabSize} ids but the model's embedding has ${rows + 64} rows`));
    });
  });

  describe('refuses, writing nothing', () => {
    const c = validateConfig({ ...presetConfig('decoder-only', 'tiny', tok.vocabSize), maxLen: 16 });
    let dir = '';
    beforeAll(async () => {
      dir = (await exported(fs, root(), c, 'base')).dir;
    });

    it('a folder without a tokenizer, naming --tokenizer', async () => {
      const bare = fs.join(root(), 'bare');
      await writeFile(fs, fs.join(bare, 'model.safetensors'), await fs.readFile(fs.join(dir, 'model.safetensors')));
      const out = fs.join(root(), 'bare-run');
      const e = await errorOf(() => importCheckpoint(fs, { from: bare, out }));
      expect(e.message).toMatch(/No tokenizer beside model\.safetensors .* pass --tokenizer PATH/);
      expect(await exists(fs, out)).toBe(false);
      expect((await listNames(fs, root())).filter((n) => n.includes('importing'))).toEqual([]);
      await importCheckpoint(fs, { from: bare, out, tokenizer: dir });
      expect(await exists(fs, fs.join(out, 'run.json'))).toBe(true);
    });

    it("a tokenizer whose vocabulary is not the model's", async () => {
      const other = fs.join(root(), 'other-tok');
      await writeTokenizer(fs, other, trainCharTokenizer(['ab']));
      const e = await errorOf(() => importCheckpoint(fs, { from: dir, out: fs.join(root(), 'x1'), tokenizer: other }));
      expect(e.message).toMatch(
        /has 262 ids but the model's embedding has \d+ rows; pass the tokenizer the model was trained with/,
      );
      expect(await exists(fs, fs.join(root(), 'x1'))).toBe(false);
    });

    it('an --out folder that is not empty', async () => {
      const full = fs.join(root(), 'full');
      await writeFile(fs, fs.join(full, 'keep.txt'), 'x');
      const e = await errorOf(() => importCheckpoint(fs, { from: dir, out: full }));
      expect(e.message).toMatch(/already exists and is not empty/);
      expect(await listNames(fs, full)).toEqual(['keep.txt']);
    });

    it('a cancelled import (between pieces of the file)', async () => {
      const out = fs.join(root(), 'cancelled');
      let calls = 0;
      await expect(importCheckpoint(fs, { from: dir, out }, { isCancelled: () => ++calls > 1 })).rejects.toBeInstanceOf(
        CancelledError,
      );
      expect(await exists(fs, out)).toBe(false);
      expect((await listNames(fs, root())).filter((n) => n.includes('importing'))).toEqual([]);
    });

    it('a cut-off torch.save pickle, found as the only file of its folder', async () => {
      const pk = fs.join(root(), 'pk');
      await writeFile(fs, fs.join(pk, 'ckpt.pt'), Uint8Array.of(0x80, 2));
      const e = await errorOf(() => importCheckpoint(fs, { from: pk, out: fs.join(root(), 'x2') }));
      expect(e.message).toMatch(/^ckpt\.pt ends inside its pickle \(byte 2\); the file was cut off/);
      expect(await exists(fs, fs.join(root(), 'x2'))).toBe(false);
    });
  });
});

describe('import: an imported GPT-2 uses its own <|endoftext|>, not our ids 1 and 2', () => {
  const t = nodeTestFs();
  const { fs } = t;
  const root = rootOf(t);
  it("decode, lens and attend start from the tokenizer's BOS, and decoding stops on its EOS", async () => {
    const { decodeText } = await import('../../../../src/lab/inference/decode');
    const { logitLens } = await import('../../../../src/lab/inference/lens');
    const { attendText } = await import('../../../../src/lab/inference/attend');
    const out = fs.join(root(), 'gpt2-specials');
    await importCheckpoint(fs, { from: path.join(__dirname, '../../../golden/import/hf-gpt2'), out });
    const r = await openRun(fs, out, createReferenceBackend(), 1);
    const { bos, eos } = r.tok.specialIds;
    expect(bos).toBe(r.tok.vocabSize - 1); // GPT-2 puts <|endoftext|> last
    expect(eos).toBe(bos);
    const bosText = r.tok.tokenText(bos);
    expect(bosText).not.toBe(r.tok.tokenText(1));
    const d = decodeText(r, {
      input: 'ab',
      strategy: 'greedy',
      beam: 1,
      lengthPenalty: 0.6,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: 6,
      seed: 1,
    });
    expect(d.output.promptTokens[0]).toBe(bosText);
    // A hypothesis ends at the first EOS of the tokenizer (never at our id 2).
    expect(d.output.tokens.slice(0, -1)).not.toContain(bosText);
    expect(d.output.tokens.slice(0, -1)).not.toContain(r.tok.tokenText(2));
    expect(logitLens(r, { prompt: 'ab' }, { topK: 1 }).tokens[0]).toBe(bosText);
    expect(attendText(r, 'ab').snapshot.tgtTokens[0]).toBe(bosText);
  });
});

describe('import on a full disk (Node)', () => {
  it('a full disk while writing the run folder: one line naming it, nothing left behind', async () => {
    const t = nodeTestFs();
    const root = await t.dir();
    const c = validateConfig({ ...presetConfig('decoder-only', 'tiny', tok.vocabSize), maxLen: 16 });
    const { dir } = await exported(NODE_FS, root, c, 'full-disk');
    const out = path.join(root, 'full-disk-run');
    const io = failingIo((f) => f.includes('.model.safetensors.'), 1);
    await expect(importCheckpoint(new NodeFs(io), { from: dir, out })).rejects.toThrow(
      `Disk full while writing ${out}; nothing was half-written — free space and try again.`,
    );
    expect(io.failed).not.toBeNull();
    expect(await exists(NODE_FS, out)).toBe(false);
    expect(tempFilesUnder(root)).toEqual([]);
  });
});
