/**
 * The training controller holds the run folder's lock while its run trains (with the real
 * training worker): a second window — another controller — is refused in one line naming
 * the holder, and nothing changes in the refused one (no state, no events, the folder as it
 * was); the lock is gone once the run ends.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { nodeLockIdentity } from '../../../../src/lab/runs/lockIdentity.node';
import { RunLockedError, takeRunLock } from '../../../../src/lab/runs/runLock';
import type { HostedWorker } from '../../../../src/lab/workers/workerHandle';
import { startNodeWorker } from '../../../../src/lab/workers/startWorker.node';
import type { TrainingState } from '../../../../src/extension/training/trainingController';
import { TrainingController } from '../../../../src/extension/training/trainingController';
import { tinySpec } from '../../lab/tinyRuns';

const WORKER = (): HostedWorker =>
  startNodeWorker(path.resolve(__dirname, '../../../../dist/worker.js'), 'training worker');
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const newRunDir = (): string => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'al-lock-')), 'run');

async function refused(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(RunLockedError.is(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error('the start was not refused');
}

describe('TrainingController and the run lock', () => {
  it('refuses a run another session trains, in one line, and changes nothing', async () => {
    const runDir = newRunDir();
    // The command line trains it: process 4242 of this machine, alive.
    await takeRunLock(
      NODE_FS,
      runDir,
      { pid: 4242, host: os.hostname(), boot: null, by: 'attention-lab train', alive: () => true },
      { heartbeatMs: 0 },
    );
    const before = fs.readFileSync(path.join(runDir, 'lock.json'), 'utf8');
    const me = { ...nodeLockIdentity('VS Code'), alive: (pid: number) => pid === 4242 };
    const c = new TrainingController(WORKER, NODE_FS, quiet, me);
    const states: (TrainingState | null)[] = [];
    c.onDidChange((s) => states.push(s));
    const line = await refused(c.start(runDir, tinySpec({ kind: 'task', task: 'copy' }, 6, 24), false));
    expect(line).toMatch(
      /^run is being trained by process 4242 on host .* \(attention-lab train\) since .* — stop it first, or wait\.$/,
    );
    expect(states).toEqual([]);
    expect(c.state).toBeNull();
    expect(fs.readdirSync(runDir)).toEqual(['lock.json']);
    expect(fs.readFileSync(path.join(runDir, 'lock.json'), 'utf8')).toBe(before);
    c.dispose();
  });

  it('holds the lock while its run trains, refusing another window, and removes it at the end', async () => {
    const runDir = newRunDir();
    const spec = tinySpec({ kind: 'task', task: 'copy' }, 100000, 24);
    const c = new TrainingController(WORKER, NODE_FS, quiet, nodeLockIdentity('VS Code'));
    const other = new TrainingController(WORKER, NODE_FS, quiet, nodeLockIdentity('VS Code'));
    let stepped!: () => void;
    const firstStep = new Promise<void>((r) => (stepped = r));
    c.onEvent((e) => e.event.type === 'train/didStep' && stepped());
    const running = c.start(runDir, spec, false);
    await firstStep;
    expect(JSON.parse(fs.readFileSync(path.join(runDir, 'lock.json'), 'utf8'))).toMatchObject({
      pid: process.pid,
      host: os.hostname(),
      by: 'VS Code',
      newFolder: true,
    });
    const line = await refused(other.start(runDir, spec, true));
    expect(line).toMatch(
      new RegExp(
        `^run is being trained by process ${process.pid} on host .* \\(VS Code\\) since .* — stop it first, or wait\\.$`,
      ),
    );
    expect(other.state).toBeNull();
    c.stop();
    expect(await running).toMatchObject({ kind: 'finished', reason: 'stopped' });
    expect(fs.existsSync(path.join(runDir, 'lock.json'))).toBe(false);
    expect(fs.existsSync(path.join(runDir, 'model.safetensors'))).toBe(true);
    c.dispose();
    other.dispose();
  }, 120_000);
});
