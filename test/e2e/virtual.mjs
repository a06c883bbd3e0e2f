// A virtual workspace with no file-search provider (issue 27, item 6): code-server opens the
// folder e2emem:/ws of the test extension fixtures/memfs (files in memory, registered as a file
// system provider in the web-worker extension host, with no search provider, so VS Code's
// findFiles never answers), and Train finds the documents by walking the folder through the
// file system, reads them through VS Code, and trains: the status bar counts steps and the
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
