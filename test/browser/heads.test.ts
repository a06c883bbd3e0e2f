/**
 * The Heads tab in headless Chromium: every head's sparklines and values during a (synthetic)
 * live run in the light, dark and high-contrast themes (screenshots), ranking and filtering by
 * a score and threshold, opening a head's heatmap on the attention tab (click, click on a
 * sparkline at a step, keyboard), the hover tip, the threshold marker on the loss curve, and a
 * report of a real run that carries the Heads tab with the scores of snapshots it thinned out.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatNumber } from '../../src/common/format';
import type { HeadScoreData } from '../../src/protocol/model';
import { encodeArrays } from '../../src/common/wireCodec';
import { attr, clean, tab } from './data';
import type { TestTheme } from './harness';
import {
  HAS_CHROMIUM,
  ROOT,
  SKIP_REASON,
  frames,
  launchBrowser,
  openDashboard,
  screenshot,
  send,
  until,
} from './harness';
import { INDUCTION_CROSSING, inductionAt, scoredRun, scoredSnapshot } from './synthetic';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const L = 3;
const H = 4;
const cell = (layer: number, head: number): string =>
  `.heads-stack[data-stack="decoder.self"] .heads-cell[data-layer="${layer}"][data-head="${head}"]`;

/** Posts many host messages in one round trip. */
async function sendAll(page: Page, msgs: unknown[]): Promise<void> {
  await page.evaluate(`for (const m of ${JSON.stringify(msgs.map(encodeArrays))}) window.postMessage(m, '*')`);
  await frames(page);
}

/** Streams steps from+1 … to of run `id`, with a scored snapshot every 20 steps. */
async function stream(page: Page, id: string, from: number, to: number): Promise<void> {
  const msgs: unknown[] = [];
  for (let step = from + 1; step <= to; step++) {
    msgs.push({
      type: 'run/didUpdate',
      runDir: `/runs/${id}`,
      event: {
        type: 'train/didStep',
        step,
        loss: 1,
        lr: 1e-3,
        gradNorm: 1,
        tokens: 64,
        tokensPerSec: 5000,
        elapsedMs: 20 * step,
      },
    });
    if (step % 20 === 0)
      msgs.push({
        type: 'run/didUpdate',
        runDir: `/runs/${id}`,
        event: { type: 'train/didSnapshot', ...scoredSnapshot(step, L, H) },
      });
  }
  await sendAll(page, msgs);
}

/** Whether any pixel of the canvas is painted. */
async function painted(page: Page, selector: string): Promise<boolean> {
  return page.evaluate(
    `(() => { const c = document.querySelector(${JSON.stringify(selector)}); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) return true; return false; })()`,
  ) as Promise<boolean>;
}

