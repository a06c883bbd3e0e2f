/**
 * The export folder (lab/interop/exportFolder.ts): `<out>/<run name>/` with the weights, config.json
 * (nanoGPT's fields + the attention_lab block), tokenizer.json, for BPE vocab.json +
 * merges.txt that read back with the same ids, and a README holding the example's score; a
 * non-empty folder is replaced only with `force`; nothing is left half-written on failure.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { bpeFromGpt2Files } from '../../../../src/engine/tokenizers/gpt2Files';
import { parseTokenizerJSON } from '../../../../src/engine/tokenizers/tokenizerJson';
import { exists, listNames, readText, writeFile } from '../../../../src/lab/files/labFs';
import { DEFAULT_EXAMPLE, EXPORT_FORMAT, exportRun as exportTo } from '../../../../src/lab/interop/exportFolder';
import type { ExportOptions } from '../../../../src/lab/interop/exportFolder';
import { scoreText } from '../../../../src/lab/inference/score';
import { collectFromPaths } from '../../../../src/lab/data/corpus';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { NODE_FS, NodeFs } from '../../../../src/lab/files/fs.node';
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
  const exportRun = (r: OpenRun, out: string, opts: ExportOptions = {}): ReturnType<typeof exportTo> =>
    exportTo(fs, r, out, opts);
  const tmpDir = (): Promise<string> => t.dir();
  const sorted = async (dir: string): Promise<string[]> => (await listNames(fs, dir)).sort();

  it("writes <out>/<run name> with weights, config, tokenizer, GPT-2 files and a README with the example's score", async () => {
    const parent = await tmpDir();
    const res = await exportRun(bpe, parent, { text: 'the cat sat on the log.' });
    const dir = fs.join(parent, fs.basename(bpe.runDir));
    expect(res.dir).toBe(dir);
    expect(await sorted(parent)).toEqual([fs.basename(bpe.runDir)]);
    expect(await sorted(dir)).toEqual([
      'README.md',
      'config.json',
      'lab_tokenizers.py',
      'merges.txt',
      'model.safetensors',
      'reference.py',
      'safetensors_io.py',
      'score_export.py',
      'tokenizer.json',
      'vocab.json',
    ]);
    const cfg = JSON.parse(await readText(fs, fs.join(dir, 'config.json'))) as Record<string, unknown> & {
      attention_lab: Record<string, unknown> & {
        tokenizer: { special_ids: unknown };
        example: { tokens: number; logprob_sum: number };
      };
    };
    expect(cfg.attention_lab['format']).toBe(EXPORT_FORMAT);
    expect(cfg.attention_lab['config']).toEqual(bpe.model.config);
    expect(cfg.attention_lab.tokenizer.special_ids).toEqual({ pad: 0, bos: 1, eos: 2, unk: 3 });
    const want = scoreText(bpe, null, 'the cat sat on the log.').output.logprobs;
    expect(cfg.attention_lab.example.tokens).toBe(want.length);
    expect(cfg.attention_lab.example.logprob_sum).toBeCloseTo(
      want.reduce((a, b) => a + b, 0),
      9,
    );
    expect(res.example?.logprobSum).toBe(cfg.attention_lab.example.logprob_sum);
    const readme = await readText(fs, fs.join(dir, 'README.md'));
    expect(readme).toContain('python3 score_export.py .');
    // Everything the README runs is in the folder: no path into Attention Lab's repository.
    expect(readme).not.toMatch(/scripts\/pytorch|path\/to/);
    // The models are the PyTorch engine's (what users train), never the golden-file oracle.
    expect(await readText(fs, fs.join(dir, 'reference.py'))).toBe(
      readFileSync(path.resolve(__dirname, '../../../../python/attention_lab_trainer/model.py'), 'utf8'),
    );
    expect(readme).toContain(`${want.length} scored tokens`);
    // The two files GPT-2-style loaders read give our ids back, and so does tokenizer.json.
    const fromFiles = bpeFromGpt2Files(
      JSON.parse(await readText(fs, fs.join(dir, 'vocab.json'))),
      await readText(fs, fs.join(dir, 'merges.txt')),
    );
    const fromJson = parseTokenizerJSON(await readText(fs, fs.join(dir, 'tokenizer.json')));
    for (const text of ['the bird sat in the bush', 'naïve 🤖 text\n\n  spaces']) {
      expect(Array.from(fromFiles.encode(text))).toEqual(Array.from(bpe.tok.encode(text)));
      expect(Array.from(fromJson.encode(text))).toEqual(Array.from(bpe.tok.encode(text)));
    }
    const st = decodeSafetensors(await fs.readFile(fs.join(dir, 'model.safetensors')));
    expect(st.tensors.get('transformer.wte.weight')?.shape).toEqual([bpe.model.config.vocabSize, 32]);
  });

  it("is named by the name the run shows, made safe for a folder, and scores the run's own held-out text", async () => {
    const named = { ...bpe, run: { ...bpe.run, displayName: 'Japanese: 6/L?' } };
    const parent = await tmpDir();
    const res = await exportRun(named, parent);
    expect(res.dir).toBe(fs.join(parent, 'Japanese- 6-L-'));
    const own = bpe.run.data.prompts?.[0];
    expect(own).toBeTruthy();
    expect(res.example?.text).toBe(own);
    expect(res.example?.text).not.toBe(DEFAULT_EXAMPLE.text);
    expect(await readText(fs, fs.join(res.dir, 'README.md'))).toMatch(/^<!--[^\n]*-->\n# Japanese: 6\/L\?\n/);
  });

  it('is not training data when exported into a workspace: its README is skipped as generated, the .py files by the glob', async () => {
    const ws = await tmpDir();
    await writeFile(fs, fs.join(ws, 'notes.md'), 'the cat sat on the mat. '.repeat(20));
    const res = await exportRun(bpe, ws);
    const readme = fs.join(res.dir, 'README.md');
    const c = await collectFromPaths(fs, [fs.join(ws, 'notes.md'), readme], ws);
    expect(c.documents.map((d) => d.path)).toEqual(['notes.md']);
    expect(c.skipped).toEqual([{ path: fs.relative(ws, readme), reason: 'generated' }]);
  });

  it('refuses a non-empty folder without force, replaces it with force, and never targets a run folder', async () => {
    const parent = await tmpDir();
    const dir = fs.join(parent, fs.basename(bpe.runDir));
    await writeFile(fs, fs.join(dir, 'notes.txt'), 'mine');
    await expect(exportRun(bpe, parent)).rejects.toThrow(
      /already exists and is not empty; pass --force to replace it, or choose another --out folder/,
    );
    expect(await sorted(dir)).toEqual(['notes.txt']);
    await exportRun(bpe, parent, { force: true });
    expect(await exists(fs, fs.join(dir, 'notes.txt'))).toBe(false);
    expect(await sorted(parent)).toEqual([fs.basename(bpe.runDir)]); // no temporary or old folder left
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
    expect(await readText(fs, fs.join(long.dir, 'README.md'))).toMatch(/No example was scored at export time/);
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
    await expect(exportTo(new NodeFs(io), bpe, parent, { force: true })).rejects.toThrow(
      new RegExp(`^Disk full while writing ${first.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')};`),
    );
    expect(io.failed).not.toBeNull();
    expect(fs.readdirSync(parent)).toEqual([path.basename(bpe.runDir)]);
    expect(fs.readFileSync(path.join(first.dir, 'model.safetensors')).equals(before)).toBe(true);
    expect(tempFilesUnder(parent)).toEqual([]);
  });
});

describe("an export folder on its own (Debian's torch)", () => {
  it('checks itself with the score_export.py it carries, run in a copy of the folder with nothing else on the path', async () => {
    const t = nodeTestFs();
    const bpe = await trainTiny({ ...tinySpec(await tinyDocuments(t)), tokenizer: { type: 'bpe', vocabSize: 300 } }, t);
    const res = await exportTo(NODE_FS, bpe, await t.dir());
    const alone = path.join(await t.dir(), 'copied');
    fs.cpSync(res.dir, alone, { recursive: true });
    const out = execFileSync('/usr/bin/python3', ['score_export.py', '.'], {
      cwd: alone,
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '', PYTHONNOUSERSITE: '1' },
    });
    const diff = /difference ([\d.e+-]+)/.exec(out)?.[1];
    expect(out).toMatch(new RegExp(`^${res.example?.tokens} tokens, total log p`));
    expect(Number(diff)).toBeLessThan(1e-3);
  });
});
