// The "active run" scenario of the end-to-end suite (`run.mjs --only active`), in a real VS Code
// driven by Chromium: a window reload during training leaves a notification "Training of run X
// was interrupted at step N (last checkpoint)" whose Resume continues the run (the step count goes
// past N); with two runs, clicking one in the Runs view makes it the active run (the status bar
// says so) and Score Selection then uses it (its hover names that run); the dashboard's run picker
// sets the active run too; Rename Run… shows the new name in the Runs view; deleting two selected
// runs asks once, naming how many. Each check throws with what it saw; screenshots go to `shots`.
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { Workbench, expectVisible } from './lib/workbench.mjs';

const STEP = /step (\d+)\/(\d+)/;

/** Reloads the window and waits for the workbench; returns the page and a new Workbench. */
async function reload(page, log) {
  await page.reload();
  const p = page.context().pages()[0] ?? page;
  await p.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
  await p.waitForFunction(() => !!window.driver, null, { timeout: 90_000 });
  await p.evaluate(() => window.driver.whenWorkbenchRestored());
  return [p, new Workbench(p, log)];
}

/** Trains from the palette until the status bar passes `steps`; returns the status text. */
async function trainUntil(wb, steps) {
  await wb.runCommand('Attention Lab: Train');
  return wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= steps, 120_000);
}

async function stop(wb) {
  await wb.runCommand('Attention Lab: Stop Training');
  return wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 60_000);
}

/** The Runs view's rows: [{ text, row }]. */
async function runRows(page) {
  const rows = page.locator('.pane-body .monaco-list-row', { hasText: /run-\d|·/ });
  const out = [];
  for (let i = 0; i < (await rows.count()); i++)
    out.push({ text: ((await rows.nth(i).textContent()) ?? '').trim(), row: rows.nth(i) });
  return out.filter((r) => /\d+\/\d+/.test(r.text));
}

/** Chooses `label` in the context menu of `row` (retrying past hover cards, then by keyboard). */
export async function contextMenu(page, row, label) {
  const item = page.locator('.context-view .action-label', { hasText: label }).first();
  // A row's hover card can swallow the right-click or lie over the menu: open the menu again
  // and, failing the pointer, choose the item with the keyboard (as a user of a screen reader would).
  for (let attempt = 1; ; attempt++) {
    await row.click({ button: 'right' });
    try {
      await item.waitFor({ timeout: 5_000 });
      await sleep(300); // the menu animates in
      await item.click({ timeout: 5_000 });
      return;
    } catch (e) {
      if (attempt === 3) throw e;
      await page.keyboard.press('Escape');
      await page.mouse.move(700, 400);
      await sleep(500);
      if (attempt === 2) {
        await page.keyboard.press('Shift+F10'); // the context menu of the focused row (the selection stays)
        const focused = page.locator('.context-view .action-item.focused');
        for (let i = 0; i < 25; i++) {
          await page.keyboard.press('ArrowDown');
          const text = (await focused.textContent({ timeout: 1_000 }).catch(() => '')) ?? '';
          if (text.includes(label)) {
            await page.keyboard.press('Enter');
            return;
          }
        }
        await page.keyboard.press('Escape');
      }
    }
  }
}

