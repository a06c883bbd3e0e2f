/**
 * One writer per run folder (src/lab/runs/runLock.ts), on every file system the lab runs on:
 * taking and releasing the lock, refusing a second writer in one line, taking over a stale
 * lock (a dead process, a restarted machine, a silent holder that cannot be checked, a
 * damaged file) and saying so, exactly one winner among takers at once, the heartbeat, and a
 * holder finding its lock taken over. The clock is the test's: no waiting.
 */

import { describe, expect, it } from 'vitest';
import { exists, listNames, readText, writeFile } from '../../../../src/lab/files/labFs';
import type { LockIdentity, LockRecord } from '../../../../src/lab/runs/runLock';
import {
  LOCK_FILE,
  RunLockedError,
  STALE_MS,
  WEB_STALE_MS,
  readRunLock,
  runLockProblem,
  takeRunLock,
  uncheckedIdentity,
} from '../../../../src/lab/runs/runLock';
import { TrainingWorker } from '../../../../src/lab/workers/trainingClient';
import type { HostedWorker } from '../../../../src/lab/workers/workerHandle';
import { FILE_SYSTEMS, memoryTestFs } from '../files/fileSystems';

/** Processes of machine "box" that run. */
function machine(alive: number[]): (pid: number, over?: Partial<LockIdentity>) => LockIdentity {
  const running = new Set(alive);
  return (pid, over = {}) => ({
    pid,
    host: 'box',
    boot: 'boot-1',
    by: 'attention-lab train',
    alive: (p) => running.has(p),
    ...over,
  });
}

const at =
  (ms: number): (() => number) =>
  () =>
    ms;
