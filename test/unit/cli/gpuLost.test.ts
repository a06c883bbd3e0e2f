/**
 * `attention-lab train --backend webgpu` when the GPU device is lost mid-run, as users see it: the
 * worker's test hook (ATTENTION_LAB_TEST_LOSE_GPU_AFTER_STEP, src/lab/workers/trainingWorker.node.ts)
 * destroys the device after step 6, which fires `GPUDevice.lost` as a driver reset does. The command
 * exits 2 with the progress line and then exactly one line of ours (no native abort: Dawn aborts the
 * process when one of its promises is still pending as the worker ends), run.json says stopped at the
 * checkpoint of step 4, and the command that line gives continues on WebAssembly to the end.
 * Skips, naming why, only when no adapter opens.
 */

import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../src/lab/files/fs.node';
import { readCheckpointConfig } from '../../../src/lab/runs/checkpoint';
import { readMetrics, readRunJson } from '../../../src/lab/runs/runFolder';
import { openNodeGpu } from '../../../src/lab/platform/webgpu.node';
import { CLI, cli, tempDir } from './cliHarness';

const gpu = await openNodeGpu();
if (gpu.ok) gpu.device.destroy();
const tmp = tempDir();
afterAll(tmp.cleanup);

describe.skipIf(!gpu.ok)(gpu.ok ? `a GPU lost during train on ${gpu.adapter.name}` : 'a GPU lost (skipped)', () => {
  it('stops with one line at the kept checkpoint, exit 2; the printed command resumes on WebAssembly', async () => {
    const dir = path.join(tmp.dir, 'run');
    const args = ['train', '--task', 'induction', '--preset', 'tiny', '--steps', '10', '--batch', '4', '--seq', '16'];
    const r = spawnSync(
      process.execPath,
      [CLI, ...args, '--checkpoint-every', '4', '--backend', 'webgpu', '--out', dir],
      {
        cwd: tmp.dir,
        encoding: 'utf8',
        timeout: 300_000,
        env: { ...process.env, NO_COLOR: '1', ATTENTION_LAB_TEST_LOSE_GPU_AFTER_STEP: '6' },
      },
    );
    const command = `attention-lab train --resume ${dir} --backend wasm`;
    expect(r.status, r.stderr + r.stdout).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.at(-2)).toBe(
      'attention-lab: The GPU device was lost (device was destroyed) after step 6; training stopped and the ' +
        `checkpoint of step 4 is kept — resume on WebAssembly: ${command}`,
    );
    expect(lines.filter((l) => l.startsWith('attention-lab:'))).toHaveLength(1);
    const run = await readRunJson(NODE_FS, dir);
    expect(run).toMatchObject({ status: 'stopped', step: 4, error: { code: 'gpu/lost' } });
    expect((await readCheckpointConfig(NODE_FS, dir)).step).toBe(4);

    const [, ...resume] = command.split(' ');
    const resumed = cli(resume, tmp.dir, 300_000);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('Resumed at step 4.');
    expect(resumed.stderr).toContain(' · wasm backend · ');
    expect(await readRunJson(NODE_FS, dir)).toMatchObject({ status: 'completed', step: 10, error: null });
    expect((await readMetrics(NODE_FS, dir)).steps.map((m) => m.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  }, 600_000);

  it('says stopped in --json too, with the kept checkpoint and the step reached', () => {
    const dir = path.join(tmp.dir, 'run-json');
    const args = ['train', '--task', 'induction', '--preset', 'tiny', '--steps', '10', '--batch', '4', '--seq', '16'];
    const r = spawnSync(
      process.execPath,
      [CLI, ...args, '--checkpoint-every', '4', '--backend', 'webgpu', '--json', '--out', dir],
      {
        cwd: tmp.dir,
        encoding: 'utf8',
        timeout: 300_000,
        env: { ...process.env, NO_COLOR: '1', ATTENTION_LAB_TEST_LOSE_GPU_AFTER_STEP: '6' },
      },
    );
    expect(r.status, r.stderr + r.stdout).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'stopped',
      step: 4,
      step_reached: 6,
      error: { code: 'gpu/lost' },
    });
  }, 600_000);
});
