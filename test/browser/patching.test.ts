/**
 * The Patching tab in headless Chromium (webview/panels/patching.ts), fed recorded answers:
 * fixtures/patching.json holds `attention-lab patch RUN --clean "a b c a b" --corrupted
 * "a b d a b" --answer c --wrong d --what resid,attn,mlp,heads,heads-pos --json` and
 * `attention-lab attribute … --what attribution` and `--what dla` (`--json`) of a tiny decoder-only run (2 layers,
 * 4 heads; numbers to 4 digits). Run posts model/patch and model/attribute with the form's
 * settings; each sweep is a labelled map with one cell per value coloured by its recovery
 * (blue towards clean, red past corrupted), the estimate beside it, a line on what a cell
 * means; DLA's components are bars; a failure is one line in the panel.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttributionOutputData } from '../../src/protocol/attribution';
import type { PatchOutputData } from '../../src/protocol/patching';
import { clean, dec, load, selectRun, tab } from './data';
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

const recorded = fixture<{ patch: PatchOutputData; attribution: AttributionOutputData; dla: AttributionOutputData }>(
  'patching.json',
);

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
    await page.fill('#ptc-clean', 'a b c a b');
    await page.fill('#ptc-corrupted', 'a b d a b');
    await page.fill('#ptc-answer', 'c');
    await page.fill('#ptc-wrong', 'd');
    await page.check('#ptc-what-heads-pos');
    await page.click('#ptc-run');
    const patch = log.posted.find((m) => m.type === 'model/patch');
    const attribute = log.posted.find((m) => m.type === 'model/attribute');
    expect(patch).toMatchObject({
      runDir: dec.run.runDir,
      request: {
        clean: 'a b c a b',
        corrupted: 'a b d a b',
        answer: 'c',
        wrong: 'd',
        metric: 'logit-diff',
        what: ['resid', 'attn', 'mlp', 'heads', 'heads-pos'],
      },
    });
    expect(attribute).toMatchObject({
      runDir: dec.run.runDir,
      params: { clean: 'a b c a b', corrupted: 'a b d a b', what: 'attribution', metric: { kind: 'logit-diff' } },
    });
    expect(await page.locator(`${panel} .ptc-status`).textContent()).toBe('Patching…');

    await send(page, { type: 'model/didPatch', id: patch?.id, output: recorded.patch });
    await until(page, `document.querySelectorAll('${panel} .ptc-sweep').length === 5`);
    const out = recorded.patch;
    expect(await page.locator(`${panel} .ptc-status`).textContent()).toContain(
      `logit[c] − logit[d]: clean ${out.clean.toFixed(3)}`,
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

    // The estimate arrives: beside each sweep, the same shape, attribution patching's numbers.
    await send(page, { type: 'model/didAttribute', id: attribute?.id, output: recorded.attribution });
    await until(page, `document.querySelectorAll('${panel} .ptc-map.estimate').length === 5`);
    const a = recorded.attribution;
    if (a.what !== 'attribution') throw new Error('fixture is not attribution patching');
    const expected: Record<string, number[]> = {
      resid: a.resid.flat(),
      attn: a.attnOut.flat(),
      mlp: a.mlpOut.flat(),
      heads: a.head.flat(),
      'heads-pos': a.headPos.flat(2),
    };
    for (const m of out.maps) {
      const est = `${panel} .ptc-sweep[data-what="${m.what}"] .ptc-map.estimate`;
      expect(await page.locator(`${est} h4`).textContent()).toBe('Attribution patching (estimate)');
      expect(await page.locator(`${est} .ptc-rowlabel`).allTextContents()).toEqual(m.rows);
      expect(await cellValues(page, `${est} .ptc-cell`)).toEqual(expected[m.what]);
    }
    // DLA: the third request, one bar per component at the last position.
    const dlaAsk = log.posted.filter((m) => m.type === 'model/attribute')[1];
    expect(dlaAsk).toMatchObject({ params: { what: 'dla', metric: { kind: 'logit-diff', answer: 'c', wrong: 'd' } } });
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
    expect(await page.locator(`${panel} .ptc-bar.neg`).count()).toBe(vs.filter((v) => v < 0).length);
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
});

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
