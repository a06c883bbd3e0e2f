#!/usr/bin/env node
// The extension-host suite (../extensionHost/suite.cjs) on a desktop VS Code downloaded by
// @vscode/test-electron — for machines that can reach update.code.visualstudio.com. CI
// does not run this (it is offline); it runs the same suite in code-server (../run.mjs).
// Usage: npm run build && node test/e2e/electron/runTests.mjs [--version 1.90.0]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTests } from '@vscode/test-electron';
import { FAST_TRAINING, prepareWorkspace } from '../lib/fixtures.mjs';
import { QUIET_SETTINGS } from '../lib/codeServer.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
const argv = process.argv.slice(2);
const version = argv.includes('--version') ? argv[argv.indexOf('--version') + 1] : 'stable';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-electron-'));
const userData = path.join(dir, 'user-data');
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.writeFileSync(
  path.join(userData, 'User/settings.json'),
  JSON.stringify({ ...QUIET_SETTINGS, ...FAST_TRAINING }, null, 2),
);
const workspace = prepareWorkspace(path.join(dir, 'workspace'));

try {
  const code = await runTests({
    version,
    extensionDevelopmentPath: ROOT,
    extensionTestsPath: path.join(HERE, '../extensionHost/suite.cjs'),
    launchArgs: [
      workspace,
      '--user-data-dir',
      userData,
      '--extensions-dir',
      path.join(dir, 'extensions'),
      '--disable-workspace-trust',
      '--skip-welcome',
      '--skip-release-notes',
    ],
  });
  process.exitCode = code;
} catch (e) {
  console.error(`The desktop VS Code tests could not run: ${e?.message ?? e}`);
  process.exitCode = 1;
}
