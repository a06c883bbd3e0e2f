/**
 * The playground's logit lens and head ablation in headless Chromium, answered by the real
 * model worker (dist/modelWorker.js, through the extension's ModelClient, as the dashboard's
 * host session answers them) on two tiny runs trained here: a decoder-only model on short
 * documents (context 64, so a long prompt scrolls and is cut) and an encoder-decoder on the
 * reverse task. Asserts the requests the page sends, the grid (rows per layer, columns per
 * token, top-1 and probability per cell, shade by probability, top-k on hover and focus,
 * arrow keys, horizontal scroll, truncation note), the toggles (debounced rerun, Reset), the
 * side-by-side comparison, that ablating no head shows exactly the unablated numbers, and
 * that both stay per run. Screenshots in light, dark and high contrast.
 */

import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { NODE_FS } from '../../src/lab/files/fs.node';
import { startNodeWorker } from '../../src/lab/workers/startWorker.node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelClient } from '../../src/extension/workers/modelClient';
import { loadRunState } from '../../src/lab/runs/runState';
import type { AblationOutputData, LensOutputData } from '../../src/protocol/analysis';
import type { RunState, FromWebview } from '../../src/protocol/webview';
import { formatLossDelta, formatPercent, formatProbDelta } from '../../src/common/format';
import { showToken } from '../../webview/base/format';
import { tinyDocuments, tinySpec, trainTiny } from '../unit/lab/tinyRuns';
import { clean } from './data';
import type { ThemeName } from './harness';
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

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

type Request = Extract<FromWebview, { type: 'model/lens' | 'model/ablate' }>;

/** A host that answers lens and ablation requests through the real model worker, recording requests and answers. */
function workerHost(client: ModelClient): {
  requests: Request[];
  answers: Map<number, LensOutputData | AblationOutputData>;
  onPost: (msg: { type: string }, page: Page) => Promise<void>;
} {
  const requests: Request[] = [];
  const answers = new Map<number, LensOutputData | AblationOutputData>();
  return {
    requests,
    answers,
    onPost: async (msg, page) => {
      if (msg.type !== 'model/lens' && msg.type !== 'model/ablate') return;
      const req = msg as Request;
      requests.push(req);
      try {
        if (req.type === 'model/lens') {
          const output = await client.request('lens', req);
          answers.set(req.id, output);
          await send(page, { type: 'model/didLens', id: req.id, output });
        } else {
          const output = await client.request('ablate', req);
          answers.set(req.id, output);
          await send(page, { type: 'model/didAblate', id: req.id, output });
        }
      } catch (e) {
        await send(page, {
          type: 'model/didFail',
          id: req.id,
          error: { code: (e as { code?: string }).code ?? 'internal', message: (e as Error).message },
        });
      }
    },
  };
}

const long = 'the cat sat on the mat. the dog sat on the log. a bird in the hand is worth two in the bush. ';

