#!/usr/bin/env node
// The end-to-end suite: packages the extension (npm run package), installs the .vsix into
// a fresh, isolated VS Code (code-server), opens a copy of fixtures/workspace, then
//   1. runs extensionHost/suite.cjs inside the real extension host (extensionTestsPath);
//   2. drives the UI with Chromium (ui.mjs): Train from the palette, status bar, dashboard,
//      Stop, the Runs view, Decode, Score Selection, Show Attention, a reload that restores
//      everything, Delete;
//   2b. the active run (active.mjs): a reload during training and its Resume notification, the
//      Runs view / status bar / dashboard picker sharing the active run that Score Selection
//      uses, Rename Run…, deleting two runs at once;
//   2c. a full disk (diskFull.mjs): runs on a small tmpfs stop at the next checkpoint with the
//      one-line reason and Resume, which trains on once space is back;
//   2d. a run with a byte-level BPE tokenizer (tokens.mjs): the heatmap's axis labels and the
//      playground's tiles read as text (a leading space as ·, no <0x..> for ASCII), and a
//      200-token sample from the 32-token context comes back whole, the reason said;
//   2e. looking inside (inspect.mjs): an imported GPT-2 checkpoint's Attention and Heads tabs on a
//      typed text, a Japanese BPE run's axes in characters, two runs side by side in the playground;
//   2f. the PyTorch engine (pytorch.mjs): two torchrun processes on the induction task, the
//      curves and the Heads tab filling in, Stop, then Resume in WebAssembly;
//   3. trains on one generated 1.1 MB text file (bigFile.mjs): the run header states the held-out
//      split and the curves report a validation loss that is not the training loss;
//   4. walks Configure Model in a trusted workspace (configure.mjs): the glob's file count and
//      preview as it is typed, a glob matching nothing refused, the review, the settings file;
//   5. opens the workspace untrusted (restricted.mjs): the limited mode, and Configure Model
//      step by step ending in Save and Train.
// Screenshots go to test/e2e/screenshots/.
// Usage: node test/e2e/run.mjs [--only host|ui|active|diskfull|tokens|inspect|pytorch|bigfile|configure|restricted] [--no-package] [--keep] [--readme-screenshots]
//   --readme-screenshots  also copy the screenshots the README shows into media/screenshots/
// Runs test/e2e/setup.sh first (idempotent and quick once done). ATTENTION_LAB_SKIP_E2E=1 skips
// the whole suite, loudly, on machines that cannot install its toolchain.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodeServerSession, E2E_HOME, checkToolchain, sleep } from './lib/codeServer.mjs';
import { FAST_TRAINING, prepareWorkspace } from './lib/fixtures.mjs';
import { runBigFile, writeBigFile } from './bigFile.mjs';
import { runConfigure } from './configure.mjs';
import { runRestricted } from './restricted.mjs';
import { runUi } from './ui.mjs';
import { runActive } from './active.mjs';
import { DISK_FULL_SETTINGS, mountSmallDisk, runDiskFull } from './diskFull.mjs';
import { TOKENS_SETTINGS, runTokens } from './tokens.mjs';
import { INSPECT_SETTINGS, prepareInspect, runInspect } from './inspect.mjs';
import { PYTORCH_SETTINGS, runPytorch } from './pytorch.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const argv = process.argv.slice(2);
const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : null;
const keep = argv.includes('--keep');
const t0 = Date.now();
const log = (...a) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s]`, ...a);

/** Screenshots of the UI run that README.md shows (and the .vsix ships). */
const README_SHOTS = [['03-dashboard-curves.png', 'curves.png'], ['04-dashboard-attention.png', 'attention.png'], ['07-score-selection.png', 'score.png'], ['02-configure-preset.png', 'configure.png']];

function newSession(name, settings, options = {}) {
  const dir = fs.mkdtempSync(path.join(E2E_HOME, `run-${name}-`));
  const workspace = prepareWorkspace(path.join(dir, 'workspace'));
  options.prepare?.(workspace);
  return { dir, session: new CodeServerSession(dir, settings, options), workspace };
}

async function hostTests(vsix) {
  const { dir, session, workspace } = newSession('host', { ...FAST_TRAINING });
  log(`extension-host tests in ${dir}`);
  let code = 'timeout';
  try {
    log(session.installVsix(vsix));
    await session.start();
    let exit;
    const exited = new Promise((r) => (exit = r));
    const suite = path.join(HERE, 'extensionHost/suite.cjs');
    // VS Code runs extensionTestsPath only together with extensionDevelopmentPath: point it
    // at the folder the .vsix was just installed into, so the code under test is the package.
    const installed = fs.readdirSync(session.extensions).find((d) => d.startsWith('attention-lab.attention-lab-'));
    if (!installed) throw new Error(`the .vsix did not install into ${session.extensions}`);
    await session.open(workspace, {
      payload: [['extensionDevelopmentPath', session.remote(path.join(session.extensions, installed))], ['extensionTestsPath', session.remote(suite)]],
      onLog: (type, args) => console.log(...args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))),
      onExit: (c) => exit(c),
    });
    code = await Promise.race([exited, sleep(240_000).then(() => 'timeout')]);
  } finally {
    await session.stop();
    if (!keep && code === 0) fs.rmSync(dir, { recursive: true, force: true });
  }
  log(`extension-host tests: exit ${code}`);
  return code === 0;
}

/** Runs one browser scenario in a fresh session; screenshots go to test/e2e/screenshots/. */
async function browserTests(name, vsix, scenario, settings, options = {}) {
  const { dir, session, workspace } = newSession(name, settings, options);
  const shots = path.join(HERE, 'screenshots');
  fs.mkdirSync(shots, { recursive: true });
  log(`${name} tests in ${dir}`);
  let ok = false;
  try {
    log(session.installVsix(vsix));
    await session.start();
    const page = await session.open(workspace);
    ok = await scenario(page, { shots, log, workspace });
  } catch (e) {
    console.error(`${name} test error:`, e?.stack ?? e);
    try {
      const page = session.context?.pages()[0];
      if (page) {
        await page.screenshot({ path: path.join(shots, `failure-${name}.png`) });
        fs.writeFileSync(path.join(dir, 'failure-dom.html'), await page.content());
      }
    } catch { /* the browser is gone */ }
  } finally {
    await session.stop();
    if (!keep && ok) fs.rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dir} (code-server.log, browser-console.log, user-data/logs)`);
  }
  log(`${name} tests: ${ok ? 'passed' : 'FAILED'}`);
  if (ok && name === 'ui' && argv.includes('--readme-screenshots')) {
    const media = path.join(ROOT, 'media/screenshots');
    fs.mkdirSync(media, { recursive: true });
    for (const [from, to] of README_SHOTS) fs.copyFileSync(path.join(shots, from), path.join(media, to));
    log(`copied ${README_SHOTS.length} screenshots to ${media}`);
  }
  return ok;
}

