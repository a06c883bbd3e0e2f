import { describe, expect, it } from 'vitest';
import { completeLines, exists, readText, writeFile } from '../../../../src/lab/files/labFs';
import {
  appendMetrics,
  newRunDir,
  readMetrics,
  readRunJson,
  runNameProblem,
  setRunLabel,
  truncateMetrics,
  updateRunJson,
} from '../../../../src/lab/runs/runFolder';
import { runSummary } from '../../../../src/lab/runs/runState';
import { FILE_SYSTEMS } from '../files/fileSystems';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

const step = (n: number) => ({
  type: 'step' as const,
  step: n,
  loss: 2 - n / 10,
  lr: 1e-3,
  gradNorm: 1,
  tokens: 64,
  tokensPerSec: 1000,
  elapsedMs: n * 10,
});

describe.each(FILE_SYSTEMS)('a run folder on $name', ({ make }) => {
  it('keeps a display name and note in run.json without renaming the folder or reordering the runs, and shows them in the summary', async () => {
    const t = make();
    const { fs } = t;
    const runDir = (await trainTiny(tinySpec(await tinyDocuments(t), 2), t)).runDir;
    const before = await readRunJson(fs, runDir);
    expect(before.backendUsed).toBe('reference'); // the backend that ran, not "auto"
    expect(before.threadsUsed).toBe(1); // and the threads its kernels ran on
    await setRunLabel(fs, runDir, { displayName: '  small lr  ', note: 'lr 3e-3, 2 steps' });
    const after = await readRunJson(fs, runDir);
    expect(after.displayName).toBe('small lr');
    expect(after.note).toBe('lr 3e-3, 2 steps');
    expect(after.updatedAt).toBe(before.updatedAt);
    expect(await exists(fs, fs.join(runDir, 'run.json'))).toBe(true);
    const s = runSummary(fs, runDir, await readRunJson(fs, runDir));
    expect([s.name, s.note, fs.basename(s.runDir), s.model?.backend, s.model?.threads]).toEqual([
      'small lr',
      'lr 3e-3, 2 steps',
      'run',
      'reference',
      1,
    ]);
    // The worker's own updates keep them (it rereads run.json before each write).
    await updateRunJson(fs, runDir, { step: before.step });
    expect((await readRunJson(fs, runDir)).displayName).toBe('small lr');
    // Setting only the note keeps the name; empty strings remove them.
    await setRunLabel(fs, runDir, { note: '' });
    expect((await readRunJson(fs, runDir)).note).toBeUndefined();
    expect((await readRunJson(fs, runDir)).displayName).toBe('small lr');
    await setRunLabel(fs, runDir, { displayName: '' });
    expect(runSummary(fs, runDir, await readRunJson(fs, runDir)).name).toBe('run');
    await expect(setRunLabel(fs, runDir, { displayName: 'a\nb' })).rejects.toThrow(/one line/);
    await writeFile(fs, fs.join(runDir, 'run.json'), JSON.stringify({ ...before, threadsUsed: 0 }));
    await expect(readRunJson(fs, runDir)).rejects.toThrow(/threadsUsed that is not a whole number ≥ 1 \(0\)/);
  });

  it('logs metrics line by line, skips a torn last line, and drops what came after a checkpoint', async () => {
    const { fs, dir } = make();
    const runDir = await dir();
    for (let n = 1; n <= 4; n++) await appendMetrics(fs, runDir, step(n));
    await appendMetrics(fs, runDir, { type: 'eval', step: 4, loss: 1.5, ppl: 4.48, exactMatch: null, bleu: null });
    const file = fs.join(runDir, 'metrics.jsonl');
    await writeFile(fs, file, `${await readText(fs, file)}{"type":"step","step":5,"lo`); // a writer killed mid-line
    const read = await readMetrics(fs, runDir);
    expect(read.steps.map((m) => m.step)).toEqual([1, 2, 3, 4]);
    expect(read.evals.map((m) => m.step)).toEqual([4]);
    await appendMetrics(fs, runDir, step(5)); // starts on a line of its own
    expect((await readMetrics(fs, runDir)).steps.map((m) => m.step)).toEqual([1, 2, 3, 4, 5]);
    await truncateMetrics(fs, runDir, 2);
    expect(completeLines(await readText(fs, file)).map((l) => JSON.parse(l).step)).toEqual([1, 2]);
    expect((await readMetrics(fs, await dir())).steps).toEqual([]);
  });

  it('names new run folders that do not exist yet', async () => {
    const { fs, dir } = make();
    const parent = await dir();
    const when = new Date(2024, 0, 2, 3, 4, 5);
    const first = await newRunDir(fs, parent, when);
    expect(fs.basename(first)).toBe('run-20240102-030405');
    await fs.mkdir(first);
    expect(fs.basename(await newRunDir(fs, parent, when))).toBe('run-20240102-030405-2');
  });
});

describe('run names', () => {
  it('refuses a name on several lines or too long, saying what to do', () => {
    expect(runNameProblem('fine name')).toBeNull();
    expect(runNameProblem('two\nlines')).toMatch(/one line/);
    expect(runNameProblem('x'.repeat(81))).toMatch(/at most 80 characters; this one has 81/);
  });
});
