/**
 * The Patching tab in headless Chromium (webview/panels/patching.ts), fed recorded answers:
 * fixtures/patching.json holds `attention-lab patch RUN --clean xqabcdefab --corrupted xqabzdefab
 * --answer c --wrong z --what resid,attn,mlp,heads,heads-pos,path --receivers L2H1,L2H2 --input k
 * --top 5 --json` and `attention-lab attribute … --what attribution`, `--what dla` and `--what
 * resid-accum` (`--json`) of `train --task induction --steps 2000` (2 layers, 4 heads; numbers to
 * 4 digits). Run posts model/patch (with top 5 and the path receivers) and model/attribute with
 * the form's settings; each sweep is a labelled map with one cell per value coloured by its
 * recovery (blue towards clean, red past corrupted), the estimate beside it with Pearson's r and a
 * scatter, a line on what a cell means; clicking a cell (or a dot) shows the patched run's top
 * tokens beside the clean and corrupted runs'; DLA's components and the accumulated residual are
 * bars; progress shows "n of N patches" and Cancel sends model/cancel for each request in flight;
 * a failure is one line in the panel.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttributionOutputData } from '../../src/protocol/attribution';
import type { PatchOutputData } from '../../src/protocol/patching';
import { clean, dec, enc, load, selectRun, tab } from './data';
import {
  HAS_CHROMIUM,
  SKIP_REASON,
  fixture,
  frames,
  launchBrowser,
  openDashboard,
  screenshot,
  send,
  until,
} from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const recorded = fixture<{
  patch: PatchOutputData;
  attribution: AttributionOutputData;
  dla: AttributionOutputData;
  accum: AttributionOutputData;
}>('patching.json');

/** Fills the form with the recorded prompts and ticks every sweep, path patching through L2H1 and L2H2's keys. */
async function fillForm(page: Page): Promise<void> {
  await page.fill('#ptc-clean', 'xqabcdefab');
  await page.fill('#ptc-corrupted', 'xqabzdefab');
  await page.fill('#ptc-answer', 'c');
  await page.fill('#ptc-wrong', 'z');
  await page.check('#ptc-what-heads-pos');
  await page.check('#ptc-what-path');
  await page.fill('#ptc-receivers', 'L2H1 L2H2');
  await page.selectOption('#ptc-input', 'k');
}

