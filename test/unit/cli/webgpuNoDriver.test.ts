/**
 * `--backend webgpu` where Vulkan has no driver: the CLI's stderr is exactly our one line — none of
 * the warnings Dawn's native code prints when its Vulkan backend finds no loader or no driver
 * ("Couldn't load Vulkan …", "vkCreateInstance: Found no drivers!"), which Node cannot silence, so
 * the lab checks for the loader and a driver before Dawn loads (src/lab/platform/webgpu.node.ts).
 * Linux only (elsewhere Dawn uses Metal or D3D12).
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, tempDir } from './cliHarness';

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
  return { code: r.status, stderr: r.stderr };
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
