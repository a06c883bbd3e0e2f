/**
 * scripts/gpu/speed.mjs, the GPU speed check of issue 31, on the software adapter the test setup
 * gives (SwiftShader): it refuses a software adapter unless told, and with --small runs WebGPU and
 * WebAssembly end to end (PyTorch is left out here: the repository's tests need no Python),
 * reporting tokens/s, TFLOP/s, the ratio and the losses' agreement. Skips, naming why, only when
 * no adapter opens.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openNodeGpu } from '../../../src/lab/platform/webgpu.node';

const gpu = await openNodeGpu();
if (gpu.ok) gpu.device.destroy();
const SCRIPT = path.resolve('scripts/gpu/speed.mjs');

function speed(args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', timeout: 600_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe.skipIf(!gpu.ok)(gpu.ok ? `gpu speed script on ${gpu.adapter.name}` : `gpu speed script (skipped)`, () => {
  it('refuses a software adapter in one line unless --allow-software', () => {
    const r = speed(['--small', '--no-pytorch', '--no-wasm', '--steps', '12']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/^gpu speed: the WebGPU adapter is a software one \(.*swiftshader.*\), not a GPU: .*\n$/i);
  });

  it('--small runs WebGPU and WebAssembly end to end: tokens/s, TFLOP/s, ratio, losses within 1e-3', () => {
    const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'al-speed-test-')), 'report.json');
    const r = speed(['--small', '--allow-software', '--no-pytorch', '--steps', '12', '--json', json]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/\| ours, WebGPU \(.*\) \| [\d,]+ \[[\d,]+–[\d,]+\] \| [\d.e-]+ \|/);
    expect(r.out).toMatch(/\| ours, WebAssembly \(CPU\) \| [\d,]+ /);
    expect(r.out).toMatch(/WebGPU \/ ours, WebAssembly \(CPU\): [\d.]+×/);
    expect(r.out).toMatch(/losses, WebGPU vs WebAssembly over 12 steps: worst \|Δ\| \S+ \(within 1e-3\)/);
    const report = JSON.parse(fs.readFileSync(json, 'utf8')) as {
      params: number;
      lossOk: boolean;
      results: Record<string, { steps: number; tokensPerSec: number; losses: number[] }>;
    };
    expect(report.lossOk).toBe(true);
    expect(report.params).toBeGreaterThan(100_000);
    for (const name of ['webgpu', 'wasm']) {
      expect(report.results[name]?.steps).toBe(12);
      expect(report.results[name]?.tokensPerSec).toBeGreaterThan(0);
    }
    expect(report.results.pytorch).toBeUndefined();
  });
});