describe.skipIf(!HAS_CHROMIUM)('the Patching tab in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('sends model/patch and model/attribute, draws every sweep as a labelled map beside its estimate', async () => {
    const { page, log } = await openDashboard(browser, { width: 1300 });
    await send(page, load);
    await selectRun(page, dec.run.id);
    await tab(page, 'patching');
    const panel = '.panel.patching';
    await fillForm(page);
    await page.click('#ptc-run');
    const patch = log.posted.find((m) => m.type === 'model/patch');
    const attribute = log.posted.find((m) => m.type === 'model/attribute');
    expect(patch).toMatchObject({
      runDir: dec.run.runDir,
      request: {
        clean: 'xqabcdefab',
        corrupted: 'xqabzdefab',
        answer: 'c',
        wrong: 'z',
        metric: 'logit-diff',
        what: ['resid', 'attn', 'mlp', 'heads', 'heads-pos', 'path'],
        receivers: [
          { layer: 1, head: 0 },
          { layer: 1, head: 1 },
        ],
        input: 'k',
        top: 5,
      },
    });
    expect(attribute).toMatchObject({
      runDir: dec.run.runDir,
      params: { clean: 'xqabcdefab', corrupted: 'xqabzdefab', what: 'attribution', metric: { kind: 'logit-diff' } },
    });
    expect(await page.locator(`${panel} .ptc-status`).textContent()).toBe('Patching…');

    await send(page, { type: 'model/didPatch', id: patch?.id, output: recorded.patch });
    await until(page, `document.querySelectorAll('${panel} .ptc-sweep').length === 6`);
    const out = recorded.patch;
    expect(await page.locator(`${panel} .ptc-status`).textContent()).toContain(
      `logit[c] − logit[z]: clean ${out.clean.toFixed(3)}`,
    );
    for (const m of out.maps) {
      const map = `${panel} .ptc-sweep[data-what="${m.what}"] .ptc-map.full`;
      const cells = page.locator(`${map} .ptc-cell`);
      expect(await cells.count()).toBe(m.rows.length * m.cols.length);
      expect(await page.locator(`${map} .ptc-rowlabel`).allTextContents()).toEqual(m.rows);
      expect(await page.locator(`${map} .ptc-col`).allTextContents()).toEqual(m.cols);
      expect(await cellValues(page, `${map} .ptc-cell`)).toEqual(m.normalised);
      expect(await page.locator(`${panel} .ptc-sweep[data-what="${m.what}"] .ptc-meaning`).textContent()).toMatch(
        /^A cell \(.*1 = the clean metric recovered, 0 = as corrupted\.$/,
      );
    }
    // Positions carry their tokens: the answer's position is labelled with it.
    expect(await page.locator(`${panel} .ptc-sweep[data-what="resid"] .ptc-col`).nth(5).textContent()).toBe('5 c');
    // Diverging colours from the theme: recovery 1 is the chart blue, 0 the background, < 0 a red.
    const colour = async (sel: string): Promise<number[]> =>
      rgb((await page.evaluate(`getComputedStyle(document.querySelector('${sel}')).backgroundColor`)) as string);
    const resid = out.maps.find((m) => m.what === 'resid');
    if (!resid) throw new Error('fixture without a resid sweep');
    const one = resid.normalised.findIndex((n) => n === 1);
    const zero = resid.normalised.findIndex((n) => n === 0);
    expect(one).toBeGreaterThanOrEqual(0);
    expect(zero).toBeGreaterThanOrEqual(0);
    // Cells sit in rows (display: contents) after the row label: row r's cell c is its (c + 2)-th child.
    const row = (i: number): string =>
      `${panel} .ptc-sweep[data-what="resid"] .ptc-map.full .ptc-row:nth-child(${Math.floor(i / resid.cols.length) + 2}) .ptc-cell:nth-child(${(i % resid.cols.length) + 2})`;
    const blue = await page.evaluate(`getComputedStyle(document.body).getPropertyValue('--vscode-charts-blue').trim()`);
    expect(await colour(row(one))).toEqual(hexToRgb(blue as string));
    const bg = await page.evaluate(
      `getComputedStyle(document.body).getPropertyValue('--vscode-editor-background').trim()`,
    );
    expect(await colour(row(zero))).toEqual(hexToRgb(bg as string));
    const negatives = await page.locator(`${panel} .ptc-map.full .ptc-cell.neg`).count();
    expect(negatives).toBe(out.maps.reduce((s, m) => s + m.normalised.filter((n) => n < 0).length, 0));

    // Path patching names its receivers and their input; it has no estimate.
    expect(await page.locator(`${panel} .ptc-sweep[data-what="path"] h3`).textContent()).toBe(
      'Path patching → L2H1, L2H2 (k)',
    );
    // The estimate arrives: beside each sweep but path's, the same shape, attribution patching's numbers.
    await send(page, { type: 'model/didAttribute', id: attribute?.id, output: recorded.attribution });
    await until(page, `document.querySelectorAll('${panel} .ptc-map.estimate').length === 5`);
    expect(await page.locator(`${panel} .ptc-sweep[data-what="path"] .ptc-map.estimate`).count()).toBe(0);
    const a = recorded.attribution;
    if (a.what !== 'attribution') throw new Error('fixture is not attribution patching');
    const expected: Record<string, number[]> = {
      resid: a.resid.flat(),
      attn: a.attnOut.flat(),
      mlp: a.mlpOut.flat(),
      heads: a.head.flat(),
      'heads-pos': a.headPos.flat(2),
    };
    for (const m of out.maps.filter((x) => x.what !== 'path')) {
      const est = `${panel} .ptc-sweep[data-what="${m.what}"] .ptc-map.estimate`;
      expect(await page.locator(`${est} h4`).textContent()).toBe('Attribution patching (estimate)');
      expect(await page.locator(`${est} .ptc-rowlabel`).allTextContents()).toEqual(m.rows);
      expect(await cellValues(page, `${est} .ptc-cell`)).toEqual(expected[m.what]);
      // Their agreement: Pearson's r over the cells, and one dot per cell.
      const agree = `${panel} .ptc-sweep[data-what="${m.what}"] .ptc-agree`;
      const want = pearsonR(m.normalised, expected[m.what] ?? []);
      const r = await page.locator(`${agree} .ptc-r`).getAttribute('data-r');
      if (want === null) expect(r).toBe('');
      else expect(Number(r)).toBeCloseTo(want, 9);
      expect(await page.locator(`${agree} .ptc-dot`).count()).toBe(m.normalised.length);
    }
    expect(await page.locator(`${panel} .ptc-sweep[data-what="heads"] .ptc-r`).textContent()).toMatch(
      /^r = -?\d\.\d{3} over 8 cells$/,
    );
    // DLA: the third request, one bar per component at the last position.
    const dlaAsk = log.posted.filter((m) => m.type === 'model/attribute')[1];
    expect(dlaAsk).toMatchObject({ params: { what: 'dla', metric: { kind: 'logit-diff', answer: 'c', wrong: 'z' } } });
    const d = recorded.dla;
    if (d.what !== 'dla') throw new Error('fixture is not DLA');
    await send(page, { type: 'model/didAttribute', id: dlaAsk?.id, output: d });
    await until(page, `document.querySelectorAll('${panel} .ptc-bar-row').length === ${d.components.length}`);
    const lastPos = d.tokens.length - 1;
    const vs = (await page.evaluate(
      `[...document.querySelectorAll('${panel} .ptc-bar-row')].map((r) => Number(r.dataset.v))`,
    )) as number[];
    expect(vs).toEqual(d.components.map((c) => c.values[lastPos]));
    const labels = await page.locator(`${panel} .ptc-bar-label`).allTextContents();
    expect(labels.slice(0, 3)).toEqual(['embeddings', 'L1H1', 'L1H2']);
    expect(labels).toContain('L2 MLP');
    expect(await page.locator(`${panel} .ptc-dla .ptc-bar.neg`).count()).toBe(vs.filter((v) => v < 0).length);

    // The accumulated residual: the fourth request, one bar per layer's stream at the last position.
    const accumAsk = log.posted.filter((m) => m.type === 'model/attribute')[2];
    expect(accumAsk).toMatchObject({ params: { what: 'resid-accum', metric: { kind: 'logit-diff', wrong: 'z' } } });
    const acc = recorded.accum;
    if (acc.what !== 'resid-accum') throw new Error('fixture is not the accumulated residual');
    await send(page, { type: 'model/didAttribute', id: accumAsk?.id, output: acc });
    await until(page, `document.querySelectorAll('${panel} .ptc-accum .ptc-bar-row').length === 3`);
    expect(await page.locator(`${panel} .ptc-accum .ptc-bar-label`).allTextContents()).toEqual([
      'embeddings',
      'after L1',
      'final',
    ]);
    const accVs = (await page.evaluate(
      `[...document.querySelectorAll('${panel} .ptc-accum .ptc-bar-row')].map((r) => Number(r.dataset.v))`,
    )) as number[];
    expect(accVs).toEqual(acc.layers.map((l) => l.values[lastPos]));
    expect(await page.locator('#ptc-progress').count()).toBe(0);

    // Clicking a cell: its detail under the sweep, the patched run's top tokens beside the clean and corrupted runs'.
    const top = recorded.patch.top;
    if (!top) throw new Error('fixture without top tokens');
    const tokensIn = async (sel: string): Promise<string[]> => page.locator(`${sel} .ptc-token`).allTextContents();
    await page.click(row(5)); // L1, position 5: the clean stream where the prompts differ
    await until(page, `!!document.querySelector('${panel} .ptc-sweep[data-what="resid"] #ptc-cell')`);
    expect(await tokensIn('#ptc-cell .ptc-top-clean')).toEqual(top.clean.map((t) => t.token));
    expect(await tokensIn('#ptc-cell .ptc-top-corrupted')).toEqual(top.corrupted.map((t) => t.token));
    expect(await tokensIn('#ptc-cell .ptc-top-patched')).toEqual(resid.top?.[5]?.map((t) => t.token));
    expect(await page.locator('#ptc-cell .ptc-top-patched .ptc-p').allTextContents()).toEqual(
      resid.top?.[5]?.map((t) => `${Number((t.p * 100).toFixed(1))}%`),
    );
    expect(await page.locator('#ptc-cell .ptc-cell-head').textContent()).toBe(
      `L1, 5 c: patched metric ${Number(resid.values[5]?.toFixed(3))}, recovery 1, ` +
        `estimate ${Number((a.resid[0]?.[5] ?? NaN).toFixed(3))} ` +
        `(clean ${Number(out.clean.toFixed(3))}, corrupted ${Number(out.corrupted.toFixed(3))})`,
    );
    expect(await page.locator(`${panel} .ptc-sweep[data-what="resid"] .selected`).count()).toBe(3); // both maps, the dot
    await screenshot(page, 'patching-cell');
    // Another sweep's cell moves the one detail there; a dot of the scatter selects its cell.
    const heads = out.maps.find((m) => m.what === 'heads');
    await page.click(`${panel} .ptc-sweep[data-what="heads"] .ptc-map.estimate .ptc-cell[data-i="5"]`);
    await until(page, `!!document.querySelector('${panel} .ptc-sweep[data-what="heads"] #ptc-cell')`);
    expect(await page.locator('#ptc-cell').count()).toBe(1);
    expect(await page.locator('#ptc-cell .ptc-cell-head strong').textContent()).toBe('L2, H2');
    expect(await tokensIn('#ptc-cell .ptc-top-patched')).toEqual(heads?.top?.[5]?.map((t) => t.token));
    await page.dispatchEvent(`${panel} .ptc-sweep[data-what="heads"] .ptc-dot[data-i="2"]`, 'click');
    await until(page, `document.querySelector('#ptc-cell strong')?.textContent === 'L1, H3'`);
    // From the keyboard: the map takes focus and the arrow keys move the selection, stopping at the edges.
    await page.focus(`${panel} .ptc-sweep[data-what="heads"] .ptc-map.full .ptc-grid`);
    for (const [key, want] of [
      ['ArrowRight', 'L1, H4'],
      ['ArrowRight', 'L1, H4'],
      ['ArrowDown', 'L2, H4'],
      ['ArrowDown', 'L2, H4'],
      ['ArrowLeft', 'L2, H3'],
      ['ArrowUp', 'L1, H3'],
    ] as const) {
      await page.keyboard.press(key);
      await until(page, `document.querySelector('#ptc-cell strong')?.textContent === '${want}'`);
    }
    await screenshot(page, 'patching', true);

    // A failure is one line in the panel, and the old maps go.
    await page.click('#ptc-run');
    const again = log.posted.filter((m) => m.type === 'model/patch')[1];
    const message =
      'The clean prompt is 9 tokens and the corrupted 5; they differ at 5: "c" vs "d". Give prompts of the same token length.';
    await send(page, { type: 'model/didFail', id: again?.id, error: { code: 'patch/lengths', message } });
    await frames(page);
    const status = page.locator(`${panel} .ptc-status`);
    expect(await status.textContent()).toBe(`Patching failed: ${message}`);
    expect(await status.getAttribute('class')).toContain('error');
    expect(await page.locator(`${panel} .ptc-sweep`).count()).toBe(0);
    clean(log);
    await page.close();
  });

  it('says why a large sweep has no top tokens for its cells, and shows the numbers alone where none were kept', async () => {
    const { page, log } = await openDashboard(browser, { width: 1300 });
    await send(page, load);
    await selectRun(page, dec.run.id);
    await tab(page, 'patching');
    await fillForm(page);
    await page.uncheck('#ptc-estimate');
    await page.click('#ptc-run');
    const ask = (): unknown => log.posted.filter((m) => m.type === 'model/patch').at(-1)?.id;
    // The host kept top tokens for every sweep but heads × position (as past MAX_TOP_CELLS cells).
    const out = recorded.patch;
    const capped = { ...out, maps: out.maps.map((m) => (m.what === 'heads-pos' ? { ...m, top: undefined } : m)) };
    await send(page, { type: 'model/didPatch', id: ask(), output: JSON.parse(JSON.stringify(capped)) });
    await until(page, `document.querySelectorAll('.panel.patching .ptc-sweep').length >= 6`);
    await page.click('.ptc-sweep[data-what="heads-pos"] .ptc-map.full .ptc-cell[data-i="7"]');
    await until(page, `!!document.querySelector('#ptc-cell')`);
    expect(await page.locator('#ptc-cell .ptc-top-patched').count()).toBe(0);
    expect(await page.locator('#ptc-cell .ptc-top-clean .ptc-token').count()).toBe(5);
    expect(await page.locator('#ptc-cell .ptc-cell-why').textContent()).toBe(
      "This sweep has 88 cells; the patched run's top tokens are kept for sweeps of up to 8,192. " +
        'Tick fewer sweeps or shorten the prompts to see them.',
    );
    expect(await page.locator('#ptc-cell .ptc-cell-head').textContent()).toMatch(/^L1H1, 7 e: patched metric /);
    // A host that kept none (an older one): the cell's numbers, no tables, no excuse.
    await page.click('#ptc-run');
    const { top: _, ...bare } = out;
    const none = { ...bare, maps: out.maps.map(({ top: __, ...m }) => m) };
    await send(page, { type: 'model/didPatch', id: ask(), output: none });
    await until(page, `document.querySelectorAll('.panel.patching .ptc-sweep').length >= 6`);
    await page.click('.ptc-sweep[data-what="resid"] .ptc-map.full .ptc-cell[data-i="5"]');
    await until(page, `!!document.querySelector('#ptc-cell')`);
    expect(await page.locator('#ptc-cell .ptc-top').count()).toBe(0);
    expect(await page.locator('#ptc-cell .ptc-cell-why').count()).toBe(0);
    expect(await page.locator('#ptc-cell .ptc-cell-head').textContent()).toMatch(
      /^L1, 5 c: patched metric 8\.452, recovery 1 /,
    );
    // Another request failing after full patching answered: the metric line stays, the failure follows it.
    const dlaAsk = log.posted.filter((m) => m.type === 'model/attribute').at(-2);
    expect(dlaAsk).toMatchObject({ params: { what: 'dla' } });
    const why = 'Direct logit attribution needs a pre-norm model.';
    await send(page, { type: 'model/didFail', id: dlaAsk?.id, error: { code: 'input/invalid', message: why } });
    await until(page, `document.querySelector('.panel.patching .ptc-status').classList.contains('error')`);
    expect(await page.locator('.panel.patching .ptc-status').textContent()).toBe(
      `logit[c] − logit[z]: clean ${Number(out.clean.toFixed(3))}, corrupted ${Number(out.corrupted.toFixed(3))}. ` +
        `Direct logit attribution failed: ${why}`,
    );
    expect(await page.locator('.panel.patching .ptc-map.full').count()).toBeGreaterThan(0);
    clean(log);
    await page.close();
  });

  it('offers no DLA or accumulated residual on a post-norm run, and asks for neither', async () => {
    const { page, log } = await openDashboard(browser, { width: 1300 });
    await send(page, load);
    await selectRun(page, enc.run.id); // the encoder-decoder fixture run is post-norm
    await tab(page, 'patching');
    for (const id of ['#ptc-dla', '#ptc-accum']) {
      expect(await page.locator(id).isDisabled()).toBe(true);
      expect(await page.locator(id).isChecked()).toBe(false);
      expect(await page.locator(`label[for="${id.slice(1)}"]`).getAttribute('title')).toBe(
        'Needs a pre-norm model: a post-norm layer ends in its own norm.',
      );
    }
    await page.fill('#ptc-clean', 'abcd');
    await page.fill('#ptc-corrupted', 'abxd');
    await page.fill('#ptc-answer', 'c');
    await page.fill('#ptc-wrong', 'x');
    await page.click('#ptc-run');
    const asks = log.posted.filter((m) => m.type === 'model/attribute' || m.type === 'model/patch');
    expect(asks.map((m) => (m.type === 'model/patch' ? 'patch' : (m.params as { what: string }).what))).toEqual([
      'attribution',
      'patch',
    ]);
    clean(log);
    await page.close();
  });

  it('gives up on a host that sent progress but no answer, after the same 30.5 minutes', async () => {
    const { page, log } = await openDashboard(browser, { width: 1300 });
    await send(page, load);
    await selectRun(page, dec.run.id);
    await tab(page, 'patching');
    await page.clock.install();
    await fillForm(page);
    await page.click('#ptc-run');
    const patch = log.posted.find((m) => m.type === 'model/patch');
    await send(page, { type: 'model/didProgress', id: patch?.id, done: 1, total: 100 });
    await until(page, `document.querySelector('#ptc-progress .ptc-progress-text')?.textContent === '1 of 100 patches'`);
    await page.clock.runFor(1_830_001);
    await until(page, `!document.querySelector('#ptc-progress')`);
    expect(await page.locator('.panel.patching .ptc-status').textContent()).toBe(
      'Patching failed: No answer from the host for 30.5 min; try again, or check the Attention Lab output channel.',
    );
    clean(log);
    await page.close();
  });

  it('shows "n of N patches" while the sweep runs, and Cancel sends model/cancel for every request in flight', async () => {
    const { page, log } = await openDashboard(browser, { width: 1300 });
    await send(page, load);
    await selectRun(page, dec.run.id);
    await tab(page, 'patching');
    await fillForm(page);
    await page.click('#ptc-run');
    // The quick requests go first (the worker answers in order): the estimate, DLA, the accumulated residual.
    const asks = log.posted.filter((m) => m.type === 'model/patch' || m.type === 'model/attribute');
    expect(asks.map((m) => (m.type === 'model/patch' ? 'patch' : (m.params as { what: string }).what))).toEqual([
      'attribution',
      'dla',
      'resid-accum',
      'patch',
    ]);
    const [estimate, dlaAsk, accumAsk, patch] = asks;
    await until(page, `!!document.querySelector('#ptc-progress')`);
    expect(await page.locator('#ptc-progress .ptc-progress-text').textContent()).toBe('Starting…');
    await send(page, { type: 'model/didProgress', id: patch?.id, done: 128, total: 1234 });
    await until(
      page,
      `document.querySelector('#ptc-progress .ptc-progress-text').textContent === '128 of 1,234 patches'`,
    );
    const bar = page.locator('#ptc-progress [role="progressbar"]');
    expect(await bar.getAttribute('aria-valuenow')).toBe('128');
    expect(await bar.getAttribute('aria-valuemax')).toBe('1234');
    const fill = await page.evaluate(
      `getComputedStyle(document.querySelector('#ptc-progress .ptc-progress-fill')).getPropertyValue('--w')`,
    );
    expect(Number(fill)).toBeCloseTo(128 / 1234, 9);
    await screenshot(page, 'patching-progress');
    // The estimate arrives first: drawn alone, in full patching's rows and columns, while the sweep runs.
    const a = recorded.attribution;
    if (a.what !== 'attribution') throw new Error('fixture is not attribution patching');
    await send(page, { type: 'model/didAttribute', id: estimate?.id, output: a });
    await until(page, `document.querySelectorAll('.panel.patching .ptc-sweep.ptc-early').length === 5`);
    expect(await page.locator('.panel.patching .ptc-map.full').count()).toBe(0);
    const early = '.panel.patching .ptc-early[data-what="heads-pos"]';
    const headsPos = recorded.patch.maps.find((m) => m.what === 'heads-pos');
    expect(await page.locator(`${early} .ptc-rowlabel`).allTextContents()).toEqual(headsPos?.rows);
    expect(await page.locator(`${early} .ptc-col`).allTextContents()).toEqual(headsPos?.cols);
    expect(await cellValues(page, `${early} .ptc-cell`)).toEqual(a.headPos.flat(2));
    expect(await page.locator('#ptc-progress .ptc-progress-text').textContent()).toBe('128 of 1,234 patches');
    await screenshot(page, 'patching-early');
    // An answer that arrives before Cancel (DLA here) is done: Cancel leaves it alone.
    await send(page, { type: 'model/didAttribute', id: dlaAsk?.id, output: recorded.dla });
    await page.click('#ptc-cancel');
    const cancels = log.posted.filter((m) => m.type === 'model/cancel').map((m) => m.id);
    expect(cancels).toEqual([patch?.id, accumAsk?.id]);
    expect(await page.locator('#ptc-cancel').isDisabled()).toBe(true);
    // The host fails each cancelled request with code 'cancelled': the bar goes, the panel says so, no error.
    for (const id of cancels)
      await send(page, {
        type: 'model/didFail',
        id,
        error: { code: 'cancelled', message: 'Patching was cancelled.' },
      });
    await until(page, `!document.querySelector('#ptc-progress')`);
    const status = page.locator('.panel.patching .ptc-status');
    expect(await status.textContent()).toBe('Cancelled; Run starts again.');
    expect(await status.getAttribute('class')).not.toContain('error');
    expect(await page.locator('.panel.patching .ptc-sweep.ptc-early').count()).toBe(5); // the estimate stays
    // A late progress message of a cancelled request changes nothing and is no problem.
    await send(page, { type: 'model/didProgress', id: patch?.id, done: 200, total: 1234 });
    await frames(page);
    expect(await page.locator('#ptc-progress').count()).toBe(0);
    // Run again while that one runs: the new Run cancels what of the last still runs.
    await page.click('#ptc-run');
    const again = log.posted.filter((m) => m.type === 'model/patch')[1];
    await page.click('#ptc-run');
    expect(log.posted.filter((m) => m.type === 'model/cancel').map((m) => m.id)).toContain(again?.id);
    clean(log);
    await page.close();
  });
});

