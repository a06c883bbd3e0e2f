/**
 * A run moves between WebGPU and WebAssembly at a checkpoint: `train --until 4` on one backend,
 * then `train --resume DIR --backend <other>` continues it, and each of the resumed steps' losses
 * is within 1e-4 of the same run continued on the backend it started on (the checkpoint holds the
 * GPU's weights and Adam's moments, the data and dropout streams are functions of the step).
 * run.json records the backend it continues on. Also `--backend auto` on a software adapter: it
 * trains on WebAssembly and says why in the start line and in run.json. Runs on whatever adapter
 * Dawn opens (here SwiftShader, found by test/setupWebGpu.ts); skips, naming why, when none opens.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openNodeGpu } from '../../../src/lab/platform/webgpu.node';
import { cli, metricLines, tempDir } from './cliHarness';

const gpu = await openNodeGpu();
if (gpu.ok) gpu.device.destroy();
const tmp = tempDir();
afterAll(tmp.cleanup);

const RUN = [
  ...['train', '--task', 'induction', '--preset', 'tiny', '--steps', '8', '--batch', '4', '--seq', '16'],
  ...['--eval-every', '4', '--checkpoint-every', '4', '--snapshot-every', '0'],
];

/** run.json of `dir`. */
const runJson = (dir: string): Record<string, unknown> & { spec: { backend: string } } =>
  JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')) as Record<string, unknown> & {
    spec: { backend: string };
  };

/** The step losses of `dir` after step `from`. */
const lossesAfter = (dir: string, from: number): { step: number; loss: number }[] =>
  metricLines(dir, 'step')
    .filter((m) => (m.step as number) > from)
    .map((m) => ({ step: m.step as number, loss: m.loss as number }));

describe.skipIf(!gpu.ok)(
  gpu.ok ? `resume across backends on ${gpu.adapter.name}` : `resume across backends (skipped: ${gpu.reason})`,
  () => {
    it.each([
      ['webgpu', 'wasm'],
      ['wasm', 'webgpu'],
    ])('trained on %s for 4 steps, 4 more on %s match 4 more on the first within 1e-4', (first, then) => {
      const moved = path.join(tmp.dir, `${first}-then-${then}`);
      const stayed = path.join(tmp.dir, `${first}-then-${first}`);
      const start = cli([...RUN, '--until', '4', '--backend', first, '--out', moved], tmp.dir, 300_000);
      expect(start.code, start.stderr).toBe(0);
      expect(runJson(moved).step).toBe(4);
      fs.cpSync(moved, stayed, { recursive: true });

      const switched = cli(['train', '--resume', moved, '--backend', then], tmp.dir, 300_000);
      expect(switched.code, switched.stderr).toBe(0);
      expect(switched.stderr).toContain('Resumed at step 4.');
      const same = cli(['train', '--resume', stayed], tmp.dir, 300_000);
      expect(same.code, same.stderr).toBe(0);

      const got = lossesAfter(moved, 4);
      const want = lossesAfter(stayed, 4);
      expect(got.map((m) => m.step)).toEqual([5, 6, 7, 8]);
      expect(want.map((m) => m.step)).toEqual([5, 6, 7, 8]);
      got.forEach((m, i) => expect(Math.abs(m.loss - (want[i]?.loss as number)), `step ${m.step}`).toBeLessThan(1e-4));
      // The steps before the move are the first backend's, kept as they were.
      expect(lossesAfter(moved, 0).slice(0, 4)).toEqual(lossesAfter(stayed, 0).slice(0, 4));

      const onGpu = gpu.ok ? `webgpu (${gpu.adapter.name})` : '';
      const after = runJson(moved);
      expect(after.status).toBe('completed');
      expect(after.spec.backend).toBe(then);
      expect(after.backendUsed).toBe(then === 'webgpu' ? onGpu : 'wasm');
      expect(runJson(stayed).spec.backend).toBe(first);
      expect(runJson(stayed).backendUsed).toBe(first === 'webgpu' ? onGpu : 'wasm');
    });

    it('--backend auto on a software adapter trains on WebAssembly and says why', () => {
      if (!gpu.ok || !gpu.adapter.software) return; // a real GPU: auto trains on it (trainingDevice.test.ts)
      const dir = path.join(tmp.dir, 'auto');
      const r = cli([...RUN, '--steps', '2', '--backend', 'auto', '--out', dir], tmp.dir, 300_000);
      expect(r.code, r.stderr).toBe(0);
      const why = `auto: ${gpu.adapter.name} is a software adapter, slower than WebAssembly on the same cores`;
      expect(r.stderr).toContain(`· wasm backend (${why}) · `);
      expect(runJson(dir).backendUsed).toBe('wasm');
      expect(runJson(dir).backendChoice).toBe(why);
    });
  },
);