/** Runs the scenario; resolves true when every check passed. */
export async function runActive(page, { shots, log }) {
  let wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));

  // 1. Train past two checkpoints (every 20 steps), then reload the window while it trains.
  await wb.openActivity('Attention Lab');
  const before = await trainUntil(wb, 45);
  log(`training before the reload: "${before}"`);
  [page, wb] = await reload(page, log);

  // 2. The notification names the run and its last checkpoint; Resume continues it.
  await wb.openActivity('Attention Lab');
  let notes = [];
  for (let i = 0; i < 60 && !notes.some((n) => n.includes('was interrupted at step')); i++, await sleep(500))
    notes = await wb.notifications();
  const note = notes.find((n) => n.includes('was interrupted at step'));
  log(`notification: ${JSON.stringify(note)}`);
  const m = /Training of run (\S+) was interrupted at step (\d+) \(last checkpoint\)\./.exec(note ?? '');
  if (!m) throw new Error(`no interrupted-run notification; the notification centre holds ${JSON.stringify(notes)}`);
  const [, firstName, checkpoint] = m;
  if (Number(checkpoint) < 40 || Number(checkpoint) % 20 !== 0)
    throw new Error(
      `the notification says step ${checkpoint}; the last checkpoint was at a multiple of 20, at least 40`,
    );
  const row = page.locator('.pane-body .monaco-list-row', { hasText: 'interrupted' });
  await expectVisible(row, 'the interrupted run in the Runs view');
  const rowText = ((await row.first().textContent()) ?? '').trim();
  log(`Runs view: "${rowText}"`);
  if (!rowText.includes(`interrupted · ${checkpoint}/`))
    throw new Error(`the Runs view does not show the run interrupted at step ${checkpoint}: ${rowText}`);
  await page.locator('#status\\.notifications').click();
  const item = page
    .locator('.notifications-center .notification-list-item', { hasText: 'was interrupted at step' })
    .first();
  await expectVisible(item, 'the notification in the notification centre');
  await shot('a1-interrupted-notification.png');
  await item.locator('.monaco-button', { hasText: 'Resume' }).first().click();
  const resumed = await wb.waitForStatus(
    'Attention Lab: step',
    (t) => Number(STEP.exec(t)?.[1] ?? 0) > Number(checkpoint) + 5,
    120_000,
  );
  log(`after Resume: "${resumed}"`);
  // The dashboard says the same as the Runs view and the status bar: training, past the checkpoint.
  const header = wb.dashboard().locator('.run-status');
  let headerText = '';
  // The header may first show the checkpoint's step as the worker starts again: wait for it to move past.
  const past = (t) => Number(/^training · step (\d+)/.exec(t)?.[1] ?? 0) > Number(checkpoint);
  for (let i = 0; i < 120 && !past(headerText); i++, await sleep(250))
    headerText = (
      (await header
        .first()
        .textContent()
        .catch(() => '')) ?? ''
    ).trim();
  log(`dashboard header after Resume: "${headerText}"`);
  if (!past(headerText))
    throw new Error(
      `the dashboard does not show the resumed run training past step ${checkpoint}: ${JSON.stringify(headerText)}`,
    );
  await shot('a2-resumed.png');
  await stop(wb);

  // 3. A second run; it becomes the active run (the status bar names it).
  await trainUntil(wb, 12);
  await stop(wb);
  await wb.openActivity('Attention Lab');
  let rows = [];
  for (let i = 0; i < 40 && rows.length < 2; i++, await sleep(250)) rows = await runRows(page);
  if (rows.length !== 2)
    throw new Error(`expected two runs in the Runs view, saw ${JSON.stringify(rows.map((r) => r.text))}`);
  const second = rows.find((r) => !r.text.includes(firstName));
  const secondName = /run-[\d-]+/.exec(second?.text ?? '')?.[0];
  if (!secondName) throw new Error(`no second run among ${JSON.stringify(rows.map((r) => r.text))}`);
  const activeStatus = await wb.waitForStatus('decoder-only · step', (t) => t.includes(secondName), 20_000);
  log(`status bar after the second run: "${activeStatus}"`);

  // 4. Clicking the first run in the Runs view makes it the active run…
  const firstRow = rows.find((r) => r.text.includes(firstName)).row;
  await firstRow.click();
  const nowActive = await wb.waitForStatus('decoder-only · step', (t) => t.includes(firstName), 20_000);
  log(`status bar after clicking ${firstName}: "${nowActive}"`);
  await expectVisible(
    page.locator('.pane-body .monaco-list-row', { hasText: firstName }).filter({ hasText: 'active run' }),
    'the active-run mark on the clicked run',
  );
  await shot('a3-active-run.png');

  // …and Score Selection uses it: the hover of a shaded token names it.
  const { shaded } = await wb.scoreFile('attention.txt', 'Attention lets every token');
  await page.keyboard.press('ArrowRight'); // drop the selection so the shading shows
  let hover = '';
  for (let i = 0; i < 10 && !hover.includes('scored by'); i++) {
    // The shading lies under the text, which takes the pointer: move the mouse over it instead.
    const box = await shaded.nth(5 + i).boundingBox();
    if (!box) continue;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await sleep(1500);
    hover = (
      (await page
        .locator('.monaco-hover')
        .first()
        .textContent()
        .catch(() => '')) ?? ''
    )
      .replace(/\s+/g, ' ')
      .trim();
  }
  log(`hover: ${JSON.stringify(hover)}`);
  if (!hover.includes(`scored by ${firstName}`))
    throw new Error(`the score hover does not name the active run ${firstName}: ${JSON.stringify(hover)}`);
  await shot('a4-score-hover.png');

  // 5. The dashboard's run picker sets the active run.
  await wb.runCommand('Attention Lab: Open Dashboard');
  const picker = wb.dashboard().locator('select#run-picker');
  await expectVisible(picker, 'the dashboard run picker', 60_000);
  // The picker shows before the runs arrive (the web host reads them through workspace.fs, more slowly).
  const listed = () =>
    picker.locator('option').evaluateAll((os) => os.map((o) => ({ value: o.value, text: o.textContent })));
  let options = await listed();
  for (let i = 0; i < 80 && !options.some((o) => o.text.includes(secondName)); i++, await sleep(250))
    options = await listed();
  const other = options.find((o) => o.text.includes(secondName));
  if (!other) throw new Error(`the picker does not list ${secondName}: ${JSON.stringify(options)}`);
  await picker.selectOption(other.value);
  const fromPicker = await wb.waitForStatus('decoder-only · step', (t) => t.includes(secondName), 20_000);
  log(`status bar after picking ${secondName} in the dashboard: "${fromPicker}"`);
  // Comparing the two runs adds what differs between their settings (the same settings here: it says so).
  const dash = wb.dashboard();
  await dash.locator('#tab-curves').click();
  await dash.locator('input[id^="curves-compare-"]').first().check();
  const diffTitle = dash.locator('.config-diff-title');
  await expectVisible(diffTitle, 'the table of what differs between the compared runs');
  const diffText = ((await dash.locator('.config-diff-box').textContent()) ?? '').replace(/\s+/g, ' ');
  log(`compare: "${diffText.slice(0, 200)}"`);
  if (!/What differs between the compared runs/.test(diffText) || !/(are the same|setting)/.test(diffText))
    throw new Error(`the comparison says ${JSON.stringify(diffText)}`);
  await shot('a5-dashboard-picker-compare.png');

  // 6. Rename Run… from the context menu: the Runs view shows the new name.
  await wb.openActivity('Attention Lab');
  rows = await runRows(page);
  await contextMenu(page, rows.find((r) => r.text.includes(firstName)).row, 'Rename Run…');
  await wb.answerInput('baseline run');
  await expectVisible(
    page.locator('.pane-body .monaco-list-row', { hasText: 'baseline run' }),
    'the renamed run in the Runs view',
  );
  await shot('a6-renamed.png');

  // 7. Select both runs and delete them with one confirmation that says how many.
  rows = await runRows(page);
  await rows[0].row.click();
  await rows[1].row.click({ modifiers: ['Control'] });
  await contextMenu(page, rows[1].row, 'Delete Run…');
  const dialog = page.locator('.monaco-dialog-box');
  await expectVisible(dialog, 'the delete confirmation');
  const said = ((await dialog.textContent()) ?? '').replace(/\s+/g, ' ');
  log(`delete dialog: "${said.slice(0, 200)}"`);
  if (!said.includes('Delete 2 runs?')) throw new Error(`the confirmation does not say how many runs: ${said}`);
  await shot('a7-delete-two.png');
  await dialog.locator('.monaco-button', { hasText: 'Delete' }).first().click();
  await expectVisible(
    page.locator('.welcome-view-content', { hasText: 'No runs yet' }),
    'the welcome view after deleting both runs',
  );
  return true;
}
