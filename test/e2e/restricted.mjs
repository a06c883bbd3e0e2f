// The Restricted Mode scenario of the end-to-end suite: VS Code with workspace trust on,
// the sample workspace opened and NOT trusted. The extension must say it trains only on
// built-in tasks, refuse to train on the workspace's documents (with the reason), and let
// "Configure Model…" — driven step by step, Back button included — choose a task, show the
// model's size and measured time per step, save, and train it. Screenshots go to `shots`.
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { Workbench } from './lib/workbench.mjs';

async function visible(locator, what, timeout = 30_000) {
  try {
    await locator.first().waitFor({ state: 'visible', timeout });
  } catch {
    throw new Error(`${what} did not appear within ${timeout / 1000} s`);
  }
}

/** Runs the scenario on a page whose workspace is untrusted; resolves true when every check passed. */
export async function runRestricted(page, { shots, log }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));
  const rows = page.locator('.quick-input-list .monaco-list-row');
  const pick = async (text) => {
    const row = rows.filter({ hasText: text }).first();
    await visible(row, `the "${text}" choice`);
    await row.click();
  };

  // VS Code asks whether to trust the folder: say no.
  const dialog = page.locator('.monaco-dialog-box');
  await visible(dialog, 'the workspace trust prompt', 60_000);
  await dialog.locator('.monaco-button', { hasText: "No, I don't trust the authors" }).first().click();
  await sleep(500);

  // The Runs view explains the limited mode.
  await wb.openActivity('Attention Lab');
  await visible(
    page.locator('.welcome-view-content', { hasText: 'Restricted Mode' }),
    'the Restricted Mode welcome text',
  );
  await visible(
    page.locator('.pane-body .monaco-list-row', { hasText: 'only built-in tasks train here' }),
    'the Restricted Mode line of the Configuration view',
  );
  await shot('r1-restricted-welcome.png');

  // Training on the workspace's documents is refused, with the reason.
  await wb.runCommand('Attention Lab: Train');
  let messages = [];
  for (let i = 0; i < 40 && !messages.some((m) => m.includes('Restricted Mode')); i++, await sleep(250))
    messages = await wb.notifications();
  log(`notifications: ${JSON.stringify(messages)}`);
  if (!messages.some((m) => /Restricted Mode, so Attention Lab does not train on its files/.test(m)))
    throw new Error('Train did not explain that Restricted Mode forbids training on workspace files');
  if (await wb.statusItem('Attention Lab: step')) throw new Error('something trained on the workspace files');

  // Configure Model: only built-in tasks are offered (decoder-only: the induction task, no
  // documents); go forward, back, forward.
  await wb.runCommand('Attention Lab: Configure Model…');
  await visible(rows.filter({ hasText: 'encoder-decoder' }), 'the model-kind step');
  await visible(
    rows.filter({ hasText: /Restricted Mode: built-in tasks only \(induction[^)]*\)/ }),
    'the decoder-only choice, limited to its task',
  );
  await pick('GPT-style language model');
  await visible(rows.filter({ hasText: 'repeated random letters' }), 'the induction task');
  if ((await rows.filter({ hasText: 'Documents in this workspace' }).count()) !== 0)
    throw new Error('workspace documents were offered in Restricted Mode');
  await page
    .locator('.quick-input-widget .codicon-quick-input-back, .quick-input-widget [aria-label="Back"]')
    .first()
    .click();
  await visible(rows.filter({ hasText: '"Attention Is All You Need"' }), 'the model-kind step, after Back');
  await pick('encoder-decoder');
  await visible(rows.filter({ hasText: 'reverse' }), 'the built-in tasks');
  await page
    .locator('.quick-input-widget .codicon-quick-input-back, .quick-input-widget [aria-label="Back"]')
    .first()
    .click();
  await visible(rows.filter({ hasText: '"Attention Is All You Need"' }), 'the model-kind step again, after Back');
  await pick('encoder-decoder');
  await pick('reverse');
  await pick('char');
  await visible(rows.filter({ hasText: 'parameters' }), 'the preset sizes');
  await pick('tiny');
  await pick('Continue');
  const input = page.locator('.quick-input-widget input');
  // The steps box reuses the preset list's input element: wait for its prompt, or the typing lands in the list's filter.
  await visible(page.locator('.quick-input-widget', { hasText: 'Training steps' }), 'the steps box');
  await input.fill('0');
  await visible(
    page.locator('.quick-input-widget', { hasText: 'Steps must be from 1' }),
    'the steps validation message',
  );
  await input.fill('40');
  await page.keyboard.press('Enter');
  // The review: size now, and the time per step once measured.
  await visible(rows.filter({ hasText: /per step on \d+ threads? \(/ }), 'the measured time per step', 60_000);
  // The size sits on the review's info row (the action rows come first); read the rows' visible text.
  const texts = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
  const review = texts.find((t) => /parameters · ~/.test(t)) ?? texts.join(' | ');
  log(`review: "${review}"`);
  if (!/parameters · ~[\d.]+ [KMG]?B/.test(review)) throw new Error(`the review shows no size: ${review}`);
  await shot('r2-configure-review.png');
  await pick('Save and Train');

  // The task trains to the end; the run is listed.
  const done = await wb.waitForStatus('Attention Lab:', (t) => /finished at step 40\/40/.test(t), 120_000);
  log(`status bar: "${done}"`);
  await visible(
    page.locator('.pane-body .monaco-list-row', { hasText: 'completed · 40/40' }),
    'the completed task run in the Runs view',
  );
  await shot('r3-restricted-trained.png');
  return true;
}
