import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireLab } from '../../../../src/extension/host/requireLab.node';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { startNodeWorker } from '../../../../src/lab/workers/startWorker.node';
import type { RunItem } from '../../../../src/extension/runs/runsModel';
import { RunsModel, contextValueOf, isExtendable, isResumable } from '../../../../src/extension/runs/runsModel';
import { TrainingController } from '../../../../src/extension/training/trainingController';
import { tinySpec, trainTiny } from '../../lab/tinyRuns';

const DIST = path.resolve(__dirname, '../../../../dist');
const item = (over: Partial<RunItem>): RunItem => ({
  runDir: '/r/a',
  name: 'a',
  status: 'stopped',
  kind: 'decoder-only',
  step: 10,
  totalSteps: 100,
  bestValLoss: 2,
  hasModel: true,
  active: false,
  params: 1,
  data: null,
  imported: null,
  error: null,
  note: null,
  backend: null,
  ...over,
});

describe('run context values', () => {
  it('encode status, trained, resumable, extendable and active for the menus', () => {
    expect(contextValueOf(item({}))).toBe('run.stopped.trained.resumable.extendable');
    expect(contextValueOf(item({ status: 'completed', step: 100 }))).toBe('run.completed.trained.extendable');
    expect(contextValueOf(item({ status: 'failed' }))).toBe('run.failed.trained.resumable');
    expect(contextValueOf(item({ status: 'training', active: true }))).toBe('run.training.trained.active');
    expect(contextValueOf(item({ imported: 'Hugging Face GPT-2', step: 0 }))).toBe('run.stopped.trained.imported'); // its training action is Fine-tune…
    expect(contextValueOf(item({ status: 'created', hasModel: false, step: 0 }))).toBe('run.created');
    expect(isResumable(item({ status: 'interrupted' }))).toBe(true);
    expect(isResumable(item({ error: 'damaged' }))).toBe(false);
    expect(isExtendable(item({ status: 'interrupted' }))).toBe(true);
    expect(isExtendable(item({ status: 'completed', hasModel: false }))).toBe(false);
    expect(isExtendable(item({ status: 'training', active: true }))).toBe(false);
  });
});

describe('RunsModel', () => {
  let root: string;
  let done: string;
  beforeAll(async () => {
    const run = await trainTiny(tinySpec({ kind: 'task', task: 'copy' }, 2, 24));
    done = run.runDir;
    root = path.dirname(done);
    // A copy whose run.json still says "training": the window reloaded while it trained.
    const cut = path.join(root, 'cut');
    fs.cpSync(done, cut, { recursive: true });
    const json = JSON.parse(fs.readFileSync(path.join(cut, 'run.json'), 'utf8'));
    fs.writeFileSync(
      path.join(cut, 'run.json'),
      JSON.stringify({ ...json, status: 'training', updatedAt: '2000-01-01T00:00:00.000Z' }),
    );
    fs.mkdirSync(path.join(root, 'broken'));
    fs.writeFileSync(path.join(root, 'broken', 'run.json'), '{ not json');
    fs.mkdirSync(path.join(root, 'not-a-run'));
  });

  it('lists the run folders under the root, marking interrupted and unreadable ones', async () => {
    const c = new TrainingController(() => startNodeWorker(path.join(DIST, 'worker.js'), 'training worker'), NODE_FS, {
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    });
    const lab = requireLab(DIST);
    const m = new RunsModel(
      lab,
      NODE_FS,
      c,
      async () => ({ root, opened: [] }),
      () => undefined,
    );
    const seen: number[] = [];
    m.onDidChange((items) => seen.push(items.length));
    expect(m.isLoaded).toBe(false);
    const items = await m.refresh();
    expect(lab.isLoaded).toBe(true);
    expect(seen).toEqual([3]);
    const by = new Map(items.map((r) => [r.name, r]));
    expect([...by.keys()].sort()).toEqual(['broken', 'cut', 'run']);
    expect(by.get('run')).toMatchObject({
      status: 'completed',
      step: 2,
      totalSteps: 2,
      hasModel: true,
      kind: 'encoder-decoder',
      error: null,
    });
    expect(by.get('cut')?.status).toBe('interrupted');
    expect(by.get('broken')?.error).toMatch(/not valid JSON/);
    expect(items.at(-1)?.name).not.toBe('run'); // newest first: "cut" is dated 2000
    expect(m.find(done)?.name).toBe('run');
    m.dispose();
    c.dispose();
  });

  it('adds opened run folders from elsewhere', async () => {
    const c = new TrainingController(() => startNodeWorker(path.join(DIST, 'worker.js'), 'training worker'), NODE_FS, {
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    });
    const m = new RunsModel(
      requireLab(DIST),
      NODE_FS,
      c,
      async () => ({ root: path.join(root, 'empty'), opened: [done] }),
      () => undefined,
    );
    expect((await m.refresh()).map((r) => r.runDir)).toEqual([done]);
    m.dispose();
    c.dispose();
  });
});
