/**
 * Every tab in the light and dark themes (VS Code's body classes and a few of its theme
 * variables, as a webview gets them), with no request leaving the page and no CSP violation;
 * the screenshots go to test/browser/screenshots/ (gitignored) for people to look at.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clean, dec, load, padded, selectRun, tab } from './data';
import { HAS_CHROMIUM, SKIP_REASON, launchBrowser, openDashboard, screenshot, send } from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAS_CHROMIUM)('screenshots in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`renders every tab in the ${theme} theme without network or CSP violations (screenshots)`, async () => {
      const { page, log } = await openDashboard(browser, { theme });
      await send(page, load);
      for (const t of ['curves', 'attention', 'heads', 'masks', 'model', 'playground', 'patching']) {
        await tab(page, t);
        await screenshot(page, `${theme}-${t}`, t === 'masks');
      }
      await selectRun(page, padded.run.id);
      await tab(page, 'masks');
      await screenshot(page, `${theme}-masks-padded`, true);
      await selectRun(page, dec.run.id);
      await tab(page, 'attention');
      await screenshot(page, `${theme}-attention-decoder-only`);
      const bg = (await page.evaluate('getComputedStyle(document.body).backgroundColor')) as string;
      expect(bg).toBe(theme === 'dark' ? 'rgb(31, 31, 31)' : 'rgb(255, 255, 255)');
      expect(await page.evaluate('window.__csp')).toEqual([]);
      clean(log);
      await page.close();
    });
  }
});
