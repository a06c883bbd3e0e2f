/**
 * The mask view in headless Chromium with a synthetic padded probe batch: dimension labels
 * with their sizes, the broadcast plan to the scores, PAD tokens and padded keys marked, and
 * padded keys masked in the attention view.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clean, legendColor, load, padded, selectRun, tab } from './data';
import { PADDED } from './synthetic';
import {
  HAS_CHROMIUM,
  SKIP_REASON,
  cellPixel,
  colorDistance,
  frames,
  launchBrowser,
  openDashboard,
  pixel,
  send,
} from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAS_CHROMIUM)('mask view in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('marks PAD tokens and padded keys, and labels every mask dimension with its size', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, load);
    await selectRun(page, padded.run.id);
    await tab(page, 'masks');
    const card = '.mask-card[data-mask="source.padding"]';
    expect(await page.locator(`${card} h3 .dim`).allTextContents()).toEqual([
      `B=${PADDED.B}`,
      '1',
      '1',
      `S=${PADDED.S}`,
    ]);
    expect(await page.locator('.mask-card[data-mask="decoder.causal"] h3 .dim').allTextContents()).toEqual([
      '1',
      '1',
      `T=${PADDED.T}`,
      `T=${PADDED.T}`,
    ]);
    expect(await page.locator('.mask-card[data-mask="decoder.self"] h3 .dim').allTextContents()).toEqual([
      `B=${PADDED.B}`,
      '1',
      `T=${PADDED.T}`,
      `T=${PADDED.T}`,
    ]);
    // Broadcast to the cross-attention scores: the mask's size-1 dims repeat over H and T.
    const cross = page.locator(`${card} table.broadcast`).nth(1);
    expect(await cross.locator('td.repeated').allTextContents()).toEqual(['1', '1']);
    expect(await cross.locator('td.plan').allTextContents()).toEqual([
      'matches',
      `repeated ×${PADDED.H}`,
      `repeated ×${PADDED.T}`,
      'matches',
    ]);
    // The tensor: batch item 0's last two source positions are PAD (masked), item 1 has none.
    const tensor = `${card} .mask-view:nth-of-type(1) canvas`;
    const pad = await cellPixel(page, tensor, 0, 5);
    const real = await cellPixel(page, tensor, 0, 0);
    const item1 = await cellPixel(page, tensor, 1, 5);
    expect(colorDistance(pad, real)).toBeGreaterThan(60);
    expect(colorDistance(item1, real)).toBeLessThanOrEqual(2);
    const padLabels = await page.locator(`${card} .mask-view:nth-of-type(1) .hm-cols .hm-label.pad`).allTextContents();
    expect(padLabels).toEqual(['<pad>', '<pad>']);
    // In the attention view, the encoder's PAD keys are masked.
    await tab(page, 'attention');
    await page.click('.segmented button[data-stack="encoder.self"]');
    await frames(page);
    const big = '.panel.attention .attn-large canvas';
    const swatch = await pixel(page, '.panel.attention .legend-masked', 7, 7);
    expect(colorDistance(await cellPixel(page, big, 0, 4), swatch)).toBeLessThanOrEqual(2);
    expect(colorDistance(await cellPixel(page, big, 0, 0), await legendColor(page, 0.25))).toBeLessThanOrEqual(8);
    clean(log);
    await page.close();
  });
});
