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
//   2b'. row actions (rowActions.mjs): Rename Run… and Delete Run… from a row act on that row, ten
//      times each, while another run trains;
//   2c. a full disk (diskFull.mjs): runs on a small tmpfs stop at the next checkpoint with the
//      one-line reason and Resume, which trains on once space is back;
//   2d. a run with a byte-level BPE tokenizer (tokens.mjs): the heatmap's axis labels and the
//      playground's tiles read as text (a leading space as ·, no <0x..> for ASCII), and a
//      200-token sample from the 32-token context comes back whole, the reason said;
//   2e. looking inside (inspect.mjs): an imported GPT-2 checkpoint's Attention and Heads tabs on a
//      typed text, a Japanese BPE run's axes in characters, two runs side by side in the playground;
//   2e'. a big model (bigmodel.mjs): a random GPT-2 small (124M, written at test time) opened from
//      its checkpoint answers Attention and Heads on 1,000 tokens, the lens, a decode and Score Selection;
//   2f. the PyTorch engine (pytorch.mjs): two torchrun processes on the induction task, the
//      curves and the Heads tab filling in, Stop, then Resume in WebAssembly;
//   3. trains on one generated 1.1 MB text file (bigFile.mjs): the run header states the held-out
//      split and the curves report a validation loss that is not the training loss;
//   3b. on the web host, a generated 62 MB file (hugeFile.mjs): trains while a probe prints the
//      page's longest main-thread pause and where its time went;
//   3c. on the web host, a virtual workspace with no file-search provider (virtual.mjs): Train
//      walks the folder of a test extension's file system (fixtures/memfs) and trains;
//   4. walks Configure Model in a trusted workspace (configure.mjs): the glob's file count and
//      preview as it is typed, a glob matching nothing refused, the review, the settings file;
//   4b. the modern preset (modern.mjs): Configure Model… → llama-tiny → its architecture → Save and Train; the
//      dashboard's curves, Model tab (RoPE, RMSNorm, SwiGLU, 2 kv heads), heads labelled with their kv
//      group on the Attention and Heads tabs, then Decode… (the Node and web hosts);
//   4c. a Hugging Face folder (hfimport.mjs): a random SmolLM2-135M-shaped folder (2 layers, bf16, a real
//      byte-level BPE tokenizer.json with a chat template) opened from the workspace; the header names it,
//      the Attention tab shows its 9 query heads by key/value group, the playground decodes in the template;
//   4d. circuits (circuits.mjs; Node and web hosts): the induction task's Patching tab heatmaps (the best head an induction head
//      of the Heads tab), then the modular-addition task's Grokking view filling in, then Stop;
//   5. opens the workspace untrusted (restricted.mjs): the limited mode, and Configure Model
//      step by step ending in Save and Train;
//   6. WebGPU in the browser (webgpuWeb.mjs, web host only, Chromium with --enable-unsafe-webgpu): the
//      training worker trains on navigator.gpu and the dashboard's header names the adapter;
//   6b. WebGPU on the desktop (webgpu.mjs, Node host, the linux-x64 .vsix with Dawn's binding, SwiftShader's
//      Vulkan driver): trains the induction task, the header names the adapter, Stop, then Resume on
//      WebAssembly after the setting changes, its losses within 1e-4 of the run continued on WebGPU.
// Each scenario runs in desktop VS Code's Node extension host; the extension-host tests, the
// UI, the active run, looking inside and Configure also run in the browser's web-worker extension host (as on vscode.dev),
// once in plain code-server (one WebAssembly thread) and once behind a COOP/COEP proxy
// (cross-origin isolated: helper threads) — lib/codeServer.mjs `host`. The PyTorch engine runs in the Node host only
// (the web host starts no processes; the web hosts' Configure checks it is not offered).
// Screenshots go to test/e2e/screenshots/ (a web host's with its name in front: web-…, web-isolated-…).
// Usage: node test/e2e/run.mjs [--only host|ui|active|rows|diskfull|tokens|inspect|bigmodel|pytorch|bigfile|hugefile|virtual|configure|modern|hfimport|restricted|steer|circuits|webgpuweb|webgpu] [--host node|web|web-isolated] [--no-package] [--keep] [--readme-screenshots]
//   --host                only that extension host (default: each scenario on every host it runs on)
//   --readme-screenshots  also copy the screenshots the README shows into media/screenshots/ (from ui and active)
// Runs test/e2e/setup.sh first (idempotent and quick once done). ATTENTION_LAB_SKIP_E2E=1 skips
// the whole suite, loudly, on machines that cannot install its toolchain.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodeServerSession, E2E_HOME, HOSTS, checkToolchain, sleep } from './lib/codeServer.mjs';
import { FAST_TRAINING, prepareWorkspace } from './lib/fixtures.mjs';
import { runBigFile, writeBigFile } from './bigFile.mjs';
import { HUGEFILE_SETTINGS, runHugeFile, writeHugeFile } from './hugeFile.mjs';
import { VIRTUAL_FOLDER, runVirtual } from './virtual.mjs';
import { runConfigure } from './configure.mjs';
import { runRestricted } from './restricted.mjs';
import { prepareSteer, runSteer } from './steer.mjs';
import { CIRCUITS_SETTINGS, runCircuits } from './circuits.mjs';
import { WEBGPU_WEB_SETTINGS, runWebGpuWeb } from './webgpuWeb.mjs';
import { WEBGPU_SETTINGS, runWebGpu, swiftShaderEnv } from './webgpu.mjs';
import { packageTarget } from '../../scripts/packageTargets.mjs';
import { runUi } from './ui.mjs';
import { runActive } from './active.mjs';
import { DISK_FULL_SETTINGS, mountSmallDisk, runDiskFull } from './diskFull.mjs';
import { TOKENS_SETTINGS, runTokens } from './tokens.mjs';
import { INSPECT_SETTINGS, prepareInspect, runInspect } from './inspect.mjs';
import { BIGMODEL_SETTINGS, prepareBigModel, runBigModel } from './bigmodel.mjs';
import { PYTORCH_SETTINGS, runPytorch } from './pytorch.mjs';
import { ROWS_SETTINGS, prepareRows, runRowActions } from './rowActions.mjs';
import { runModern } from './modern.mjs';
import { HFIMPORT_SETTINGS, prepareHfImport, runHfImport } from './hfimport.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const argv = process.argv.slice(2);
const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : null;
const onlyHost = argv.includes('--host') ? argv[argv.indexOf('--host') + 1] : null;
if (onlyHost !== null && !HOSTS.includes(onlyHost))
  throw new Error(`--host ${onlyHost}: use one of ${HOSTS.join(', ')}`);
