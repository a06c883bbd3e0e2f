/**
 * `attention-lab train` ended by SIGTERM (`kill PID`, `timeout`, a cancelled CI job), through the
 * built binary: it stops as at Ctrl-C — the last step's checkpoint saved, run.json "stopped" at
 * that step, every step logged once, the lock released, exit 0 — instead of dying between
 * checkpoints with run.json still saying "training".
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAST, cliAsync, metricLines, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

describe('train and SIGTERM', () => {
  it('saves the last step and says stopped', async () => {
    const out = path.join(tmp.dir, 'termed');
    const args = ['--task', 'copy', '--steps', '100000', '--checkpoint-every', '1000', '--eval-every', '0'];
    const run = cliAsync(['train', ...args, '--snapshot-every', '0', ...FAST, '--out', out], tmp.dir);
    const steps = (): number[] =>
      fs.existsSync(path.join(out, 'metrics.jsonl')) ? metricLines(out, 'step').map((l) => l.step as number) : [];
    const t0 = Date.now();
    while (steps().length < 3 && Date.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 20));
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);
    const logged = steps();
    expect(logged.length).toBeGreaterThanOrEqual(3);
    expect(logged).toEqual(Array.from({ length: logged.length }, (_, i) => i + 1));
    // The checkpoint every 1000 steps was never reached: the step saved is the stop's.
    expect(JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8'))).toMatchObject({
      status: 'stopped',
      step: logged.length,
    });
    expect(fs.existsSync(path.join(out, 'model.safetensors'))).toBe(true);
    expect(fs.existsSync(path.join(out, 'lock.json'))).toBe(false);
  }, 180_000);
});
