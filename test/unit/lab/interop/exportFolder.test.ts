/**
 * The export folder (lab/interop/exportFolder.ts): `<out>/<run name>/` with the weights, config.json
 * (nanoGPT's fields + the attention_lab block), tokenizer.json, for BPE vocab.json +
 * merges.txt that read back with the same ids, and a README holding the example's score; a
 * non-empty folder is replaced only with `force`; nothing is left half-written on failure.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { bpeFromGpt2Files } from '../../../../src/engine/tokenizers/gpt2Files';
import { parseTokenizerJSON } from '../../../../src/engine/tokenizers/tokenizerJson';
import { exists, listNames, readText, writeFile } from '../../../../src/lab/files/labFs';
import { EXPORT_FORMAT, exportRun as exportTo } from '../../../../src/lab/interop/exportFolder';
import type { ExportOptions } from '../../../../src/lab/interop/exportFolder';
import { scoreText } from '../../../../src/lab/inference/score';
import type { OpenRun } from '../../../../src/lab/runs/openRun';
import { NODE_FS, NodeFs } from '../../../../src/lab/files/nodeFs';
import { FILE_SYSTEMS, nodeTestFs } from '../files/fileSystems';
import { failingIo, tempFilesUnder } from '../fullDisk';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

describe.each(FILE_SYSTEMS)('exportRun on $name', ({ make }) => {
  const t = make();
  const { fs } = t;
  let bpe: OpenRun;
  let encdec: OpenRun;
  beforeAll(async () => {
    bpe = await trainTiny({ ...tinySpec(await tinyDocuments(t)), tokenizer: { type: 'bpe', vocabSize: 300 } }, t);
    encdec = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }), t);
  });
  const exportRun = (r: OpenRun, out: string, opts: ExportOptions = {}): ReturnType<typeof exportTo> => exportTo(fs, r, out, opts);
  const tmpDir = (): Promise<string> => t.dir();
  const sorted = async (dir: string): Promise<string[]> => (await listNames(fs, dir)).sort();

  it('writes <out>/<run name> with weights, config, tokenizer, GPT-2 files and a README with the example\'s score', async () => {
    const parent = await tmpDir();
    const res = await exportRun(bpe, parent, { text: 'the cat sat on the log.' });
    const dir = fs.join(parent, fs.basename(bpe.runDir));
    expect(res.dir).toBe(dir);
    expect((await sorted(parent))).toEqual([fs.basename(bpe.runDir)]);
    expect((await sorted(dir))).toEqual(['README.md', 'config.json', 'merges.txt', 'model.safetensors', 'tokenizer.json', 'vocab.json']);
    const cfg = JSON.parse((await readText(fs, fs.join(dir, 'config.json')))) as Record<string, unknown> & { attention_lab: Record<string, unknown> & { tokenizer: { special_ids: unknown }; example: { tokens: number; logprob_sum: number } } };
    expect(cfg.attention_lab['format']).toBe(EXPORT_FORMAT);
    expect(cfg.attention_lab['config']).toEqual(bpe.model.config);
    expect(cfg.attention_lab.tokenizer.special_ids).toEqual({ pad: 0, bos: 1, eos: 2, unk: 3 });
    const want = scoreText(bpe, null, 'the cat sat on the log.').output.logprobs;
    expect(cfg.attention_lab.example.tokens).toBe(want.length);
    expect(cfg.attention_lab.example.logprob_sum).toBeCloseTo(want.reduce((a, b) => a + b, 0), 9);
    expect(res.example?.logprobSum).toBe(cfg.attention_lab.example.logprob_sum);
    const readme = (await readText(fs, fs.join(dir, 'README.md')));
    expect(readme).toContain('score_export.py');
    expect(readme).toContain(`${want.length} scored tokens`);
    // The two files GPT-2-style loaders read give our ids back, and so does tokenizer.json.
    const fromFiles = bpeFromGpt2Files(JSON.parse((await readText(fs, fs.join(dir, 'vocab.json')))), (await readText(fs, fs.join(dir, 'merges.txt'))));
    const fromJson = parseTokenizerJSON((await readText(fs, fs.join(dir, 'tokenizer.json'))));
    for (const text of ['the bird sat in the bush', 'naïve 🤖 text\n\n  spaces']) {
      expect(Array.from(fromFiles.encode(text))).toEqual(Array.from(bpe.tok.encode(text)));
      expect(Array.from(fromJson.encode(text))).toEqual(Array.from(bpe.tok.encode(text)));
    }
    const st = decodeSafetensors(await fs.readFile(fs.join(dir, 'model.safetensors')));
    expect(st.tensors.get('transformer.wte.weight')?.shape).toEqual([bpe.model.config.vocabSize, 32]);
  });

  it('refuses a non-empty folder without force, replaces it with force, and never targets a run folder', async () => {
    const parent = await tmpDir();
    const dir = fs.join(parent, fs.basename(bpe.runDir));
    await writeFile(fs, fs.join(dir, 'notes.txt'), 'mine');
    await expect(exportRun(bpe, parent)).rejects.toThrow(/already exists and is not empty; pass --force to replace it, or choose another --out folder/);
    expect((await sorted(dir))).toEqual(['notes.txt']);
    await exportRun(bpe, parent, { force: true });
    expect(await exists(fs, fs.join(dir, 'notes.txt'))).toBe(false);
    expect((await sorted(parent))).toEqual([fs.basename(bpe.runDir)]); // no temporary or old folder left
    await expect(exportRun(bpe, fs.dirname(bpe.runDir), { force: true })).rejects.toThrow(/is a run folder/);
    await expect(exportRun(bpe, bpe.runDir)).rejects.toThrow(/is a run folder; export into another folder/);
    expect(await exists(fs, fs.join(bpe.runDir, 'run.json'))).toBe(true);
  });

  it('an empty existing folder is used; an encoder-decoder scores its example with a source; a failed example is a note, not a failure', async () => {
    const parent = await tmpDir();
    await fs.mkdir(fs.join(parent, fs.basename(encdec.runDir)));
    const res = await exportRun(encdec, parent, { source: 'abcd', text: 'dcba' });
    expect(res.example).toMatchObject({ source: 'abcd', text: 'dcba', tokens: 5 }); // 4 characters + EOS
    expect(res.files.map((f) => fs.basename(f))).not.toContain('vocab.json'); // a char tokenizer has no GPT-2 form
    const long = await exportRun(encdec, await tmpDir(), { source: 'x'.repeat(500), text: 'y' });
    expect(long.example).toBeNull();
    expect(long.warnings.join(' ')).toMatch(/no example score in README\.md: .*context/);
    expect((await readText(fs, fs.join(long.dir, 'README.md')))).toMatch(/No example was scored at export time/);
  });
});

describe('exportRun on a full disk (Node)', () => {
  it('replaces nothing: the previous export stays, no temporary folder is left, the error names the folder', async () => {
    const t = nodeTestFs();
    const bpe = await trainTiny({ ...tinySpec(await tinyDocuments(t)), tokenizer: { type: 'bpe', vocabSize: 300 } }, t);
    const parent = await t.dir();
    const first = await exportTo(NODE_FS, bpe, parent);
    const before = fs.readFileSync(path.join(first.dir, 'model.safetensors'));
    const io = failingIo((f) => f.endsWith('.model.safetensors.' + process.pid + '.tmp'), 1);
    await expect(exportTo(new NodeFs(io), bpe, parent, { force: true })).rejects.toThrow(new RegExp(`^Disk full while writing ${first.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')};`));
    expect(io.failed).not.toBeNull();
    expect(fs.readdirSync(parent)).toEqual([path.basename(bpe.runDir)]);
    expect(fs.readFileSync(path.join(first.dir, 'model.safetensors')).equals(before)).toBe(true);
    expect(tempFilesUnder(parent)).toEqual([]);
  });
});