/** The hosts a scenario runs on: every host for the ones that run on the web too, else Node's. */
const hostsOf = (name) =>
  (['host', 'ui', 'active', 'configure', 'inspect'].includes(name)
    ? HOSTS
    : ['modern', 'hfimport', 'circuits'].includes(name)
      ? ['node', 'web']
      : ['hugefile', 'virtual', 'webgpuweb'].includes(name)
        ? ['web']
        : ['node']
  ).filter((h) => onlyHost === null || h === onlyHost);
const keep = argv.includes('--keep');
const t0 = Date.now();
const log = (...a) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s]`, ...a);

/** The screenshots the README shows, by the scenario that takes them (in the Node host): [taken, media/screenshots/ name]. */
const README_SHOTS = {
  ui: [
    ['03-dashboard-curves.png', 'curves.png'],
    ['04-dashboard-attention.png', 'attention.png'],
    ['07-score-selection.png', 'score.png'],
    ['08-selection-attention.png', 'your-text.png'],
    ['02-configure-preset.png', 'configure.png'],
  ],
  active: [['a5-dashboard-picker-compare.png', 'compare.png']],
};

function newSession(name, settings, options = {}) {
  // Short: Chromium's socket path (TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket) must stay under 108 bytes.
  const dir = fs.mkdtempSync(path.join(E2E_HOME, `${name}-${options.host ?? 'node'}-`));
  const workspace = prepareWorkspace(path.join(dir, 'workspace'));
  options.prepare?.(workspace);
  const more = options.settings?.(dir) ?? {};
  return { dir, session: new CodeServerSession(dir, { ...settings, ...more }, options), workspace };
}

/**
 * What the extension-host suite needs from outside the workspace, made in the session folder
 * and named in the user setting `attentionLabE2e`: Hugging Face GPT-2's layout (the golden
 * checkpoint), two run folders the command line trains, an empty folder for exports.
 */
function hostFixtures(dir, host) {
  const root = path.join(dir, 'fixtures');
  const hfGpt2 = path.join(root, 'hf-gpt2');
  fs.cpSync(path.join(ROOT, 'test/golden/import/hf-gpt2'), hfGpt2, { recursive: true });
  const cliRun = (name) => {
    const out = path.join(root, name);
    execFileSync(
      process.execPath,
      [
        path.join(ROOT, 'dist/cli.js'),
        'train',
        '--task',
        'copy',
        '--steps',
        '6',
        '--batch',
        '4',
        '--out',
        out,
        '--json',
      ],
      { stdio: 'ignore', timeout: 120_000 },
    );
    return out;
  };
  const exports = path.join(root, 'exports');
  fs.mkdirSync(exports, { recursive: true });
  return {
    attentionLabE2e: { host, hfGpt2, copyRun: cliRun('copy-run'), continuedRun: cliRun('continued-run'), exports },
  };
}

async function hostTests(vsix, host) {
  const { dir, session, workspace } = newSession(
    'host',
    { ...FAST_TRAINING },
    { host, settings: (d) => hostFixtures(d, host) },
  );
  log(`extension-host tests (${host} extension host) in ${dir}`);
  let code = 'timeout';
  try {
    log(session.installVsix(vsix));
    await session.start();
    let exit;
    const exited = new Promise((r) => (exit = r));
    // VS Code runs extensionTestsPath only together with extensionDevelopmentPath: point it
    // at the folder the .vsix was just installed into, so the code under test is the package,
    // and put the suite inside it: VS Code runs the tests in the extension host that runs the
    // extension whose folder holds them (the web one loads nothing from elsewhere).
    const installed = fs.readdirSync(session.extensions).find((d) => d.startsWith('attention-lab.attention-lab-'));
    if (!installed) throw new Error(`the .vsix did not install into ${session.extensions}`);
    const suite = path.join(session.extensions, installed, 'e2e-suite.cjs');
    fs.copyFileSync(path.join(HERE, 'extensionHost/suite.cjs'), suite);
    await session.open(workspace, {
      payload: [
        ['extensionDevelopmentPath', session.remote(path.join(session.extensions, installed))],
        ['extensionTestsPath', session.remote(suite)],
      ],
      onLog: (type, args) => console.log(...args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))),
      onExit: (c) => exit(c),
    });
    code = await Promise.race([exited, sleep(240_000).then(() => 'timeout')]);
  } finally {
    await session.stop();
    if (!keep && code === 0) fs.rmSync(dir, { recursive: true, force: true });
  }
  log(`extension-host tests (${host}): exit ${code}`);
  return code === 0;
}

/** Runs one browser scenario in a fresh session; screenshots go to test/e2e/screenshots/ (a web host's in a folder named after it). */
async function browserTests(name, vsix, scenario, settings, options = {}) {
  const host = options.host ?? 'node';
  const { dir, session, workspace } = newSession(name, settings, options);
  const shots = path.join(HERE, 'screenshots', ...(host === 'node' ? [] : [host]));
  fs.mkdirSync(shots, { recursive: true });
  log(`${name} tests (${host} extension host) in ${dir}`);
  let ok = false;
  try {
    // A scenario may need a platform's .vsix (webgpu: Dawn's binding for this machine) instead of the universal one.
    log(session.installVsix(options.target ? targetVsix(options.target) : vsix));
    await session.start();
    // A scenario may open another folder (a URI) with VS Code's ?payload= (e.g. a test extension to develop).
    const target = options.open?.(session) ?? { folder: workspace, payload: [] };
    const page = await session.open(target.folder, { payload: target.payload });
    ok = await scenario(page, { shots, log, workspace, host, dir });
  } catch (e) {
    console.error(`${name} test error:`, e?.stack ?? e);
    try {
      const page = session.context?.pages()[0];
      if (page) {
        await page.screenshot({ path: path.join(shots, `failure-${name}.png`) });
        fs.writeFileSync(path.join(dir, 'failure-dom.html'), await page.content());
      }
    } catch {
      /* the browser is gone */
    }
  } finally {
    await session.stop();
    if (!keep && ok) fs.rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dir} (code-server.log, browser-console.log, user-data/logs)`);
  }
  log(`${name} tests (${host}): ${ok ? 'passed' : 'FAILED'}`);
  const readmeShots = README_SHOTS[name] ?? [];
  if (ok && readmeShots.length > 0 && host === 'node' && argv.includes('--readme-screenshots')) {
    const media = path.join(ROOT, 'media/screenshots');
    fs.mkdirSync(media, { recursive: true });
    for (const [from, to] of readmeShots) fs.copyFileSync(path.join(shots, from), path.join(media, to));
    log(`copied ${readmeShots.length} screenshots to ${media}`);
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
/** The .vsix of `target` (packaged once per suite run; with --no-package, the one already in vsix/ if any). */
function targetVsix(target) {
  const out = path.join(ROOT, 'vsix', `${pkg.name}-${target}-${pkg.version}.vsix`);
  if (packaged.has(target) || (argv.includes('--no-package') && fs.existsSync(out))) return out;
  log(`packaging ${path.basename(out)}`);
  packageTarget(ROOT, target, out);
  packaged.add(target);
  log(`${path.basename(out)}: ${(fs.statSync(out).size / 2 ** 20).toFixed(1)} MiB`);
  return out;
}
const packaged = new Set();
const bigFile = {
  'attentionLab.data.include': 'books/input.txt',
  'attentionLab.training.steps': 2000,
  'attentionLab.training.evalEvery': 20,
};
const trust = { 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'always' };
/** Each browser scenario: its function, settings and session options. */
const SCENARIOS = {
  ui: [runUi, { ...FAST_TRAINING, 'attentionLab.training.steps': 3000 }, {}],
  active: [runActive, { ...FAST_TRAINING, 'attentionLab.training.steps': 3000 }, {}],
  rows: [runRowActions, { ...FAST_TRAINING, ...ROWS_SETTINGS }, { prepare: prepareRows }],
  diskfull: [runDiskFull, { ...FAST_TRAINING, ...DISK_FULL_SETTINGS }, { prepare: mountSmallDisk }],
  tokens: [runTokens, TOKENS_SETTINGS, {}],
  inspect: [runInspect, INSPECT_SETTINGS, { prepare: prepareInspect }],
  bigmodel: [runBigModel, BIGMODEL_SETTINGS, { prepare: prepareBigModel }],
  pytorch: [runPytorch, { ...FAST_TRAINING, ...PYTORCH_SETTINGS }, {}],
  bigfile: [runBigFile, { ...FAST_TRAINING, ...bigFile }, { prepare: (ws) => writeBigFile(ws, 'books/input.txt') }],
  hugefile: [
    runHugeFile,
    { ...FAST_TRAINING, ...HUGEFILE_SETTINGS },
    { prepare: (ws) => writeHugeFile(ws, 'books/huge.txt') },
  ],
  virtual: [
    runVirtual,
    { ...FAST_TRAINING, 'attentionLab.training.steps': 3000 },
    {
      open: (session) => ({
        folder: VIRTUAL_FOLDER,
        payload: [['extensionDevelopmentPath', session.remote(path.join(HERE, 'fixtures/memfs'))]],
      }),
    },
  ],
  configure: [runConfigure, { ...FAST_TRAINING }, {}],
  modern: [runModern, { ...FAST_TRAINING }, {}],
  hfimport: [runHfImport, HFIMPORT_SETTINGS, { prepare: prepareHfImport }],
  restricted: [runRestricted, { ...FAST_TRAINING, ...trust }, { workspaceTrust: true }],
  steer: [runSteer, { ...FAST_TRAINING }, { prepare: prepareSteer }],
  circuits: [runCircuits, { ...FAST_TRAINING, ...CIRCUITS_SETTINGS }, {}],
  webgpuweb: [runWebGpuWeb, { ...FAST_TRAINING, ...WEBGPU_WEB_SETTINGS }, { webgpu: true }],
  webgpu: [
    runWebGpu,
    { ...FAST_TRAINING, ...WEBGPU_SETTINGS },
    {
      target: `${process.platform}-${process.arch}`,
      // Read when the scenario runs (it throws where Chromium's SwiftShader is missing).
      get env() {
        return swiftShaderEnv();
      },
    },
  ],
};
const results = [];
if (!only || only === 'host') for (const host of hostsOf('host')) results.push(await hostTests(vsix, host));
for (const [name, [scenario, settings, options]] of Object.entries(SCENARIOS)) {
  if (only && only !== name) continue;
  for (const host of hostsOf(name))
    results.push(await browserTests(name, vsix, scenario, settings, { ...options, host }));
}
const pass = results.every(Boolean);
log(pass ? 'E2E PASS' : 'E2E FAIL');
process.exit(pass ? 0 : 1);
