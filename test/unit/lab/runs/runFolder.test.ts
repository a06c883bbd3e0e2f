import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRunJson, runNameProblem, setRunLabel, updateRunJson } from '../../../../src/lab/runs/runFolder';
import { runSummary } from '../../../../src/lab/runs/runState';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

let runDir = '';

beforeAll(async () => {
  runDir = (await trainTiny(tinySpec(tinyDocuments(), 2))).runDir;
}, 60_000);

describe('a run\'s display name and note', () => {
  it('are kept in run.json without renaming the folder or reordering the runs, and shown in the summary', () => {
    const before = readRunJson(runDir);
    setRunLabel(runDir, { displayName: '  small lr  ', note: 'lr 3e-3, 2 steps' });
    const after = readRunJson(runDir);
    expect(after.displayName).toBe('small lr');
    expect(after.note).toBe('lr 3e-3, 2 steps');
    expect(after.updatedAt).toBe(before.updatedAt);
    expect(fs.existsSync(path.join(runDir, 'run.json'))).toBe(true);
    const s = runSummary(runDir);
    expect([s.name, s.note, path.basename(s.runDir)]).toEqual(['small lr', 'lr 3e-3, 2 steps', 'run']);
    // The worker's own updates keep them (it rereads run.json before each write).
    updateRunJson(runDir, { step: before.step });
    expect(readRunJson(runDir).displayName).toBe('small lr');
    // Setting only the note keeps the name; empty strings remove them.
    setRunLabel(runDir, { note: '' });
    expect(readRunJson(runDir).note).toBeUndefined();
    expect(readRunJson(runDir).displayName).toBe('small lr');
    setRunLabel(runDir, { displayName: '' });
    expect(runSummary(runDir).name).toBe('run');
  });

  it('records the backend that ran, not "auto"', () => {
    expect(readRunJson(runDir).backendUsed).toBe('reference');
    expect(runSummary(runDir).model?.backend).toBe('reference');
  });

  it('refuses a name on several lines or too long, saying what to do', () => {
    expect(runNameProblem('fine name')).toBeNull();
    expect(runNameProblem('two\nlines')).toMatch(/one line/);
    expect(runNameProblem('x'.repeat(81))).toMatch(/at most 80 characters; this one has 81/);
    expect(() => setRunLabel(runDir, { displayName: 'a\nb' })).toThrow(/one line/);
  });
});
