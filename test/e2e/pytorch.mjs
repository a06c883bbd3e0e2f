// The PyTorch engine in a real VS Code (`run.mjs --only pytorch`), driven by Chromium: the
// settings choose the engine (pytorch, 2 processes on the CPU, Debian's /usr/bin/python3) and
// the induction task; Configure Model's review names the engine and the torch it found before
// anything runs, and its engine row lists the layouts; Train from the palette starts torchrun in a child process, and the
// status bar counts its steps, the dashboard's header names the engine and its loss curve
// grows (also in bits per byte), the Heads tab fills in as the lab draws each snapshot from the trainer's weights;
// Stop stops it at a step boundary with a checkpoint; then Configure Model's engine row switches
// the engine to ours in the workspace settings and the Runs view's Resume Training continues the same run in WebAssembly
// past that step (run.json says which engine trained last). Screenshots go to `shots`.
import fs from 'node:fs';
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { onlyRun } from './lib/fixtures.mjs';
import { Workbench, expectVisible } from './lib/workbench.mjs';
import { contextMenu } from './active.mjs';

const STEP = /step (\d+)\/(\d+)/;

/** The settings of this scenario (over FAST_TRAINING). */
export const PYTORCH_SETTINGS = {
  'attentionLab.model.kind': 'decoder-only',
  'attentionLab.data.source': 'task',
  'attentionLab.data.task': 'induction',
  'attentionLab.training.steps': 3000,
  'attentionLab.training.seqLen': 0,
  'attentionLab.training.batchSize': 32,
  'attentionLab.training.snapshotEvery': 10,
  'attentionLab.training.evalEvery': 20,
  'attentionLab.training.engine': 'pytorch',
  'attentionLab.pytorch.python': '/usr/bin/python3',
  'attentionLab.pytorch.processes': 2,
  'attentionLab.pytorch.device': 'cpu',
  'attentionLab.runs.location': 'workspace',
};

/** Snapshot steps the Heads tab's first sparkline holds. */
async function headRows(dash) {
  const canvas = dash.locator('.heads-cell canvas').first();
  return Number((await canvas.getAttribute('data-rows').catch(() => '0')) ?? 0);
}

