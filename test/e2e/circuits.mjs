// The circuits scenario of the end-to-end suite (`run.mjs --only circuits`, issue 32), in a real VS Code
// driven by Chromium:
//   1. the built-in induction task trains from the settings (the command line's default run: 3000 steps,
//      a 2-layer, 4-head decoder); the dashboard's Patching tab patches a clean prompt (a repeated letter
//      sequence whose next letter is "r") into a corrupted one (the first "r" changed to "s"): the heatmaps
//      of every sweep have a cell per (layer, position) or (layer, head), attribution patching's estimate
//      sits beside each with as many cells, direct logit attribution draws its bars, and the head that
//      recovers most is one the Heads tab marks as an induction head (induction ≥ 0.5; which layer-2 head
//      recovers most depends on the prompt — every layer-2 head of this model is an induction head, 0.6–0.9 —
//      so the check is that the best one is among the Heads tab's induction heads, not that it is its top one),
//      and clicking its cell shows the cell's detail with the clean, corrupted and patched runs' top letters;
//   2. Configure Model… → decoder-only → the modular-addition task → Save and Train; the Curves tab's
//      Grokking view shows the train/test accuracy and the embedding's Fourier spectrum at one validation
//      and more validations later (screenshots at both moments), its spectrum drawn as bars beside the key
//      frequencies over training; then Stop.
// Screenshots (g1-…, g5-…) go to `shots`.
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { Workbench, expectVisible, waitForText } from './lib/workbench.mjs';

/** User settings: the induction task, the command line's default run (its own 3000 steps and context 32). */
export const CIRCUITS_SETTINGS = {
  'attentionLab.model.kind': 'decoder-only',
  'attentionLab.data.source': 'task',
  'attentionLab.data.task': 'induction',
  'attentionLab.training.steps': 0,
  'attentionLab.training.seqLen': 0,
  'attentionLab.training.batchSize': 32,
  'attentionLab.training.evalEvery': 25,
  'attentionLab.training.snapshotEvery': 50,
  'attentionLab.training.checkpointEvery': 600,
};

/** The induction prompts: 11 letters each (12 tokens with BOS), differing only where the answer was seen. */
const CLEAN = 'kpqmrbwkpqm';
const CORRUPTED = 'kpqmsbwkpqm';

const STEP = /step (\d+)\//;

/** The number of different colours on a canvas (a blank one has one or two). */
const colours = (canvas) =>
  canvas.evaluate((c) => {
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    const seen = new Set();
    for (let i = 0; i < data.length; i += 16) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return seen.size;
  });

