/**
 * A run killed with SIGKILL at any moment — here, while it saves a checkpoint after every
 * step — leaves its last checkpoint loadable, and can be resumed or evaluated.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../src/lab/files/nodeFs';
import { createReferenceBackend } from '../../../src/engine/backends/reference';
import { openRun } from '../../../src/lab/runs/openRun';
import { FAST, cli, cliAsync, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (check()) resolve();
      else if (Date.now() - t0 > timeoutMs) reject(new Error('timed out'));
      else setTimeout(tick, 5);
    };
    tick();
  });
}

describe('SIGKILL during checkpointing', () => {
  it.each([0, 37, 113, 271])('leaves a loadable checkpoint when killed %i ms after the first save', async (delay) => {
    const out = path.join(tmp.dir, `killed-${delay}`);
    const { child, done } = cliAsync(['train', '--task', 'copy', '--steps', '100000', '--checkpoint-every', '1', '--eval-every', '0', '--snapshot-every', '0', '--out', out, ...FAST], tmp.dir);
    await waitFor(() => fs.existsSync(path.join(out, 'model.safetensors')), 60_000);
    await new Promise((r) => setTimeout(r, delay));
    child.kill('SIGKILL');
    const res = await done;
    expect(res.code).toBe(null); // killed, not exited
    const opened = await openRun(NODE_FS, out, createReferenceBackend());
    expect(opened.step).toBeGreaterThan(0);
    const ev = cli(['eval', '--run', out, '--json'], tmp.dir);
    expect(ev.code, ev.stderr).toBe(0);
    expect(Number.isFinite((JSON.parse(ev.stdout) as { loss: number }).loss)).toBe(true);
    // Resuming either continues exactly or says clearly why it cannot.
    const r = cli(['train', '--resume', out, '--until', String(opened.step + 2), '--json'], tmp.dir);
    if (r.code !== 0) expect(r.stderr).toMatch(/^attention-lab: optimizer\.safetensors is from step/);
    else expect((JSON.parse(r.stdout) as { step: number }).step).toBe(opened.step + 2);
  });
});
