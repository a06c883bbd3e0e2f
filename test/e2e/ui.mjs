// The UI scenario of the end-to-end suite, in a real VS Code driven by Chromium: the
// sidebar's welcome view, Configure Model's first steps (up to the sized presets), Train from the command palette,
// the status bar counting steps, the dashboard's loss curve (with points) and attention
// heatmap, the Heads, Masks and Model tabs, Stop Training, saving the metrics as CSV from the chart's export menu, the run in
// the Runs view, Decode returning text, the playground's logit lens and ablation, and a window
// reload after which the dashboard and the run are restored. Each check throws with what
// it saw; screenshots are written to `shots`.
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { Workbench, expectVisible, waitForText } from './lib/workbench.mjs';

const STEP = /step (\d+)\/(\d+)/;

/** Distinct colours of a canvas (inside the dashboard frame). */
async function canvasColours(locator) {
  return locator.evaluate((c) => {
    const ctx = c.getContext('2d');
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    const seen = new Set();
    for (let i = 0; i < data.length; i += 16) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return { colours: seen.size, width: c.width, height: c.height };
  });
}

/** Runs the scenario; resolves true when every check passed. */
export async function runUi(page, { shots, log, reopen }) {
  let wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));

  // 1. The sidebar: no runs yet, so the welcome view offers Configure and Train.
  await wb.openActivity('Attention Lab');
  await expectVisible(page.locator('.welcome-view-content', { hasText: 'No runs yet' }), 'the Runs welcome view');
  await expectVisible(
    page.locator('.pane-body .monaco-list-row', { hasText: 'parameters' }),
    'the Configuration view with the model size',
  );
  await shot('01-sidebar-welcome.png');

  // 2. Configure Model…: kind, documents, glob (counted), tokenizer, then the presets with parameter counts; cancel.
  await wb.runCommand('Attention Lab: Configure Model…');
  await expectVisible(
    page.locator('.quick-input-list .monaco-list-row', { hasText: 'decoder-only' }),
    'the model-kind step',
  );
  await page.keyboard.press('Enter');
  // Documents (the active choice, as the settings say) or the built-in induction task.
  await expectVisible(
    page.locator('.quick-input-list .monaco-list-row', { hasText: 'Documents in this workspace' }),
    'the documents-or-task step',
  );
  await page.keyboard.press('Enter');
  await expectVisible(
    page.locator('.quick-input-widget .quick-input-message', { hasText: /\d+ files?, / }),
    'the file count of the glob',
    30_000,
  );
  await page.keyboard.press('Enter');
  await expectVisible(
    page.locator('.quick-input-list .monaco-list-row', { hasText: 'one token per character' }),
    'the tokenizer step',
  );
  await page.keyboard.press('Enter');
  await expectVisible(
    page.locator('.quick-input-list .monaco-list-row', { hasText: 'parameters' }),
    'preset sizes',
    30_000,
  );
  await shot('02-configure-preset.png');
  await page.keyboard.press('Escape');

  // 3. Train from the palette; the status bar counts steps.
  await wb.runCommand('Attention Lab: Train');
  const first = await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= 5, 90_000);
  const s1 = Number(STEP.exec(first)[1]);
  const total = Number(STEP.exec(first)[2]);
  const later = await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) > s1 + 5, 30_000);
  log(`status bar: "${first}" then "${later}"`);
  if (!/loss \d+\.\d+/.test(later)) throw new Error(`status bar shows no loss: ${later}`);

  // 4. The dashboard opened on the run: a loss curve with points…
  const dash = wb.dashboard();
  const chart = dash.locator('figure.chart-main[data-points]');
  await expectVisible(chart, 'the loss chart', 60_000);
  let points = 0;
  for (let i = 0; i < 100 && points < 20; i++, await sleep(300))
    points = Number((await chart.first().getAttribute('data-points')) ?? 0);
  if (points < 20) throw new Error(`the loss chart has only ${points} points`);
  const plot = await canvasColours(chart.first().locator('canvas').first());
  log(`loss chart: ${points} points, canvas ${plot.width}×${plot.height} with ${plot.colours} colours`);
  if (plot.colours < 3) throw new Error('the loss chart canvas is blank');
  await shot('03-dashboard-curves.png');

  // …and an attention heatmap.
  await dash.locator('#tab-attention').click();
  const heat = dash.locator('.hm-grid canvas');
  await expectVisible(heat, 'the attention heatmap');
  await sleep(500);
  const hm = await canvasColours(heat.first());
  log(`heatmap canvas ${hm.width}×${hm.height} with ${hm.colours} colours`);
  if (hm.colours < 8) throw new Error(`the heatmap has only ${hm.colours} colours`);
  await shot('04-dashboard-attention.png');

  // …and every head's scores over the snapshots so far, on the Heads tab.
  await dash.locator('#tab-heads').click();
  const spark = dash.locator('.heads-cell canvas');
  await expectVisible(spark, 'the Heads tab sparklines');
  const values = await dash.locator('.heads-value').allTextContents();
  log(`Heads tab: ${await dash.locator('.heads-cell').count()} heads, values ${values.slice(0, 5).join(' ')} …`);
  if (!values.some((v) => /^\d/.test(v)))
    throw new Error(`the Heads tab shows no score values: ${values.slice(0, 10).join(', ')}`);
  await shot('04b-dashboard-heads.png');

  // …the masks the engine used (the causal one at least), and the model's architecture with its parameters.
  await dash.locator('#tab-masks').click();
  await expectVisible(dash.locator('.mask-card').first(), 'the Masks tab');
  log(`Masks tab: ${await dash.locator('.mask-card').count()} masks`);
  await shot('04c-dashboard-masks.png');
  await dash.locator('#tab-model').click();
  await expectVisible(dash.locator('#panel-model .arch-stack').first(), "the Model tab's architecture");
  const params = await dash.locator('#panel-model .params').textContent();
  if (!/\d/.test(params ?? '')) throw new Error(`the Model tab shows no parameter counts: ${JSON.stringify(params)}`);
  await shot('04d-dashboard-model.png');

  // 5. Stop Training: the status bar says where it stopped, before the step budget.
  await wb.runCommand('Attention Lab: Stop Training');
  const stopped = await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 60_000);
  const stopStep = Number(STEP.exec(stopped)?.[1] ?? NaN);
  log(`status bar after Stop: "${stopped}"`);
  if (!(stopStep > s1 && stopStep < total))
    throw new Error(`stopped at step ${stopStep}, expected between ${s1} and ${total}`);

  // 5b. Export: the loss chart's "⋯" menu saves the metrics as CSV through VS Code's save
  // dialog (the file name proposed by the page, in the workspace), and the file opens.
  const exp = wb.dashboard();
  await exp.locator('#tab-curves').click();
  await exp.locator('figure.chart-main .export-button').click();
  await exp.locator('figure.chart-main [role="menuitem"]', { hasText: 'Save metrics as CSV' }).click();
  const saveInput = page.locator('.quick-input-widget input');
  await expectVisible(saveInput, 'the save dialog');
  // The simple file dialog fills in the folder first, then the proposed name.
  let proposed = await saveInput.inputValue();
  for (let i = 0; i < 50 && !/-metrics\.csv$/.test(proposed); i++, await sleep(200))
    proposed = await saveInput.inputValue();
  log(`save dialog proposes ${proposed}`);
  if (!/-metrics\.csv$/.test(proposed))
    throw new Error(`the save dialog proposes ${JSON.stringify(proposed)}, expected a name ending in -metrics.csv`);
  await page.keyboard.press('Enter');
  await sleep(1500);
  await exp.locator('#tab-attention').click();
  await wb.openFile(path.basename(proposed));
  let csvText = '';
  for (let i = 0; i < 50 && !csvText.startsWith('step,run,train loss'); i++, await sleep(200))
    csvText = (await wb.editorTexts()).find((t) => t.startsWith('step,run')) ?? '';
  if (!csvText.startsWith('step,run,train loss')) throw new Error('the saved metrics CSV did not open with its header');
  log(`saved CSV: ${csvText.split('\n').length} visible lines`);
  await shot('05b-export-csv.png');
  await wb.runCommand('View: Close Editor');

  // 6. The run is in the Runs view, stopped, with its step count.
  await wb.openActivity('Attention Lab');
  const row = page.locator('.pane-body .monaco-list-row', { hasText: 'stopped' });
  await expectVisible(row, 'the stopped run in the Runs view');
  const rowText = (await row.first().textContent()) ?? '';
  log(`Runs view: "${rowText.trim()}"`);
  if (!rowText.includes(`${stopStep}/${total}`))
    throw new Error(`the Runs view row does not show ${stopStep}/${total}: ${rowText}`);
  await shot('05-runs-view.png');

  // 7. Decode from the palette: the text opens in an editor.
  await wb.runCommand('Attention Lab: Decode…');
  await wb.answerInput('The model ');
  let text = '';
  for (
    let i = 0;
    i < 100 && !(text.startsWith('The model ') && text.length > 'The model '.length);
    i++, await sleep(300)
  ) {
    text = (await wb.editorTexts()).find((t) => t.startsWith('The model ')) ?? '';
  }
  log(`decoded: ${JSON.stringify(text)}`);
  if (!(text.startsWith('The model ') && text.length > 'The model '.length))
    throw new Error(`Decode did not return text; the editor shows ${JSON.stringify(text)}`);
  await shot('06-decode.png');

  // 8. Score Selection: every token of the selected file gets a shade and a hover.
  const { shades } = await wb.scoreFile('attention.txt', 'Attention lets every token');
  log(`Score Selection: ${shades} decorated spans`);
  await shot('07-score-selection.png');

  // Show Attention for Selection: the run's own Attention tab shows the text ("Your text").
  await wb.runCommand('Attention Lab: Show Attention for Selection');
  const said = await waitForText(wb.dashboard().locator('#panel-attention .inspect-status'), (t) =>
    t.includes('not a training snapshot'),
  );
  log(`dashboard after Show Attention: "${said}"`);
  const boxed = await wb.dashboard().locator('#attn-text').inputValue();
  if (!boxed.startsWith('Attention lets every'))
    throw new Error(`the Attention tab's text box does not hold the selection: ${JSON.stringify(boxed)}`);

  // The playground looks inside the model (through the host's model worker): the logit lens of
  // a prompt, then a head switched off and the comparison with every head on.
  const pg = wb.dashboard();
  await pg.locator('#tab-playground').click();
  await pg.locator('#pg-input').fill('The model ');
  await pg.locator('#pg-lens').click();
  await expectVisible(pg.locator('.lens-grid .lens-cell'), 'the logit lens grid', 60_000);
  const lensRows = await pg.locator('.lens-grid tbody tr').count();
  await pg.locator('button.ab-head').first().click();
  await expectVisible(pg.locator('.ab-table'), 'the ablation comparison', 60_000);
  log(
    `playground: logit lens with ${lensRows} layer rows; one head off, Δloss ${await pg.locator('[data-loss="delta"]').textContent()}`,
  );
  if (lensRows < 2) throw new Error(`the logit lens shows ${lensRows} layer rows`);
  await shot('08a-playground-lens-ablation.png');
  await wb.dashboard().locator('#tab-attention').click();
  await expectVisible(wb.dashboard().locator('.hm-grid canvas'), "the selection's heatmap");
  await shot('08-selection-attention.png');
  // The selection's head scores: positional ones of the text, induction of the diagnostic sequence.
  await wb.dashboard().locator('#tab-heads').click();
  await expectVisible(
    wb.dashboard().locator('.heads-note', { hasText: 'measured on your text' }),
    "the Heads tab's note on the selection",
  );
  await shot('08b-selection-heads.png');
  await wb.dashboard().locator('#tab-attention').click();
  await expectVisible(
    wb.dashboard().locator('#tab-attention[aria-selected="true"]'),
    'the Attention tab selected before the reload',
  );

  // 9. Reload the window as a person does (Developer: Reload Window, which shuts the workbench
  // down and saves its state; a bare browser reload can lose the webview's last setState):
  // the dashboard restores itself and the run is still listed.
  const reloaded = page.waitForEvent('load', { timeout: 90_000 });
  await wb.runCommand('Developer: Reload Window');
  await reloaded;
  page = page.context().pages()[0] ?? page;
  await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
  await page.waitForFunction(() => !!window.driver, null, { timeout: 90_000 });
  await page.evaluate(() => window.driver.whenWorkbenchRestored());
  wb = new Workbench(page, log);
  // The page restores its own UI state (getState/setState): it comes back on the Attention tab.
  const restoredDash = wb.dashboard();
  await expectVisible(
    restoredDash.locator('#tab-attention[aria-selected="true"]'),
    'the restored dashboard on its Attention tab',
    90_000,
  );
  await expectVisible(restoredDash.locator('.hm-grid canvas'), 'the restored heatmap');
  await restoredDash.locator('#tab-curves').click();
  const restored = restoredDash.locator('figure.chart-main[data-points]');
  await expectVisible(restored, 'the restored loss chart');
  let restoredPoints = 0;
  for (let i = 0; i < 60 && restoredPoints < stopStep; i++, await sleep(300))
    restoredPoints = Number((await restored.first().getAttribute('data-points')) ?? 0);
  log(`restored dashboard: ${restoredPoints} points`);
  if (restoredPoints < stopStep)
    throw new Error(`the restored dashboard shows ${restoredPoints} points, expected ${stopStep}`);
  await wb.openActivity('Attention Lab');
  await expectVisible(page.locator('.pane-body .monaco-list-row', { hasText: 'stopped' }), 'the run after the reload');
  await shot('09-after-reload.png');

  // 10. Delete the run from its context menu, confirming the modal dialog: the welcome view returns.
  await page.keyboard.press('Escape');
  await page.locator('.pane-body .monaco-list-row', { hasText: 'stopped' }).first().click({ button: 'right' });
  const item = page.locator('.context-view .action-label', { hasText: 'Delete Run…' }).first();
  await item.waitFor({ timeout: 10_000 });
  await sleep(300); // the menu animates in; an early click can land before it takes input
  await item.click();
  const dialog = page.locator('.monaco-dialog-box');
  if (
    !(await dialog.waitFor({ timeout: 5_000 }).then(
      () => true,
      () => false,
    ))
  ) {
    await item.hover().catch(() => undefined);
    await page.keyboard.press('Enter');
  }
  await expectVisible(dialog, 'the delete confirmation');
  log(`delete dialog: "${((await dialog.textContent()) ?? '').replace(/\s+/g, ' ').slice(0, 120)}"`);
  await dialog.locator('.monaco-button', { hasText: 'Delete' }).first().click();
  await expectVisible(
    page.locator('.welcome-view-content', { hasText: 'No runs yet' }),
    'the welcome view after deleting the only run',
  );

  // 11. VS Code's own measure of the activation time (Developer: Show Running Extensions).
  try {
    await wb.runCommand('Developer: Show Running Extensions', 15_000);
    const rowEl = page.locator('.runtime-extensions-editor .monaco-list-row', { hasText: 'Attention Lab' });
    await rowEl.first().waitFor({ timeout: 15_000 });
    const titles = await rowEl
      .first()
      .evaluate((el) => [...el.querySelectorAll('[title]')].map((e) => e.getAttribute('title')).join(' | '));
    log(`Running Extensions: ${((await rowEl.first().textContent()) ?? '').replace(/\s+/g, ' ').trim()} (${titles})`);
    await shot('10-running-extensions.png');
  } catch (e) {
    log(`(could not read Running Extensions: ${e.message})`);
  }
  void reopen;
  return true;
}
