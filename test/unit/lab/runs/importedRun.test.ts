/**
 * An imported run as the lab describes it and fine-tunes it (src/lab/runs/runFolder.ts,
 * runState.ts): run.json records where the model came from, the summary names the layout for
 * people and the backend that will run it, and Fine-tune… sets the documents it trains on.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { readRunJson, setFineTuneData, writeRunJson } from '../../../../src/lab/runs/runFolder';
import { runSummary } from '../../../../src/lab/runs/runState';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-imported-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const GOLDEN = path.resolve(__dirname, '../../../golden/import/hf-gpt2');

describe('an imported run', () => {
  it('records its layout and file, reads as imported in its summary, and takes documents to fine-tune on', async () => {
    const runDir = path.join(root, 'gpt2');
    await importCheckpoint(NODE_FS, { from: GOLDEN, out: runDir });
    const run = await readRunJson(NODE_FS, runDir);
    expect(run.imported?.layout).toBe('hf-gpt2');
    expect(run.imported?.from).toBe(path.join(GOLDEN, 'model.safetensors'));
    const s = runSummary(NODE_FS, runDir, run);
    expect(s.imported).toEqual({ layout: 'Hugging Face GPT-2', from: path.join(GOLDEN, 'model.safetensors') });
    expect(s.model?.backend).not.toBe('auto'); // the backend that will run it
    const doc = path.join(root, 'notes.txt');
    fs.writeFileSync(doc, 'the rain in the east\n');
    await setFineTuneData(NODE_FS, runDir, [doc], root);
    const data = (await readRunJson(NODE_FS, runDir)).spec.data;
    expect(data.kind === 'documents' ? [data.files, data.root] : null).toEqual([[doc], root]);
    await expect(setFineTuneData(NODE_FS, runDir, [], root)).rejects.toThrow(/at least one file/);
    // A damaged entry is named, not guessed at.
    await writeRunJson(NODE_FS, runDir, {
      ...run,
      imported: { layout: 'keras', from: 'x' } as unknown as typeof run.imported,
    });
    await expect(readRunJson(NODE_FS, runDir)).rejects.toThrow(/an "imported" entry that is not \{layout, from\}/);
  });
});
