// Packages the extension once per platform and once universal (`npm run package:all`): the
// WebGPU backend's Dawn binding (the optional npm package `webgpu`) is native, so each
// platform's .vsix (VS Code's `--target` packaging) carries its own dawn.node and no other
// platform's; the universal .vsix carries none, and there `backend webgpu` is refused in one
// line (auto trains on WebAssembly). Writes vsix/attention-lab-<target>-<version>.vsix and
// vsix/attention-lab-<version>.vsix, and prints each one's size.
//
// How the binding travels: the bundles keep `webgpu` external (esbuild), and vsce with
// --no-dependencies packs nothing from the root node_modules/, so the binding is staged as
// dist/node_modules/webgpu/ (its package.json, index.js, licence and one dist/<platform>/
// folder): Node resolves `import('webgpu')` from dist/*.js there first, and .vscodeignore lets
// that folder in. The staging is removed after the last package.
// Leaves out: publishing (vsce publish --packagePath …), Electron's own check of dawn.node.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Dawn's folder under the `webgpu` package's dist/ for each VS Code target (macOS has one universal binary). */
export const TARGETS = {
  'linux-x64': 'linux-x64',
  'linux-arm64': 'linux-arm64',
  'darwin-arm64': 'darwin-universal',
  'darwin-x64': 'darwin-universal',
  'win32-x64': 'win32-x64',
};

/** Where the binding is staged inside the extension, relative to its root. */
export const STAGED = 'dist/node_modules/webgpu';

/** The files of the `webgpu` package every target needs beside its binary folder. */
const PACKAGE_FILES = ['package.json', 'index.js', 'LICENSE.md'];

/** Hard-links `from` to `to` (same disk: no copy of 20-40 MB), else copies it. */
function place(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
  }
}

/**
 * Stages the binding of `target` (a key of TARGETS; null: universal, nothing) from the `webgpu`
 * package at `webgpuDir` into `root`/STAGED, replacing what was there. Returns the staged files,
 * relative to `root`.
 */
export function stageWebGpu(root, target, webgpuDir) {
  const dest = path.join(root, STAGED);
  fs.rmSync(dest, { recursive: true, force: true });
  if (target === null) return [];
  const dir = TARGETS[target];
  if (!dir) throw new Error(`unknown target ${target}; use one of ${Object.keys(TARGETS).join(', ')}`);
  const binDir = path.join(webgpuDir, 'dist', dir);
  if (!fs.existsSync(binDir))
    throw new Error(`${binDir} is missing: install the optional package "webgpu" (npm ci) before packaging`);
  const files = [...PACKAGE_FILES, ...fs.readdirSync(binDir).map((f) => `dist/${dir}/${f}`)];
  for (const f of files) place(path.join(webgpuDir, f), path.join(dest, f));
  return files.map((f) => `${STAGED}/${f}`);
}

/** Removes the staged binding (and dist/node_modules when nothing else is in it). */
export function unstage(root) {
  fs.rmSync(path.join(root, STAGED), { recursive: true, force: true });
  const parent = path.join(root, path.dirname(STAGED));
  if (fs.existsSync(parent) && fs.readdirSync(parent).length === 0) fs.rmdirSync(parent);
}

/**
 * Packs the .vsix of one `target` (a key of TARGETS) with its binding into `out` (the end-to-end
 * suite installs linux-x64's to train on WebGPU in VS Code); the staging is removed after.
 */
export function packageTarget(root, target, out) {
  const vsce = path.join(root, 'node_modules/.bin/vsce');
  const args = ['package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository'];
  fs.mkdirSync(path.dirname(out), { recursive: true });
  try {
    stageWebGpu(root, target, path.join(root, 'node_modules/webgpu'));
    execFileSync(vsce, [...args, '--target', target, '-o', out], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    unstage(root);
  }
  return out;
}

/** Packs every target and the universal package into `root`/vsix/; returns [name, bytes] of each. */
export function packageAll(root) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const webgpuDir = path.join(root, 'node_modules/webgpu');
  const out = path.join(root, 'vsix');
  fs.mkdirSync(out, { recursive: true });
  const vsce = path.join(root, 'node_modules/.bin/vsce');
  const sizes = [];
  try {
    for (const target of [...Object.keys(TARGETS), null]) {
      stageWebGpu(root, target, webgpuDir);
      const name = `${pkg.name}-${target ? `${target}-` : ''}${pkg.version}.vsix`;
      const args = ['package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository'];
      execFileSync(vsce, [...args, ...(target ? ['--target', target] : []), '-o', path.join(out, name)], {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      sizes.push([name, fs.statSync(path.join(out, name)).size]);
    }
  } finally {
    unstage(root);
  }
  return sizes;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  for (const [name, bytes] of packageAll(root))
    console.log(`${(bytes / 2 ** 20).toFixed(1).padStart(6)} MiB  vsix/${name}`);
}