if (process.env.ATTENTION_LAB_SKIP_E2E === '1') {
  log('SKIPPED: ATTENTION_LAB_SKIP_E2E=1 (CI never sets it; it is for machines that cannot install code-server)');
  process.exit(0);
}
execFileSync('bash', [path.join(HERE, 'setup.sh')], { stdio: 'inherit' });
checkToolchain();
if (!argv.includes('--no-package')) {
  log('npm run package');
  execFileSync('npm', ['run', '--silent', 'package'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const vsix = path.join(ROOT, `${pkg.name}-${pkg.version}.vsix`);
log(`${path.basename(vsix)}: ${(fs.statSync(vsix).size / 1024).toFixed(0)} KB`);
const results = [];
if (!only || only === 'host') results.push(await hostTests(vsix));
if (!only || only === 'ui') results.push(await browserTests('ui', vsix, runUi, { ...FAST_TRAINING, 'attentionLab.training.steps': 3000 }));
if (!only || only === 'active') results.push(await browserTests('active', vsix, runActive, { ...FAST_TRAINING, 'attentionLab.training.steps': 3000 }));
if (!only || only === 'diskfull') results.push(await browserTests('diskfull', vsix, runDiskFull, { ...FAST_TRAINING, ...DISK_FULL_SETTINGS }, { prepare: mountSmallDisk }));
if (!only || only === 'tokens') results.push(await browserTests('tokens', vsix, runTokens, TOKENS_SETTINGS));
if (!only || only === 'inspect') results.push(await browserTests('inspect', vsix, runInspect, INSPECT_SETTINGS, { prepare: prepareInspect }));
if (!only || only === 'pytorch') results.push(await browserTests('pytorch', vsix, runPytorch, { ...FAST_TRAINING, ...PYTORCH_SETTINGS }));
if (!only || only === 'bigfile') {
  const bigFile = { 'attentionLab.data.include': 'books/input.txt', 'attentionLab.training.steps': 2000, 'attentionLab.training.evalEvery': 20 };
  results.push(await browserTests('bigfile', vsix, runBigFile, { ...FAST_TRAINING, ...bigFile }, { prepare: (ws) => writeBigFile(ws, 'books/input.txt') }));
}
if (!only || only === 'configure') results.push(await browserTests('configure', vsix, runConfigure, { ...FAST_TRAINING }));
if (!only || only === 'restricted') {
  const trust = { 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'always' };
  results.push(await browserTests('restricted', vsix, runRestricted, { ...FAST_TRAINING, ...trust }, { workspaceTrust: true }));
}
const pass = results.every(Boolean);
log(pass ? 'E2E PASS' : 'E2E FAIL');
process.exit(pass ? 0 : 1);