describe.skipIf(!HAS_CHROMIUM)('the Heads tab in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const theme of ['light', 'dark', 'high-contrast'] as const satisfies readonly TestTheme[]) {
    it(`draws every head's sparklines and values as snapshots stream in (${theme})`, async () => {
      const { page, log } = await openDashboard(browser, { theme });
      await send(page, { type: 'dashboard/didLoadRuns', runs: [scoredRun('live', L, H, 600)], selectedId: 'live' });
      await tab(page, 'heads');
      expect(await page.locator('.heads-stack[data-stack="decoder.self"] .heads-cell').count()).toBe(L * H);
      expect(await page.locator('#heads-timeline').getAttribute('aria-valuetext')).toBe('step 600');
      await stream(page, 'live', 600, 1000);
      await until(page, `document.querySelector('#heads-timeline').getAttribute('aria-valuetext') === 'step 1000'`);
      // The induction head's fourth band (induction) reads the latest value; its canvas is painted, DPR-sized.
      const values = await page.locator(`${cell(1, 2)} .heads-value`).allTextContents();
      expect(values[3]).toBe(formatNumber(inductionAt(1000), 2));
      expect(await page.locator(`${cell(1, 2)} .heads-score`).allTextContents()).toEqual([
        'prev',
        'first',
        'diag',
        'ind',
        'ent',
      ]);
      expect(await painted(page, `${cell(1, 2)} canvas`)).toBe(true);
      const dpr = (await page.evaluate('window.devicePixelRatio')) as number;
      expect(Number(await attr(page, `${cell(1, 2)} canvas`, 'width'))).toBe(56 * Math.max(1, Math.round(dpr)));
      expect(await page.locator(cell(1, 2)).getAttribute('aria-label')).toContain(
        `layer 2, head 3, step 1000: previous token`,
      );
      expect(await page.locator('.heads-crossing').textContent()).toContain(
        `induction ≥ 0.5 · L2H3 · step ${INDUCTION_CROSSING}`,
      );
      expect(await page.locator('.heads-note').textContent()).toContain(
        'induction on the run’s eight diagnostic sequences',
      );
      // The toolbar leaves an empty slot for an export menu, hidden while empty.
      expect(await page.locator('.panel.heads [data-slot="export"]').count()).toBe(1);
      await page.waitForTimeout(600); // the header's live step count redraws twice a second
      await screenshot(page, `heads-${theme}`, true);
      expect(await page.evaluate('window.__csp')).toEqual([]);
      clean(log);
      await page.close();
    });
  }

  it('shows the scores of a text the host measured (Show Attention for Selection) in the run itself, and its training scores a click away', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [scoredRun('sel', L, H, 1000)], selectedId: 'sel' });
    await tab(page, 'heads');
    await send(page, {
      type: 'dashboard/didAttend',
      runDir: '/runs/sel',
      snapshot: { ...scoredSnapshot(700, L, H), source: 'selection', text: 'the cat' },
    });
    expect(await page.locator('.heads-note').textContent()).toContain('measured on your text');
    expect(await page.locator('#panel-heads .inspect-status').textContent()).toContain('on your text');
    expect((await page.locator(`${cell(1, 2)} .heads-value`).allTextContents())[3]).toBe(
      formatNumber(inductionAt(700), 2),
    );
    expect(await painted(page, `${cell(1, 2)} canvas`)).toBe(true); // one point: a dot per band
    expect(await page.locator('#panel-heads .timeline').isVisible()).toBe(false);
    // The run's own training scores, a click away: the picker never named another run.
    await page.locator('#panel-heads .inspect-bar button[data-view="training"]').click();
    await frames(page);
    expect(await page.locator('.heads-note').textContent()).toContain("the run's probe sample");
    expect((await page.locator(`${cell(1, 2)} .heads-value`).allTextContents())[3]).toBe(
      formatNumber(inductionAt(1000), 2),
    );
    expect(await page.locator('#run-picker option').allTextContents()).toEqual(['sel (decoder-only)']);
    clean(log);
    await page.close();
  });

  it('ranks and filters heads by a score and threshold', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [scoredRun('live', L, H, 1000)], selectedId: 'live' });
    await tab(page, 'heads');
    const visible = '.heads-stack[data-stack="decoder.self"] .heads-cell:not(.below)';
    expect(await page.locator('.heads-count').textContent()).toBe(`1 of ${L * H} decoder self-attention heads ≥ 0.5`);
    await page.check('#heads-only');
    await frames(page);
    expect(await page.locator(visible).count()).toBe(1);
    expect(await page.locator(visible).getAttribute('data-head')).toBe('2');
    // Ranked by first-token weight (every head ≥ 0): highest first, in visual order.
    await page.uncheck('#heads-only');
    await page.selectOption('#heads-order', 'ranked');
    await page.selectOption('#heads-score', 'decoder.self|firstToken');
    await frames(page);
    const order =
      (await page.evaluate(`[...document.querySelectorAll('.heads-stack[data-stack="decoder.self"] .heads-gridcell')]
      .sort((a, b) => Number(a.style.order) - Number(b.style.order))
      .map((g) => { const b = g.querySelector('button'); return [Number(b.dataset.layer), Number(b.dataset.head), Number(b.querySelectorAll('.heads-value')[1].textContent)]; })`)) as [
        number,
        number,
        number,
      ][];
    expect(order).toHaveLength(L * H);
    for (let i = 1; i < order.length; i++)
      expect((order[i - 1] as number[])[2]).toBeGreaterThanOrEqual((order[i] as number[])[2] as number);
    // A higher threshold with "only": fewer heads, and the count says how many are shown.
    await page.fill('#heads-threshold', '0.2');
    await page.press('#heads-threshold', 'Enter');
    await page.check('#heads-only');
    await frames(page);
    const shown = await page.locator(visible).count();
    expect(shown).toBeLessThan(L * H);
    expect(shown).toBeGreaterThan(0);
    expect(await page.locator('.heads-count').textContent()).toBe(
      `${shown} of ${L * H} decoder self-attention heads ≥ 0.2 (showing ${shown})`,
    );
    expect(await page.locator('.heads-none').isVisible()).toBe(false);
    await screenshot(page, 'heads-ranked-light');
    // None left: the view says so.
    await page.fill('#heads-threshold', '0.9');
    await page.press('#heads-threshold', 'Enter');
    await frames(page);
    expect(await page.locator(visible).count()).toBe(0);
    expect(await page.locator('.heads-none').textContent()).toBe(
      'No head has first token ≥ 0.9 at step 1000; lower the threshold or show every head.',
    );
    clean(log);
    await page.close();
  });

  it('opens a head on the attention tab: click, click on a sparkline at a step, keyboard; hover tells the value', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [scoredRun('live', L, H, 1000)], selectedId: 'live' });
    await tab(page, 'heads');
    await page.click(`${cell(1, 2)} .heads-name`);
    await frames(page);
    expect(await page.getAttribute('#tab-attention', 'aria-selected')).toBe('true');
    expect(await page.locator('.attn-caption').textContent()).toMatch(
      /^Decoder self-attention · layer 2 · head 3 · step 1000 /,
    );
    await screenshot(page, 'heads-opened-attention-light');
    // On a sparkline: at the step under the pointer (the left end is step 0).
    await tab(page, 'heads');
    const spark = page.locator(`${cell(0, 1)} canvas`);
    const box = await spark.boundingBox();
    if (!box) throw new Error('no sparkline');
    await page.mouse.move(box.x + 2, box.y + 8);
    await frames(page);
    expect(await page.locator('.heads-tip').textContent()).toBe(`L1H2 previous token 0 at step 0`);
    await page.mouse.move(box.x + box.width - 2, box.y + 3 * 16 + 8);
    await frames(page);
    expect(await page.locator('.heads-tip').textContent()).toMatch(/^L1H2 induction 0\.\d+ at step 1000$/);
    await page.mouse.click(box.x + 2, box.y + 8);
    await frames(page);
    expect(await page.locator('.attn-caption').textContent()).toMatch(/layer 1 · head 2 · step 0 /);
    expect(await page.locator('.timeline-label').first().textContent()).toContain('snapshot 1 of');
    // Keyboard: the grid's tab stop, an arrow key, Enter.
    await tab(page, 'heads');
    await page.focus(`${cell(0, 0)}`);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate('[document.activeElement.dataset.layer, document.activeElement.dataset.head]')).toEqual([
      '1',
      '1',
    ]);
    await page.keyboard.press('Enter');
    await frames(page);
    expect(await page.locator('.attn-caption').textContent()).toMatch(/layer 2 · head 2 · step 0 /);
    expect(await page.evaluate('document.activeElement.id')).toBe('panel-attention');
    clean(log);
    await page.close();
  });

  it('marks the first crossing on the loss curve, and follows the chosen score', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [scoredRun('live', L, H, 1000)], selectedId: 'live' });
    const marker = '.panel.curves .chart-main .threshold-marker';
    expect(await page.locator(marker).count()).toBe(1);
    expect(await attr(page, marker, 'data-step')).toBe(String(INDUCTION_CROSSING));
    expect(await page.locator(`${marker} .segment-label`).textContent()).toBe(
      `induction ≥ 0.5 · L2H3 · step ${INDUCTION_CROSSING}`,
    );
    const over = await page.locator('.panel.curves .chart-main .u-over').boundingBox();
    const m = await page.locator(marker).boundingBox();
    if (!over || !m) throw new Error('no plot or marker');
    expect((m.x - over.x) / over.width).toBeCloseTo((INDUCTION_CROSSING - 1) / (1000 - 1), 2);
    expect(await page.locator('.panel.curves .chart-small .threshold-marker').count()).toBe(0);
    await screenshot(page, 'curves-threshold-light');
    // Previous token ≥ 0.5 first at step 500 (layer 1 head 2 grows as step / 1000).
    await tab(page, 'heads');
    await page.selectOption('#heads-score', 'decoder.self|previousToken');
    await tab(page, 'curves');
    expect(await page.locator(`${marker} .segment-label`).textContent()).toBe('previous token ≥ 0.5 · L1H2 · step 500');
    // Turned off, or never reached: no marker.
    await tab(page, 'heads');
    await page.fill('#heads-threshold', '0.99');
    await page.press('#heads-threshold', 'Enter');
    await tab(page, 'curves');
    expect(await page.locator(marker).count()).toBe(0);
    clean(log);
    await page.close();
  });

  it('is in the report of a real run, with the scores of the snapshots the report thinned out', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-heads-report-'));
    try {
      const run = path.join(tmp, 'run');
      const cli = path.join(ROOT, 'dist/cli.js');
      execFileSync(
        process.execPath,
        [
          cli,
          'train',
          '--task',
          'reverse',
          '--steps',
          '40',
          '--snapshot-every',
          '5',
          '--eval-every',
          '0',
          '--set',
          'dModel=16',
          '--set',
          'dFF=32',
          '--batch',
          '8',
          '--out',
          run,
          '--json',
        ],
        { encoding: 'utf8' },
      );
      const file = path.join(tmp, 'report.html');
      execFileSync(process.execPath, [cli, 'report', '--run', run, '--out', file, '--max-snapshots', '3', '--json'], {
        encoding: 'utf8',
      });
      // The embedded data: 3 snapshots with maps, the other 6 as scores only.
      const html = fs.readFileSync(file, 'utf8');
      const json = /<script type="application\/json" id="attention-lab-data">(.*?)<\/script>/s.exec(html)?.[1] ?? '';
      const state = (
        JSON.parse(json) as {
          messages: {
            runs: {
              snapshots: { step: number; headScores: HeadScoreData[] }[];
              headScores: { step: number; heads: HeadScoreData[] }[];
            }[];
          }[];
        }
      ).messages[0]?.runs[0];
      expect(state?.snapshots.map((s) => s.step)).toEqual([0, 20, 40]);
      expect(state?.headScores.map((s) => s.step)).toEqual([5, 10, 15, 25, 30, 35]);
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(pathToFileURL(file).href);
      await frames(page);
      await page.click('#tab-heads');
      await frames(page);
      expect(
        await page.locator('.heads-stack').evaluateAll((els) => els.map((e) => e.getAttribute('data-stack'))),
      ).toEqual(['decoder.self', 'encoder.self', 'decoder.cross']);
      expect(await page.locator('.heads-stack[data-stack="decoder.cross"] .heads-score').first().textContent()).toBe(
        'diag',
      );
      expect(await attr(page, '.heads-stack canvas', 'data-rows')).toBe('9');
      // A threshold that no head reached at step 0 but some head reaches later (from the embedded scores): marked on the loss curve.
      const rows = [
        ...(state?.snapshots ?? []).map((s) => ({ step: s.step, heads: s.headScores })),
        ...(state?.headScores ?? []),
      ].sort((a, b) => a.step - b.step);
      const maxAt = (r: (typeof rows)[number], stack: string, score: string): number =>
        Math.max(
          ...r.heads.filter((x) => x.stack === stack).map((x) => (x.scores as Record<string, number>)[score] ?? 0),
        );
      const pairs = [
        ['decoder.self', 'previousToken'],
        ['decoder.self', 'firstToken'],
        ['decoder.self', 'diagonal'],
        ['encoder.self', 'previousToken'],
        ['encoder.self', 'diagonal'],
        ['decoder.cross', 'diagonal'],
        ['decoder.cross', 'antiDiagonal'],
      ] as const;
      const best = pairs
        .map(([stack, score]) => {
          const m0 = maxAt(rows[0] as (typeof rows)[number], stack, score);
          const top = Math.max(...rows.map((r) => maxAt(r, stack, score)));
          return { stack, score, m0, top };
        })
        .sort((a, b) => b.top - b.m0 - (a.top - a.m0))[0] as { stack: string; score: string; m0: number; top: number };
      const threshold = Math.ceil(((best.m0 + best.top) / 2) * 1e3) / 1e3;
      expect(threshold).toBeGreaterThan(best.m0);
      expect(threshold).toBeLessThanOrEqual(best.top);
      const first = rows.find((r) => maxAt(r, best.stack, best.score) >= threshold) as (typeof rows)[number];
      await page.selectOption('#heads-score', `${best.stack}|${best.score}`);
      // The new score redraws the tab on the next frames, writing the threshold box back: a value typed
      // before that redraw is overwritten (on a loaded machine it lands late), so type until it holds.
      await frames(page);
      const crossing = async (): Promise<string> => (await page.locator('.heads-crossing').textContent()) ?? '';
      for (let tries = 0; tries < 5 && !(await crossing()).includes(`≥ ${threshold} · `); tries++) {
        await page.fill('#heads-threshold', String(threshold));
        await page.press('#heads-threshold', 'Enter');
        await frames(page);
        // Enter commits a typed number; where it did not (seen only in a clean clone's full run), so does leaving the box.
        if (!(await crossing()).includes(`≥ ${threshold} · `))
          await page.locator('#heads-threshold').dispatchEvent('change');
        await frames(page);
      }
      expect(first.step).toBeGreaterThan(0);
      expect(await crossing()).toContain(`≥ ${threshold} · `);
      expect(await page.locator('.heads-crossing').textContent()).toContain(` · step ${first.step} `);
      await screenshot(page, 'report-heads-light', true);
      await page.click('#tab-curves');
      await frames(page);
      expect(await attr(page, '.panel.curves .chart-main .threshold-marker', 'data-step')).toBe(String(first.step));
      await screenshot(page, 'report-curves-threshold-light');
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
