/**
 * "Export what you see" in Chromium: the "⋯" menu of a chart and of a heatmap, by mouse and by
 * keyboard; in a VS Code-hosted page the file arrives as the posted `export/save` message, in
 * the standalone report as a browser download. Each PNG is checked from its bytes (signature,
 * IHDR size = 2 × the SVG's, an IDAT stream that inflates to exactly that many RGBA rows and
 * is not blank), each SVG is parsed by the browser's own XML parser and its paths and cells
 * are counted, and the metrics CSV has one row per logged step. Screenshots of the open menu in
 * the light, dark and high-contrast themes.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/common/csv';
import { clean, enc, load, tab } from './data';
import { scoredRun } from './synthetic';
import {
  FIXTURES,
  HAS_CHROMIUM,
  ROOT,
  SCREENSHOTS,
  SKIP_REASON,
  frames,
  launchBrowser,
  openDashboard,
  screenshot,
  send,
  until,
} from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

interface Png {
  readonly width: number;
  readonly height: number;
  readonly distinctBytes: number;
}

/** Reads a PNG's IHDR and inflates its IDAT chunks (8-bit RGBA, as a canvas writes it). */
function readPng(bytes: Buffer): Png {
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(bytes.toString('latin1', 12, 16)).toBe('IHDR');
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  expect([bytes[24], bytes[25]]).toEqual([8, 6]);
  const idat: Buffer[] = [];
  for (let at = 8; at < bytes.length;) {
    const len = bytes.readUInt32BE(at);
    if (bytes.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(bytes.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  expect(raw.length).toBe(height * (1 + 4 * width));
  return { width, height, distinctBytes: new Set(raw).size };
}

/** Facts about an SVG, from the page's DOMParser. */
async function inspectSvg(
  page: Page,
  svg: string,
): Promise<{
  error: string | null;
  root: string;
  width: number;
  height: number;
  viewBox: string;
  series: number;
  cells: number;
  texts: string[];
}> {
  return page.evaluate(`(() => {
    const doc = new DOMParser().parseFromString(${JSON.stringify(svg)}, 'image/svg+xml');
    const err = doc.querySelector('parsererror');
    const root = doc.documentElement;
    return {
      error: err ? err.textContent : null,
      root: root.nodeName,
      width: Number(root.getAttribute('width')),
      height: Number(root.getAttribute('height')),
      viewBox: root.getAttribute('viewBox'),
      series: root.querySelectorAll('path[data-series]').length,
      cells: root.querySelectorAll('g.cells > rect').length,
      texts: [...root.querySelectorAll('text')].map((t) => t.textContent),
    };
  })()`);
}

/** Opens the menu in `scope` with the mouse and picks `label`. */
async function choose(page: Page, scope: string, label: string): Promise<void> {
  await page.click(`${scope} .export-button`);
  await page.click(`${scope} .export-list [role="menuitem"]:has-text("${label}")`);
}

/** The content of the next `export/save` of `kind` the page posts. */
async function posted(page: Page, kind: string, before: number): Promise<{ fileName: string; content: string }> {
  await until(page, `window.__posted.filter((m) => m.type === 'export/save').length > ${before}`, 10_000);
  const all = (await page.evaluate(`window.__posted.filter((m) => m.type === 'export/save')`)) as {
    fileName: string;
    kind: string;
    content: string;
  }[];
  const last = all[all.length - 1] as { fileName: string; kind: string; content: string };
  expect(last.kind).toBe(kind);
  expect(last.fileName.endsWith(`.${kind}`)).toBe(true);
  return last;
}

describe.skipIf(!HAS_CHROMIUM)('export menu in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('posts a PNG at 2× of the loss chart, its SVG, and the metrics CSV to the VS Code host', async () => {
    const { page, log } = await openDashboard(browser, { theme: 'light' });
    await send(page, load);
    await tab(page, 'curves');
    const scope = '.panel.curves .chart-main';
    await choose(page, scope, 'Save as SVG');
    const svgMsg = await posted(page, 'svg', 0);
    expect(svgMsg.fileName).toMatch(/-Loss-step\d+\.svg$/);
    const svg = await inspectSvg(page, svgMsg.content);
    expect(svg.error).toBeNull();
    expect(svg.root).toBe('svg');
    expect(svg.viewBox).toBe(`0 0 ${svg.width} ${svg.height}`);
    const plotWidth = (await page.evaluate(`document.querySelector('${scope} .uplot').offsetWidth`)) as number;
    expect(svg.width).toBe(plotWidth);
    // train, smoothed train, validation of the selected run (smoothing is on by default).
    expect(svg.series).toBe(3);
    expect(svg.texts).toContain('Loss');
    await choose(page, scope, 'Save as PNG');
    const pngBytes = Buffer.from((await posted(page, 'png', 1)).content, 'base64');
    const png = readPng(pngBytes);
    // Kept for people to look at, beside the screenshots.
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    fs.writeFileSync(path.join(SCREENSHOTS, 'exported-loss-chart.png'), pngBytes);
    expect(png.width).toBe(2 * svg.width);
    expect(png.height).toBe(2 * svg.height);
    expect(png.distinctBytes).toBeGreaterThan(16);
    await choose(page, '.panel.curves .chart-small:nth-child(3)', 'Save metrics as CSV');
    const csv = parseCsv((await posted(page, 'csv', 2)).content);
    expect(csv[0]?.slice(0, 3)).toEqual(['step', 'run', 'train loss']);
    const steps = new Set([...enc.steps.map((s) => s.step), ...enc.evals.map((e) => e.step)]);
    expect(csv.length - 1).toBe(steps.size);
    expect(Number(csv[1]?.[2])).toBe(enc.steps[0]?.loss);
    // Hover values read per quantity: tokens/s compact (no "5331.4567"), lr and loss their own way.
    const over = page.locator('.panel.curves .chart-small:nth-child(3) .u-over');
    const box = await over.boundingBox();
    expect(box).not.toBeNull();
    await page.mouse.move((box?.x ?? 0) + (box?.width ?? 0) / 2, (box?.y ?? 0) + (box?.height ?? 0) / 2);
    await frames(page);
    const values = async (chart: string): Promise<string[]> =>
      page.locator(`.panel.curves ${chart} .u-legend .u-value`).allTextContents();
    const [tpsStep, tps] = await values('.chart-small:nth-child(3)');
    expect(tpsStep).toMatch(/^\d{1,3}(,\d{3})*$/);
    expect(tps).toMatch(/^\d+(\.\d+)?k?$/);
    expect(tps).not.toMatch(/\.\d{3,}/);
    const [, lr] = await values('.chart-small:nth-child(1)');
    expect(lr).toMatch(/^(\d\.\d+e-\d|0\.\d{1,6})$/);
    const loss = await values('.chart-main');
    expect(
      loss
        .slice(1)
        .filter((v) => v !== '—')
        .every((v) => /^\d+\.\d{4}$/.test(v)),
    ).toBe(true);
    clean(log);
    await page.close();
  });

  it('exports the selected head as an SVG with one rect per cell and every token, and works from the keyboard', async () => {
    const { page, log } = await openDashboard(browser, { theme: 'dark' });
    await send(page, load);
    await tab(page, 'attention');
    const button = '.panel.attention .attn-large .export-button';
    await page.focus(button);
    await page.keyboard.press('ArrowDown');
    expect(
      await page.evaluate(`document.activeElement.getAttribute('role') + ':' + document.activeElement.textContent`),
    ).toBe('menuitem:Save as PNG');
    expect(await page.getAttribute(button, 'aria-expanded')).toBe('true');
    await page.keyboard.press('Escape');
    expect(await page.evaluate(`document.activeElement.classList.contains('export-button')`)).toBe(true);
    expect(await page.isHidden('.panel.attention .attn-large .export-list')).toBe(true);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    const msg = await posted(page, 'svg', 0);
    expect(msg.fileName).toMatch(/layer1-head1-step\d+\.svg$/);
    const svg = await inspectSvg(page, msg.content);
    expect(svg.error).toBeNull();
    const [rows, cols] = (await page.evaluate(
      `(() => { const c = document.querySelector('.panel.attention .attn-large canvas'); return [Number(c.dataset.rows), Number(c.dataset.cols)]; })()`,
    )) as [number, number];
    expect(rows * cols).toBeGreaterThan(0);
    expect(svg.cells).toBe(rows * cols);
    // Every token is written on the axes (rows + cols labels), besides titles and the key.
    expect(svg.texts.length).toBeGreaterThanOrEqual(rows + cols);
    await choose(page, '.panel.attention .attn-large', 'Save as PNG');
    const pngBytes = Buffer.from((await posted(page, 'png', 1)).content, 'base64');
    expect([readPng(pngBytes).width, readPng(pngBytes).height]).toEqual([2 * svg.width, 2 * svg.height]);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    fs.writeFileSync(path.join(SCREENSHOTS, 'exported-attention-head.png'), pngBytes);
    // The whole grid: one map per layer × head.
    await choose(page, '.panel.attention .grid-export', 'Save as SVG');
    const gridSvg = (await posted(page, 'svg', 2)).content;
    const mapCount = (await page.evaluate(
      `new DOMParser().parseFromString(${JSON.stringify(gridSvg)}, 'image/svg+xml').querySelectorAll('g.map').length`,
    )) as number;
    expect(mapCount).toBe(await page.locator('.panel.attention .attn-cell').count());
    await choose(page, '.panel.attention .grid-export', 'Save as PNG');
    fs.writeFileSync(
      path.join(SCREENSHOTS, 'exported-attention-grid.png'),
      Buffer.from((await posted(page, 'png', 3)).content, 'base64'),
    );
    clean(log);
    await page.close();
  });

  it("saves the Heads tab's table as CSV: one row per (snapshot step, head), 1-based", async () => {
    const { page, log } = await openDashboard(browser, { theme: 'light' });
    const run = scoredRun('scored', 3, 4, 200);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [run], selectedId: 'scored' });
    await tab(page, 'heads');
    await choose(page, '.panel.heads .heads-export', 'Save head scores as CSV');
    const msg = await posted(page, 'csv', 0);
    expect(msg.fileName).toBe('scored-head-scores.csv');
    const rows = parseCsv(msg.content);
    expect(rows[0]).toEqual([
      'step',
      'stack',
      'layer',
      'head',
      'previousToken',
      'firstToken',
      'diagonal',
      'antiDiagonal',
      'induction',
      'entropy',
    ]);
    expect(rows.length - 1).toBe(run.snapshots.length * 3 * 4);
    const first = run.snapshots[0]?.headScores?.[0];
    expect(rows[1]?.slice(0, 5)).toEqual([
      String(run.snapshots[0]?.step),
      'decoder.self',
      '1',
      '1',
      String(((first as NonNullable<typeof first>).scores as { previousToken: number }).previousToken),
    ]);
    clean(log);
    await page.close();
  });

  for (const theme of ['light', 'dark', 'high-contrast'] as const) {
    it(`shows the open menu natively in the ${theme} theme (screenshot)`, async () => {
      const { page, log } = await openDashboard(browser, { theme: theme === 'light' ? 'light' : 'dark' });
      // VS Code's high-contrast body class, with the page's own high-contrast fallbacks (no dark variables).
      if (theme === 'high-contrast')
        await page.evaluate(
          `document.documentElement.removeAttribute('style'); document.body.className = 'vscode-high-contrast'`,
        );
      await send(page, load);
      await tab(page, 'curves');
      await page.click('.panel.curves .chart-main .export-button');
      await frames(page);
      expect(await page.locator('.panel.curves .chart-main [role="menuitem"]').allTextContents()).toEqual([
        'Save as PNG',
        'Save as SVG',
        'Save metrics as CSV',
      ]);
      await page.hover('.panel.curves .chart-main [role="menuitem"]:nth-child(2)');
      await screenshot(page, `export-menu-${theme}`);
      await page.mouse.click(5, 5);
      expect(await page.isHidden('.panel.curves .chart-main .export-list')).toBe(true);
      clean(log);
      await page.close();
    });
  }

  it('downloads PNG and SVG of a mask view from the standalone report', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-export-'));
    try {
      const file = path.join(tmp, 'report.html');
      execFileSync(
        process.execPath,
        [path.join(ROOT, 'dist/cli.js'), 'report', '--run', path.join(FIXTURES, 'run-reverse'), '--out', file],
        { encoding: 'utf8' },
      );
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(pathToFileURL(file).href);
      await frames(page);
      await page.click('#tab-masks');
      await frames(page);
      const scope = '.panel.masks .mask-view >> nth=0';
      const menu = page.locator(scope).locator('.export-button');
      const [svgDownload] = await Promise.all([
        page.waitForEvent('download'),
        (async () => {
          await menu.click();
          await page.locator(scope).locator('[role="menuitem"]', { hasText: 'Save as SVG' }).click();
        })(),
      ]);
      expect(svgDownload.suggestedFilename()).toMatch(/^run-reverse-.*-step\d+\.svg$/);
      const svgText = fs.readFileSync((await svgDownload.path()) as string, 'utf8');
      const svg = await inspectSvg(page, svgText);
      expect(svg.error).toBeNull();
      const canvas = page.locator(scope).locator('canvas');
      const rows = Number(await canvas.getAttribute('data-rows'));
      const cols = Number(await canvas.getAttribute('data-cols'));
      expect(rows * cols).toBeGreaterThan(0);
      expect(svg.cells).toBe(rows * cols);
      const [pngDownload] = await Promise.all([
        page.waitForEvent('download'),
        (async () => {
          await menu.click();
          await page.locator(scope).locator('[role="menuitem"]', { hasText: 'Save as PNG' }).click();
        })(),
      ]);
      const png = readPng(fs.readFileSync((await pngDownload.path()) as string));
      expect([png.width, png.height]).toEqual([2 * svg.width, 2 * svg.height]);
      expect(png.distinctBytes).toBeGreaterThan(8);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
