/**
 * The per-platform packaging (`npm run package:all`, scripts/packageTargets.mjs): for each VS Code
 * target the binding of the `webgpu` package is staged under dist/node_modules/webgpu, and what vsce
 * would pack (its own file list, read through the project's .vscodeignore and package.json) holds
 * that target's Dawn binary and no other platform's; the universal package holds none. The `webgpu`
 * package is played by a folder of small stand-in files of the real layout.
 *
 * Leaves out: zipping (vsce's) and loading the binary (the CLI WebGPU tests).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PackageManager, listFiles } from '@vscode/vsce';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../..');

interface PackageTargets {
  TARGETS: Record<string, string>;
  STAGED: string;
  stageWebGpu(root: string, target: string | null, webgpuDir: string): string[];
  unstage(root: string): void;
}

/** The binary folders of `webgpu` 0.6.2 (what `node_modules/webgpu/dist/` holds). */
const BINARY_DIRS = ['darwin-universal', 'linux-arm64', 'linux-x64', 'win32-arm64', 'win32-x64'];

let mod: PackageTargets;
let tmp: string;
let root: string;
let webgpu: string;

function write(file: string, text = 'x'): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

beforeAll(async () => {
  mod = (await import(pathToFileURL(path.join(ROOT, 'scripts/packageTargets.mjs')).href)) as PackageTargets;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'package-targets-'));
  root = path.join(tmp, 'ext');
  webgpu = path.join(tmp, 'webgpu');
  fs.mkdirSync(root, { recursive: true });
  for (const f of ['package.json', '.vscodeignore', 'README.md', 'CHANGELOG.md', 'LICENSE'])
    fs.copyFileSync(path.join(ROOT, f), path.join(root, f));
  for (const f of ['dist/extension.js', 'dist/worker.js', 'dist/web/extension.js', 'src/extension/extension.ts'])
    write(path.join(root, f));
  for (const f of ['package.json', 'index.js', 'LICENSE.md', 'README.md', 'types.d.ts']) write(path.join(webgpu, f));
  for (const d of BINARY_DIRS) write(path.join(webgpu, 'dist', d, 'dawn.node'));
  for (const d of ['win32-x64', 'win32-arm64'])
    for (const f of ['d3dcompiler_47.dll', 'dxcompiler.dll']) write(path.join(webgpu, 'dist', d, f));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** What vsce would pack from `root`, as `npm run package` calls it (no dependency detection). */
async function packed(): Promise<string[]> {
  return listFiles({ cwd: root, packageManager: PackageManager.None });
}

describe('packaging one .vsix per platform', () => {
  it('names the five targets of the issue, the two macOS ones on the universal binary', () => {
    expect(Object.keys(mod.TARGETS).sort()).toEqual([
      'darwin-arm64',
      'darwin-x64',
      'linux-arm64',
      'linux-x64',
      'win32-x64',
    ]);
    expect(mod.TARGETS['darwin-arm64']).toBe('darwin-universal');
    expect(mod.TARGETS['darwin-x64']).toBe('darwin-universal');
  });

  it.each(['linux-x64', 'linux-arm64', 'darwin-arm64', 'darwin-x64', 'win32-x64'])(
    '%s: its own Dawn binary and the loader, no other platform’s',
    async (target) => {
      const staged = mod.stageWebGpu(root, target, webgpu);
      const files = await packed();
      const own = mod.TARGETS[target] as string;
      const binding = `${mod.STAGED}/dist/${own}/dawn.node`;
      expect(staged).toContain(binding);
      expect(files).toContain(binding);
      expect(files).toContain(`${mod.STAGED}/index.js`);
      expect(files).toContain(`${mod.STAGED}/package.json`);
      expect(files).toContain('dist/extension.js');
      expect(files).not.toContain('src/extension/extension.ts');
      // Every packed file of the binding is the loader's or under this target's folder.
      const other = files.filter(
        (f) => f.startsWith(`${mod.STAGED}/dist/`) && !f.startsWith(`${mod.STAGED}/dist/${own}/`),
      );
      expect(other).toEqual([]);
      if (target === 'win32-x64') expect(files).toContain(`${mod.STAGED}/dist/win32-x64/dxcompiler.dll`);
      expect(files.filter((f) => f.includes('node_modules') && !f.startsWith(`${mod.STAGED}/`))).toEqual([]);
    },
  );

  it('the universal package carries no binding, and staging goes away after packing', async () => {
    mod.stageWebGpu(root, 'linux-x64', webgpu);
    expect(mod.stageWebGpu(root, null, webgpu)).toEqual([]);
    const files = await packed();
    expect(files.filter((f) => f.includes('node_modules'))).toEqual([]);
    expect(files).toContain('dist/worker.js');
    mod.stageWebGpu(root, 'win32-x64', webgpu);
    mod.unstage(root);
    expect(fs.existsSync(path.join(root, 'dist/node_modules'))).toBe(false);
  });

  it('refuses a target it has no binary for', () => {
    expect(() => mod.stageWebGpu(root, 'win32-arm64', webgpu)).toThrow(
      'unknown target win32-arm64; use one of linux-x64, linux-arm64, darwin-arm64, darwin-x64, win32-x64',
    );
  });
});
