// The real-data scenario of the end-to-end suite: a workspace holding one 1.1 MB text file
// (made here, deterministically: the repository ships no corpus) trains from the palette, the
// dashboard's run header states the held-out split ("validation: last 10% of 1 document, …
// tokens"), and the curves report a validation loss, on the held-out tail, well above the
// training loss (the tail is made of words the training part never has). Each check
// throws with what it saw; a screenshot is written to `shots`.
import fs from 'node:fs';
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { Workbench } from './lib/workbench.mjs';

const STEP = /step (\d+)\/(\d+)/;

/**
 * Writes `rel` in `workspace`: about 1.1 MB of line-broken pseudo-English from a fixed seed,
 * whose last 12% is made of other words (the first words spelled backwards). A model trained
 * on the first 90% finds the held-out tail clearly harder, so a validation loss computed on
 * held-out text stands above the training loss — and one computed on training windows would not.
 */
export function writeBigFile(workspace, rel) {
  let s = 12345;
  const next = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296;
  const head = [
    'the',
    'king',
    'shall',
    'speak',
    'of',
    'love',
    'and',
    'honour',
    'to',
    'my',
    'lord',
    'what',
    'is',
    'this',
    'night',
    'that',
    'we',
    'fear',
    'no',
    'more',
  ];
  const tail = head.map((w) => [...w].reverse().join(''));
  const total = 1.1 * 2 ** 20;
  const lines = [];
  let size = 0;
  while (size < total) {
    const words = size < 0.88 * total ? head : tail;
    const n = 4 + Math.floor(next() * 8);
    const line = `${Array.from({ length: n }, () => words[Math.floor(next() * words.length)]).join(' ')}${next() < 0.3 ? ',' : '.'}\n`;
    lines.push(line);
    size += line.length;
  }
  fs.mkdirSync(path.dirname(path.join(workspace, rel)), { recursive: true });
  fs.writeFileSync(path.join(workspace, rel), lines.join(''));
}

/** Runs the scenario; resolves true when every check passed. */
export async function runBigFile(page, { shots, log }) {
  const wb = new Workbench(page, log);
  await wb.runCommand('Attention Lab: Train');
  const status = await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= 45, 240_000);
  log(`status bar: "${status}"`);
  const dash = wb.dashboard();
  const header = dash.locator('#run-data');
  let text = '';
  for (let i = 0; i < 120 && !/validation:/.test(text); i++, await sleep(500))
    text = (await header.textContent().catch(() => '')) ?? '';
  log(`run header: "${text}"`);
  if (
    !/^1 document \(input\.txt, 1\.1 MB\) in .*books · validation: last 10% of 1 document, [\d,]+ tokens$/.test(text)
  ) {
    throw new Error(`the run header does not state the held-out split: ${JSON.stringify(text)}`);
  }
  const summary = dash.locator('.curves-summary');
  let line = '';
  for (let i = 0; i < 120 && !/validation at step/.test(line); i++, await sleep(500))
    line = (await summary.textContent().catch(() => '')) ?? '';
  log(`curves: "${line}"`);
  const train = /step (\d+): loss ([\d.]+)/.exec(line);
  const val = /validation at step (\d+): loss ([\d.]+)/.exec(line);
  if (!train || !val) throw new Error(`the curves report no training and validation loss: ${JSON.stringify(line)}`);
  // The held-out tail is other words: a real held-out loss stands well above the training loss.
  if (!(Number(val[2]) > Number(train[2]) + 0.3))
    throw new Error(`the validation loss (${val[2]}) is not above the training loss (${train[2]}): is it held out?`);
  await wb.screenshot(path.join(shots, '09-one-big-file.png'));
  await wb.runCommand('Attention Lab: Stop Training');
  await wb
    .waitForStatus('Attention Lab', (t) => !/step \d+\/\d+ · loss/.test(t) || /stopped/.test(t), 60_000)
    .catch(() => '');
  return true;
}
