/**
 * Chart colours against the background in VS Code's built-in themes (Light Modern, Dark
 * Modern, Dark and Light High Contrast: their variables as a webview gets them, harness.ts
 * THEME_VARS), in headless Chromium: every series of every chart on the curves tab — training,
 * smoothed training, validation, evaluation marks, a compared run, learning rate, gradient
 * norm, tokens/s — is drawn in an opaque colour with a WCAG contrast of at least 3:1 against
 * the page's background, and the validation line is far from the training lines in colour.
 * The colours are read from uPlot's legend markers, which it paints with each series' stroke.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseColor } from '../../webview/base/colorRamp';
import type { Rgba } from '../../webview/base/colorRamp';
import { MIN_CHART_CONTRAST, contrastRatio } from '../../webview/base/contrast';
import { clean } from './data';
import { evaluatedLoad } from './evaluated';
import type { TestTheme } from './harness';
import {
  HAS_CHROMIUM,
  SKIP_REASON,
  THEME_VARS,
  colorDistance,
  frames,
  launchBrowser,
  openDashboard,
  screenshot,
  send,
} from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const THEMES = Object.keys(THEME_VARS) as TestTheme[];

/** Each chart's series labels and stroke colours, as its legend shows them (the x series left out). */
const LEGENDS = `[...document.querySelectorAll('.panel.curves figure.chart')].filter((fig) => !fig.closest('[hidden]')).map((fig) => ({
  chart: fig.getAttribute('aria-label'),
  series: [...fig.querySelectorAll('.u-legend .u-series')].slice(1).map((s) => ({
    label: s.querySelector('.u-label').textContent,
    color: getComputedStyle(s.querySelector('.u-marker')).borderTopColor,
  })),
}))`;

describe.skipIf(!HAS_CHROMIUM)('chart colours in every built-in theme', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const theme of THEMES) {
    it(`${theme}: every series is opaque and at least 3:1 against the background; validation stands out`, async () => {
      const { page, log } = await openDashboard(browser, { theme });
      await send(page, evaluatedLoad);
      await page.check('#curves-compare-0');
      await frames(page);
      const bg = parseColor((await page.evaluate('getComputedStyle(document.body).backgroundColor')) as string) as Rgba;
      expect(bg[3]).toBe(255);
      expect(bg.slice(0, 3)).toEqual(
        parseColor(THEME_VARS[theme]['--vscode-editor-background'] as string)?.slice(0, 3),
      );
      const charts = (await page.evaluate(LEGENDS)) as { chart: string; series: { label: string; color: string }[] }[];
      expect(charts.map((c) => c.chart)).toEqual([
        'Loss against training progress',
        'Learning rate',
        'Gradient norm',
        'Tokens per second',
      ]);
      const seen: string[] = [];
      for (const { chart, series } of charts) {
        expect(series.length, chart).toBeGreaterThanOrEqual(2);
        for (const { label, color } of series) {
          const c = parseColor(color);
          expect(c, `${chart} · ${label}: ${color}`).not.toBeNull();
          expect(c?.[3], `${chart} · ${label} is opaque (${color})`).toBe(255);
          const ratio = contrastRatio(c as Rgba, bg);
          expect(
            ratio,
            `${chart} · ${label}: ${color} on ${bg.join(',')} is ${ratio.toFixed(2)}:1`,
          ).toBeGreaterThanOrEqual(MIN_CHART_CONTRAST);
          seen.push(`${chart} · ${label}`);
        }
      }
      expect(seen).toContain('Loss against training progress · reverse-char validation');
      expect(seen).toContain('Loss against training progress · reverse-char evaluated on test data');
      expect(seen).toContain('Loss against training progress · reverse-bpe train (smoothed)');
      // The validation line is far in colour from every training line of its run.
      const loss = charts[0]?.series ?? [];
      const colorOf = (label: string): Rgba => parseColor(loss.find((s) => s.label === label)?.color ?? '') as Rgba;
      const val = colorOf('reverse-char validation');
      for (const train of ['reverse-char train', 'reverse-char train (smoothed)'])
        expect(colorDistance(val, colorOf(train)), train).toBeGreaterThan(80);
      await screenshot(page, `contrast-${theme}`);
      clean(log);
      await page.close();
    });
  }
});
