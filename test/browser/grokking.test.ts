/**
 * The Grokking view of the Curves tab in headless Chromium (webview/panels/grokking.ts), on a
 * real run of `attention-lab train --task modular-addition` (seed 1, its first 1000 steps, every
 * 5th step and every validation of its metrics.jsonl, numbers to 4 digits: fixtures/grokking.json): both
 * charts draw every validation on log axes, the spectrum has a bar per frequency with the key
 * ones in the second series colour, the key-frequency map fills a cell per key frequency per
 * validation, a live validation adds a point, and a run without the measures hides the view.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunState } from '../../src/protocol/webview';
import { attr, clean, enc } from './data';
import {
  HAS_CHROMIUM,
  SKIP_REASON,
  colorDistance,
  fixture,
  frames,
  launchBrowser,
  openDashboard,
  pixel,
  screenshot,
  send,
  until,
} from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const grok = fixture<RunState>('grokking.json');

describe.skipIf(!HAS_CHROMIUM)('the Grokking view in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('draws accuracy, loss, the spectrum and the key frequencies of a grokking run, and follows a live one', async () => {
    const { page, log } = await openDashboard(browser);
    await page.setViewportSize({ width: 1100, height: 1400 });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [grok, enc], selectedId: grok.run.id });
    await frames(page);
    const view = '.panel.curves .grokking';
    await until(page, `!document.querySelector('${view}').hidden`);
    expect(await page.locator(view).isVisible()).toBe(true);
    const n = grok.evals.length;
    expect(Number(await attr(page, view, 'data-points'))).toBe(n);
    const last = grok.evals[n - 1]?.grokking;
    if (!last) throw new Error('fixture without measures');
    // The spectrum: one bar per frequency; the key ones as the run logged them.
    const spectrum = `${view} canvas.grokking-spectrum`;
    expect(Number(await attr(page, spectrum, 'data-bars'))).toBe(56);
    expect(await attr(page, spectrum, 'data-keys')).toBe(last.keyFreqs.join(','));
    expect(await page.locator(`${view} .grokking-caption`).first().textContent()).toContain(
      `k = ${[...last.keyFreqs].sort((a, b) => a - b).join(', ')}`,
    );
    // The tallest key bar is drawn in the second series colour, near its top.
    const k = last.keyFreqs[0] as number;
    const w = Number(await attr(page, spectrum, 'width'));
    const dpr = await page.evaluate('window.devicePixelRatio');
    const bw = (w / (dpr as number) - 36 - 8) / 56;
    const barPixel = await pixel(page, spectrum, (36 + (k - 0.5) * bw) * (dpr as number), 150 * (dpr as number));
    const second = (await page.evaluate(
      `getComputedStyle(document.querySelector('${view} .grokking-acc .u-series:nth-child(3) .u-marker')).borderColor`,
    )) as string;
    const rgb = second.match(/\d+/g)?.slice(0, 3).map(Number) ?? [];
    expect(colorDistance(barPixel, rgb)).toBeLessThan(40);
    // The key-frequency map: one filled cell per key frequency per validation.
    const cells = grok.evals.reduce((s, e) => s + (e.grokking?.keyFreqs.length ?? 0), 0);
    expect(Number(await attr(page, `${view} canvas.grokking-keys`, 'data-cells'))).toBe(cells);
    expect(await page.locator(`${view} .grokking-summary`).textContent()).toContain('test 100%');
    // Both charts on a log step axis: the middle of the plot is near √(20 · 1000) ≈ 141, not 510.
    for (const chart of ['grokking-acc', 'grokking-loss']) {
      const over = page.locator(`${view} .${chart} .u-over`);
      const box = await over.boundingBox();
      if (!box) throw new Error('no plot area');
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await frames(page);
      const x = await page.locator(`${view} .${chart} .u-legend .u-series`).first().locator('.u-value').textContent();
      expect(Number(x?.replace(/,/g, ''))).toBeLessThan(300);
    }
    await screenshot(page, 'grokking', true);
    // A live validation adds its point.
    const next = { ...(grok.evals[n - 1] as RunState['evals'][number]), step: 1020 };
    const step = { ...(grok.steps[grok.steps.length - 1] as RunState['steps'][number]) };
    for (const s of [1005, 1010, 1015, 1020])
      await send(page, {
        type: 'run/didUpdate',
        runDir: grok.run.runDir,
        event: { type: 'train/didStep', ...step, step: s },
      });
    await send(page, { type: 'run/didUpdate', runDir: grok.run.runDir, event: { type: 'train/didEval', ...next } });
    await until(page, `document.querySelector('${view}').dataset.points === '${n + 1}'`);
    // Another run (no measures): the view is hidden.
    await page.selectOption('#run-picker', enc.run.id);
    await frames(page);
    expect(await page.locator(view).isVisible()).toBe(false);
    clean(log);
    await page.close();
  });
});