describe.skipIf(!HAS_CHROMIUM)('logit lens and ablation in the playground (Chromium, real model worker)', () => {
  let browser: Browser;
  let client: ModelClient;
  let lm: RunState;
  let mt: RunState;
  beforeAll(async () => {
    const [a, b] = await Promise.all([
      trainTiny({ ...tinySpec(await tinyDocuments(), 200, 64), backend: 'wasm' }),
      trainTiny({ ...tinySpec({ kind: 'task', task: 'reverse' }, 150, 24), backend: 'wasm' }),
    ]);
    lm = await loadRunState(NODE_FS, a.runDir);
    mt = await loadRunState(NODE_FS, b.runDir);
    client = new ModelClient(
      () => startNodeWorker(path.join(ROOT, 'dist/modelWorker.js'), 'model worker'),
      () => undefined,
    );
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    client?.dispose();
    await browser?.close();
  });

  async function open(
    theme: ThemeName,
    host: ReturnType<typeof workerHost>,
    runId: string,
  ): Promise<{ page: Page; log: Awaited<ReturnType<typeof openDashboard>>['log'] }> {
    const opened = await openDashboard(browser, { theme, onPost: host.onPost });
    await send(opened.page, { type: 'dashboard/didLoadRuns', runs: [lm, mt], selectedId: runId });
    await opened.page.click('#tab-playground');
    await frames(opened.page);
    return opened;
  }

  for (const theme of ['light', 'dark', 'high-contrast'] as const) {
    it(`draws the logit lens grid of a long prompt, cut to the context and scrolling sideways (${theme})`, async () => {
      const host = workerHost(client);
      const { page, log } = await open(theme, host, lm.run.id);
      await page.fill('#pg-input', long);
      await page.click('#pg-lens');
      await until(page, `document.querySelector('.lens-grid')`, 30_000);
      expect(host.requests).toHaveLength(1);
      const req = host.requests[0] as Request;
      expect(req).toMatchObject({
        type: 'model/lens',
        runDir: lm.run.runDir,
        input: { kind: 'decoder-only', prompt: long },
        topK: 5,
        fit: true,
      });
      const lens = host.answers.get(req.id) as LensOutputData;
      const L = lm.run.model?.config.maxLen as number;
      const n = lm.run.model?.config.nDecoderLayers as number;
      // Cut to the context, and the page says so.
      expect(lens.tokens).toHaveLength(L);
      expect(lens.truncation).toBe(
        `Showing the first ${L - 1} of ${long.length} text tokens — the model's context is ${L}.`,
      );
      expect(await page.locator('.lens-status').textContent()).toBe(lens.truncation);
      // Rows: embeddings, after block 1 … after block N = output; columns: the input tokens.
      expect(await page.locator('.lens-grid tbody th').allTextContents()).toEqual(
        Array.from({ length: n + 1 }, (_, l) =>
          l === 0 ? 'embeddings' : l === n ? `after block ${l} = output` : `after block ${l}`,
        ),
      );
      expect(await page.locator('.lens-grid thead .lens-col .lens-tok').allTextContents()).toEqual(
        lens.tokens.map(showToken),
      );
      // Each cell: top-1 token and its probability.
      const out = lens.layers[n] as LensOutputData['layers'][number];
      const row = page.locator('.lens-grid tbody tr').nth(n);
      expect(await row.locator('.lens-cell .lens-tok').allTextContents()).toEqual(
        out.positions.map((p) => showToken(p.top[0]?.token ?? '')),
      );
      expect(await row.locator('.lens-cell .lens-p').allTextContents()).toEqual(
        out.positions.map((p) => formatPercent(p.top[0]?.prob ?? 0)),
      );
      // Shade = probability: the most confident cell of the output row is further from the background than the least.
      const probs = out.positions.map((p) => p.top[0]?.prob ?? 0);
      const hi = probs.indexOf(Math.max(...probs));
      const lo = probs.indexOf(Math.min(...probs));
      const bgDist = async (t: number): Promise<number> =>
        (await page.evaluate(`(() => {
          const rgb = (s) => { const x = document.createElement('canvas').getContext('2d'); x.fillStyle = s; x.fillRect(0, 0, 1, 1); return Array.from(x.getImageData(0, 0, 1, 1).data).slice(0, 3); };
          const cell = rgb(getComputedStyle(document.querySelector('.lens-cell[data-layer="${n}"][data-pos="${t}"]')).backgroundColor);
          const bg = rgb(getComputedStyle(document.body).backgroundColor);
          return Math.max(...cell.map((c, i) => Math.abs(c - bg[i])));
        })()`)) as number;
      expect(Math.max(...probs) - Math.min(...probs)).toBeGreaterThan(0.2);
      expect(await bgDist(hi)).toBeGreaterThan((await bgDist(lo)) + 20);
      // Hover shows the cell's top-k; arrow keys move the focus, and the box follows.
      await page.hover(`.lens-cell[data-layer="${n}"][data-pos="3"]`);
      expect(await page.locator('.lens-tip').isVisible()).toBe(true);
      expect(await page.locator('.lens-tip li code').allTextContents()).toEqual(
        (out.positions[3]?.top ?? []).map((t) => showToken(t.token)),
      );
      expect(await page.locator('.lens-tip li .lens-tip-p').allTextContents()).toEqual(
        (out.positions[3]?.top ?? []).map((t) => formatPercent(t.prob)),
      );
      await screenshot(page, `${theme}-playground-lens-hover`);
      await page.focus('.lens-cell[data-layer="0"][data-pos="0"]');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowRight');
      expect(
        await page.evaluate('document.activeElement.dataset.layer + "/" + document.activeElement.dataset.pos'),
      ).toBe('1/1');
      expect(await page.locator('.lens-tip-title').textContent()).toContain('after block 1 · position 1');
      // Long inputs scroll inside the grid, not the page; the layer names stay in view.
      const geo = (await page.evaluate(
        `(() => { const s = document.querySelector('.lens-scroll'); return [s.scrollWidth, s.clientWidth, document.documentElement.scrollWidth, window.innerWidth]; })()`,
      )) as number[];
      expect(geo[0]).toBeGreaterThan(geo[1] as number);
      expect(geo[2]).toBeLessThanOrEqual(geo[3] as number);
      await page.evaluate(`document.querySelector('.lens-scroll').scrollLeft = 400`);
      const stuck = (await page.evaluate(
        `(() => { const s = document.querySelector('.lens-scroll').getBoundingClientRect(); const th = document.querySelector('.lens-grid tbody th').getBoundingClientRect(); return Math.abs(th.left - s.left); })()`,
      )) as number;
      expect(stuck).toBeLessThanOrEqual(2);
      await page.evaluate(`document.querySelector('.lens-scroll').scrollLeft = 0`);
      await page.mouse.move(0, 0);
      await page.locator('.pg-inside').scrollIntoViewIfNeeded();
      await screenshot(page, `${theme}-playground-lens`);
      clean(log);
      await page.close();
    });
  }

  for (const theme of ['light', 'dark', 'high-contrast'] as const) {
    it(`switches heads off per stack, reruns once after a burst of toggles, and Reset gives exactly the unablated numbers (${theme})`, async () => {
      const host = workerHost(client);
      const { page, log } = await open(theme, host, mt.run.id);
      const cfg = mt.run.model?.config;
      const H = cfg?.nHeads as number;
      for (const [stack, layers] of [
        ['encoder.self', cfg?.nEncoderLayers],
        ['decoder.self', cfg?.nDecoderLayers],
        ['decoder.cross', cfg?.nDecoderLayers],
      ] as const) {
        expect(await page.locator(`.ab-stack[data-stack="${stack}"] button.ab-head`).count()).toBe(
          (layers as number) * H,
        );
      }
      await page.fill('#pg-input', 'abcde');
      await page.fill('#pg-target', 'ed');
      // Two toggles in a burst: one request, after the pause, with both heads off.
      // (Both in one turn of the page's event loop, so a slow machine cannot stretch the burst past the pause.)
      await page.evaluate(
        `['decoder.cross:0:0', 'decoder.self:1:1'].forEach((k) => document.querySelector('button[data-head="' + k + '"]').click())`,
      );
      await until(page, `document.querySelector('.ab-table')`, 30_000);
      expect(host.requests).toHaveLength(1);
      const req = host.requests[0] as Extract<Request, { type: 'model/ablate' }>;
      expect(req).toMatchObject({
        type: 'model/ablate',
        runDir: mt.run.runDir,
        input: { kind: 'encoder-decoder', src: 'abcde', tgt: 'ed' },
        fit: true,
      });
      expect(req.off).toEqual([
        { stack: 'decoder.cross', layer: 0, head: 0 },
        { stack: 'decoder.self', layer: 1, head: 1 },
      ]);
      expect(await page.getAttribute('button[data-head="decoder.cross:0:0"]', 'aria-pressed')).toBe('true');
      const ab = host.answers.get(req.id) as AblationOutputData;
      expect(await page.locator('.ab-table tbody tr td:first-child').allTextContents()).toEqual(
        ab.compare.map((c) => showToken(c.token)),
      );
      expect(await page.locator('.ab-table td[data-col="base"]').allTextContents()).toEqual(
        ab.compare.map((c) => formatPercent(c.base)),
      );
      expect(await page.locator('.ab-table td[data-col="ablated"]').allTextContents()).toEqual(
        ab.compare.map((c) => formatPercent(c.ablated)),
      );
      expect(await page.locator('.ab-table td[data-col="delta"]').allTextContents()).toEqual(
        ab.compare.map((c) => formatProbDelta(c.ablated - c.base)),
      );
      expect(await page.locator('[data-loss="delta"]').textContent()).toBe(
        formatLossDelta(ab.ablated.loss - ab.base.loss),
      );
      expect(ab.ablated.loss).not.toBe(ab.base.loss);
      await page.locator('.pg-inside').scrollIntoViewIfNeeded();
      await screenshot(page, `${theme}-playground-ablation`);
      // Reset: every head on; the rerun's two columns are the same numbers, bit for bit.
      await page.click('#pg-ablate-reset');
      await until(
        page,
        `document.querySelectorAll('button.ab-head[aria-pressed="true"]').length === 0 && document.querySelector('[data-loss="delta"]')?.textContent === '±0'`,
        30_000,
      );
      const again = host.requests.at(-1) as Extract<Request, { type: 'model/ablate' }>;
      expect(again.off).toEqual([]);
      const none = host.answers.get(again.id) as AblationOutputData;
      expect(none.ablated).toEqual(none.base);
      expect(none.compare.every((c) => c.ablated === c.base)).toBe(true);
      expect(await page.locator('.ab-table td[data-col="ablated"]').allTextContents()).toEqual(
        await page.locator('.ab-table td[data-col="base"]').allTextContents(),
      );
      expect(new Set(await page.locator('.ab-table td[data-col="delta"]').allTextContents())).toEqual(
        new Set(['±0 pp']),
      );
      expect(await page.locator('[data-loss="base"]').textContent()).toBe(
        await page.locator('[data-loss="ablated"]').textContent(),
      );
      // The unablated numbers are those of the first comparison's "all heads on" column.
      expect(none.base).toEqual(ab.base);
      clean(log);
      await page.close();
    });
  }

  it('keeps the lens, the heads switched off and the target per run, and refuses answers it never asked for', async () => {
    const host = workerHost(client);
    const { page, log } = await open('light', host, mt.run.id);
    await page.fill('#pg-input', 'abc');
    await page.click('button[data-head="encoder.self:1:2"]');
    await page.click('#pg-lens');
    await until(page, `document.querySelector('.lens-grid') && document.querySelector('.ab-table')`, 30_000);
    const lens = host.answers.get((host.requests.find((r) => r.type === 'model/lens') as Request).id) as LensOutputData;
    expect(await page.locator('.lens-src .chip').allTextContents()).toEqual((lens.src ?? []).map(showToken));
    expect(lens.tokens[0]).toBe('<bos>');
    await page.locator('.lens-box').scrollIntoViewIfNeeded();
    await screenshot(page, 'light-playground-lens-encdec');
    // Another run: its own empty lens and every head on.
    await page.selectOption('#run-picker', lm.run.id);
    await frames(page);
    expect(await page.locator('.lens-grid').count()).toBe(0);
    expect(await page.locator('.ab-table').count()).toBe(0);
    expect(await page.locator('button.ab-head[aria-pressed="true"]').count()).toBe(0);
    expect(await page.locator('#pg-target').count()).toBe(0);
    // Back: the encoder-decoder's lens, comparison and switched-off head are still there.
    await page.selectOption('#run-picker', mt.run.id);
    await frames(page);
    expect(await page.locator('.lens-grid thead .lens-col .lens-tok').allTextContents()).toEqual(
      lens.tokens.map(showToken),
    );
    expect(await page.getAttribute('button[data-head="encoder.self:1:2"]', 'aria-pressed')).toBe('true');
    expect(await page.locator('.ab-table').count()).toBe(1);
    await send(page, { type: 'model/didLens', id: 999, output: lens });
    expect(await page.locator('.banner').textContent()).toContain(
      'model/didLens for logit lens 999, which this page never requested',
    );
    clean(log);
    await page.close();
  });
});
