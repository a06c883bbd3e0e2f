// WebGPU in desktop VS Code (`run.mjs --only webgpu`, Node extension host): the linux-x64 .vsix
// (Dawn's binding inside, as the marketplace's platform package) trains the induction task with
// `attentionLab.training.backend` webgpu on SwiftShader's software Vulkan driver (Chromium's, named
// by VK_ICD_FILENAMES in code-server's environment, so the extension's training worker opens it);
// the dashboard's header names the adapter; Stop checkpoints; the command line continues a copy of
// the stopped run on WebGPU for CONTINUE steps (the reference); the backend setting is switched to
// wasm in the Settings editor, Resume Training continues the run in WebAssembly, and each of those
// CONTINUE steps' losses is within 1e-4 of the copy's on WebGPU. Screenshots: gpu1-… to gpu4-….
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './lib/codeServer.mjs';
import { onlyRun } from './lib/fixtures.mjs';
import { Workbench, expectVisible } from './lib/workbench.mjs';
import { contextMenu } from './active.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STEP = /step (\d+)\/(\d+)/;
/** Steps after the stop whose losses are compared (WebAssembly in the editor, WebGPU on the command line). */
const CONTINUE = 12;
/** What the header says of the backend on SwiftShader through Dawn. */
const ADAPTER = 'WebGPU (google swiftshader · Vulkan (software))';

/** The settings of this scenario (over FAST_TRAINING). */
export const WEBGPU_SETTINGS = {
  'attentionLab.data.source': 'task',
  'attentionLab.data.task': 'induction',
  'attentionLab.training.backend': 'webgpu',
  'attentionLab.training.steps': 3000,
  'attentionLab.training.seqLen': 0,
  'attentionLab.runs.location': 'workspace',
};

/** Folders where Debian-family Chromium packages keep SwiftShader (as test/setupWebGpu.ts searches). */
const SWIFTSHADER_DIRS = ['/usr/lib/chromium', '/usr/lib/chromium-browser', '/usr/lib64/chromium'];

/** The environment that gives Dawn SwiftShader's adapter: its ICD manifest, and its loader beside it. */
export function swiftShaderEnv() {
  const dir = SWIFTSHADER_DIRS.find((d) => fs.existsSync(path.join(d, 'vk_swiftshader_icd.json')));
  if (!dir) throw new Error(`no vk_swiftshader_icd.json in ${SWIFTSHADER_DIRS.join(', ')}: run test/e2e/setup.sh`);
  const prev = process.env.LD_LIBRARY_PATH;
  return {
    VK_ICD_FILENAMES: path.join(dir, 'vk_swiftshader_icd.json'),
    LD_LIBRARY_PATH: prev ? `${dir}${path.delimiter}${prev}` : dir,
  };
}

/** Step → loss of a run folder's metrics.jsonl. */
function stepLosses(dir) {
  const out = new Map();
  for (const line of fs.readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').split('\n')) {
    if (!line) continue;
    const m = JSON.parse(line);
    if (m.type === 'step') out.set(m.step, m.loss);
  }
  return out;
}

