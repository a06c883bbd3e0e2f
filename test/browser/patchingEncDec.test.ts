/**
 * The Patching tab on an encoder-decoder run in headless Chromium (webview/panels/patching.ts), fed
 * recorded answers: fixtures/patching-encdec.json holds `attention-lab patch MT --clean abcd
 * --corrupted abxd --target d --answer c --wrong x --what resid,attn,mlp,heads,heads-pos --json`,
 * and `attention-lab attribute …` with `--what attribution` and `--what dla` (`--json`), of a tiny
 * `reverse` run (1 encoder layer, 2 decoder layers, 2 heads; numbers to 4 digits). The form asks
 * for two sources and a target prefix and posts them; each stack's map is its own figure, named,
 * with its estimate beside it row by row (the decoder's cross-attention rows after each layer's
 * self-attention rows); DLA names the cross-attention heads.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttributionOutputData } from '../../src/protocol/attribution';
import type { PatchOutputData } from '../../src/protocol/patching';
import { clean, enc, load, selectRun, tab } from './data';
import type { Browser } from 'playwright-core';
import { HAS_CHROMIUM, SKIP_REASON, fixture, launchBrowser, openDashboard, screenshot, send, until } from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const recorded = fixture<{ patch: PatchOutputData; attribution: AttributionOutputData; dla: AttributionOutputData }>(
  'patching-encdec.json',
);

describe.skipIf(!HAS_CHROMIUM)('the Patching tab on an encoder-decoder in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('posts two sources and a target prefix, and draws each stack with its estimate', async () => {
    const { page, log } = await openDashboard(browser, { width: 1300 });
    // DLA reads a pre-norm model (the tab asks for it only there): the listed run as one, as the recorded DLA's was.
    const model = enc.run.model as NonNullable<typeof enc.run.model>;
    const preNorm = { ...enc, run: { ...enc.run, model: { ...model, config: { ...model.config, norm: 'pre' } } } };
    await send(page, { ...load, runs: load.runs.map((r) => (r === enc ? preNorm : r)) });
    await selectRun(page, enc.run.id);
    await tab(page, 'patching');
    const panel = '.panel.patching';
    expect(await page.locator(`${panel} label[for="ptc-clean"]`).textContent()).toBe('clean source');
    await page.fill('#ptc-clean', 'abcd');
    await page.fill('#ptc-corrupted', 'abxd');
    await page.fill('#ptc-target', 'd');
    await page.fill('#ptc-answer', 'c');
    await page.fill('#ptc-wrong', 'x');
    await page.check('#ptc-what-heads-pos');
    await page.click('#ptc-run');
    const patch = log.posted.find((m) => m.type === 'model/patch');
    const asks = log.posted.filter((m) => m.type === 'model/attribute');
    expect(patch).toMatchObject({
      request: { clean: 'abcd', corrupted: 'abxd', target: 'd', what: ['resid', 'attn', 'mlp', 'heads', 'heads-pos'] },
    });
    expect(asks.map((m) => (m as unknown as { params: { target?: string; what: string } }).params)).toMatchObject([
      { target: 'd', what: 'attribution' },
      { target: 'd', what: 'dla' },
      { target: 'd', what: 'resid-accum' },
    ]);
    // Path patching's receivers name their attention, as the CLI's --receivers: cross:L2H1.
    expect(await page.locator('#ptc-receivers').getAttribute('placeholder')).toBe('cross:L2H1 self:L2H2');

    const out = recorded.patch;
    await send(page, { type: 'model/didPatch', id: patch?.id, output: out });
    await until(page, `document.querySelectorAll('${panel} .ptc-sweep').length === ${out.maps.length}`);
    const figure = (m: PatchOutputData['maps'][number]): string =>
      `${panel} .ptc-sweep[data-what="${m.what}"]${m.stack ? `[data-stack="${m.stack}"]` : ':not([data-stack])'}`;
    for (const m of out.maps) {
      expect(await page.locator(`${figure(m)} .ptc-map.full .ptc-rowlabel`).allTextContents()).toEqual(m.rows);
      expect(await page.locator(`${figure(m)} .ptc-map.full .ptc-col`).allTextContents()).toEqual(m.cols);
      if (m.stack) expect(await page.locator(`${figure(m)} h3`).textContent()).toContain(`— ${m.stack}`);
    }
    const attnDec = out.maps.find((m) => m.what === 'attn' && m.stack === 'decoder');
    expect(attnDec?.rows).toEqual(['dec L1 self', 'dec L1 cross', 'dec L2 self', 'dec L2 cross']);

    const a = recorded.attribution;
    if (a.what !== 'attribution' || !a.cross || !a.encoder) throw new Error('fixture is not an encoder-decoder');
    await send(page, { type: 'model/didAttribute', id: asks[0]?.id, output: a });
    await until(page, `document.querySelectorAll('${panel} .ptc-map.estimate').length === ${out.maps.length}`);
    const estimate = async (m: PatchOutputData['maps'][number]): Promise<number[]> =>
      (await page.evaluate(
        `[...document.querySelectorAll(${JSON.stringify(`${figure(m)} .ptc-map.estimate .ptc-cell`)})].map((c) => Number(c.dataset.n))`,
      )) as number[];
    const L = a.attnOut.length;
    const selfCross = Array.from({ length: L }, (_, l) => [...(a.attnOut[l] ?? []), ...(a.cross?.out[l] ?? [])]);
    expect(await estimate(attnDec as PatchOutputData['maps'][number])).toEqual(selfCross.flat());
    const residEnc = out.maps.find((m) => m.what === 'resid' && m.stack === 'encoder');
    expect(await estimate(residEnc as PatchOutputData['maps'][number])).toEqual(a.encoder.resid.flat());
    // A clicked cell's detail opens under its own stack's map: the two attn maps share a sweep.
    await page.click(`${figure(attnDec as PatchOutputData['maps'][number])} .ptc-map.full .ptc-cell[data-i="1"]`);
    await until(page, `!!document.querySelector('#ptc-cell')`);
    expect(await page.locator(`${panel} .ptc-sweep[data-what="attn"][data-stack="decoder"] #ptc-cell`).count()).toBe(1);
    expect(await page.locator('#ptc-cell strong').textContent()).toBe(`dec L1 self, ${attnDec?.cols[1]}`);

    const d = recorded.dla;
    if (d.what !== 'dla') throw new Error('fixture is not DLA');
    await send(page, { type: 'model/didAttribute', id: asks[1]?.id, output: d });
    await until(page, `document.querySelectorAll('${panel} .ptc-bar-row').length === ${d.components.length}`);
    const labels = await page.locator(`${panel} .ptc-bar-label`).allTextContents();
    expect(labels).toContain('L1 cross H2');
    expect(labels).toContain('L2 cross bias');
    await screenshot(page, 'patching-encdec', true);
    clean(log);
    await page.close();
  });
});
