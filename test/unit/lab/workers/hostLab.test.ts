import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateModel } from '../../../../src/engine/models/estimate';
import { detectPairs, errorMessage, estimateSpec, expectedVocab, isRunFolder, listRuns } from '../../../../src/lab/workers/hostLab';
import { resolveConfig } from '../../../../src/lab/training/prepare';
import { tinySpec, trainTiny } from '../tinyRuns';

describe('hostLab', () => {
  it('estimates a spec exactly as the model plans itself, with a guessed vocabulary', () => {
    const spec = { ...tinySpec({ kind: 'task', task: 'reverse' }, 10, 24), tokenizer: { type: 'bpe' as const, vocabSize: 700 } };
    const e = estimateSpec(spec);
    expect(e.vocabSize).toBe(700);
    const plan = estimateModel(resolveConfig(spec, 700), { maxBatch: 4, maxLen: 24, maxSrcLen: 24 });
    expect(e.params).toBe(plan.params);
    expect(e.memoryBytes).toBe(plan.totalBytes);
    expect(expectedVocab(tinySpec({ kind: 'task', task: 'copy' }))).toBe(360);
    expect(() => estimateSpec({ ...spec, model: { ...spec.model, overrides: { nHeads: 5 } } })).toThrow(/not divisible by nHeads 5/);
  });

  it('lists runs newest first and knows a run folder', async () => {
    const a = await trainTiny(tinySpec({ kind: 'task', task: 'copy' }, 2, 24));
    const root = path.dirname(a.runDir);
    expect(isRunFolder(a.runDir)).toBe(true);
    expect(isRunFolder(root)).toBe(false);
    const listed = listRuns(root);
    expect(listed).toHaveLength(1);
    expect(listed[0]?.ok && listed[0].summary.name).toBe('run');
    expect(listRuns(path.join(root, 'missing'))).toEqual([]);
  });

  it('finds pairs files in several folders', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-pairs-'));
    fs.writeFileSync(path.join(dir, 'train.de'), 'hallo\nwelt\n');
    fs.writeFileSync(path.join(dir, 'train.en'), 'hello\nworld\n');
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'p.tsv'), 'a\tb\n');
    const found = await detectPairs([dir, path.join(dir, 'sub'), dir]);
    expect(found.map((f) => f.label).sort()).toEqual(['p.tsv (1 pair)', 'train.de → train.en (2 pairs)']);
    expect(errorMessage(new Error('x'))).toBe('x');
    expect(errorMessage('y')).toBe('y');
  });
});
