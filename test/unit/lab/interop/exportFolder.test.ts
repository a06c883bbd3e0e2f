/**
 * The export folder (lab/interop/exportFolder.ts): `<out>/<run name>/` with the weights, config.json
 * (nanoGPT's fields + the attention_lab block), tokenizer.json, for BPE vocab.json +
 * merges.txt that read back with the same ids, and a README holding the example's score; a
 * non-empty folder is replaced only with `force`; nothing is left half-written on failure.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { bpeFromGpt2Files } from '../../../../src/engine/tokenizers/gpt2Files';
import { parseTokenizerJSON } from '../../../../src/engine/tokenizers/tokenizerJson';
import { EXPORT_FORMAT, exportRun } from '../../../../src/lab/interop/exportFolder';
import { scoreText } from '../../../../src/lab/inference/score';
import type { OpenRun } from '../../../../src/lab/runs/openRun';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';
import { failingIo, tempFilesUnder } from '../fullDisk';

let bpe: OpenRun;
let encdec: OpenRun;

beforeAll(async () => {
  bpe = await trainTiny({ ...tinySpec(tinyDocuments()), tokenizer: { type: 'bpe', vocabSize: 300 } });
  encdec = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }));
});

function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'al-export-'));
}

describe('exportRun', () => {
  it('writes <out>/<run name> with weights, config, tokenizer, GPT-2 files and a README with the example\'s score', () => {
    const parent = tmpDir();
    const res = exportRun(bpe, parent, { text: 'the cat sat on the log.' });
    const dir = path.join(parent, path.basename(bpe.runDir));
    expect(res.dir).toBe(dir);
    expect(fs.readdirSync(parent)).toEqual([path.basename(bpe.runDir)]);
    expect(fs.readdirSync(dir).sort()).toEqual(['README.md', 'config.json', 'merges.txt', 'model.safetensors', 'tokenizer.json', 'vocab.json']);
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown> & { attention_lab: Record<string, unknown> & { tokenizer: { special_ids: unknown }; example: { tokens: number; logprob_sum: number } } };
    expect(cfg.attention_lab['format']).toBe(EXPORT_FORMAT);
    expect(cfg.attention_lab['config']).toEqual(bpe.model.config);
    expect(cfg.attention_lab.tokenizer.special_ids).toEqual({ pad: 0, bos: 1, eos: 2, unk: 3 });
    const want = scoreText(bpe, null, 'the cat sat on the log.').output.logprobs;
    expect(cfg.attention_lab.example.tokens).toBe(want.length);
    expect(cfg.attention_lab.example.logprob_sum).toBeCloseTo(want.reduce((a, b) => a + b, 0), 9);
    expect(res.example?.logprobSum).toBe(cfg.attention_lab.example.logprob_sum);
    const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('score_export.py');
    expect(readme).toContain(`${want.length} scored tokens`);
    // The two files GPT-2-style loaders read give our ids back, and so does tokenizer.json.
    const fromFiles = bpeFromGpt2Files(JSON.parse(fs.readFileSync(path.join(dir, 'vocab.json'), 'utf8')), fs.readFileSync(path.join(dir, 'merges.txt'), 'utf8'));
    const fromJson = parseTokenizerJSON(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
    for (const text of ['the bird sat in the bush', 'naïve 🤖 text\n\n  spaces']) {
      expect(Array.from(fromFiles.encode(text))).toEqual(Array.from(bpe.tok.encode(text)));
      expect(Array.from(fromJson.encode(text))).toEqual(Array.from(bpe.tok.encode(text)));
    }
    const st = decodeSafetensors(new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors'))));
    expect(st.tensors.get('transformer.wte.weight')?.shape).toEqual([bpe.model.config.vocabSize, 32]);
  });

  it('refuses a non-empty folder without force, replaces it with force, and never targets a run folder', () => {
    const parent = tmpDir();
    const dir = path.join(parent, path.basename(bpe.runDir));
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    expect(() => exportRun(bpe, parent)).toThrow(/already exists and is not empty; pass --force to replace it, or choose another --out folder/);
    expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
    exportRun(bpe, parent, { force: true });
    expect(fs.existsSync(path.join(dir, 'notes.txt'))).toBe(false);
    expect(fs.readdirSync(parent)).toEqual([path.basename(bpe.runDir)]); // no temporary or old folder left
    expect(() => exportRun(bpe, path.dirname(bpe.runDir), { force: true })).toThrow(/is a run folder/);
    expect(() => exportRun(bpe, bpe.runDir)).toThrow(/is a run folder; export into another folder/);
    expect(fs.existsSync(path.join(bpe.runDir, 'run.json'))).toBe(true);
  });

  it('a full disk replaces nothing: the previous export stays, no temporary folder is left, the error names the folder', () => {
    const parent = tmpDir();
    const first = exportRun(bpe, parent);
    const before = fs.readFileSync(path.join(first.dir, 'model.safetensors'));
    const io = failingIo((f) => f.endsWith('.model.safetensors.' + process.pid + '.tmp'), 1);
    expect(() => exportRun(bpe, parent, { force: true, io })).toThrow(new RegExp(`^Disk full while writing ${first.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')};`));
    expect(io.failed).not.toBeNull();
    expect(fs.readdirSync(parent)).toEqual([path.basename(bpe.runDir)]);
    expect(fs.readFileSync(path.join(first.dir, 'model.safetensors')).equals(before)).toBe(true);
    expect(tempFilesUnder(parent)).toEqual([]);
  });

  it('an empty existing folder is used; an encoder-decoder scores its example with a source; a failed example is a note, not a failure', () => {
    const parent = tmpDir();
    fs.mkdirSync(path.join(parent, path.basename(encdec.runDir)));
    const res = exportRun(encdec, parent, { source: 'abcd', text: 'dcba' });
    expect(res.example).toMatchObject({ source: 'abcd', text: 'dcba', tokens: 5 }); // 4 characters + EOS
    expect(res.files.map((f) => path.basename(f))).not.toContain('vocab.json'); // a char tokenizer has no GPT-2 form
    const long = exportRun(encdec, tmpDir(), { source: 'x'.repeat(500), text: 'y' });
    expect(long.example).toBeNull();
    expect(long.warnings.join(' ')).toMatch(/no example score in README\.md: .*context/);
    expect(fs.readFileSync(path.join(long.dir, 'README.md'), 'utf8')).toMatch(/No example was scored at export time/);
  });
});
