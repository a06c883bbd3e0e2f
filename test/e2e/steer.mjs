// The steering scenario of the end-to-end suite (`run.mjs --only steer`), in a real VS Code driven
// by Chromium: the repository's small golden GPT-2 checkpoint is opened with "Open PyTorch
// Checkpoint…", and the playground steers a prompt with it — plus/minus prompts, layer and α —
// and shows the steered continuation beside the unsteered one, with the vector's norm.
// Screenshots go to `shots`. (The Patching tab's heatmaps are the circuits scenario's, circuits.mjs.)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openCheckpoint } from './inspect.mjs';
import { Workbench, expectVisible, waitForText } from './lib/workbench.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Adds the golden GPT-2 checkpoint folder to the workspace. */
export function prepareSteer(workspace) {
  fs.cpSync(path.join(HERE, '../golden/import/hf-gpt2'), path.join(workspace, 'gpt2'), { recursive: true });
}

/** Runs the scenario; resolves true when every check passed. */
export async function runSteer(page, { shots, log, workspace }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));
  await wb.openActivity('Attention Lab');
  await openCheckpoint(page, wb, path.join(workspace, 'gpt2/model.safetensors'));
  const dash = wb.dashboard();
  await waitForText(dash.locator('.run-status'), (t) => t.startsWith('imported'), 120_000);

  await dash.locator('#tab-playground').click();
  await dash.locator('#pg-input').fill('the rain in');
  await expectVisible(dash.locator('#steer-plus'), 'the steering section');
  await dash.locator('#steer-plus').fill('the east station');
  await dash.locator('#steer-minus').fill('the west road');
  await dash.locator('#steer-layer').fill('1');
  await dash.locator('#steer-layer').dispatchEvent('change');
  await dash.locator('#steer-alpha').fill('20');
  await dash.locator('#steer-alpha').dispatchEvent('change');
  await dash.locator('#steer-run').click();
  const status = await waitForText(
    dash.locator('.steer-status'),
    (t) => t.startsWith('v at') || t.startsWith('Steering failed'),
    120_000,
  );
  log(`steering: "${status}"`);
  if (!status.startsWith('v at the stream entering layer 1')) throw new Error(`steering did not answer: ${status}`);
  const titles = await dash.locator('.steer-col h4').allTextContents();
  log(`columns: ${JSON.stringify(titles)}`);
  if (titles.length !== 2 || !titles[0].startsWith('Steered (α 20)') || titles[1] !== 'Unsteered')
    throw new Error(`the steered and unsteered columns are not there: ${JSON.stringify(titles)}`);
  const texts = await dash.locator('.steer-col .pg-text-box').allTextContents();
  log(`texts: ${JSON.stringify(texts)}`);
  if (texts.some((t) => !t.startsWith('the rain in'))) throw new Error('a column does not start with the prompt');
  await dash.locator('.pg-steer').scrollIntoViewIfNeeded();
  await shot('s1-steered-beside-unsteered.png');
  return true;
}