// Now: the takers that leave out the clock read the real one, which must not be far from it.
const T0 = Date.now();
// No heartbeat, and a browser window's lock watched without waiting (the clock given decides).
const NO_BEAT = { heartbeatMs: 0, sleep: () => Promise.resolve() };

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(RunLockedError.is(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error('the lock was not refused');
}

describe.each(FILE_SYSTEMS)('the run lock on $name', ({ make }) => {
  it('is taken, refuses a second writer in one line naming the run and its holder, and is released', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-a');
    const on = machine([200, 100]);
    const lock = await takeRunLock(fs, runDir, on(200), { ...NO_BEAT, now: at(T0) });
    expect(lock.tookOver).toBeNull();
    const record = JSON.parse(await readText(fs, fs.join(runDir, LOCK_FILE))) as LockRecord;
    expect(record).toMatchObject({
      format: 'attention-lab-lock',
      version: 1,
      pid: 200,
      host: 'box',
      boot: 'boot-1',
      by: 'attention-lab train',
      startedAt: new Date(T0).toISOString(),
      newFolder: true,
    });
    const line = await refusal(takeRunLock(fs, runDir, on(100), NO_BEAT));
    expect(line).toMatch(
      /^run-a is being trained by process 200 on host box \(attention-lab train\) since (\d{4}-\d\d-\d\d )?\d\d:\d\d — stop it first, or wait\.$/,
    );
    expect(await runLockProblem(fs, runDir, on(100))).toBe(line);
    await lock.release();
    await lock.release(); // idempotent
    // The lock made the folder and nothing else came into it: a failed new run leaves nothing.
    expect(await exists(fs, runDir)).toBe(false);
    expect(await runLockProblem(fs, runDir, on(100))).toBeNull();
    const next = await takeRunLock(fs, runDir, on(100), NO_BEAT);
    expect((await readRunLock(fs, runDir))?.pid).toBe(100);
    await next.release();
  });

  it('keeps a folder holding more than the lock, and never removes a lock that is not its own', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-b');
    const on = machine([200, 300]);
    const a = await takeRunLock(fs, runDir, on(200), NO_BEAT);
    await writeFile(fs, fs.join(runDir, 'run.json'), '{}');
    await a.release();
    expect(await listNames(fs, runDir)).toEqual(['run.json']);
    const b = await takeRunLock(fs, runDir, on(200), NO_BEAT);
    expect((await readRunLock(fs, runDir))?.newFolder).toBe(false);
    const other = { ...(await readRunLock(fs, runDir)), pid: 300, token: 'someone-else' };
    await writeFile(fs, fs.join(runDir, LOCK_FILE), JSON.stringify(other));
    await b.release();
    expect((await readRunLock(fs, runDir))?.token).toBe('someone-else');
  });

  it('gives a free lock to exactly one of several takers at once', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-c');
    const pids = [11, 12, 13, 14, 15];
    const on = machine(pids);
    const got = await Promise.allSettled(pids.map((pid) => takeRunLock(fs, runDir, on(pid), NO_BEAT)));
    const won = got.filter((g) => g.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const g of got) if (g.status === 'rejected') expect(RunLockedError.is(g.reason)).toBe(true);
    const winner = pids[got.findIndex((g) => g.status === 'fulfilled')];
    expect((await readRunLock(fs, runDir))?.pid).toBe(winner);
  });

  it('takes over the lock of a process that is no longer running, and says so', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-d');
    await takeRunLock(fs, runDir, machine([])(200), NO_BEAT); // never released: its process was killed
    const lock = await takeRunLock(fs, runDir, machine([100])(100), NO_BEAT);
    expect(lock.tookOver).toBe('Took over the lock of run-d: process 200 (attention-lab train) is no longer running.');
    expect((await readRunLock(fs, runDir))?.pid).toBe(100);
    expect((await listNames(fs, runDir)).sort()).toEqual([LOCK_FILE]);
  });

  it('keeps the lock of a running process on this machine however long it is silent, but not across a restart', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-e');
    const on = machine([200, 100]);
    await takeRunLock(fs, runDir, on(200), { ...NO_BEAT, now: at(T0) });
    // Suspended (Ctrl-Z) for an hour: still its lock; the line says how to clear a leftover.
    const line = await refusal(takeRunLock(fs, runDir, on(100), { ...NO_BEAT, now: at(T0 + 3_600_000) }));
    expect(line).toMatch(
      /^run-e is being trained by process 200 .* \(silent since .*: if process 200 is not training it, delete lock\.json\) — stop it first, or wait\.$/,
    );
    const lock = await takeRunLock(fs, runDir, on(100, { boot: 'boot-2' }), { ...NO_BEAT, now: at(T0 + 1000) });
    expect(lock.tookOver).toBe('Took over the lock of run-e: process 200 held it before this machine restarted.');
  });

  it("takes over a reloaded browser window's lock once it stops beating, and refuses a window that beats", async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-w');
    const web = uncheckedIdentity('VS Code for the web');
    await takeRunLock(fs, runDir, web, { ...NO_BEAT, now: at(T0) });
    // The reloaded window, 2 s later: the old one's last beat is fresh, but no beat follows.
    let t = T0 + 2_000;
    const waited = { ms: 0 };
    const clock = { now: () => t, sleep: async (ms: number) => void ((t += ms), (waited.ms += ms)) };
    const lock = await takeRunLock(fs, runDir, web, { heartbeatMs: 0, ...clock });
    expect(lock.tookOver).toMatch(/^Took over the lock of run-w: VS Code for the web has not been heard from since/);
    expect(waited.ms).toBeGreaterThanOrEqual(WEB_STALE_MS - 2_000);
    expect(waited.ms).toBeLessThanOrEqual(WEB_STALE_MS);
    // A window that still beats (its lock rewritten while the other watches) is refused.
    const file = fs.join(runDir, LOCK_FILE);
    const beating = {
      now: () => t,
      sleep: async (ms: number) => {
        t += ms;
        const r = JSON.parse(await readText(fs, file)) as LockRecord;
        await writeFile(fs, file, JSON.stringify({ ...r, heartbeatAt: new Date(t).toISOString() }));
      },
    };
    expect(await refusal(takeRunLock(fs, runDir, web, { heartbeatMs: 0, ...beating }))).toMatch(
      /^run-w is being trained by VS Code for the web since .* — stop it first, or wait\.$/,
    );
    await lock.release();
  });

  it('takes over a lock whose holder cannot be checked only once it has been silent too long', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-f');
    const other = machine([200])(200, { host: 'other' });
    await takeRunLock(fs, runDir, other, { ...NO_BEAT, now: at(T0) });
    const here = machine([200])(100);
    expect(await refusal(takeRunLock(fs, runDir, here, { ...NO_BEAT, now: at(T0 + STALE_MS) }))).toMatch(
      /^run-f is being trained by process 200 on host other \(attention-lab train\) since/,
    );
    const lock = await takeRunLock(fs, runDir, here, { ...NO_BEAT, now: at(T0 + STALE_MS + 1) });
    expect(lock.tookOver).toMatch(
      /^Took over the lock of run-f: process 200 on host other \(attention-lab train\) has not been heard from since (\d{4}-\d\d-\d\d )?\d\d:\d\d\.$/,
    );
    await lock.release();
    // The web can check no process: a browser's lock lives by its heartbeat alone, and so does a process's seen from the web.
    const web = uncheckedIdentity('VS Code for the web');
    await takeRunLock(fs, runDir, web, { ...NO_BEAT, now: at(T0) });
    expect(await refusal(takeRunLock(fs, runDir, here, { ...NO_BEAT, now: at(T0 + 1000) }))).toMatch(
      /^run-f is being trained by VS Code for the web since .* — stop it first, or wait\.$/,
    );
    const fromWeb = await takeRunLock(fs, runDir, here, { ...NO_BEAT, now: at(T0 + STALE_MS + 1) });
    expect(fromWeb.tookOver).toMatch(/VS Code for the web has not been heard from since/);
    expect(await refusal(takeRunLock(fs, runDir, web, { ...NO_BEAT, now: at(Date.now()) }))).toMatch(
      /^run-f is being trained by process 100 on host box/,
    );
  });

  it('treats a damaged lock file as being written until it is old', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-g');
    await fs.mkdir(runDir);
    await writeFile(fs, fs.join(runDir, LOCK_FILE), '{"format":"attention-lab-lo');
    const me = machine([100])(100);
    expect(await refusal(takeRunLock(fs, runDir, me, NO_BEAT))).toBe(
      'run-g holds a lock file being written (lock.json) — another session is starting it; wait, or try again in a moment.',
    );
    const lock = await takeRunLock(fs, runDir, me, { ...NO_BEAT, now: at(Date.now() + STALE_MS + 60_000) });
    expect(lock.tookOver).toMatch(/^Took over the lock of run-g: its lock\.json was damaged and untouched since/);
  });

  it('gives a stale lock to exactly one of several takers at once, leaving nothing aside', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-h');
    const pids = [21, 22, 23, 24, 25];
    await takeRunLock(fs, runDir, machine(pids)(9), NO_BEAT); // process 9 was killed
    const on = machine(pids);
    const got = await Promise.allSettled(pids.map((pid) => takeRunLock(fs, runDir, on(pid), NO_BEAT)));
    expect(got.filter((g) => g.status === 'fulfilled')).toHaveLength(1);
    for (const g of got) if (g.status === 'rejected') expect(RunLockedError.is(g.reason)).toBe(true);
    expect((await readRunLock(fs, runDir))?.pid).toBe(pids[got.findIndex((g) => g.status === 'fulfilled')]);
    expect(await listNames(fs, runDir)).toEqual([LOCK_FILE]);
  });

  it('leaves alone a lock another taker put in place of the stale one it was about to remove', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-j');
    const on = machine([31, 32]);
    await takeRunLock(fs, runDir, on(9), NO_BEAT); // process 9 was killed
    // Taker 32 has found the stale lock; its next change waits until taker 31 has taken the lock over.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let arrived!: () => void;
    const atGate = new Promise<void>((r) => (arrived = r));
    const slow = new Proxy(fs, {
      get(target, key) {
        const v = Reflect.get(target, key) as unknown;
        if (typeof v !== 'function') return v;
        const f = v as (...a: unknown[]) => unknown;
        if (key !== 'rename' && key !== 'remove') return f.bind(target);
        return async (...a: unknown[]) => {
          arrived();
          await gate;
          return f.apply(target, a);
        };
      },
    });
    const late = takeRunLock(slow, runDir, on(32), NO_BEAT);
    await atGate;
    const first = await takeRunLock(fs, runDir, on(31), NO_BEAT);
    expect(first.tookOver).toMatch(/process 9 .* is no longer running/);
    const token = (await readRunLock(fs, runDir))?.token;
    open();
    expect(await refusal(late)).toMatch(/^run-j is being trained by process 31 /);
    expect((await readRunLock(fs, runDir))?.token).toBe(token);
    expect(await listNames(fs, runDir)).toEqual([LOCK_FILE]);
  });

  it('rewrites its heartbeat, and a holder taken over stops its run and leaves the new lock alone', async () => {
    const { fs, dir } = make();
    const runDir = fs.join(await dir(), 'run-i');
    let now = T0;
    const holder = await takeRunLock(fs, runDir, machine([200])(200, { host: 'other' }), {
      heartbeatMs: 0,
      now: () => now,
    });
    now = T0 + 60_000;
    await holder.beat();
    expect(await readRunLock(fs, runDir)).toMatchObject({
      startedAt: new Date(T0).toISOString(),
      heartbeatAt: new Date(T0 + 60_000).toISOString(),
    });
    // The worker its host started; the lock taken over ends it at once.
    let terminated = 0;
    const hosted: HostedWorker = {
      post: () => undefined,
      onMessage: () => undefined,
      onLost: () => undefined,
      terminate: async () => void terminated++,
    };
    const worker = new TrainingWorker(hosted, holder);
    const taker = await takeRunLock(fs, runDir, uncheckedIdentity('VS Code for the web'), {
      ...NO_BEAT,
      now: at(T0 + 60_000 + STALE_MS + 1),
    });
    expect(taker.tookOver).toMatch(/process 200 on host other/);
    const lost: string[] = [];
    holder.onLost((m) => lost.push(m));
    await holder.beat();
    expect(lost).toEqual([
      'run-i was taken over by VS Code for the web; this session stopped at once without saving, so that only one writes the run.',
    ]);
    expect(await worker.outcome).toEqual({ kind: 'failed', step: 0, error: { code: 'run/locked', message: lost[0] } });
    expect(terminated).toBe(1);
    await holder.release();
    expect((await readRunLock(fs, runDir))?.by).toBe('VS Code for the web');
  });
});

describe('the run lock, released during a heartbeat', () => {
  it('is not written back by the heartbeat it waited for', async () => {
    const { fs, dir } = memoryTestFs();
    const runDir = fs.join(await dir(), 'run');
    // The heartbeat's write waits until the test lets it go.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let arrived!: () => void;
    const atGate = new Promise<void>((r) => (arrived = r));
    const slow = new Proxy(fs, {
      get(target, key) {
        const v = Reflect.get(target, key) as unknown;
        if (typeof v !== 'function') return v;
        const f = v as (...a: unknown[]) => unknown;
        if (key !== 'writeFiles') return f.bind(target);
        return async (...a: unknown[]) => {
          arrived();
          await gate;
          return f.apply(target, a);
        };
      },
    });
    const lock = await takeRunLock(slow, runDir, machine([1])(1), NO_BEAT);
    await writeFile(fs, fs.join(runDir, 'run.json'), '{}');
    const beat = lock.beat();
    await atGate;
    const released = lock.release();
    await new Promise((r) => setTimeout(r, 0)); // everything the release does without the beat
    open();
    await Promise.all([beat, released]);
    expect(await listNames(fs, runDir)).toEqual(['run.json']);
  });
});
