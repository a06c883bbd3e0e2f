/**
 * The attention view in headless Chromium with recorded fixtures: heatmap cells at masked
 * positions have the legend's masked colour and attended ones the ramp colour of their value,
 * tokens label both axes, per-head entropy and the timeline over snapshots, keyboard
 * navigation, and UI state that survives a restore through vscode.setState.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttentionSnapshot } from '../../src/protocol/model';
import { showToken } from '../../webview/base/format';
import type { RunState } from '../../src/protocol/webview';
import { attr, clean, dec, enc, legendColor, load, tab } from './data';
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
  until,
} from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAS_CHROMIUM)('attention view in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("colours masked cells with the legend's masked colour and attended ones by the ramp", async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, load);
    await tab(page, 'attention');
    await page.click('.segmented button[data-stack="decoder.self"]');
    await frames(page);
    const snap = enc.snapshots[enc.snapshots.length - 1] as AttentionSnapshot;
    const m = snap.maps.find((x) => x.stack === 'decoder.self' && x.layer === 0);
    if (!m) throw new Error('fixture has no decoder self-attention');
    const [H, R, C] = m.shape;
    // The grid shows every head of every layer.
    const layers = snap.maps.filter((x) => x.stack === 'decoder.self').length;
    expect(await page.locator('.attn-grid .attn-cell').count()).toBe(layers * H);
    const big = '.panel.attention .attn-large canvas';
    expect(Number(await attr(page, big, 'data-rows'))).toBe(R);
    expect(Number(await attr(page, big, 'data-cols'))).toBe(C);
    const masked = await cellPixel(page, big, 0, 1); // causal: query 0 may not see key 1
    const swatch = await pixel(page, '.panel.attention .legend-masked', 7, 7);
    expect(colorDistance(masked, swatch)).toBeLessThanOrEqual(2);
    // Row 2, the key it attends to most (head 1).
    const row = Array.from(m.data.subarray(2 * C, 2 * C + 3));
    const s = row.indexOf(Math.max(...row));
    const attended = await cellPixel(page, big, 2, s);
    expect(colorDistance(attended, await legendColor(page, row[s] as number))).toBeLessThanOrEqual(8);
    expect(colorDistance(attended, masked)).toBeGreaterThan(60);
    // Tokens on both axes.
    const colLabels = await page.locator('.panel.attention .attn-large .hm-cols .hm-label').allTextContents();
    expect(colLabels.slice(0, C)).toEqual(snap.tgtTokens.slice(0, C).map(showToken));
    clean(log);
    await page.close();
  });

  it("says when a selection was cut to the model's context (Show Attention), and shows no <0x for ASCII", async () => {
    const snap = dec.snapshots[dec.snapshots.length - 1] as AttentionSnapshot;
    const note = "Showing the first 63 of 97 text tokens — the model's context is 64.";
    const cut: RunState = { ...dec, snapshots: [{ ...snap, truncation: note }] };
    const { page, log } = await openDashboard(browser);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [enc, cut], selectedId: dec.run.id });
    await tab(page, 'attention');
    await frames(page);
    expect(await page.locator('.attn-truncation').textContent()).toBe(note);
    expect(await page.locator('.attn-truncation').isVisible()).toBe(true);
    for (const t of await page.locator('.panel.attention .attn-large .hm-label').allTextContents())
      expect(t).not.toContain('<0x');
    await page.selectOption('#run-picker', enc.run.id);
    await frames(page);
    expect(await page.locator('.attn-truncation').isVisible()).toBe(false);
    clean(log);
    await page.close();
  });

  it('shows per-head entropy and scrubs the timeline through the snapshots', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, load);
    await tab(page, 'attention');
    await page.click('.segmented button[data-stack="encoder.self"]');
    await frames(page);
    const snaps = enc.snapshots;
    const latest = snaps[snaps.length - 1] as AttentionSnapshot;
    const m = latest.maps.find((x) => x.stack === 'encoder.self' && x.layer === 0);
    if (!m) throw new Error('fixture has no encoder map');
    const [, R, C] = m.shape;
    let ent = 0;
    for (let t = 0; t < R; t++)
      for (let s = 0; s < C; s++) {
        const p = m.data[t * C + s] as number;
        if (p > 0) ent -= (p * Math.log(p)) / R;
      }
    expect(await page.locator('.attn-cell[data-layer="0"][data-head="0"] .attn-cell-caption').textContent()).toBe(
      `${ent.toFixed(2)} nats`,
    );
    expect(await attr(page, '#attn-timeline', 'max')).toBe(String(snaps.length - 1));
    expect(await page.locator('.timeline-label').textContent()).toContain(`step ${latest.step}`);
    const big = '.panel.attention .attn-large canvas';
    const before = await cellPixel(page, big, 0, 0);
    await page.locator('#attn-timeline').fill('0');
    await frames(page);
    expect(await page.locator('.timeline-label').textContent()).toContain(`step ${snaps[0]?.step}`);
    const first = (snaps[0] as AttentionSnapshot).maps.find((x) => x.stack === 'encoder.self' && x.layer === 0);
    const p0 = first?.data[0] as number;
    const after = await cellPixel(page, big, 0, 0);
    expect(colorDistance(after, await legendColor(page, p0))).toBeLessThanOrEqual(8);
    if (Math.abs(p0 - (m.data[0] as number)) > 0.1) expect(colorDistance(before, after)).toBeGreaterThan(10);
    clean(log);
    await page.close();
  });

  it('follows a live snapshot when the timeline is at the end', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, load);
    await tab(page, 'attention');
    const last = enc.snapshots[enc.snapshots.length - 1] as AttentionSnapshot;
    // The same maps, every probability moved to key 0: the large view's cell (1, 0) turns to p = 1.
    const maps = last.maps.map((m) => {
      const [H, R, C] = m.shape;
      const data = new Float32Array(H * R * C);
      for (let r = 0; r < H * R; r++) data[r * C] = 1;
      return { ...m, data };
    });
    await send(page, {
      type: 'run/didUpdate',
      runDir: enc.run.runDir,
      event: { type: 'train/didSnapshot', ...last, step: last.step + 10, maps },
    });
    expect(await attr(page, '#attn-timeline', 'max')).toBe(String(enc.snapshots.length));
    expect(await page.locator('.timeline-label').textContent()).toContain(`step ${last.step + 10}`);
    const big = '.panel.attention .attn-large canvas';
    expect(colorDistance(await cellPixel(page, big, 1, 0), await legendColor(page, 1))).toBeLessThanOrEqual(8);
    clean(log);
    await page.close();
  });

  it('navigates by keyboard and restores its UI state through vscode.setState', async () => {
    const first = await openDashboard(browser);
    await send(first.page, load);
    await first.page.focus('#tab-curves');
    await first.page.keyboard.press('ArrowRight');
    await frames(first.page);
    expect(await attr(first.page, '#tab-attention', 'aria-selected')).toBe('true');
    await first.page.click('.segmented button[data-stack="decoder.self"]');
    await first.page.focus('.attn-cell[data-layer="0"][data-head="0"]');
    await first.page.keyboard.press('ArrowDown');
    await first.page.keyboard.press('ArrowRight');
    await frames(first.page);
    expect(
      await attr(first.page, '[role="gridcell"]:has(> .attn-cell[data-layer="1"][data-head="1"])', 'aria-selected'),
    ).toBe('true');
    expect(await first.page.locator('[role="gridcell"][aria-selected="true"]').count()).toBe(1);
    expect(await first.page.locator('.attn-caption').textContent()).toContain('layer 2 · head 2');
    await first.page.focus('.panel.attention .attn-large canvas');
    await first.page.keyboard.press('ArrowRight');
    expect(await first.page.locator('.panel.attention .attn-large .hm-readout').textContent()).toMatch(
      /^query 0 .* key 1 /,
    );
    await until(first.page, 'window.__savedState && window.__savedState.attention.head === 1');
    const saved = (await first.page.evaluate('window.__savedState')) as {
      tab: string;
      attention: { layer: number; head: number; stack: string };
    };
    expect(saved.tab).toBe('attention');
    expect(saved.attention).toMatchObject({ layer: 1, head: 1, stack: 'decoder.self' });
    clean(first.log);
    await first.page.close();
    // A restored webview gets the state back and shows the same view.
    const second = await openDashboard(browser, { state: saved });
    await send(second.page, { ...load, selectedId: null });
    expect(await attr(second.page, '#tab-attention', 'aria-selected')).toBe('true');
    expect(await second.page.locator('.attn-caption').textContent()).toContain('layer 2 · head 2');
    clean(second.log);
    await second.page.close();
  });
});
