/**
 * The dashboard from 500 px up, in Chromium: no tab scrolls the page sideways (the tabs,
 * toolbars and grids wrap, wide content scrolls inside its own box), with real runs of both
 * model kinds and the Heads tab's grid of a 12 × 12 model.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clean, load, tab } from './data';
import { HAS_CHROMIUM, SKIP_REASON, frames, launchBrowser, openDashboard, screenshot, send } from './harness';
import { scoredRun } from './synthetic';

const TABS = ['curves', 'attention', 'heads', 'masks', 'model', 'playground', 'patching'] as const;
const overflow = 'document.documentElement.scrollWidth - document.documentElement.clientWidth';

describe.skipIf(!HAS_CHROMIUM)('the dashboard at 500 px', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const width of [500, 800]) {
    it(`no tab scrolls the page sideways at ${width} px`, async () => {
      const { page, log } = await openDashboard(browser, { width });
      const big = scoredRun('gpt2-sized', 12, 12, 200);
      await send(page, { ...load, runs: [...load.runs, big] });
      for (const run of [load.selectedId, 'gpt2-sized']) {
        await page.selectOption('#run-picker', run);
        for (const t of TABS) {
          await tab(page, t);
          await frames(page);
          const wide = await page.evaluate(
            `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).slice(0, 6).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`,
          );
          expect(await page.evaluate(overflow), `${run} · ${t} tab: ${JSON.stringify(wide)}`).toBeLessThanOrEqual(0);
          // Grids wrap rather than cut their cells off: no grid scrolls sideways either.
          const cut = await page.evaluate(
            `[...document.querySelectorAll('#panel-${t} .heads-grid, #panel-${t} .attn-grid')].filter((g) => g.scrollWidth > g.clientWidth + 1).length`,
          );
          expect(cut, `${run} · ${t} tab: a grid cut off`).toBe(0);
          if (width === 500) await screenshot(page, `narrow-${run === 'gpt2-sized' ? 'big' : 'enc'}-${t}`, true);
        }
      }
      clean(log);
      await page.close();
    });
  }
});

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);
