/**
 * The playground's steering section on an encoder-decoder run in headless Chromium
 * (webview/panels/playgroundSteer.ts): it is offered (not refused), names its fields as sources,
 * posts model/steer with the two sources and the playground's source as the decode's input, and
 * shows the steered translation beside the unsteered one.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clean, enc, load, selectRun, tab } from './data';
import { HAS_CHROMIUM, SKIP_REASON, frames, launchBrowser, openDashboard, send, until } from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const decoded = (text: string) => ({
  text,
  promptTokens: ['a', 'b', 'c'],
  tokens: [...text],
  ids: [...text].map((_, i) => 4 + i),
  logprobs: [...text].map(() => -0.5),
  score: -1,
  attention: null,
  beams: [],
  stopReason: 'maxTokens' as const,
});

describe.skipIf(!HAS_CHROMIUM)('steering an encoder-decoder in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('posts two sources and the source above, and shows both translations', async () => {
    const { page, log } = await openDashboard(browser, { width: 1300 });
    await send(page, load);
    await selectRun(page, enc.run.id);
    await tab(page, 'playground');
    await page.fill('#pg-input', 'abc');
    await frames(page);
    expect(await page.locator('label[for="steer-plus"]').textContent()).toBe('plus source');
    expect(await page.locator('.pg-steer h3 .hint').textContent()).toMatch(/decoder’s mean stream/);
    await page.fill('#steer-plus', 'aaaa');
    await page.fill('#steer-minus', 'bbbb');
    await page.click('#steer-run');
    const ask = log.posted.find((m) => m.type === 'model/steer') as
      { id: number; request: { vector: { plus: string; minus: string }; decode: { input: string } } } | undefined;
    expect(ask?.request.vector).toMatchObject({ plus: 'aaaa', minus: 'bbbb' });
    expect(ask?.request.decode.input).toBe('abc');
    const output = { layer: 1, alpha: 4, norm: 2, streamNorm: 5, steered: decoded('aaa'), unsteered: decoded('cba') };
    await send(page, { type: 'model/didSteer', id: ask?.id, output });
    await until(page, `document.querySelectorAll('.pg-steer .steer-col').length === 2`);
    expect(await page.locator('.pg-steer .steer-col.steered .pg-text-box').textContent()).toBe('abcaaa');
    expect(await page.locator('.pg-steer .steer-col.unsteered .pg-text-box').textContent()).toBe('abccba');
    clean(log);
    await page.close();
  });
});
