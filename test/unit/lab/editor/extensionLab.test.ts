import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { modularAlphabet } from '../../../../src/lab/data/modularTask';
import { describe, expect, it } from 'vitest';
import { estimateModel } from '../../../../src/engine/models/estimate';
import {
  detectPairs,
  errorMessage,
  estimateSpec,
  expectedVocab,
  isRunFolder,
  listRuns,
} from '../../../../src/lab/editor/extensionLab';
import { resolveConfig } from '../../../../src/lab/runs/specModel';
import { FILE_SYSTEMS } from '../files/fileSystems';
import { tinySpec, trainTiny } from '../tinyRuns';

describe('hostLab', () => {
  it('estimates a spec exactly as the model plans itself, with a guessed vocabulary', () => {
    const spec = {
      ...tinySpec({ kind: 'task', task: 'reverse' }, 10, 24),
      tokenizer: { type: 'bpe' as const, vocabSize: 700 },
    };
    const e = estimateSpec(spec);
    expect(e.vocabSize).toBe(700);
    const plan = estimateModel(resolveConfig(spec, 700), { maxBatch: 4, maxLen: 24, maxSrcLen: 24 });
    expect(e.params).toBe(plan.params);
    expect(e.memoryBytes).toBe(plan.totalBytes);
    expect(expectedVocab(tinySpec({ kind: 'task', task: 'copy' }))).toBe(360);
    // The grokking task's own tokenizer: its 113 numbers and '=' over the 260 byte and special ids, exactly.
    expect(expectedVocab(tinySpec({ kind: 'task', task: 'modular-addition' }))).toBe(
      trainCharTokenizer([modularAlphabet()], {}).vocabSize,
    );
    expect(() => estimateSpec({ ...spec, model: { ...spec.model, overrides: { nHeads: 5 } } })).toThrow(
      /not divisible by nHeads 5/,
    );
  });

  it("counts Muon's state when the spec trains with muon (Configure's size line)", () => {
    const spec = tinySpec({ kind: 'task', task: 'reverse' }, 10, 24);
    const muon = { ...spec, training: { ...spec.training, optimizer: 'muon' as const } };
    const cfg = resolveConfig(muon, estimateSpec(muon).vocabSize);
    const shape = { maxBatch: 4, maxLen: 24, maxSrcLen: 24 };
    expect(estimateSpec(muon).memoryBytes).toBe(estimateModel(cfg, shape, 'muon').totalBytes);
    expect(estimateSpec(muon).memoryBytes).toBeGreaterThan(estimateSpec(spec).memoryBytes);
  });

  it('says what an error says', () => {
    expect(errorMessage(new Error('x'))).toBe('x');
    expect(errorMessage('y')).toBe('y');
  });
});

describe.each(FILE_SYSTEMS)('hostLab on $name', ({ make }) => {
  it('lists runs newest first and knows a run folder', async () => {
    const t = make();
    const { fs } = t;
    const a = await trainTiny(tinySpec({ kind: 'task', task: 'copy' }, 2, 24), t);
    const root = fs.dirname(a.runDir);
    expect(await isRunFolder(fs, a.runDir)).toBe(true);
    expect(await isRunFolder(fs, root)).toBe(false);
    await fs.mkdir(fs.join(root, 'not-a-run'));
    const listed = await listRuns(fs, root);
    expect(listed).toHaveLength(1);
    expect(listed[0]?.ok && listed[0].summary.name).toBe('run');
    expect(listed[0]?.ok && listed[0].hasModel).toBe(true);
    expect(await listRuns(fs, fs.join(root, 'missing'))).toEqual([]);
  });

  it('finds pairs files in several folders', async () => {
    const t = make();
    const { fs } = t;
    const dir = await t.dir();
    await t.put(dir, { 'train.de': 'hallo\nwelt\n', 'train.en': 'hello\nworld\n', 'sub/p.tsv': 'a\tb\n' });
    const found = await detectPairs(fs, [dir, fs.join(dir, 'sub'), dir]);
    expect(found.map((f) => f.label).sort()).toEqual(['p.tsv (1 pair)', 'train.de → train.en (2 pairs)']);
  });
});
