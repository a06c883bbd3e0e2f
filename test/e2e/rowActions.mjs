// The "row actions" scenario of the end-to-end suite (`run.mjs --only rows`, the Node extension
// host): while one run trains (and is the active run), Rename Run… and Delete Run… chosen from the
// context menu of another run's row in the Runs view act on that row, ten times each — the rename
// box and the delete confirmation name that run, and its run.json (or its folder) is what changes;
// the training run keeps its name and its folder. The Runs view redraws twice a second while a run
// trains, which is when a row's command could arrive without its row.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './lib/codeServer.mjs';
import { Workbench, expectVisible } from './lib/workbench.mjs';
import { contextMenu } from './active.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS_FOLDER = '.attention-lab/runs';
const TRIES = 10;
const STEP = /step (\d+)\/(\d+)/;

/** Runs kept in the workspace (so the test reads their files), and a run long enough to outlast the checks. */
export const ROWS_SETTINGS = {
  'attentionLab.runs.location': 'workspace',
  'attentionLab.runs.folder': RUNS_FOLDER,
  'attentionLab.training.steps': 100_000,
  // Steps a few times slower than the other scenarios' (still many a second): the view redraws throughout, without a flood of steps.
  'attentionLab.training.batchSize': 64,
  'attentionLab.training.checkpointEvery': 200,
  'attentionLab.training.snapshotEvery': 200,
};

/** The idle runs' folder names: one trained by the command line, copied. */
const idleName = (i) => `run-20200101-0000${String(i).padStart(2, '0')}`;
/** The name Rename Run… gives the i-th run (two digits: no name holds another). */
const newName = (i) => `renamed ${String(i).padStart(2, '0')}`;

/** Puts TRIES run folders the command line trained into the workspace's runs folder. */
export function prepareRows(workspace) {
  const runs = path.join(workspace, RUNS_FOLDER);
  const first = path.join(runs, idleName(1));
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
      first,
      '--json',
    ],
    { stdio: 'ignore', timeout: 120_000 },
  );
  for (let i = 2; i <= TRIES; i++) fs.cpSync(first, path.join(runs, idleName(i)), { recursive: true });
}

/** The texts of the Runs view's rows, read at once (rows come and go as the view redraws). */
async function rowTexts(page) {
  const texts = await page
    .locator('.pane-body .monaco-list-row')
    .evaluateAll((els) => els.map((e) => (e.textContent ?? '').trim()));
  return texts.filter((t) => t.includes('·') && /\d+\/\d+/.test(t));
}

/** The row whose text contains `needle` (waiting for it), else throws. */
async function rowOf(page, needle) {
  for (let i = 0; i < 80; i++, await sleep(250)) {
    if ((await rowTexts(page)).some((t) => t.includes(needle)))
      return page.locator('.pane-body .monaco-list-row', { hasText: needle }).first();
  }
  throw new Error(`no row in the Runs view holds "${needle}": ${JSON.stringify(await rowTexts(page))}`);
}

const runJson = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'));

/** Runs the scenario; resolves true when every check passed. */
export async function runRowActions(page, { shots, log, workspace }) {
  const wb = new Workbench(page, log);
  const runs = path.join(workspace, RUNS_FOLDER);
  await wb.openActivity('Attention Lab');
  await rowOf(page, idleName(TRIES));

  // A run trains: it is the active run, and the Runs view redraws as its steps arrive.
  await wb.runCommand('Attention Lab: Train');
  await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= 3, 120_000);
  const trainingDir = fs
    .readdirSync(runs)
    .map((d) => path.join(runs, d))
    .find((d) => runJson(d).status === 'training');
  if (!trainingDir) throw new Error(`no run folder in ${runs} says it is training`);
  const trainingName = path.basename(trainingDir);
  log(`training ${trainingName}`);
  const stillTraining = async () => {
    if (!(await wb.statusItem('Attention Lab: step')))
      throw new Error('the run stopped training before the checks ended');
    if (runJson(trainingDir).displayName !== undefined)
      throw new Error(`the training run was renamed: ${JSON.stringify(runJson(trainingDir).displayName)}`);
  };

  // Rename Run… on each idle row: the box names that run, and its run.json takes the name.
  for (let i = 1; i <= TRIES; i++) {
    const name = idleName(i);
    await contextMenu(page, await rowOf(page, name), 'Rename Run…');
    const title = page.locator('.quick-input-widget .quick-input-title');
    await expectVisible(title, `the rename box for ${name}`);
    const said = ((await title.textContent()) ?? '').trim();
    if (!said.includes(`rename ${name}`))
      throw new Error(`try ${i}: Rename Run… on ${name}'s row opened ${JSON.stringify(said)}`);
    await wb.answerInput(newName(i));
    for (let k = 0; k < 40 && runJson(path.join(runs, name)).displayName !== newName(i); k++) await sleep(250);
    if (runJson(path.join(runs, name)).displayName !== newName(i))
      throw new Error(`try ${i}: ${name}'s run.json was not renamed`);
    await rowOf(page, newName(i));
    await stillTraining();
  }
  log(`renamed ${TRIES} runs from their rows while ${trainingName} trained`);
  await wb.screenshot(path.join(shots, 'r1-renamed-while-training.png'));

  // Delete Run… on each renamed row: the confirmation names that run, and its folder goes.
  for (let i = 1; i <= TRIES; i++) {
    const name = newName(i);
    await contextMenu(page, await rowOf(page, name), 'Delete Run…');
    const dialog = page.locator('.monaco-dialog-box');
    await expectVisible(dialog, `the delete confirmation for ${name}`);
    const said = ((await dialog.textContent()) ?? '').replace(/\s+/g, ' ');
    if (!said.includes(`Delete ${name}?`))
      throw new Error(`try ${i}: Delete Run… on ${name}'s row asked ${JSON.stringify(said.slice(0, 200))}`);
    await dialog.locator('.monaco-button', { hasText: 'Delete' }).first().click();
    const dir = path.join(runs, idleName(i));
    for (let k = 0; k < 40 && fs.existsSync(dir); k++) await sleep(250);
    if (fs.existsSync(dir)) throw new Error(`try ${i}: ${dir} is still there after Delete`);
    // As a person would, the next row is chosen once this one has left the view.
    for (let k = 0; k < 80 && (await rowTexts(page)).some((t) => t.includes(name)); k++) await sleep(250);
    await stillTraining();
  }
  log(`deleted ${TRIES} runs from their rows while ${trainingName} trained`);
  if (!fs.existsSync(path.join(trainingDir, 'run.json'))) throw new Error(`${trainingDir} is gone`);
  await wb.screenshot(path.join(shots, 'r2-deleted-while-training.png'));
  await wb.runCommand('Attention Lab: Stop Training');
  await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 60_000);
  return true;
}
