/**
 * Evaluations in the dashboard, in headless Chromium: the table of a run's evaluations on test
 * data and their marks on the loss chart (also for one that arrives live, as "Evaluate on
 * Files…" sends it), the compare table listing each run's tokenizer and vocabulary and their
 * latest evaluations on the same test file, and the loss in bits per byte (loss · tokens /
 * (bytes · ln 2)), where runs of different tokenizers compare. Screenshots for people to look at.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attr, clean } from './data';
import { bpeRun, charRun, evaluatedLoad, pairsEvaluation } from './evaluated';
import { HAS_CHROMIUM, SKIP_REASON, frames, launchBrowser, openDashboard, screenshot, send, until } from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const CHART = '.panel.curves .chart-main';

describe.skipIf(!HAS_CHROMIUM)('evaluations and comparison in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("lists the run's evaluations, newest first, marks them on the loss chart, and adds one that arrives live", async () => {
    const { page, log } = await openDashboard(browser, { theme: 'light' });
    await send(page, evaluatedLoad);
    const rows = page.locator('#evaluations tbody tr');
    expect(await rows.count()).toBe(3);
    const first = (await rows.first().locator('td').allTextContents()).map((t) => t.trim());
    expect(first.slice(1)).toEqual([
      '800',
      'reverse.tsv (50 pairs)',
      '0.4000',
      ((0.4 * 600) / (550 * Math.LN2)).toFixed(4),
      Math.exp(0.4).toFixed(2),
      '48.25 tok:13a',
      '68.25',
      '42%',
      'beam search (beam 4, length penalty 0.6)',
    ]);
    expect(await rows.first().locator('td').nth(6).getAttribute('title')).toBe(
      'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0',
    );
    expect((await rows.nth(1).locator('td').allTextContents())[2]).toBe('validation split');
    expect(await attr(page, CHART, 'data-evaluation-marks')).toBe('3');
    expect(await page.locator(`${CHART} .u-legend`).textContent()).toContain('reverse-char evaluated on test data');
    await send(page, {
      type: 'run/didEvaluate',
      runDir: charRun.run.runDir,
      evaluation: pairsEvaluation(700, '2025-03-01T12:00:00.000Z', 0.45, 40),
    });
    await until(page, `document.querySelectorAll('#evaluations tbody tr').length === 4`);
    expect((await rows.first().locator('td').allTextContents())[1]).toBe('700');
    await until(page, `document.querySelector(${JSON.stringify(CHART)}).dataset.evaluationMarks === '4'`);
    await screenshot(page, 'evaluations-light', true);
    clean(log);
    await page.close();
  });

  it('compares runs of different tokenizers: tokenizer, vocabulary, bits per byte and the same test file side by side', async () => {
    const { page, log } = await openDashboard(browser, { theme: 'dark' });
    await send(page, evaluatedLoad);
    await page.check('#curves-compare-0');
    await frames(page);
    const table = async (): Promise<Record<string, string[]>> => {
      const out: Record<string, string[]> = {};
      for (const tr of await page.locator('#run-comparison tbody tr').all()) {
        const [key, ...values] = (await tr.locator('th, td').allTextContents()).map((t) => t.trim());
        out[key as string] = values;
      }
      return out;
    };
    const t = await table();
    expect(t.tokenizer).toEqual(['char', 'bpe']);
    expect(t.vocabulary).toEqual(['287 tokens', '1,000 tokens']);
    const lastVal = (r: typeof charRun, perToken: number): string =>
      ((r.evals.at(-1)?.loss ?? 0) / (perToken * Math.LN2)).toFixed(4);
    expect(t['validation bits/byte']).toEqual([lastVal(charRun, 1), lastVal(bpeRun, 3)]);
    // The latest evaluation of each on the shared file (the char run's at step 800, not 400).
    expect(t['reverse.tsv (50 pairs) · BLEU']).toEqual(['48.25 tok:13a', '30.75 tok:13a']);
    expect(t['reverse.tsv (50 pairs) · step']).toEqual(['800', '800']);
    expect(Object.keys(t).some((k) => k.startsWith('validation split ·'))).toBe(false); // only one run has it
    // Bits per byte: the training loss becomes loss · tokens / (bytes · ln 2), step by step.
    await page.selectOption('#curves-per', 'byte');
    await frames(page);
    expect(await attr(page, CHART, 'data-unit')).toBe('byte');
    const over = page.locator(`${CHART} .u-over`);
    const box = await over.boundingBox();
    if (!box) throw new Error('no plot area');
    await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
    await frames(page);
    const last = charRun.steps.at(-1) as (typeof charRun.steps)[number];
    const raw = await page.locator(`${CHART} .u-legend .u-series`).nth(1).locator('.u-value').textContent();
    expect(Number(raw)).toBeCloseTo((last.loss * last.tokens) / ((last.bytes as number) * Math.LN2), 3);
    await screenshot(page, 'compare-bits-per-byte-dark', true);
    clean(log);
    await page.close();
  });
});
