// The Configure scenario of the end-to-end suite, in a trusted workspace: "Configure
// Model…" counts the files of the documents glob as it is typed (with the skipped ones and
// why, and a "Preview files…" list), refuses a glob that matches nothing right there, sizes
// the presets with the vocabulary the review shows (the same line in both), says where the
// settings go, keeps "Save and Train" clickable while the other review rows are hovered, and
// saves to .vscode/settings.json. Screenshots go to `shots`.
import fs from 'node:fs';
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

// innerText, not textContent: the quick pick reuses row elements and keeps hidden text of earlier items in them.
const text = async (locator) => ((await locator.first().innerText()) ?? '').replace(/\s+/g, ' ').trim();
const texts = (locator) => locator.evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()));

/** Runs the scenario; resolves true when every check passed. */
export async function runConfigure(page, { shots, log, workspace, host }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));
  const widget = page.locator('.quick-input-widget');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  const input = widget.locator('input.input').first();
  const message = widget.locator('.quick-input-message');
  const pick = async (needle) => {
    const row = rows.filter({ hasText: needle }).first();
    await visible(row, `the "${needle}" choice`);
    await row.click();
  };

  await wb.openActivity('Attention Lab');
  await wb.runCommand('Attention Lab: Configure Model…');
  await pick('decoder-only');
  // The decoder-only model trains on documents or its built-in task (step 7); documents first.
  await pick('Documents in this workspace');

  // 1. The glob box counts the files of the glob it opens with (the settings' **/*.{md,txt}).
  await visible(input, 'the glob box');
  await visible(message.filter({ hasText: /\d+ files?, [\d.]+ [KM]?B/ }), 'the file count under the glob box', 30_000);
  const count = await text(message);
  log(`glob count: "${count}"`);
  // The sample workspace: 4 text files; notes/blob.bin.txt is binary and build/generated.txt is ignored by .gitignore.
  if (
    !/^4 files, [\d.]+ [KM]?B · 2 skipped: .*binary.*ignored by \.gitignore|^4 files, [\d.]+ [KM]?B · 2 skipped: .*ignored by \.gitignore.*binary/.test(
      count,
    )
  )
    throw new Error(`unexpected count: ${count}`);
  await shot('c1-configure-glob-count.png');

  // 2. "Preview files…" lists the files with sizes and the skipped ones with why; Escape returns to the glob.
  await widget.locator('[aria-label="Preview files…"], .action-label[title="Preview files…"]').first().click();
  await visible(rows.filter({ hasText: 'skipped: binary' }), 'the skipped binary file in the preview list');
  const listed = await texts(rows);
  log(`preview rows: ${JSON.stringify(listed)}`);
  if (!listed.some((r) => /README\.md/.test(r) && /\d+ B/.test(r)))
    throw new Error('the preview does not list README.md with its size');
  if (!listed.some((r) => /generated\.txt/.test(r) && /ignored by \.gitignore/.test(r)))
    throw new Error('the preview does not list the .gitignored file as skipped');
  await shot('c2-configure-preview-files.png');
  await page.keyboard.press('Escape');
  await visible(message.filter({ hasText: /4 files/ }), 'the glob box again after the preview');
  if ((await input.inputValue()) !== '**/*.{md,txt}')
    throw new Error(`the glob changed to ${await input.inputValue()}`);

  // 3. A glob matching nothing is refused at once, and Enter does not move on.
  const t0 = Date.now();
  await input.fill('**/*.nothing');
  await visible(
    message.filter({ hasText: 'No file in this workspace matches' }),
    'the refusal of a glob matching nothing',
    15_000,
  );
  log(`refusal after ${Date.now() - t0} ms: "${await text(message)}"`);
  await page.keyboard.press('Enter');
  await sleep(1000);
  if ((await rows.filter({ hasText: 'one token per character' }).count()) !== 0)
    throw new Error('Enter moved past a glob that matches nothing');
  if ((await input.inputValue()) !== '**/*.nothing')
    throw new Error('the glob box closed on a glob that matches nothing');
  await shot('c3-configure-glob-refused.png');

  // 4. Back to a good glob; the tokenizer, then the presets sized with it.
  await input.fill('**/*.{md,txt}');
  await visible(message.filter({ hasText: /4 files/ }), 'the count of the good glob again');
  await page.keyboard.press('Enter');
  await pick('one token per character');
  await visible(rows.filter({ hasText: 'parameters' }), 'the preset sizes');
  const tiny = /\d[\d.]*[kMG]? parameters.*$/.exec(await text(rows.filter({ hasText: 'd_model 64' })))?.[0] ?? '';
  log(`preset tiny: "${tiny}"`);
  if (!/^[\d.]+k parameters · ~[\d.]+ [KMG]?B with \d+ tokens \(\d+ characters in the files\)$/.test(tiny))
    throw new Error(`the preset size states no vocabulary from the files: ${tiny}`);
  await shot('c4-configure-presets.png');
  await pick('d_model 64');
  // The architecture behind the preset: its options in words; a combination that does not fit shows the engine's
  // one-line message before anything trains; Continue keeps the preset's.
  await visible(rows.filter({ hasText: 'learned positions' }), 'the architecture step');
  await shot('c4-configure-architecture.png');
  // The list is virtual (rows below the fold are not drawn): the filter brings an option up.
  const archList = widget.locator('input[placeholder^="Architecture of the"]');
  const pickOption = async (needle) => {
    // The quick inputs share one input element: wait for the list's own, or the filter lands in the one closing.
    await visible(archList, 'the architecture list');
    await input.fill(needle);
    await pick(needle);
  };
  await pickOption('key/value heads');
  // Its prompt under the box (the list's row says the same words: wait for the box's own message).
  await visible(message.filter({ hasText: 'Key/value heads each shared' }), 'the key/value heads box');
  await input.fill('3');
  await visible(
    message.filter({ hasText: 'nHeads 4 is not divisible by nKvHeads 3' }),
    "the engine's message for 3 kv heads",
  );
  await page.keyboard.press('Enter'); // refused: the box stays
  await visible(message.filter({ hasText: 'Use nKvHeads 1, 2, 4' }), 'the refusal, still there after Enter');
  await shot('c4-configure-kv-heads-refused.png');
  await widget.locator('.codicon-quick-input-back, [aria-label="Back"]').first().click();
  await pick('norm placement');
  await pick('post-norm');
  await pickOption('parallel residual');
  // The filtered architecture list shows one row naming both ("parallel residual · sequential residual") until the
  // choices replace it: wait for the two choices, then click the one that is only "parallel residual".
  const residualRows = rows.filter({ hasText: 'residual' });
  for (let waited = 0; (await residualRows.count()) < 2; waited += 100) {
    if (waited > 30_000) throw new Error('the parallel residual choices did not appear within 30 s');
    await sleep(100);
  }
  await residualRows.filter({ hasText: 'parallel residual' }).filter({ hasNotText: 'sequential' }).first().click();
  // The list comes back scrolled to the option just changed: the filter brings the message row (the first) up.
  // The step may draw its list again once the engine has judged the choice, and a new list starts with an empty
  // filter: type until the message row is up.
  const refused = rows.filter({ hasText: 'parallelResidual needs norm pre' });
  for (let tries = 0; ; tries++) {
    await visible(archList, 'the architecture list');
    await input.fill('parallelResidual needs');
    try {
      await refused.first().waitFor({ state: 'visible', timeout: 3000 });
      break;
    } catch {
      if (tries >= 4) throw new Error("the engine's message for post-norm + parallel did not appear after 5 filters");
    }
  }
  await shot('c4-configure-architecture-refused.png');
  // The message row has no value: clicking it leaves the step where it is.
  await rows.filter({ hasText: 'parallelResidual needs norm pre' }).first().click();
  await visible(rows.filter({ hasText: 'parallelResidual needs norm pre' }), 'the architecture step, still');
  await pickOption("tiny preset's architecture");
  await pick('Continue');
  // The steps box reuses the preset list's input element: wait for its prompt, or '30' lands in the list's filter.
  await visible(message.filter({ hasText: 'Training steps' }), 'the steps box');
  await input.fill('30');
  if ((await input.inputValue()) !== '30')
    throw new Error(`the steps box holds "${await input.inputValue()}" after typing 30`);
  await page.keyboard.press('Enter');

  // 5. The review: where the settings go, the same size as the preset list, and Save and Train reachable.
  try {
    await visible(rows.filter({ hasText: /per step on \d+ threads? \(/ }), 'the measured time per step', 60_000);
  } catch (e) {
    log(
      `quick input now: message "${await text(message).catch(() => '')}", rows ${JSON.stringify(await texts(rows).catch(() => []))}`,
    );
    await shot('c5-configure-no-time-per-step.png');
    throw e;
  }
  const reviewRows = await texts(rows);
  log(`review rows: ${JSON.stringify(reviewRows)}`);
  if (
    !reviewRows.some((r) => r.includes('Save and Train') && r.includes('to workspace settings (.vscode/settings.json)'))
  )
    throw new Error('the review does not say where the settings go');
  // The engine row: desktop offers the PyTorch engine beside ours; the browser's VS Code starts no processes, so it offers none and says why.
  const engineRow = reviewRows.some((r) => r.includes('Engine: ') && r.includes('change…'));
  if (engineRow !== (host === 'node'))
    throw new Error(
      `in the ${host} host the review ${engineRow ? 'has' : 'lacks'} the engine row: ${JSON.stringify(reviewRows)}`,
    );
  if (host !== 'node' && !reviewRows.some((r) => r.includes('PyTorch needs desktop VS Code')))
    throw new Error(
      `the ${host} host's review does not say why there is no engine choice: ${JSON.stringify(reviewRows)}`,
    );
  const size = reviewRows.find((r) => r.includes('parameters')) ?? '';
  if (!size.includes(tiny)) throw new Error(`the review's size "${size}" is not the preset list's "${tiny}"`);
  const train = rows.filter({ hasText: 'Save and Train' }).first();
  // Hover every other row at six points (label line and detail line; left, middle, right), wait
  // past the hover delay, and probe Save and Train across its width: no point may be covered.
  const covered = async () => {
    const box = await train.boundingBox();
    return page.evaluate(({ x, y, width, height }) => {
      for (let k = 1; k < 10; k++) {
        const el = document.elementFromPoint(x + (width * k) / 10, y + height / 2);
        if (!el?.closest('.monaco-list-row')?.innerText?.includes('Save and Train')) return true;
      }
      return false;
    }, box);
  };
  const n = await rows.count();
  for (let i = 0; i < n; i++) {
    const row = rows.nth(i);
    const label = await text(row);
    if (label.includes('Save and Train') || !(await row.isVisible())) continue;
    const box = await row.boundingBox();
    for (const fy of [0.3, 0.75]) {
      for (const fx of [0.2, 0.5, 0.8]) {
        await page.mouse.move(box.x + box.width * fx, box.y + box.height * fy);
        await sleep(1200); // past the hover delay
        if (await covered()) {
          await shot('c5-configure-review-covered.png');
          throw new Error(`hovering "${label}" covers Save and Train`);
        }
      }
    }
    log(`hovering "${label}" at six points: Save and Train stays uncovered`);
  }
  await shot('c5-configure-review-hover.png');
  // The review can switch to user settings and back; the rows then say where they save.
  await pick('Save to user settings (every workspace) instead');
  await visible(
    rows.filter({ hasText: 'Save to workspace settings (.vscode/settings.json) instead' }),
    'the switch back to workspace settings',
  );
  const userRows = await texts(rows);
  if (!userRows.some((r) => r.startsWith('Save and Train') && r.includes('to user settings (every workspace)')))
    throw new Error(`after the switch the review does not save to user settings: ${JSON.stringify(userRows)}`);
  await pick('Save to workspace settings (.vscode/settings.json) instead');
  await visible(
    rows.filter({ hasText: 'Save to user settings (every workspace) instead' }),
    'the review back on workspace settings',
  );
  await visible(
    rows.filter({ hasText: /per step on \d+ threads? \(/ }),
    'the measured time, kept across the switch',
    5_000,
  );
  await train.click();

  // 6. Saved where it said, and training starts.
  const settingsFile = path.join(workspace, '.vscode/settings.json');
  const read = () => (fs.existsSync(settingsFile) ? fs.readFileSync(settingsFile, 'utf8') : '');
  for (let i = 0; i < 60 && !read().includes('attentionLab.data.include'); i++) await sleep(250); // VS Code creates the file, then writes the keys one by one (include is the last)
  await sleep(500);
  const saved = read();
  log(`.vscode/settings.json: ${saved.replace(/\s+/g, ' ')}`);
  if (
    !/"attentionLab\.training\.steps":\s*30/.test(saved) ||
    !saved.includes('"attentionLab.data.include": "**/*.{md,txt}"')
  )
    throw new Error('the settings were not saved to .vscode/settings.json');
  const done = await wb.waitForStatus('Attention Lab:', (t) => /finished at step 30\/30/.test(t), 120_000);
  log(`status bar: "${done}"`);
  const messages = await wb.notifications();
  log(`notifications: ${JSON.stringify(messages)}`);
  if (!messages.some((m) => m.includes('Saved to workspace settings (.vscode/settings.json)')))
    throw new Error('no message said where the settings were saved');
  await shot('c6-configure-saved.png');

  // 7. The induction task: listed among the decoder-only model's built-in tasks; no tokenizer
  // step (the task has its own letters); presets sized with those letters; other data brings
  // its own step count (the task's 3000, not the 30 set for the documents), set here to 20;
  // saved and trained through the worker.
  await wb.runCommand('Attention Lab: Configure Model…');
  await pick('decoder-only');
  await visible(rows.filter({ hasText: 'Documents in this workspace' }), 'the documents choice beside the task');
  const task = rows.filter({ hasText: 'repeated random letters' });
  await visible(task, 'the induction task');
  const taskText = await text(task);
  log(`induction row: "${taskText}"`);
  if (!/watch an induction head form/.test(taskText)) throw new Error(`the induction row has no blurb: ${taskText}`);
  await sleep(400); // past the quick pick's fade from the kind step, for the screenshot
  await shot('c7-configure-induction-task.png');
  await task.first().click();
  await visible(rows.filter({ hasText: 'parameters' }), 'the preset sizes of the induction model (no tokenizer step)');
  const tinyInduction =
    /\d[\d.]*[kMG]? parameters.*$/.exec(await text(rows.filter({ hasText: 'd_model 64' })))?.[0] ?? '';
  log(`preset tiny, induction: "${tinyInduction}"`);
  if (!/ with 286 tokens \(the task's 26 letters\)$/.test(tinyInduction))
    throw new Error(`the induction preset is not sized with the task's letters: ${tinyInduction}`);
  // Back from the presets passes over the tokenizer step the task does not have, to the data step.
  await widget.locator('.codicon-quick-input-back, [aria-label="Back"]').first().click();
  await visible(rows.filter({ hasText: 'a glob, now' }), 'the data step, after Back from the presets');
  if ((await rows.filter({ hasText: 'one token per character' }).count()) !== 0)
    throw new Error('Back from the presets showed the tokenizer step');
  await pick('repeated random letters');
  await visible(rows.filter({ hasText: 'd_model 64' }), 'the presets again');
  await pick('d_model 64');
  await pick('Continue');
  await visible(widget.filter({ hasText: 'Training steps' }), 'the steps box');
  if ((await input.inputValue()) !== '3000')
    throw new Error(`the steps box shows ${await input.inputValue()}, not the induction task's own 3000`);
  await input.fill('20');
  await page.keyboard.press('Enter');
  await visible(
    rows.filter({ hasText: /per step on \d+ threads? \(/ }),
    'the measured time per step of the induction model',
    60_000,
  );
  const describe = (await input.getAttribute('placeholder')) ?? '';
  log(`review: "${describe}"`);
  if (!describe.startsWith('decoder-only · tiny · task induction · its own letters · 20 steps · context 32'))
    throw new Error(`the review describes ${describe}`);
  if (!(await texts(rows)).some((r) => r.includes(tinyInduction)))
    throw new Error("the review size is not the preset list's");
  await shot('c8-configure-induction-review.png');
  await pick('Save and Train');
  for (let i = 0; i < 60 && !read().includes('"attentionLab.data.task": "induction"'); i++) await sleep(250);
  const savedTask = read();
  log(`.vscode/settings.json: ${savedTask.replace(/\s+/g, ' ')}`);
  if (
    !savedTask.includes('"attentionLab.model.kind": "decoder-only"') ||
    !savedTask.includes('"attentionLab.data.source": "task"')
  )
    throw new Error('the induction task was not saved');
  const trained = await wb.waitForStatus('Attention Lab:', (t) => /finished at step 20\/20/.test(t), 120_000);
  log(`status bar: "${trained}"`);
  await shot('c9-configure-induction-trained.png');
  return true;
}
