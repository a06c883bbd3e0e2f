// A virtual workspace with no file-search provider (issue 27, item 6): code-server opens the
// folder e2emem:/ws of the test extension fixtures/memfs (files in memory, registered as a file
// system provider in the web-worker extension host, with no search provider, so VS Code's
// findFiles never answers), and Train finds the documents by walking the folder through the
// file system (Configure Model…'s glob box counts them the same way), reads them through VS
// Code, and trains: the status bar counts steps and the
// dashboard's run header names the three documents in e2emem:/ws/notes.
import { sleep } from './lib/codeServer.mjs';
import { Workbench } from './lib/workbench.mjs';

const STEP = /step (\d+)\/(\d+)/;

/** The folder the session opens: the test extension's virtual file system. */
export const VIRTUAL_FOLDER = 'e2emem:/ws';

/** Runs the scenario; resolves true when every check passed. */
export async function runVirtual(page, { log }) {
  const wb = new Workbench(page, log);
  const root = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'notes' });
  await root.first().waitFor({ timeout: 60_000 });
  log('virtual: the explorer shows e2emem:/ws (notes/)');
  // Configure Model…'s glob box counts the files (the walk answers where VS Code's search does not).
  const widget = page.locator('.quick-input-widget');
  const pick = async (needle) => {
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: needle }).first();
    await row.waitFor({ timeout: 30_000 });
    await row.click();
  };
  await wb.runCommand('Attention Lab: Configure Model…');
  await pick('decoder-only');
  await pick('Documents in this workspace');
  const message = widget.locator('.quick-input-message').filter({ hasText: /\d+ files?, [\d.]+ [KM]?B/ });
  await message.first().waitFor({ timeout: 60_000 });
  const count = ((await message.first().innerText()) ?? '').replace(/\s+/g, ' ').trim();
  log(`virtual: Configure's glob box "${count}"`);
  if (!/^3 files, 117 KB\b/.test(count))
    throw new Error(`the glob box does not count the 3 files: ${JSON.stringify(count)}`);
  await page.keyboard.press('Escape');
  const t0 = Date.now();
  await wb.runCommand('Attention Lab: Train');
  const status = await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= 10, 240_000);
  log(`virtual: "${status}" ${((Date.now() - t0) / 1000).toFixed(1)} s after Train`);
  const header = wb.dashboard().locator('#run-data');
  let text = '';
  for (let i = 0; i < 120 && !/validation:/.test(text); i++, await sleep(500))
    text = (await header.textContent().catch(() => '')) ?? '';
  log(`virtual: run header "${text}"`);
  if (!/^3 documents \(117 KB\) in e2emem:\/ws\/notes · validation:/.test(text))
    throw new Error(`the run header does not name the virtual workspace's 3 documents: ${JSON.stringify(text)}`);
  await wb.runCommand('Attention Lab: Stop Training');
  await wb
    .waitForStatus('Attention Lab', (t) => !/step \d+\/\d+ · loss/.test(t) || /stopped/.test(t), 60_000)
    .catch(() => '');
  return true;
}