/** Pearson's r, as the page computes it (null: a constant series). */
function pearsonR(x: readonly number[], y: readonly number[]): number | null {
  const n = x.length;
  const mx = x.reduce((s, v) => s + v, 0) / n;
  const my = y.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += ((x[i] ?? 0) - mx) * ((y[i] ?? 0) - my);
    sxx += ((x[i] ?? 0) - mx) ** 2;
    syy += ((y[i] ?? 0) - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

/** The recoveries the cells matching `sel` show (data-n), in order. */
async function cellValues(page: Page, sel: string): Promise<number[]> {
  return (await page.evaluate(
    `[...document.querySelectorAll(${JSON.stringify(sel)})].map((c) => Number(c.dataset.n))`,
  )) as number[];
}

/** `#rrggbb` as red, green, blue. */
function hexToRgb(hex: string): number[] {
  const n = Number.parseInt(hex.slice(1, 7), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** A computed colour (`rgb(r, g, b)`, or `color(srgb r g b)` where color-mix made it) as red, green, blue. */
function rgb(css: string): number[] {
  const nums = (css.match(/[\d.]+/g) ?? []).map(Number);
  return css.startsWith('color(') ? nums.slice(0, 3).map((v) => Math.round(v * 255)) : nums.slice(0, 3);
}