/** Runs the scenario; resolves true when every check passed. */
export async function runPytorch(page, { shots, log, workspace }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));

  // 0. Configure Model's review: the engine, and what the chosen Python's torch offers.
  await wb.openActivity('Attention Lab');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  const input = page.locator('.quick-input-widget input');
  // Configure Model… to its review, taking every step as the settings have it.
  const toReview = async () => {
    await wb.runCommand('Attention Lab: Configure Model…');
    await expectVisible(rows.filter({ hasText: 'decoder-only' }), 'the model-kind step');
    await page.keyboard.press('Enter');
    await expectVisible(
      rows.filter({ hasText: 'repeated random letters' }),
      'the induction task, chosen in the settings',
    );
    await page.keyboard.press('Enter');
    await expectVisible(rows.filter({ hasText: 'd_model 64' }), 'the presets');
    await page.keyboard.press('Enter');
    await expectVisible(rows.filter({ hasText: 'Continue' }), 'the architecture step');
    await page.keyboard.press('Enter');
    await expectVisible(page.locator('.quick-input-widget', { hasText: 'Training steps' }), 'the steps box');
    await page.keyboard.press('Enter');
  };
  await toReview();
  const engine = rows.filter({ hasText: 'Engine: PyTorch · 2 processes · CPU' });
  await expectVisible(
    engine.filter({ hasText: /torch \d+\.\d+/ }),
    "the review's engine row with the torch it found",
    60_000,
  );
  const engineText = ((await engine.first().textContent()) ?? '').trim();
  const placeholder = (await input.getAttribute('placeholder')) ?? '';
  log(`review: "${placeholder}"; engine row: "${engineText}"`);
  if (!placeholder.startsWith('PyTorch · decoder-only · tiny · task induction'))
    throw new Error(`the review describes ${placeholder}`);
  if (!/CPU only/.test(engineText))
    throw new Error(`the engine row does not say what torch offers here: ${engineText}`);
  await shot('p0-configure-engine.png');
  await engine.first().click();
  // The list's last row names the Python and what its torch offers; the layouts stay one line each.
  const python = rows.filter({ hasText: 'Choose the Python for PyTorch' }).filter({ hasText: /torch \d+\.\d+/ });
  await expectVisible(python, 'the engine list with the probed torch', 60_000);
  const pythonText = ((await python.first().textContent()) ?? '').trim();
  if (!pythonText.includes('/usr/bin/python3 from setting'))
    throw new Error(`the engine list does not name the Python: ${pythonText}`);
  const layouts = (await rows.allTextContents()).map((t) => t.trim().slice(0, 60));
  log(`engine list: ${JSON.stringify(layouts)}`);
  if (!layouts.some((t) => t.startsWith('builtin — ours: WebAssembly')))
    throw new Error('the engine list does not offer ours');
  await shot('p0b-configure-engine-list.png');
  await page.keyboard.press('Escape');

  // 1. Train: torchrun starts two processes; the status bar counts their steps.
  await wb.runCommand('Attention Lab: Train');
  const first = await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= 5, 180_000);
  log(`status bar: "${first}"`);

  // 2. The dashboard: the engine in its header, a growing loss curve.
  const dash = wb.dashboard();
  const header = dash.locator('.run-status');
  await expectVisible(
    header.filter({ hasText: 'PyTorch cpu ×2' }),
    'the dashboard header naming the PyTorch engine',
    60_000,
  );
  const chart = dash.locator('figure.chart-main[data-points]');
  await expectVisible(chart, 'the loss chart', 60_000);
  let points = 0;
  for (let i = 0; i < 200 && points < 40; i++, await sleep(300))
    points = Number((await chart.first().getAttribute('data-points')) ?? 0);
  if (points < 40) throw new Error(`the loss chart has only ${points} points`);
  log(`loss chart: ${points} points; header "${((await header.first().textContent()) ?? '').trim()}"`);
  await shot('p1-pytorch-curves.png');
  // The same curves in bits per byte: the trainer logs each step's bytes and each validation's
  // bits per byte as our engine does, so the run is drawn on the axis runs compare on.
  await dash.locator('#curves-per').selectOption('byte');
  const summary = dash.locator('.curves-summary');
  await expectVisible(
    summary.filter({ hasText: /\d\.\d{4} bits\/byte/ }),
    "the curves' summary with the validation's bits per byte",
    60_000,
  );
  const note = dash.locator('.panel.curves > .note:not([hidden])', { hasText: 'No bits per byte' });
  if (await note.count())
    throw new Error(`the bits-per-byte axis leaves the PyTorch run out: ${await note.first().textContent()}`);
  const perByte = Number((await chart.first().getAttribute('data-points')) ?? 0);
  log(`bits per byte: ${perByte} points; summary "${((await summary.first().textContent()) ?? '').trim()}"`);
  if (perByte < 40) throw new Error(`the loss chart in bits per byte has only ${perByte} points`);
  await shot('p1b-pytorch-bits-per-byte.png');
  await dash.locator('#curves-per').selectOption('token');

  // 3. The Heads tab fills in: each snapshot the trainer leaves becomes scores, sparkline by sparkline.
  await dash.locator('#tab-heads').click();
  await expectVisible(dash.locator('.heads-cell canvas'), 'the Heads tab sparklines', 60_000);
  const rows0 = await headRows(dash);
  let rows1 = rows0;
  for (let i = 0; i < 200 && rows1 < rows0 + 2; i++, await sleep(300)) rows1 = await headRows(dash);
  const values = await dash.locator('.heads-value').allTextContents();
  log(
    `Heads tab: ${await dash.locator('.heads-cell').count()} heads, snapshots ${rows0} → ${rows1}, values ${values.slice(0, 5).join(' ')} …`,
  );
  if (rows1 < rows0 + 2) throw new Error(`the Heads tab did not fill in: ${rows0} → ${rows1} snapshots`);
  if (!values.some((v) => /^\d/.test(v)))
    throw new Error(`the Heads tab shows no score values: ${values.slice(0, 10).join(', ')}`);
  await shot('p2-pytorch-heads.png');

  // 4. Stop: the trainer checkpoints at the next step boundary; run.json says where and who.
  await wb.runCommand('Attention Lab: Stop Training');
  const stopped = await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 90_000);
  const stopStep = Number(STEP.exec(stopped)?.[1] ?? NaN);
  const before = onlyRun(workspace);
  log(`after Stop: "${stopped}"; run.json ${before.run.status} at step ${before.run.step} (${before.run.backendUsed})`);
  if (before.run.status !== 'stopped' || before.run.step !== stopStep || before.run.backendUsed !== 'pytorch cpu ×2')
    throw new Error(
      `run.json after Stop: ${JSON.stringify({ status: before.run.status, step: before.run.step, backendUsed: before.run.backendUsed })}, expected stopped at ${stopStep} by pytorch cpu ×2`,
    );

  // 5. Switch the engine to ours with Configure Model's engine row, saved to the workspace
  // settings (through VS Code's configuration, so the next command reads it: a settings.json
  // written behind VS Code's back is seen only when its file watcher gets to it, seconds later
  // on a busy machine); Resume Training continues in WebAssembly.
  await toReview();
  await expectVisible(engine, "the review's engine row again");
  await engine.first().click();
  const ours = rows.filter({ hasText: 'builtin — ours: WebAssembly' });
  await expectVisible(ours, 'our engine in the engine list');
  await ours.first().click();
  await expectVisible(rows.filter({ hasText: 'Engine: builtin (ours: WebAssembly' }), 'the review with our engine');
  await rows
    .filter({ hasText: /^\W*Save\s*to workspace/ })
    .first()
    .click();
  // The extension says so once every setting is updated (the notification's screen-reader alert).
  await page
    .locator('.monaco-alert', { hasText: 'Saved to workspace settings' })
    .first()
    .waitFor({ state: 'attached', timeout: 30_000 });
  const saved = JSON.parse(fs.readFileSync(path.join(workspace, '.vscode/settings.json'), 'utf8'));
  if (saved['attentionLab.training.engine'] !== 'builtin')
    throw new Error(`.vscode/settings.json's engine is ${saved['attentionLab.training.engine']} after choosing ours`);
  await wb.openActivity('Attention Lab');
  const row = page.locator('.pane-body .monaco-list-row', { hasText: 'stopped' }).first();
  await expectVisible(row, 'the stopped run in the Runs view');
  await contextMenu(page, row, 'Resume Training');
  const resumed = await wb.waitForStatus(
    'Attention Lab: step',
    (t) => Number(STEP.exec(t)?.[1] ?? 0) > stopStep + 20,
    120_000,
  );
  log(`resumed: "${resumed}"`);
  await expectVisible(
    header.filter({ hasText: 'wasm backend' }),
    'the dashboard header naming our engine after Resume',
    60_000,
  );
  const after = onlyRun(workspace);
  if (after.run.backendUsed !== 'wasm')
    throw new Error(`run.json after Resume says ${after.run.backendUsed}, expected wasm`);
  await shot('p3-resumed-in-wasm.png');
  await wb.runCommand('Attention Lab: Stop Training');
  await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 60_000);
  // Every step once, in order, across both engines.
  const steps = fs
    .readFileSync(path.join(workspace, '.attention-lab/runs', after.name, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((l) => l.type === 'step')
    .map((l) => l.step);
  if (steps.some((s, i) => s !== i + 1)) throw new Error(`metrics.jsonl's steps are not 1…${steps.length} in order`);
  log(`metrics.jsonl: steps 1…${steps.length}, PyTorch to ${stopStep}, then ours`);
  return true;
}