/** Runs the scenario; resolves true when every check passed. */
export async function runCircuits(page, { shots, log }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));
  await wb.openActivity('Attention Lab');

  // 1. The induction task trains to its end (3000 steps).
  await wb.runCommand('Attention Lab: Train');
  const done = await wb.waitForStatus('Attention Lab:', (t) => /finished at step 3000\/3000/.test(t), 900_000);
  log(`status bar: "${done}"`);
  const dash = wb.dashboard();

  // 2. The Heads tab: every head's induction score at the last snapshot.
  await dash.locator('#tab-heads').click();
  await expectVisible(dash.locator('.heads-cell canvas'), 'the Heads tab sparklines', 60_000);
  let induction = [];
  for (let i = 0; i < 40; i++, await sleep(250)) {
    induction = await dash.locator('.heads-cell').evaluateAll((cells) =>
      cells.map((c) => {
        const labels = [...c.querySelectorAll('.heads-score')].map((s) => s.textContent.trim());
        const values = [...c.querySelectorAll('.heads-value')].map((s) => Number(s.textContent.trim()));
        const ind = values[labels.indexOf('ind')];
        return {
          layer: Number(c.dataset.layer),
          head: Number(c.dataset.head),
          ind,
          above: c.classList.contains('above'),
        };
      }),
    );
    if (induction.length === 8 && induction.every((h) => Number.isFinite(h.ind))) break;
  }
  log(`Heads tab induction: ${induction.map((h) => `L${h.layer + 1}H${h.head + 1} ${h.ind}`).join(', ')}`);
  if (induction.length !== 8 || !induction.every((h) => Number.isFinite(h.ind)))
    throw new Error(`the Heads tab does not show 2 × 4 induction scores: ${JSON.stringify(induction)}`);
  // The heads the tab marks: at or above its threshold (0.5) of the score it ranks by (induction here).
  const score = await dash.locator('#heads-score').inputValue();
  const threshold = Number(await dash.locator('#heads-threshold').inputValue());
  const inductionHeads = induction.filter((h) => h.above).map((h) => `L${h.layer + 1}H${h.head + 1}`);
  log(`Heads tab marks ${inductionHeads.join(', ')} (${score} ≥ ${threshold})`);
  if (!score.endsWith('induction') || inductionHeads.length === 0)
    throw new Error(`the Heads tab marks no induction head (score ${score}, threshold ${threshold})`);
  const top = [...induction].sort((a, b) => b.ind - a.ind)[0];
  if (top.layer !== 1) throw new Error(`the Heads tab's top induction head is in layer ${top.layer + 1}, not 2`);
  await shot('g1-induction-heads.png');

  // 3. The Patching tab: clean and corrupted prompts, answer and wrong letter, the default sweeps
  // (resid, attn, mlp, heads) with attribution patching beside and direct logit attribution.
  await dash.locator('#tab-patching').click();
  await expectVisible(dash.locator('#ptc-clean'), 'the Patching tab form');
  await dash.locator('#ptc-clean').fill(CLEAN);
  await dash.locator('#ptc-corrupted').fill(CORRUPTED);
  await dash.locator('#ptc-answer').fill('r');
  await dash.locator('#ptc-wrong').fill('s');
  await dash.locator('#ptc-run').click();
  const status = await waitForText(
    dash.locator('.ptc-status'),
    (t) => (t.startsWith('logit[') && !t.includes('estimating')) || t.includes('failed'),
    300_000,
  );
  log(`Patching: "${status}"`);
  const metric = /^logit\[r\] − logit\[s\]: clean (-?[\d.]+), corrupted (-?[\d.]+)\.$/.exec(status);
  if (!metric) throw new Error(`the Patching tab did not answer with the metric: ${status}`);
  const [clean, corrupted] = [Number(metric[1]), Number(metric[2])];
  if (!(clean > 0 && corrupted < 0))
    throw new Error(`the trained model does not copy the repeated letter: clean ${clean}, corrupted ${corrupted}`);

  // Every sweep's map: rows × columns cells, the estimate beside it with as many.
  const maps = await dash.locator('.ptc-sweep[data-map]').evaluateAll((figs) =>
    figs.map((f) => {
      const map = (cls) => {
        const m = f.querySelector(`.ptc-map.${cls}`);
        if (!m) return null;
        return {
          rows: [...m.querySelectorAll('.ptc-rowlabel')].map((r) => r.textContent.trim()),
          cols: [...m.querySelectorAll('.ptc-col')].map((c) => c.textContent.trim()),
          cells: [...m.querySelectorAll('.ptc-cell')].map((c) => Number(c.dataset.n)),
        };
      };
      return { what: f.dataset.what, full: map('full'), estimate: map('estimate') };
    }),
  );
  for (const m of maps)
    log(`${m.what}: ${m.full?.rows.length} × ${m.full?.cols.length} cells, estimate ${m.estimate?.cells.length}`);
  const want = { resid: [2, 12], attn: [2, 12], mlp: [2, 12], heads: [2, 4] };
  if (JSON.stringify(maps.map((m) => m.what)) !== JSON.stringify(Object.keys(want)))
    throw new Error(`the sweeps drawn are ${maps.map((m) => m.what).join(', ')}`);
  for (const m of maps) {
    const [rows, cols] = want[m.what];
    const f = m.full;
    if (!f || (rows !== null && f.rows.length !== rows) || f.cols.length !== cols)
      throw new Error(`the ${m.what} map is ${f?.rows.length} × ${f?.cols.length}, expected ${rows ?? 'L'} × ${cols}`);
    if (f.cells.length !== f.rows.length * f.cols.length || !f.cells.every(Number.isFinite))
      throw new Error(`the ${m.what} map has ${f.cells.length} cells for ${f.rows.length} × ${f.cols.length}`);
    if (m.estimate?.cells.length !== f.cells.length)
      throw new Error(`the ${m.what} estimate has ${m.estimate?.cells.length} cells, the map ${f.cells.length}`);
  }
  // The residual stream at the last position entering layer 1 is the corrupted run's own input there
  // (the prompts differ at position 5 only), and patching the whole stream at position 5 before layer 1
  // restores the clean run: recovery 1.
  const resid = maps[0].full;
  const at = (r, c) => resid.cells[r * resid.cols.length + c];
  log(`resid L1: ${resid.cols.map((c, i) => `${c} ${at(0, i).toFixed(2)}`).join(', ')}`);
  if (Math.abs(at(0, 5) - 1) > 1e-3) throw new Error(`patching layer 1's input at position 5 recovers ${at(0, 5)}`);
  // The head that recovers most: in layer 2 and an induction head on the Heads tab.
  const heads = maps[3].full;
  let best = 0;
  heads.cells.forEach((v, i) => (best = v > (heads.cells[best] ?? -Infinity) ? i : best));
  const bestName = `${heads.rows[Math.floor(best / 4)]}${heads.cols[best % 4]}`.replace(/\s+/g, '');
  log(`heads: ${heads.cells.map((v) => v.toFixed(2)).join(' ')}; best ${bestName} (${heads.cells[best].toFixed(2)})`);
  if (!inductionHeads.includes(bestName))
    throw new Error(
      `the head that recovers most, ${bestName}, is not an induction head (${inductionHeads.join(', ')})`,
    );
  // Clicking that cell shows its detail: where it is, its recovery, and the clean, corrupted and patched
  // runs' top next letters (the clean run's first "r", the corrupted run's "s").
  await dash.locator(`.ptc-sweep[data-what="heads"] .ptc-map.full .ptc-cell[data-i="${best}"]`).click();
  const detail = dash.locator('#ptc-cell');
  await expectVisible(detail, "the clicked cell's detail");
  const head = ((await detail.locator('.ptc-cell-head').textContent()) ?? '').replace(/\s+/g, ' ').trim();
  const tops = await detail.locator('table.ptc-top').evaluateAll((ts) =>
    ts.map((t) => ({
      caption: t.querySelector('caption')?.textContent.trim(),
      tokens: [...t.querySelectorAll('.ptc-token')].map((c) => c.textContent),
    })),
  );
  log(`cell detail: "${head}"; top: ${JSON.stringify(tops)}`);
  const [l, hd] = [heads.rows[Math.floor(best / 4)], heads.cols[best % 4]];
  const recovery = Number(/recovery (-?[\d.]+)/.exec(head)?.[1] ?? NaN);
  if (!head.startsWith(`${l}, ${hd}: patched metric`) || !(Math.abs(recovery - heads.cells[best]) < 0.01))
    throw new Error(`the clicked cell's detail reads "${head}", not ${l}, ${hd}'s (recovery ${heads.cells[best]})`);
  const top1 = Object.fromEntries(tops.map((t) => [t.caption, t.tokens[0]]));
  if (tops.length !== 3 || top1.clean !== 'r' || top1.corrupted !== 's' || !tops.every((t) => t.tokens.length === 5))
    throw new Error(`the clicked cell's top tokens are ${JSON.stringify(tops)}`);
  await detail.scrollIntoViewIfNeeded();
  await shot('g3b-patching-cell.png');
  const dla = await dash.locator('.ptc-dla .ptc-bar-row').count();
  log(`direct logit attribution: ${dla} bars`);
  if (dla < 8) throw new Error(`direct logit attribution draws ${dla} bars (8 heads at least)`);
  await dash.locator('.ptc-sweep[data-what="heads"]').scrollIntoViewIfNeeded();
  await shot('g2-patching-heads.png');
  await dash.locator('.ptc-sweep[data-what="resid"]').scrollIntoViewIfNeeded();
  await shot('g3-patching-resid.png');

  // 4. Grokking: Configure Model… → decoder-only → the modular-addition task → its own steps → Save and Train.
  const widget = page.locator('.quick-input-widget');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  const pick = async (needle, timeout) => {
    const row = rows.filter({ hasText: needle }).first();
    await expectVisible(row, `the "${needle}" choice`, timeout);
    await row.click();
  };
  await wb.runCommand('Attention Lab: Configure Model…');
  await pick('decoder-only');
  await pick('a + b mod 113');
  await pick('d_model 64', 30_000);
  await pick('Continue');
  await expectVisible(widget.filter({ hasText: 'Training steps' }), 'the steps box');
  await page.keyboard.press('Enter');
  await pick('Save and Train', 90_000);
  await wb.waitForStatus('Attention Lab: step', (t) => STEP.test(t), 120_000);
  await dash.locator('#tab-curves').click();
  const view = dash.locator('section.grokking');
  const pointsNow = async () => Number((await view.getAttribute('data-points')) ?? 0);
  let first = 0;
  for (let i = 0; i < 600 && first < 2; i++, await sleep(500)) first = await pointsNow();
  if (first < 2) throw new Error(`the Grokking view has ${first} validations after five minutes`);
  await expectVisible(view, 'the Grokking view');
  const spectrum = dash.locator('canvas.grokking-spectrum');
  const bars = Number((await spectrum.getAttribute('data-bars')) ?? 0);
  const summary1 = (await dash.locator('.grokking-summary').textContent()) ?? '';
  log(`Grokking view: ${first} validations, ${bars} spectrum bars; "${summary1}"`);
  if (bars !== 56) throw new Error(`the Fourier spectrum has ${bars} bars, not one per frequency 1–56 of Z_113`);
  if ((await colours(spectrum)) < 3) throw new Error('the Fourier spectrum canvas is blank');
  if (!/^Step [\d,]+: train accuracy .+%, test .+%/.test(summary1))
    throw new Error(`the Grokking view's summary reads "${summary1}"`);
  // The spectrum and the key frequencies sit side by side, as the two charts above them (each half the width).
  const boxes = await dash.locator('.grokking-figure').evaluateAll((figs) =>
    figs.map((f) => {
      const r = f.getBoundingClientRect();
      return { top: Math.round(r.top), left: Math.round(r.left), width: Math.round(r.width) };
    }),
  );
  log(`Grokking figures: ${JSON.stringify(boxes)}`);
  if (boxes.length !== 2 || boxes[0].top !== boxes[1].top || boxes[1].left <= boxes[0].left)
    throw new Error(`the spectrum and the key frequencies are not side by side: ${JSON.stringify(boxes)}`);
  await view.scrollIntoViewIfNeeded();
  await shot('g4-grokking-early.png');
  let later = first;
  for (let i = 0; i < 600 && later < first + 3; i++, await sleep(500)) later = await pointsNow();
  const summary2 = (await dash.locator('.grokking-summary').textContent()) ?? '';
  log(`Grokking view later: ${later} validations; "${summary2}"`);
  if (later <= first) throw new Error(`the Grokking view did not fill in: ${first} → ${later} validations`);
  if (summary2 === summary1) throw new Error('the Grokking summary did not move on');
  const acc = await colours(dash.locator('.grokking-acc canvas').first());
  if (acc < 3) throw new Error('the accuracy chart is blank');
  await view.scrollIntoViewIfNeeded();
  await shot('g5-grokking-later.png');

  // 5. Stop the run (it need not grok here).
  await wb.runCommand('Attention Lab: Stop Training');
  const stopped = await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 120_000);
  log(`status bar: "${stopped}"`);
  return true;
}
