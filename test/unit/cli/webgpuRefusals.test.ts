/**
 * `--backend webgpu` refused before anything trains, in exactly one line of ours on stderr:
 * - where Vulkan has no driver: none of the warnings Dawn's native code prints when its Vulkan
 *   backend finds no loader or no driver ("Couldn't load Vulkan …", "vkCreateInstance: Found no
 *   drivers!"), which Node cannot silence, so the lab checks for the loader and a driver before
 *   Dawn loads (src/lab/platform/webgpu.node.ts); Linux only (elsewhere Dawn uses Metal or D3D12);
 * - nanoGPT's shakespeare-char model at a context of 8192 on an adapter (here SwiftShader): the CPU copy
 *   that evaluates it does not fit WebAssembly's 4 GiB even at one row, which is said — naming the copy
 *   and the context to lower — before anything is allocated on the GPU, leaving no folder. (At batch
 *   64 × 256 the copy takes the rows that fit: test/unit/lab/training/hostCopy.test.ts.)
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openNodeGpu } from '../../../src/lab/platform/webgpu.node';
import { CLI, tempDir } from './cliHarness';

const gpu = await openNodeGpu();
if (gpu.ok) gpu.device.destroy();

const tmp = tempDir();
afterAll(tmp.cleanup);

/** Runs the CLI with `env` over the test's own environment. */
function run(args: readonly string[], env: Record<string, string>): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: tmp.dir,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  return { code: r.status, stderr: `${r.stderr}${r.signal ? ` [${r.signal}] ${r.stdout}` : ''}` };
}

describe.skipIf(process.platform !== 'linux')('--backend webgpu without a Vulkan driver', () => {
  it('train says so in exactly one line of ours and exits 2, leaving no run folder', () => {
    const missing = path.join(tmp.dir, 'no-such-driver', 'icd.json');
    const out = path.join(tmp.dir, 'run');
    const r = run(['train', '--task', 'induction', '--steps', '1', '--backend', 'webgpu', '--out', out], {
      VK_ICD_FILENAMES: missing,
      VK_DRIVER_FILES: '',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `attention-lab: No WebGPU adapter: VK_ICD_FILENAMES names no Vulkan driver that exists here (${missing}); ` +
        "point it at a driver's .json or unset it, or use --backend wasm.\n",
    );
    expect(fs.existsSync(out)).toBe(false);
  });

  it('score --backend webgpu on a trained run: the same one line', () => {
    const dir = path.join(tmp.dir, 'trained');
    const trained = run(['train', '--task', 'induction', '--steps', '1', '--backend', 'wasm', '--out', dir], {});
    expect(trained.code, trained.stderr).toBe(0);
    const missing = path.join(tmp.dir, 'gone.json');
    const r = run(['score', '--run', dir, '--text', 'abc', '--backend', 'webgpu'], { VK_ICD_FILENAMES: missing });
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')).toEqual([
      expect.stringMatching(/^attention-lab: No WebGPU adapter: VK_ICD_FILENAMES /),
      '',
    ]);
  });
});

describe.skipIf(!gpu.ok)(
  gpu.ok ? `--backend webgpu on ${gpu.adapter.name}` : '--backend webgpu (skipped: no adapter)',
  () => {
    it("a run whose CPU copy exceeds WebAssembly's memory even at one row is refused in one line naming that copy", () => {
      // nanoGPT's shakespeare-char model at a context of 8192: one row's activations alone are 10.7 GiB on the CPU.
      const out = path.join(tmp.dir, 'long-context');
      const shape = [
        '--batch',
        '4',
        '--seq',
        '8192',
        '--set',
        'maxLen=8192',
        '--set',
        'dModel=384',
        '--set',
        'nHeads=6',
      ];
      const args = [
        'train',
        '--task',
        'induction',
        '--steps',
        '1',
        ...shape,
        '--set',
        'dFF=1536',
        '--set',
        'nDecoderLayers=6',
      ];
      const r = run([...args, '--backend', 'webgpu', '--out', out], {});
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(
        /^attention-lab: On WebGPU, evaluation and attention snapshots run on a CPU copy of the model: decoder-only model of [\d,]+ parameters needs [\d.]+ GiB of WebAssembly memory \(.*for 1 × 8192 positions\).*lower the sequence length \(8192\)[^\n]*\n$/,
      );
      expect(fs.existsSync(out)).toBe(false);
    });
  },
);
