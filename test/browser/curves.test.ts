/**
 * Training curves and message handling in headless Chromium, hosted as a VS Code webview
 * (test/browser/harness.ts): every logged step is drawn and the last point's value is on the
 * chart, live steps are appended, out-of-order and malformed messages show a visible error
 * banner (and webview/didError) while the page keeps drawing; a run extended with more
 * steps has a labelled marker where its new schedule segment begins.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunState } from '../../src/protocol/webview';
import { attr, clean, dec, enc, load } from './data';
import { paddedRun } from './synthetic';
import { HAS_CHROMIUM, SKIP_REASON, launchBrowser, openDashboard, screenshot, send, until, frames } from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAS_CHROMIUM)('training curves and messages in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('draws every logged step, follows live steps, and bans out-of-order ones', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, load);
    const chart = '.panel.curves .chart-main';
    expect(Number(await attr(page, chart, 'data-points'))).toBe(enc.steps.length);
    const evalsOnSteps = enc.evals.filter((e) => enc.steps.some((s) => s.step >= e.step)).length;
    expect(Number(await attr(page, chart, 'data-val-points'))).toBe(evalsOnSteps);
    // Hover the right edge: the legend shows the last step's raw loss.
    const over = page.locator(`${chart} .u-over`);
    const box = await over.boundingBox();
    if (!box) throw new Error('no plot area');
    await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
    await frames(page);
    const last = enc.steps[enc.steps.length - 1] as RunState['steps'][number];
    const legend = await page.locator(`${chart} .u-legend .u-series`).nth(1).locator('.u-value').textContent();
    expect(Number(legend)).toBeCloseTo(last.loss, 3);
    // A live step is appended…
    const next = {
      step: last.step + 1,
      loss: 0.5,
      lr: last.lr,
      gradNorm: 1,
      tokens: 100,
      tokensPerSec: 1000,
      elapsedMs: last.elapsedMs + 100,
    };
    await send(page, { type: 'run/didUpdate', runDir: enc.run.runDir, event: { type: 'train/didStep', ...next } });
    await until(page, `document.querySelector(${JSON.stringify(chart)}).dataset.points === '${enc.steps.length + 1}'`);
    // …an out-of-order one is refused with a visible error, and the chart keeps its points.
    await send(page, {
      type: 'run/didUpdate',
      runDir: enc.run.runDir,
      event: { type: 'train/didStep', ...next, step: 5 },
    });
    await expect.poll(() => page.locator('.banner').isVisible()).toBe(true);
    expect(await page.locator('.banner').textContent()).toContain('Out-of-order train/didStep: step 5');
    expect(Number(await attr(page, chart, 'data-points'))).toBe(enc.steps.length + 1);
    // Switching the x-axis to tokens keeps every point.
    await page.selectOption('#curves-x', 'tokens');
    await frames(page);
    expect(Number(await attr(page, chart, 'data-points'))).toBe(enc.steps.length + 1);
    expect(await page.locator(`${chart} .u-legend .u-series`).first().locator('.u-label').textContent()).toBe(
      'tokens seen',
    );
    // Overlaying a second run adds its series to the legend.
    await page.check('#curves-compare-0');
    await frames(page);
    expect(await page.locator(`${chart} .u-legend`).textContent()).toContain(`${dec.run.name} train (smoothed)`);
    expect(log.posted.filter((m) => m.type === 'webview/didError')).toHaveLength(1);
    clean(log);
    await page.close();
  });

  it('adds a run that starts training and sends its Pause / Stop to the host', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, load);
    const model = enc.run.model;
    const data = { description: 'task reverse', documents: 1, bytes: 0, trainTokens: 100, valTokens: 10, skipped: [] };
    await send(page, {
      type: 'run/didUpdate',
      runDir: '/runs/live',
      event: {
        type: 'train/didStart',
        runDir: '/runs/live',
        startStep: 0,
        totalSteps: 50,
        segments: [{ fromStep: 0, toStep: 50, schedule: 'cosine' }],
        model,
        data,
      },
    });
    await page.selectOption('#run-picker', '/runs/live');
    await frames(page);
    expect(await page.locator('.run-status').textContent()).toContain('training · step 0 of 50');
    await send(page, {
      type: 'run/didUpdate',
      runDir: '/runs/live',
      event: {
        type: 'train/didStep',
        step: 1,
        loss: 3,
        lr: 1e-3,
        gradNorm: 1,
        tokens: 10,
        tokensPerSec: 100,
        elapsedMs: 5,
      },
    });
    await until(page, `document.querySelector('.panel.curves .chart-main').dataset.points === '1'`);
    await page.click('.run-controls button:has-text("Pause")');
    await until(page, `window.__posted.some((m) => m.type === 'train/control')`);
    expect(log.posted.filter((m) => m.type === 'train/control')).toEqual([
      { type: 'train/control', runDir: '/runs/live', action: 'pause' },
    ]);
    await send(page, { type: 'run/didUpdate', runDir: '/runs/live', event: { type: 'train/didPause', step: 1 } });
    expect(await page.locator('.run-controls button').allTextContents()).toEqual(['Resume', 'Stop']);
    await send(page, {
      type: 'run/didUpdate',
      runDir: '/runs/live',
      event: {
        type: 'train/didFail',
        step: 1,
        error: { code: 'train/nonFinite', message: 'The loss became NaN at step 2.' },
      },
    });
    expect(await page.locator('.run-status').textContent()).toContain('failed: The loss became NaN at step 2.');
    expect(await page.locator('.run-controls button').count()).toBe(0);
    clean(log);
    await page.close();
  });

  it("shows a selection's attention in its own run, whose header keeps the run's state and planned steps", async () => {
    const { page, log } = await openDashboard(browser);
    const base = paddedRun('stopped-run', 6);
    const snap = base.snapshots[0];
    if (!snap) throw new Error('the synthetic run has no snapshot');
    const run: RunState = {
      ...base,
      evals: [],
      run: { ...base.run, status: 'stopped', step: 55, totalSteps: 3000, bestValLoss: null, data: null },
    };
    await send(page, { type: 'dashboard/didLoadRuns', runs: [run], selectedId: 'stopped-run' });
    await send(page, {
      type: 'dashboard/didAttend',
      runDir: '/runs/stopped-run',
      snapshot: { ...snap, step: 55, source: 'selection', text: 'the cat' },
    });
    await frames(page);
    expect(await page.locator('.run-status').textContent()).toContain('stopped · step 55 of 3000');
    // A stopped run goes on from its checkpoint: Resume, which the host runs as its Resume command.
    expect(await page.locator('.run-controls button').allTextContents()).toEqual(['Resume']);
    await page.click('.run-controls button:has-text("Resume")');
    await until(page, `window.__posted.some((m) => m.type === 'train/control')`);
    expect(log.posted.filter((m) => m.type === 'train/control')).toEqual([
      { type: 'train/control', runDir: '/runs/stopped-run', action: 'resume' },
    ]);
    expect(await page.locator('#run-picker option').count()).toBe(1); // no extra entry beside the run
    clean(log);
    await page.close();
  });

  it('marks where an extended run begins a new schedule segment, on the loss and learning-rate charts', async () => {
    const { page, log } = await openDashboard(browser);
    const base = paddedRun('extended', 20); // steps 1…20, 50 tokens each
    const run = {
      ...base,
      run: {
        ...base.run,
        segments: [
          { fromStep: 0, toStep: 12, schedule: 'cosine' },
          { fromStep: 12, toStep: 20, schedule: 'restart' },
        ],
      },
    };
    await send(page, { type: 'dashboard/didLoadRuns', runs: [run], selectedId: 'extended' });
    await frames(page);
    const marker = '.panel.curves .chart-main .segment-marker';
    expect(await page.locator(marker).count()).toBe(1);
    expect(await attr(page, marker, 'data-step')).toBe('12');
    expect(await page.locator(`${marker} .segment-label`).textContent()).toBe('segment 2: +8 steps, warm restart');
    // At x = step 12 on an axis from step 1 to step 20.
    const at = async (chart: string): Promise<number> => {
      const over = await page.locator(`${chart} .u-over`).boundingBox();
      const m = await page.locator(`${chart} .segment-marker`).boundingBox();
      if (!over || !m) throw new Error(`no plot or marker in ${chart}`);
      return (m.x - over.x) / over.width;
    };
    expect(await at('.panel.curves .chart-main')).toBeCloseTo((12 - 1) / (20 - 1), 2);
    // The learning-rate chart marks it too, without the label.
    const lr = '.panel.curves .chart-small[aria-label="Learning rate"]';
    expect(await page.locator(`${lr} .segment-marker`).count()).toBe(1);
    expect(await page.locator(`${lr} .segment-label`).count()).toBe(0);
    expect(await at(lr)).toBeCloseTo((12 - 1) / (20 - 1), 2);
    await screenshot(page, 'curves-segments-light');
    // Against tokens seen, it moves to the tokens seen by step 12.
    await page.selectOption('#curves-x', 'tokens');
    await frames(page);
    expect(await at('.panel.curves .chart-main')).toBeCloseTo((600 - 50) / (1000 - 50), 2);
    // A run never extended has no marker.
    await send(page, { type: 'dashboard/didLoadRuns', runs: [base], selectedId: 'extended' });
    await frames(page);
    expect(await page.locator(marker).count()).toBe(0);
    expect(log.posted.filter((m) => m.type === 'webview/didError')).toHaveLength(0);
    clean(log);
    await page.close();
  });

  it('tells the host the run picked in the header, follows the active run set elsewhere, and tables what differs between compared runs', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, load);
    await page.selectOption('#run-picker', dec.run.id);
    await until(page, `window.__posted.some((m) => m.type === 'dashboard/didSelectRun')`);
    expect(log.posted.filter((m) => m.type === 'dashboard/didSelectRun')).toEqual([
      { type: 'dashboard/didSelectRun', runDir: dec.run.runDir },
    ]);
    // The active run set elsewhere (the Runs view, the status bar) moves the picker.
    await send(page, { type: 'dashboard/didSetActiveRun', runDir: enc.run.runDir });
    await until(page, `document.querySelector('#run-picker').value === ${JSON.stringify(enc.run.id)}`);
    // An unknown run is ignored without a banner.
    await send(page, { type: 'dashboard/didSetActiveRun', runDir: '/runs/unknown' });
    expect(await page.locator('#run-picker').inputValue()).toBe(enc.run.id);
    // Comparing another run: a table of the settings whose values differ, one column per run.
    await page.locator('input[id^="curves-compare-"]').first().check();
    await until(page, `!!document.querySelector('#config-diff')`);
    const header = await page.locator('#config-diff thead th').allTextContents();
    expect(header[0]).toBe('setting');
    expect(header).toContain(enc.run.name);
    const keys = await page.locator('#config-diff tbody th').allTextContents();
    expect(keys).toContain('kind');
    for (const row of await page.locator('#config-diff tbody tr').all()) {
      const cells = await row.locator('td').allTextContents();
      expect(new Set(cells).size, `${await row.textContent()}`).toBeGreaterThan(1);
    }
    await screenshot(page, 'curves-compare-settings', true);
    clean(log);
    await page.close();
  });

  it('shows a visible error for malformed messages and keeps drawing', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, load);
    await send(page, { type: 'run/didUpdate', runDir: 42, event: { type: 'worker/ready' } });
    await send(page, { type: 'dashboard/nonsense' });
    await send(page, {
      type: 'run/didUpdate',
      runDir: 'nobody',
      event: { type: 'train/didStep', step: 1, loss: 1, lr: 1, gradNorm: 1, tokens: 1, tokensPerSec: 1, elapsedMs: 1 },
    });
    await send(page, {
      type: 'run/didUpdate',
      runDir: enc.run.runDir,
      event: {
        type: 'train/didSnapshot',
        step: 99999,
        srcTokens: [],
        tgtTokens: [],
        maps: [{ stack: 'encoder.self', layer: 0, shape: [1, 2, 2], data: { $f32: 'AAAAAA==' } }],
        masks: [],
      },
    });
    const text = (await page.locator('.banner').textContent()) ?? '';
    expect(await page.locator('.banner').isVisible()).toBe(true);
    expect(text).toContain('message(run/didUpdate).runDir: expected a string');
    expect(text).toContain('unknown message type "dashboard/nonsense"');
    expect(text).toContain('which the dashboard has not been told about');
    expect(text).toContain('do not fill shape [1, 2, 2]');
    expect(log.posted.filter((m) => m.type === 'webview/didError')).toHaveLength(4);
    expect(Number(await attr(page, '.panel.curves .chart-main', 'data-points'))).toBe(enc.steps.length);
    await screenshot(page, 'error-banner-light');
    await page.click('.banner-dismiss');
    expect(await page.locator('.banner').isVisible()).toBe(false);
    clean(log);
    await page.close();
  });
});
