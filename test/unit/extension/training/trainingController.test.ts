import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import type { HostedWorker } from '../../../../src/lab/workers/workerHandle';
import { startNodeWorker } from '../../../../src/lab/workers/startWorker.node';
import type { RunEnd, TrainingState } from '../../../../src/extension/training/trainingController';
import { TrainingController } from '../../../../src/extension/training/trainingController';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { tinySpec } from '../../lab/tinyRuns';

// The real training worker bundle (npm test builds dist/ first).
const WORKER = (): HostedWorker =>
  startNodeWorker(path.resolve(__dirname, '../../../../dist/worker.js'), 'training worker');

function quietLog(): { lines: string[]; info(m: string): void; warn(m: string): void; error(m: string): void } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
  };
}

const newRunDir = (): string => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'al-ctl-')), 'run');

describe('TrainingController', () => {
  it('runs a run in the worker, publishing every step and the end', async () => {
    const log = quietLog();
    const c = new TrainingController(WORKER, NODE_FS, log);
    const events: FromTrainingWorker[] = [];
    const states: (TrainingState | null)[] = [];
    const ends: RunEnd[] = [];
    c.onEvent((e) => events.push(e.event));
    c.onDidChange((s) => states.push(s));
    c.onDidEnd((e) => ends.push(e));
    const runDir = newRunDir();
    const outcome = await c.start(runDir, tinySpec({ kind: 'task', task: 'copy' }, 12, 24), false);
    expect(outcome).toEqual({ kind: 'finished', step: 12, reason: 'completed' });
    expect(events.filter((e) => e.type === 'train/didStep').map((e) => (e as { step: number }).step)).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    expect(
      events.find((e) => e.type !== 'worker/ready' && e.type !== 'train/didProgress' && e.type !== 'train/didLog')
        ?.type,
    ).toBe('train/didStart');
    expect(events.at(-1)?.type).toBe('train/didFinish');
    const live = states.filter((s): s is TrainingState => s !== null);
    expect(live.at(-1)).toMatchObject({ runId: runDir, step: 12, totalSteps: 12, paused: false });
    expect(live.at(-1)?.loss).toBeGreaterThan(0);
    expect(states.at(-1)).toBeNull();
    expect(ends).toHaveLength(1);
    expect(ends[0]?.state.step).toBe(12);
    expect(c.state).toBeNull();
    expect(fs.existsSync(path.join(runDir, 'model.safetensors'))).toBe(true);
    expect(log.lines.some((l) => /finished at step 12/.test(l))).toBe(true);
    c.dispose();
  });

  it('trains a finished run on to a new total through the worker, and reports a refused one as a failure', async () => {
    const log = quietLog();
    const c = new TrainingController(WORKER, NODE_FS, log);
    const runDir = newRunDir();
    const spec = tinySpec({ kind: 'task', task: 'copy' }, 6, 24);
    expect(await c.start(runDir, spec, false)).toEqual({ kind: 'finished', step: 6, reason: 'completed' });
    const totals: number[] = [];
    const sub = c.onDidChange((st) => st && totals.push(st.totalSteps));
    expect(await c.start(runDir, spec, true, 10)).toEqual({ kind: 'finished', step: 10, reason: 'completed' });
    sub.dispose();
    expect(new Set(totals)).toEqual(new Set([10]));
    expect(log.lines.some((l) => /Extending run to 10 steps/.test(l))).toBe(true);
    const json = JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8')) as {
      status: string;
      step: number;
      segments: unknown;
    };
    expect(json).toMatchObject({
      status: 'completed',
      step: 10,
      segments: [
        { fromStep: 0, toStep: 6, schedule: 'cosine' },
        { fromStep: 6, toStep: 10, schedule: 'restart' },
      ],
    });
    const before = fs.readFileSync(path.join(runDir, 'run.json'), 'utf8');
    const refused = await c.start(runDir, spec, true, 8);
    expect(refused).toMatchObject({
      kind: 'failed',
      error: {
        code: 'input/invalid',
        message: 'run is already at step 10; pass --steps greater than 10 to train it longer.',
      },
    });
    expect(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8')).toBe(before);
    c.dispose();
  });

  it('refuses a second run while one trains; pauses, resumes and stops between steps', async () => {
    const c = new TrainingController(WORKER, NODE_FS, quietLog());
    expect(c.togglePause()).toBeNull();
    expect(c.stop()).toBe(false);
    const running = c.start(newRunDir(), tinySpec({ kind: 'task', task: 'copy' }, 100000, 24), false);
    await expect(c.start(newRunDir(), tinySpec({ kind: 'task', task: 'copy' }), false)).rejects.toThrow(
      /still training/,
    );
    const waitFor = async (ok: (s: TrainingState) => boolean): Promise<TrainingState> => {
      for (let i = 0; i < 400; i++) {
        const s = c.state;
        if (s && ok(s)) return s;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`state never matched; last ${JSON.stringify(c.state)}`);
    };
    await waitFor((s) => s.step >= 3);
    expect(c.togglePause()).toBe(true);
    const paused = await waitFor((s) => s.paused);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.state?.step).toBe(paused.step);
    expect(c.togglePause()).toBe(false);
    await waitFor((s) => !s.paused && s.step > paused.step);
    expect(c.stop()).toBe(true);
    const outcome = await running;
    expect(outcome.kind === 'finished' && outcome.reason).toBe('stopped');
    expect(outcome.step).toBeGreaterThan(paused.step);
    c.dispose();
    c.dispose();
  });

  it('reports a run that fails to start as a failed outcome', async () => {
    const c = new TrainingController(WORKER, NODE_FS, quietLog());
    const outcome = await c.start(
      newRunDir(),
      { ...tinySpec({ kind: 'task', task: 'copy' }), model: { kind: 'encoder-decoder', preset: 'gpt', overrides: {} } },
      false,
    );
    expect(outcome.kind).toBe('failed');
    expect(outcome.kind === 'failed' && outcome.error.message).toMatch(/Unknown preset "gpt" for encoder-decoder/);
    c.dispose();
  });
});
