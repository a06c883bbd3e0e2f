/**
 * The playground's logit lens in headless Chromium, where a cell's prediction is the first
 * byte of a character: a run whose model predicts 映's first byte after `a` and 😀's first
 * byte after `b` (test/unit/lab/inference/scriptedGpt2.ts, byte tokens), answered by the
 * lab's logitLens on it (the model worker runs the same function). The cell shows the one
 * display of a character the sequence cuts off, `◌…` (src/engine/tokenizers/tokenDisplay.ts),
 * and its top-k hover says what it is — never the byte codes `<0xE6>…` / `<0xF0>…`.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logitLens } from '../../src/lab/inference/lens';
import { NODE_FS } from '../../src/lab/files/fs.node';
import type { OpenRun } from '../../src/lab/inference/openRun';
import { loadRunState } from '../../src/lab/runs/runState';
import type { LensOutputData } from '../../src/protocol/analysis';
import type { FromWebview, RunState } from '../../src/protocol/webview';
import { scriptedRun } from '../unit/lab/inference/scriptedGpt2';
import { clean } from './data';
import { HAS_CHROMIUM, SKIP_REASON, frames, launchBrowser, openDashboard, send, until } from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAS_CHROMIUM)('logit lens: a cell predicting part of a character (Chromium)', () => {
  let browser: Browser;
  let root = '';
  let r: OpenRun;
  let state: RunState;
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-lens-cut-'));
    // Position 0 (BOS) predicts 'a', position 1 (after 'a') 映's first byte, position 2 (after 'b') 😀's.
    const opened = await scriptedRun(root, [0x61, 0xe6, 0xf0]);
    r = opened.r;
    state = await loadRunState(NODE_FS, opened.runDir);
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('shows ◌… in the cell and its hover explains it, with no byte codes for the character', async () => {
    const answers: LensOutputData[] = [];
    const { page, log } = await openDashboard(browser, {
      onPost: async (msg, p) => {
        if (msg.type !== 'model/lens') return;
        const req = msg as Extract<FromWebview, { type: 'model/lens' }>;
        expect(req.input).toEqual({ kind: 'decoder-only', prompt: 'ab' });
        const output = logitLens(r, { prompt: req.input.kind === 'decoder-only' ? req.input.prompt : '' }, req);
        answers.push(output);
        await send(p, { type: 'model/didLens', id: req.id, output });
      },
    });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [state], selectedId: state.run.id });
    await page.click('#tab-playground');
    await frames(page);
    await page.fill('#pg-input', 'ab');
    await page.click('#pg-lens');
    await until(page, `document.querySelector('.lens-grid')`, 30_000);
    const lens = answers[0] as LensOutputData;
    expect(lens.tokens).toEqual(['<|endoftext|>', 'a', 'b']);
    const n = lens.layers.length - 1;
    for (let layer = 0; layer <= n; layer++) {
      const row = page.locator('.lens-grid tbody tr').nth(layer);
      const cells = await row.locator('.lens-cell .lens-tok').allTextContents();
      expect(cells).toEqual(['a', '◌…', '◌…']);
      for (const t of [1, 2]) {
        const label =
          (await page.getAttribute(`.lens-cell[data-layer="${layer}"][data-pos="${t}"]`, 'aria-label')) ?? '';
        expect(label).toContain('1. “◌…”');
        expect(label).not.toMatch(/<0x(E6|F0)>/);
      }
    }
    await page.hover(`.lens-cell[data-layer="${n}"][data-pos="2"]`);
    expect(await page.locator('.lens-tip').isVisible()).toBe(true);
    const first = page.locator('.lens-tip li code').first();
    expect(await first.textContent()).toBe('◌…');
    expect(await first.getAttribute('title')).toBe(
      '◌… — ends with the first bytes of a character the sequence cuts off (which one, its next bytes would say)',
    );
    expect((await page.locator('.lens-tip').textContent()) ?? '').not.toMatch(/<0x(E6|F0)>/);
    clean(log);
    await page.close();
  });
});
