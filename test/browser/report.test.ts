/**
 * `attention-lab report` end to end: spawns the built CLI on a recorded run folder
 * (test/browser/fixtures/run-reverse), opens the written HTML from file:// in headless Chromium
 * and asserts that it loads nothing but itself, violates no part of its own CSP, and draws the
 * run: every logged step, the attention grid and timeline over the embedded snapshots, the
 * masks, and a playground (with its logit lens and ablation) that explains why it is off. Screenshots light and dark.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvaluation } from '../../src/lab/runs/evaluations';
import { NODE_FS } from '../../src/lab/files/fs.node';
import { PAIRS_RECORD } from '../evalOutputs';
import { FIXTURES, HAS_CHROMIUM, ROOT, SKIP_REASON, frames, launchBrowser, screenshot } from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const FIXTURE = path.join(FIXTURES, 'run-reverse');

describe.skipIf(!HAS_CHROMIUM)('report page in Chromium', () => {
  let browser: Browser;
  let file = '';
  let tmp = '';
  let RUN = '';
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-report-'));
    file = path.join(tmp, 'report.html');
    // The recorded run, evaluated once on a test file in a folder the report must not show.
    RUN = path.join(tmp, 'run-reverse');
    fs.cpSync(FIXTURE, RUN, { recursive: true });
    await appendEvaluation(NODE_FS, RUN, {
      ...PAIRS_RECORD,
      step: 400,
      files: [{ path: '/home/someone/private/test.tsv', bytes: 812, sha256: 'ab'.repeat(32) }],
      hypothesesFile: '/home/someone/private/hyps.txt',
    });
    const stdout = execFileSync(
      process.execPath,
      [path.join(ROOT, 'dist/cli.js'), 'report', '--run', RUN, '--out', file, '--json'],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(stdout)).toMatchObject({ out: file, runs: 1 });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`opens from disk with no requests and draws the run (${theme})`, async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: theme });
      const requests: string[] = [];
      const errors: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      const url = pathToFileURL(file).href;
      await page.goto(url);
      await frames(page);
      expect(requests).toEqual([url]);
      expect(errors).toEqual([]);
      expect(await page.getAttribute('body', 'data-host')).toBe('report');
      // The CSP names the nonce that the inline script and style carry.
      const csp = (await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content')) ?? '';
      const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
      expect(nonce).toBeTruthy();
      expect(csp).toContain("default-src 'none'");
      expect(await page.evaluate(`document.querySelector('script:not([type])').nonce`)).toBe(nonce);
      // Every logged step is on the chart.
      const lines = fs
        .readFileSync(path.join(RUN, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"type":"step"'));
      expect(Number(await page.getAttribute('.panel.curves .chart-main', 'data-points'))).toBe(lines.length);
      // Attention: the grid and the timeline over the embedded snapshots.
      const run = JSON.parse(fs.readFileSync(path.join(RUN, 'run.json'), 'utf8')) as {
        config: { nHeads: number; nEncoderLayers: number };
      };
      const snapshots = fs.readdirSync(path.join(RUN, 'snapshots')).filter((n) => n.endsWith('.safetensors')).length;
      await page.click('#tab-attention');
      await page.click('.segmented button[data-stack="encoder.self"]');
      await frames(page);
      expect(await page.locator('.attn-grid .attn-cell').count()).toBe(run.config.nHeads * run.config.nEncoderLayers);
      expect(await page.getAttribute('#attn-timeline', 'max')).toBe(String(snapshots - 1));
      await screenshot(page, `report-${theme}-attention`);
      // The evaluation is in the report, its files by name only.
      await page.click('#tab-curves');
      await frames(page);
      expect(await page.locator('#evaluations tbody tr').count()).toBe(1);
      expect(await page.locator('#evaluations tbody tr td').nth(2).textContent()).toBe('test.tsv (40 pairs)');
      expect(await page.content()).not.toContain('/home/someone');
      await page.click('#tab-attention');
      await page.click('#tab-masks');
      await frames(page);
      expect(await page.locator('.mask-card').count()).toBeGreaterThanOrEqual(3);
      // The playground says why it is off, and its button is disabled.
      await page.click('#tab-playground');
      await frames(page);
      expect(await page.locator('.playground > .offline').textContent()).toContain('standalone report');
      expect(await page.isDisabled('.pg-form button[type="submit"]')).toBe(true);
      // So are the logit lens and head ablation: they say so instead of offering controls that cannot work.
      expect(await page.locator('.pg-inside [data-off="lens-ablation"]').textContent()).toContain(
        'off in this standalone report',
      );
      expect(await page.locator('.pg-inside button, .pg-inside input').count()).toBe(0);
      await page.locator('.pg-inside').scrollIntoViewIfNeeded();
      await screenshot(page, `report-${theme}-playground-inside-off`);
      // The theme picker switches the fallbacks of the standalone page.
      await page.selectOption('#theme-picker', theme === 'dark' ? 'light' : 'dark');
      await page.click('#tab-curves');
      await frames(page);
      const bg = (await page.evaluate('getComputedStyle(document.body).backgroundColor')) as string;
      expect(bg).toBe(theme === 'dark' ? 'rgb(255, 255, 255)' : 'rgb(31, 31, 31)');
      await screenshot(page, `report-${theme === 'dark' ? 'light' : 'dark'}-curves`);
      expect(errors).toEqual([]);
      expect(requests).toEqual([url]);
      await page.close();
    });
  }
});
