// The modern-transformer scenario of the end-to-end suite (issue 29): Configure Model… → decoder-only →
// the workspace's documents → the llama-tiny preset (its row says what it is: RoPE, RMSNorm, SwiGLU,
// 2 key/value heads) → the architecture step's Continue (with the architecture in words) → the review's
// architecture line → Save and Train; then the dashboard: the loss curve fills in, the Model tab names
// RoPE, RMSNorm, SwiGLU and the 2 kv heads, the Attention tab's heads and the Heads tab's heads are
// labelled with the key/value head they read ("head 3 · kv 2"); the run finishes and Decode… writes
// text with it. Screenshots (m1-…, m8-…) go to `shots`.
import fs from 'node:fs';
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { Workbench, expectVisible } from './lib/workbench.mjs';

/** Steps of the run Configure Model… saves: a few snapshots (every 10) and one evaluation, then Decode. */
const STEPS = 200;

// innerText, not textContent: the quick pick reuses row elements and keeps hidden text of earlier items in them.
const text = async (locator) => ((await locator.first().innerText()) ?? '').replace(/\s+/g, ' ').trim();
const texts = (locator) => locator.evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()));

/** Runs the scenario; resolves true when every check passed. */
export async function runModern(page, { shots, log, workspace }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));
  const widget = page.locator('.quick-input-widget');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  const input = widget.locator('input.input').first();
  const message = widget.locator('.quick-input-message');
  const pick = async (needle) => {
    const row = rows.filter({ hasText: needle }).first();
    await expectVisible(row, `the "${needle}" choice`);
    await row.click();
  };

  // 1. Configure Model…: decoder-only, the workspace's documents (the glob counted), characters, then the presets.
  await wb.openActivity('Attention Lab');
  await wb.runCommand('Attention Lab: Configure Model…');
  await pick('decoder-only');
  await pick('Documents in this workspace');
  await expectVisible(message.filter({ hasText: /\d+ files?, / }), 'the file count of the glob', 30_000);
  await page.keyboard.press('Enter');
  await pick('one token per character');
  const llama = rows.filter({ hasText: 'Llama-style' }).filter({ hasText: 'd_model 64' });
  await expectVisible(llama, 'the llama-tiny preset', 30_000);
  const llamaRow = await text(llama);
  log(`llama-tiny row: "${llamaRow}"`);
  if (!llamaRow.includes('Llama-style (RoPE, RMSNorm, SwiGLU, 2 key/value heads): d_model 64, 2 layers, 4 heads'))
    throw new Error(`the llama-tiny row does not say what it is: ${llamaRow}`);
  const size = /\d[\d.]*[kMG]? parameters.*$/.exec(llamaRow)?.[0] ?? '';
  if (!size) throw new Error(`the llama-tiny row has no size: ${llamaRow}`);
  await sleep(400); // past the quick pick's fade, for the screenshot
  await shot('m1-configure-llama-preset.png');
  await llama.first().click();

  // 2. The architecture step: Continue carries the preset's architecture in words; its options show the values.
  const cont = rows.filter({ hasText: 'Continue' });
  await expectVisible(cont, 'the architecture step');
  const contRow = await text(cont);
  log(`architecture step: "${contRow}"`);
  for (const part of ['RoPE θ 10000', 'RMSNorm', 'SwiGLU', 'GQA 4 q / 2 kv heads'])
    if (!contRow.includes(part)) throw new Error(`the architecture step's Continue does not name ${part}: ${contRow}`);
  const options = await texts(rows);
  log(`architecture rows: ${JSON.stringify(options.slice(0, 8))}`);
  await sleep(400);
  await shot('m2-configure-architecture.png');
  await cont.first().click();

  // 3. Steps, then the review: its architecture line and the preset list's size; Save and Train.
  await expectVisible(message.filter({ hasText: 'Training steps' }), 'the steps box');
  await input.fill(String(STEPS));
  await page.keyboard.press('Enter');
  await expectVisible(rows.filter({ hasText: /per step on \d+ threads? \(/ }), 'the measured time per step', 90_000);
  const review = await texts(rows);
  log(`review rows: ${JSON.stringify(review)}`);
  const archLine = review.find((r) => r.includes('architecture') && r.includes('RoPE')) ?? '';
  if (!archLine.includes('RoPE θ 10000 · RMSNorm · SwiGLU · GQA 4 q / 2 kv heads'))
    throw new Error(`the review shows no architecture line for llama-tiny: ${JSON.stringify(review)}`);
  if (!review.some((r) => r.includes(size))) throw new Error(`the review's size is not the preset list's "${size}"`);
  const describe = (await input.getAttribute('placeholder')) ?? '';
  log(`review: "${describe}"`);
  if (!describe.startsWith(`decoder-only · llama-tiny · documents`))
    throw new Error(`the review describes ${describe}`);
  await shot('m3-configure-review.png');
  await pick('Save and Train');
  const settingsFile = path.join(workspace, '.vscode/settings.json');
  const read = () => (fs.existsSync(settingsFile) ? fs.readFileSync(settingsFile, 'utf8') : '');
  for (let i = 0; i < 60 && !read().includes('"attentionLab.model.preset": "llama-tiny"'); i++) await sleep(250);
  if (!read().includes('"attentionLab.model.preset": "llama-tiny"'))
    throw new Error(`the preset was not saved: ${read().replace(/\s+/g, ' ')}`);

  // 4. The dashboard opens on the run: the loss curve fills in.
  const first = await wb.waitForStatus('Attention Lab: step', (t) => /step (\d+)\//.test(t), 120_000);
  log(`status bar: "${first}"`);
  const dash = wb.dashboard();
  const chart = dash.locator('figure.chart-main[data-points]');
  await expectVisible(chart, 'the loss chart', 60_000);
  let points = 0;
  for (let i = 0; i < 200 && points < 15; i++, await sleep(300))
    points = Number((await chart.first().getAttribute('data-points')) ?? 0);
  const colours = await chart
    .first()
    .locator('canvas')
    .first()
    .evaluate((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      const seen = new Set();
      for (let i = 0; i < data.length; i += 16) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      return seen.size;
    });
  log(`loss chart: ${points} points, ${colours} colours`);
  if (points < 15) throw new Error(`the loss chart has only ${points} points`);
  if (colours < 3) throw new Error('the loss chart canvas is blank');
  const header = await text(dash.locator('body'));
  log(`dashboard: "${header.slice(0, 240)}"`);
  await shot('m4-dashboard-curves.png');

  // 5. The Model tab: the architecture line and the attention box name the modern parts.
  await dash.locator('#tab-model').click();
  await expectVisible(dash.locator('#panel-model .arch-stack').first(), "the Model tab's architecture");
  const model = await text(dash.locator('#panel-model'));
  log(`Model tab: "${model.slice(0, 600)}"`);
  for (const part of ['RoPE', 'RMSNorm', 'SwiGLU', 'GQA 4 q / 2 kv heads', 'each kv head serves 2 query heads'])
    if (!model.includes(part)) throw new Error(`the Model tab does not name ${part}`);
  await shot('m5-dashboard-model.png');

  // 6. The Attention tab: each head's column says the key/value head it reads (4 query heads, 2 kv heads).
  await dash.locator('#tab-attention').click();
  const colheads = dash.locator('.attn-grid-colhead');
  await expectVisible(colheads, 'the attention grid');
  const cols = await colheads.allTextContents();
  log(`Attention tab heads: ${JSON.stringify(cols)}`);
  const want = ['head 1 · kv 1', 'head 2 · kv 1', 'head 3 · kv 2', 'head 4 · kv 2'];
  if (JSON.stringify(cols.map((c) => c.trim())) !== JSON.stringify(want))
    throw new Error(`the Attention tab's heads read ${JSON.stringify(cols)}, expected ${JSON.stringify(want)}`);
  await sleep(500);
  await shot('m6-dashboard-attention-gqa.png');

  // 7. The Heads tab: every head (2 layers × 4) with its kv group, and score values.
  await dash.locator('#tab-heads').click();
  await expectVisible(dash.locator('.heads-cell canvas'), 'the Heads tab sparklines');
  const names = (await dash.locator('.heads-name').allTextContents()).map((n) => n.trim());
  log(`Heads tab: ${JSON.stringify(names)}`);
  for (const layer of [1, 2])
    for (const w of want)
      if (!names.includes(`layer ${layer} · ${w}`)) throw new Error(`the Heads tab lacks "layer ${layer} · ${w}"`);
  const values = await dash.locator('.heads-value').allTextContents();
  if (!values.some((v) => /^\d/.test(v.trim())))
    throw new Error(`the Heads tab shows no score values: ${values.slice(0, 10).join(', ')}`);
  await shot('m7-dashboard-heads-gqa.png');

  // 8. The run finishes; Decode… writes text with it.
  const done = await wb.waitForStatus(
    'Attention Lab:',
    (t) => new RegExp(`finished at step ${STEPS}/${STEPS}`).test(t),
    300_000,
  );
  log(`status bar: "${done}"`);
  await wb.runCommand('Attention Lab: Decode…');
  await wb.answerInput('The model ');
  let decoded = '';
  for (
    let i = 0;
    i < 100 && !(decoded.startsWith('The model ') && decoded.length > 'The model '.length);
    i++, await sleep(300)
  )
    decoded = (await wb.editorTexts()).find((t) => t.startsWith('The model ')) ?? '';
  log(`decoded: ${JSON.stringify(decoded)}`);
  if (!(decoded.startsWith('The model ') && decoded.length > 'The model '.length))
    throw new Error(`Decode did not return text; the editor shows ${JSON.stringify(decoded)}`);
  await shot('m8-decode.png');
  return true;
}
