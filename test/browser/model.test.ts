/**
 * The model tab draws the typed config fields (src/protocol/model.ts `modelConfig`): the
 * sizes and options of a recorded run, d_k = d_model / h, and "?" for a field a config does
 * not carry (only `kind` is required).
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunState } from '../../src/protocol/webview';
import { clean, dec, enc, tab } from './data';
import { HAS_CHROMIUM, SKIP_REASON, launchBrowser, openDashboard, send } from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

async function modelText(page: Page, run: RunState): Promise<string> {
  await send(page, { type: 'dashboard/didLoadRuns', runs: [run], selectedId: run.run.id });
  await tab(page, 'model');
  return (await page.locator('.panel.model .arch').innerText()).replace(/\s+/g, ' ');
}

describe.skipIf(!HAS_CHROMIUM)('model tab in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('draws an encoder-decoder and a decoder-only run from their config fields', async () => {
    const { page, log } = await openDashboard(browser);
    const e = await modelText(page, enc);
    expect(e).toContain(
      'encoder-decoder · post-LN (Add & Norm) · dropout 0.1 · label smoothing 0.1 · LayerNorm ε 0.00001',
    );
    expect(e).toContain('Encoder × 2');
    expect(e).toContain('4 heads × d_k = 8');
    expect(e).toContain('270 × 32, scaled by √d_model');
    expect(e).toContain('32 → 64 → 32');
    const d = await modelText(page, dec);
    expect(d).toContain('decoder-only · pre-LN');
    expect(d).not.toContain('Encoder');
    expect(d).toContain('Causal self-attention');
    expect(d).toContain('4 heads × d_k = 16');
    expect(d).toContain('learned positions (max 64)');
    expect(d).toContain('linear 64 → 323 (tied to the embedding)');
    clean(log);
    await page.close();
  });

  it('shows "?" for the fields a config leaves out', async () => {
    const { page, log } = await openDashboard(browser);
    const bare: RunState = {
      ...dec,
      run: { ...dec.run, id: 'bare', model: dec.run.model && { ...dec.run.model, config: { kind: 'decoder-only' } } },
    };
    const text = await modelText(page, bare);
    expect(text).toContain('? heads × d_k = ?');
    expect(text).toContain('decoder-only · norm ? · dropout ? · label smoothing ? · LayerNorm ε ?');
    expect(text).toContain('Decoder × ?');
    clean(log);
    await page.close();
  });
});