/** Runs the scenario; resolves true when every check passed. */
export async function runWebGpu(page, { shots, log, workspace, dir }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));

  // 1. Train on WebGPU: the status bar counts steps, the header names the adapter.
  await wb.openActivity('Attention Lab');
  await wb.runCommand('Attention Lab: Train');
  const first = await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= 5, 240_000);
  log(`status bar: "${first}"`);
  if (!/loss \d+\.\d+/.test(first)) throw new Error(`status bar shows no loss: ${first}`);
  const dash = wb.dashboard();
  const header = dash.locator('.run-status');
  await expectVisible(header.filter({ hasText: ADAPTER }), `the dashboard header naming ${ADAPTER}`, 60_000);
  const said = ((await header.first().textContent()) ?? '').trim();
  log(`dashboard header: "${said}"`);
  if (/on \d+ threads?/.test(said)) throw new Error(`the header counts CPU threads beside the adapter: ${said}`);
  await shot('gpu1-webgpu-desktop-header.png');

  // 2. Stop: a checkpoint at the step it stopped at, trained on the adapter.
  await wb.runCommand('Attention Lab: Stop Training');
  const stopped = await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 120_000);
  const stopStep = Number(STEP.exec(stopped)?.[1] ?? NaN);
  const before = onlyRun(workspace);
  log(`after Stop: "${stopped}"; run.json ${before.run.status} at step ${before.run.step} (${before.run.backendUsed})`);
  const onGpu = 'webgpu (google swiftshader · Vulkan (software))';
  if (before.run.status !== 'stopped' || before.run.step !== stopStep || before.run.backendUsed !== onGpu)
    throw new Error(
      `run.json after Stop: ${JSON.stringify({ status: before.run.status, step: before.run.step, backendUsed: before.run.backendUsed })}, expected stopped at ${stopStep} by ${onGpu}`,
    );
  await shot('gpu2-webgpu-desktop-stopped.png');

  // 3. The reference: a copy of the stopped run continued on WebGPU by the command line (the run's own backend).
  const copy = path.join(dir, 'continued-on-webgpu');
  fs.cpSync(before.dir, copy, { recursive: true, filter: (f) => !/(^|[\\/])\.?lock\.json/.test(path.basename(f)) });
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'dist/cli.js'), 'train', '--resume', copy, '--until', String(stopStep + CONTINUE), '--json'],
    { env: { ...process.env, ...swiftShaderEnv() }, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 },
  );
  const reference = stepLosses(copy);
  log(
    `the copy continued on WebGPU to step ${stopStep + CONTINUE} (${JSON.parse(fs.readFileSync(path.join(copy, 'run.json'), 'utf8')).backendUsed})`,
  );

  // 4. The backend setting to wasm, in the Settings editor as a user changes it.
  await wb.runCommand('Preferences: Open User Settings');
  const search = page.locator('.settings-editor .suggest-input-container .monaco-editor').first();
  await expectVisible(search, "the Settings editor's search box");
  await search.click();
  await page.keyboard.type('attentionLab.training.backend');
  // The list filters a moment after the typing: wait for the setting itself, not the first drop-down shown.
  const select = page
    .locator('.settings-editor .setting-item-enum', { hasText: /Training:\s*Backend/ })
    .locator('select.monaco-select-box')
    .first();
  await expectVisible(select, 'the backend setting', 30_000);
  await select.click();
  const option = page.locator('.monaco-select-box-dropdown-container .monaco-list-row', { hasText: /^wasm/ }).first();
  if (await option.isVisible({ timeout: 5_000 }).catch(() => false)) await option.click();
  else await select.selectOption('wasm');
  const userSettings = path.join(dir, 'user-data/User/settings.json');
  let backendSetting = null;
  for (let i = 0; i < 100 && backendSetting !== 'wasm'; i++, await sleep(300))
    backendSetting = JSON.parse(fs.readFileSync(userSettings, 'utf8'))['attentionLab.training.backend'] ?? null;
  if (backendSetting !== 'wasm') throw new Error(`the backend setting is ${backendSetting} after choosing wasm`);
  log('settings: attentionLab.training.backend = wasm');
  await shot('gpu3-settings-backend-wasm.png');

  // 5. Resume Training continues the run in WebAssembly.
  await wb.openActivity('Attention Lab');
  const row = page.locator('.pane-body .monaco-list-row', { hasText: 'stopped' }).first();
  await expectVisible(row, 'the stopped run in the Runs view');
  await contextMenu(page, row, 'Resume Training');
  const resumed = await wb.waitForStatus(
    'Attention Lab: step',
    (t) => Number(STEP.exec(t)?.[1] ?? 0) > stopStep + CONTINUE,
    240_000,
  );
  log(`resumed: "${resumed}"`);
  await expectVisible(
    header.filter({ hasText: 'wasm backend' }),
    'the dashboard header naming wasm after Resume',
    60_000,
  );
  log(`dashboard header: "${((await header.first().textContent()) ?? '').trim()}"`);
  await shot('gpu4-resumed-on-wasm.png');
  // The dashboard was behind the Settings editor when the run resumed: it must have the run, not drop its steps.
  const banner = dash.locator('.banner:not([hidden])');
  if (await banner.count())
    throw new Error(`the dashboard reports problems after Resume: ${(await banner.first().textContent())?.trim()}`);
  await wb.runCommand('Attention Lab: Stop Training');
  await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 120_000);

  // 6. The steps after the stop: WebAssembly's in the editor against WebGPU's on the command line.
  const after = onlyRun(workspace);
  if (after.run.backendUsed !== 'wasm' || after.run.spec.backend !== 'wasm')
    throw new Error(
      `run.json after Resume: backendUsed ${after.run.backendUsed}, spec.backend ${after.run.spec.backend}`,
    );
  const got = stepLosses(after.dir);
  let worst = 0;
  for (let s = stopStep + 1; s <= stopStep + CONTINUE; s++) {
    const a = got.get(s);
    const b = reference.get(s);
    if (a === undefined || b === undefined) throw new Error(`step ${s} is missing (editor ${a}, command line ${b})`);
    worst = Math.max(worst, Math.abs(a - b));
  }
  const steps = [...got.keys()];
  if (steps.some((s, i) => s !== i + 1)) throw new Error(`metrics.jsonl's steps are not 1…${steps.length} in order`);
  log(
    `steps ${stopStep + 1}–${stopStep + CONTINUE}: WebAssembly (editor) vs WebGPU (command line) differ by at most ${worst.toExponential(2)}`,
  );
  if (!(worst < 1e-4)) throw new Error(`the resumed losses differ from WebGPU's by ${worst} (more than 1e-4)`);
  return true;
}
