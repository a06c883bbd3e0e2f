/**
 * One writer per run folder, through the built binary: of two `train` commands on one folder
 * started together (new runs, or resumes), one is refused in one line with exit 2 while the
 * other trains the run alone — one run's metrics, no step twice — and the lock left by a
 * process killed with SIGKILL is taken over by the next resume, which says so.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliResult } from './cliHarness';
import { FAST, cli, cliAsync, metricLines, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (check()) resolve();
      else if (Date.now() - t0 > timeoutMs) reject(new Error('timed out'));
      else setTimeout(tick, 10);
    };
    tick();
  });
}

const TRAIN = [
  '--task',
  'copy',
  '--steps',
  '100000',
  '--checkpoint-every',
  '20',
  '--eval-every',
  '0',
  '--snapshot-every',
  '0',
  ...FAST,
];

type Started = ReturnType<typeof cliAsync>;

/** The first of two commands to exit, and the other. */
async function firstToExit(a: Started, b: Started): Promise<{ result: CliResult; other: Started }> {
  return Promise.race([
    a.done.then((result) => ({ result, other: b })),
    b.done.then((result) => ({ result, other: a })),
  ]);
}

const stepsOf = (runDir: string): number[] => metricLines(runDir, 'step').map((l) => l.step as number);
const oneTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
const refusal = (name: string, pid: number | undefined): RegExp =>
  new RegExp(
    `^attention-lab: ${name} is being trained by process ${pid} on host ${os.hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(attention-lab train\\) since (\\d{4}-\\d\\d-\\d\\d )?\\d\\d:\\d\\d — stop it first, or wait\\.$`,
  );

/** Lets the winner train a few steps, stops it with Ctrl-C (a checkpoint is saved), and checks the run holds its steps once each. */
async function stopAndCheck(winner: Started, runDir: string, after: number): Promise<void> {
  await waitFor(() => fs.existsSync(path.join(runDir, 'metrics.jsonl')) && stepsOf(runDir).length >= after, 120_000);
  winner.child.kill('SIGINT');
  const r = await winner.done;
  expect(r.code, r.stderr).toBe(0);
  const steps = stepsOf(runDir);
  expect(steps).toEqual(oneTo(steps.length));
  expect(JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8'))).toMatchObject({
    status: 'stopped',
    step: steps.length,
  });
  expect(fs.existsSync(path.join(runDir, 'lock.json'))).toBe(false);
}

describe('one writer per run folder', () => {
  it('refuses the second of two `train --out X` started together, in one line with exit 2', async () => {
    const out = path.join(tmp.dir, 'together');
    const a = cliAsync(['train', ...TRAIN, '--out', out], tmp.dir);
    const b = cliAsync(['train', ...TRAIN, '--out', out], tmp.dir);
    const { result, other } = await firstToExit(a, b);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr.trimEnd()).toMatch(refusal('together', other.child.pid));
    expect(result.stdout).toBe('');
    await stopAndCheck(other, out, 5);
  }, 180_000);

  it('refuses the second of two `train --resume X` started together', async () => {
    const out = path.join(tmp.dir, 'resumed');
    const first = cli(['train', ...TRAIN, '--until', '5', '--out', out], tmp.dir);
    expect(first.code, first.stderr).toBe(0);
    const a = cliAsync(['train', '--resume', out], tmp.dir);
    const b = cliAsync(['train', '--resume', out], tmp.dir);
    const { result, other } = await firstToExit(a, b);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.trimEnd()).toMatch(refusal('resumed', other.child.pid));
    await stopAndCheck(other, out, 10);
  }, 180_000);

  it('takes over the lock of a run killed with SIGKILL on the next resume, and says so', async () => {
    const out = path.join(tmp.dir, 'killed');
    const { child, done } = cliAsync(['train', ...TRAIN, '--checkpoint-every', '3', '--out', out], tmp.dir);
    // run.json names a checkpoint once one is saved (it is replaced whole: never read half-written).
    const savedStep = (): number =>
      fs.existsSync(path.join(out, 'run.json'))
        ? (JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8')) as { step: number }).step
        : 0;
    await waitFor(() => savedStep() > 0, 120_000);
    child.kill('SIGKILL');
    expect((await done).code).toBe(null);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'lock.json'), 'utf8'))).toMatchObject({
      pid: child.pid,
      host: os.hostname(),
      by: 'attention-lab train',
    });
    const step = savedStep();
    expect(step).toBeGreaterThan(0);
    const r = cli(['train', '--resume', out, '--until', String(step + 4), '--json'], tmp.dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n')).toContain(
      `Took over the lock of killed: process ${child.pid} (attention-lab train) is no longer running.`,
    );
    expect(stepsOf(out)).toEqual(oneTo(step + 4));
    expect(fs.existsSync(path.join(out, 'lock.json'))).toBe(false);
  }, 180_000);

  it('leaves no folder behind when a new run it locked fails before writing anything', () => {
    fs.mkdirSync(path.join(tmp.dir, 'blank'));
    fs.writeFileSync(path.join(tmp.dir, 'blank', 'a.txt'), '   \n');
    const out = path.join(tmp.dir, 'never');
    const r = cli(['train', '--data', 'blank', '--steps', '2', '--out', out], tmp.dir);
    expect(r.code, r.stderr).toBe(2);
    expect(fs.existsSync(out)).toBe(false);
    // A folder that was there before stays, as it was: only the lock goes.
    fs.mkdirSync(path.join(tmp.dir, 'kept'));
    const again = cli(['train', '--data', 'blank', '--steps', '2', '--out', path.join(tmp.dir, 'kept')], tmp.dir);
    expect(again.code, again.stderr).toBe(2);
    expect(fs.readdirSync(path.join(tmp.dir, 'kept'))).toEqual([]);
  });
});
