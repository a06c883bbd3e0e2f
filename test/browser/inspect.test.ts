/**
 * The Attention and Heads tabs on a text, in Chromium: a run with no snapshots (an imported
 * model) shows the text box; Show posts model/attend with the run's folder and the text as
 * typed (newlines kept); the answer is drawn in both tabs; a long text's overview stands in
 * for the selected layer until its whole map, asked for with model/attendLayer, arrives;
 * and another run's answer never lands in the run on screen.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolMax, sqrt8 } from '../../src/common/attentionCodec';
import type { AttentionMapData, AttentionSnapshot, HeadScoreData } from '../../src/protocol/model';
import type { RunState } from '../../src/protocol/webview';
import { clean, tab } from './data';
import { HAS_CHROMIUM, SKIP_REASON, frames, launchBrowser, openDashboard, screenshot, send, until } from './harness';
import { paddedRun } from './synthetic';

const L = 2;
const H = 3;

/** An imported decoder-only run: no steps, no snapshots. */
function importedRun(id: string): RunState {
  return {
    run: {
      id,
      name: id,
      runDir: `/runs/${id}`,
      status: 'stopped',
      kind: 'decoder-only',
      step: 0,
      totalSteps: 200,
      segments: [{ fromStep: 0, toStep: 200, schedule: 'cosine' }],
      bestValLoss: null,
      data: null,
      model: {
        config: {
          kind: 'decoder-only',
          dModel: 48,
          nHeads: H,
          dFF: 96,
          nEncoderLayers: 0,
          nDecoderLayers: L,
          vocabSize: 300,
          maxLen: 1024,
        },
        params: 60000,
        paramsByModule: { embeddings: 20000, decoder: 40000 },
        memoryBytes: 1 << 20,
        flopsPerToken: 1e5,
        backend: 'auto',
      },
    },
    steps: [],
    evals: [],
    snapshots: [],
  };
}

/** Causal maps [H, T, T] as 8-bit codes: head h puts its weight on the key h positions back (or BOS). */
function codedMap(layer: number, T: number): AttentionMapData {
  const data = new Uint8Array(H * T * T);
  for (let h = 0; h < H; h++) for (let t = 0; t < T; t++) data[(h * T + t) * T + Math.max(0, t - h)] = sqrt8(1);
  return { stack: 'decoder.self', layer, shape: [H, T, T], data };
}

function scores(text: number): HeadScoreData[] {
  return Array.from({ length: L * H }, (_, i) => ({
    stack: 'decoder.self' as const,
    layer: Math.floor(i / H),
    head: i % H,
    scores: {
      previousToken: i % H === 1 ? 1 : 0,
      firstToken: i % H === 0 ? 1 : 0,
      diagonal: 0,
      induction: 0.01 * i,
      entropy: text,
    },
  }));
}

/** The snapshot the host answers for a text of T positions: whole maps, or overviews pooled by `pool`. */
function answer(tokens: string[], pool = 1): AttentionSnapshot {
  const T = tokens.length;
  const maps = Array.from({ length: L }, (_, l) => {
    const m = codedMap(l, T);
    if (pool === 1) return m;
    const R = Math.ceil(T / pool);
    return { ...m, shape: [H, R, R] as const, data: poolMax(m.data as Uint8Array, H, T, T, pool), pool };
  });
  const causal = new Uint8Array(T * T).map((_, i) => (i % T <= Math.floor(i / T) ? 1 : 0));
  return {
    step: 0,
    srcTokens: [],
    tgtTokens: tokens,
    maps,
    masks: [{ name: 'decoder.causal', shape: [1, 1, T, T], data: causal }],
    headScores: scores(0.5),
    source: 'selection',
    text: tokens.join(''),
  };
}

/** Everything the page posted so far. */
const posted = async (page: Page): Promise<{ type: string; [k: string]: unknown }[]> =>
  (await page.evaluate('window.__posted')) as { type: string; [k: string]: unknown }[];

describe.skipIf(!HAS_CHROMIUM)('the model on a text, in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('an imported run (no snapshots): type a text, Show, and both tabs draw the model on it', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [importedRun('gpt2')], selectedId: 'gpt2' });
    await tab(page, 'attention');
    expect(await page.locator('#panel-attention .inspect-form').isVisible()).toBe(true);
    expect(await page.locator('#panel-attention button[data-view="training"]').isDisabled()).toBe(true);
    await page.fill('#attn-text', 'the cat\nsat');
    await page.locator('#panel-attention .inspect-form button.primary').click();
    await until(page, 'window.__posted.some((m) => m.type === "model/attend")');
    const req = (await posted(page)).find((m) => m.type === 'model/attend') as unknown as {
      id: number;
      runDir: string;
      text: string;
    };
    expect(req.runDir).toBe('/runs/gpt2');
    expect(req.text).toBe('the cat\nsat'); // the newline kept
    // The panel redraws on the next frame after the request is posted.
    await until(
      page,
      'document.querySelector("#panel-attention .inspect-status").textContent === "Computing the attention…"',
    );
    await send(page, { type: 'model/didAttend', id: req.id, output: answer(['<bos>', 'the', '·cat', '↵', 'sat']) });
    await until(page, 'document.querySelectorAll("#panel-attention .attn-grid canvas").length === 6');
    expect(await page.locator('#panel-attention .inspect-status').textContent()).toContain(
      'The model at step 0 on your text (5 tokens), not a training snapshot.',
    );
    expect(await page.locator('.attn-caption').textContent()).toContain("step 0's model on your text");
    expect(await page.locator('#panel-attention .hm-cols .hm-label').allTextContents()).toEqual([
      '<bos>',
      'the',
      '·cat',
      '↵',
      'sat',
    ]);
    await screenshot(page, 'inspect-imported-attention');
    await tab(page, 'heads');
    expect(await page.locator('.heads-note').textContent()).toContain('measured on your text');
    expect(await page.locator('.heads-stack[data-stack="decoder.self"] .heads-cell').count()).toBe(L * H);
    await screenshot(page, 'inspect-imported-heads');
    // The same text's logit lens and ablation: the playground opens on it and asks for the lens.
    await page.locator('#panel-heads .inspect-inside').click();
    await until(page, 'window.__posted.some((m) => m.type === "model/lens")');
    const lens = (await posted(page)).find((m) => m.type === 'model/lens') as unknown as {
      runDir: string;
      input: { kind: string; prompt: string };
    };
    expect(lens.runDir).toBe('/runs/gpt2');
    expect(lens.input).toEqual({ kind: 'decoder-only', prompt: 'the cat\nsat' });
    await until(page, 'document.querySelector("#panel-playground")?.hidden === false');
    await until(page, 'document.querySelector("#pg-input")?.value === "the cat\\nsat"');
    await until(page, 'document.querySelector(".lens-status")?.textContent === "Computing the logit lens…"');
    clean(log);
    await page.close();
  });

  it('a long text: the overview stands in for the selected layer until its whole map arrives', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [importedRun('gpt2')], selectedId: 'gpt2' });
    await tab(page, 'attention');
    await page.fill('#attn-text', 'ab'.repeat(300));
    await page.locator('#panel-attention .inspect-form button.primary').click();
    await until(page, 'window.__posted.some((m) => m.type === "model/attend")');
    const req = (await posted(page)).find((m) => m.type === 'model/attend') as unknown as { id: number };
    const tokens = ['<bos>', ...Array.from({ length: 599 }, (_, i) => (i % 2 ? 'b' : 'a'))];
    await send(page, { type: 'model/didAttend', id: req.id, output: answer(tokens, 3) });
    await until(page, 'window.__posted.some((m) => m.type === "model/attendLayer")');
    const layerReq = (await posted(page)).find((m) => m.type === 'model/attendLayer') as unknown as {
      id: number;
      stack: string;
      layer: number;
      text: string;
      runDir: string;
    };
    expect([layerReq.stack, layerReq.layer, layerReq.runDir]).toEqual(['decoder.self', 0, '/runs/gpt2']);
    expect(await page.locator('.attn-overview').textContent()).toContain('largest weight of 3 × 3 positions');
    expect(await page.locator('.attn-large .hm-view canvas').getAttribute('data-rows')).toBe('200');
    await send(page, { type: 'model/didAttendLayer', id: layerReq.id, output: codedMap(0, 600) });
    await frames(page);
    expect(await page.locator('.attn-overview').isVisible()).toBe(false);
    expect(await page.locator('.attn-large .hm-view canvas').getAttribute('data-rows')).toBe('600');
    // Asked once per layer: redrawing the same layer asks nothing more.
    await page.selectOption('#attn-scale', 'sqrt');
    await frames(page);
    expect((await posted(page)).filter((m) => m.type === 'model/attendLayer')).toHaveLength(1);
    clean(log);
    await page.close();
  });

  it("GPT-2's whole context: a 1024 × 1024 map fits the panel, zooms and pans by keyboard, wheel and drag, and hover tells the tokens", async () => {
    const { page, log } = await openDashboard(browser, { width: 1100 });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [importedRun('gpt2')], selectedId: 'gpt2' });
    await tab(page, 'attention');
    const T = 1024;
    const tokens = Array.from({ length: T }, (_, i) => (i === 0 ? '<|endoftext|>' : `t${i}`));
    const map = codedMap(0, T);
    const causal = new Uint8Array(T * T).map((_, i) => (i % T <= Math.floor(i / T) ? 1 : 0));
    await send(page, {
      type: 'dashboard/didAttend',
      runDir: '/runs/gpt2',
      snapshot: {
        step: 0,
        srcTokens: [],
        tgtTokens: tokens,
        maps: [map],
        masks: [{ name: 'decoder.causal', shape: [1, 1, T, T], data: causal }],
        headScores: scores(0.5).slice(0, H),
        source: 'selection',
        text: 'x',
      },
    });
    const canvas = '.attn-large .hm-view canvas';
    await until(page, `document.querySelector(${JSON.stringify(canvas)})?.dataset.rows === "1024"`);
    const box = await page.locator(canvas).boundingBox();
    const panel = await page.locator('#panel-attention').boundingBox();
    // The whole map, within the panel: under a pixel a cell, every n-th token labelled, and said so.
    expect(box && panel && box.x + box.width <= panel.x + panel.width + 1).toBe(true);
    expect(Number(await page.locator(canvas).getAttribute('data-cell-w'))).toBeLessThan(1);
    expect(Number(await page.locator('.attn-large .hm-cols').getAttribute('data-label-every'))).toBeGreaterThan(1);
    expect(await page.locator('.attn-large .hm-label-note').isVisible()).toBe(true);
    expect(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(
      true,
    );
    // Zoom in by keyboard around the cursor: every token in view labelled, the view a window of the map.
    await page.locator(canvas).focus();
    for (let i = 0; i < 5; i++) await page.keyboard.press('+');
    await frames(page);
    expect(Number(await page.locator(canvas).getAttribute('data-cell-w'))).toBeGreaterThanOrEqual(7);
    expect(await page.locator('.attn-large .hm-cols').getAttribute('data-label-every')).toBe('1');
    expect(await page.locator('.attn-large .hm-zoom-label').textContent()).toMatch(/ of 1024 × 1024$/);
    // The cursor keys pan to keep the cursor in view: End goes to the last key.
    await page.keyboard.press('End');
    await frames(page);
    expect(Number(await page.locator(canvas).getAttribute('data-s0'))).toBeGreaterThan(900);
    expect(await page.locator('.attn-large .hm-readout').textContent()).toMatch(/→ key 1023 “t1023”/);
    expect(await page.locator('.attn-large .hm-cols .hm-label').last().textContent()).toBe('t1023');
    // Dragging pans back; hovering a cell reads its tokens.
    const b = (await page.locator(canvas).boundingBox()) as { x: number; y: number; width: number; height: number };
    const s0 = Number(await page.locator(canvas).getAttribute('data-s0'));
    await page.mouse.move(b.x + 50, b.y + 50);
    await page.mouse.down();
    await page.mouse.move(b.x + 250, b.y + 50, { steps: 4 });
    await page.mouse.up();
    await frames(page);
    expect(Number(await page.locator(canvas).getAttribute('data-s0'))).toBeLessThan(s0);
    await page.mouse.move(b.x + 5, b.y + 5);
    await frames(page);
    expect(await page.locator('.attn-large .hm-readout').textContent()).toMatch(
      /^query \d+ “(t\d+|<\|endoftext\|>)” → key \d+ “(t\d+|<\|endoftext\|>)”: p = /,
    );
    // The wheel zooms out, and 0 shows the whole map again.
    await page.mouse.wheel(0, 400);
    await frames(page);
    await page.locator(canvas).focus();
    await page.keyboard.press('0');
    await frames(page);
    expect(Number(await page.locator(canvas).getAttribute('data-cell-w'))).toBeLessThan(1);
    await screenshot(page, 'inspect-gpt2-1024');
    clean(log);
    await page.close();
  });

  it("a rename while another run is shown never mixes runs: header, picker and tabs stay that run's", async () => {
    const { page, log } = await openDashboard(browser);
    const trained = { ...paddedRun('trained', 6), evals: [] };
    const gpt2 = importedRun('gpt2');
    await send(page, { type: 'dashboard/didLoadRuns', runs: [trained, gpt2], selectedId: 'trained' });
    await tab(page, 'attention');
    expect(await page.locator('#panel-attention .attn-body').isVisible()).toBe(true); // the trained run's snapshots
    await page.selectOption('#run-picker', 'gpt2');
    await frames(page);
    expect(await page.locator('#panel-attention .attn-body').isVisible()).toBe(false);
    expect(await page.locator('#panel-attention .empty').textContent()).toContain('Type a text above');
    await send(page, { type: 'dashboard/didAttend', runDir: '/runs/gpt2', snapshot: answer(['<bos>', 'hi']) });
    // The other run is renamed (the host resends every run, keeping the page's choice), then this one.
    await send(page, {
      type: 'dashboard/didLoadRuns',
      runs: [{ ...trained, run: { ...trained.run, name: 'renamed' } }, gpt2],
      selectedId: null,
    });
    await send(page, {
      type: 'dashboard/didLoadRuns',
      runs: [trained, { ...gpt2, run: { ...gpt2.run, name: 'my GPT-2' } }],
      selectedId: null,
    });
    await frames(page);
    expect(await page.locator('#run-picker').inputValue()).toBe('gpt2');
    expect(await page.locator('#run-picker option:checked').textContent()).toBe('my GPT-2 (decoder-only)');
    expect(await page.locator('#panel-attention .hm-cols .hm-label').allTextContents()).toEqual(['<bos>', 'hi']);
    expect(await page.locator('.attn-caption').textContent()).toContain('on your text');
    for (const t of ['heads', 'masks', 'playground']) {
      await tab(page, t);
      expect(await page.locator(`#panel-${t}`).textContent()).not.toMatch(/<eos>|<pad>/); // the trained run's probe tokens
    }
    clean(log);
    await page.close();
  });

  it('after a reload, asks again for the text each run showed (kept in the saved UI state)', async () => {
    const state = {
      version: 1,
      tab: 'attention',
      runId: 'gpt2',
      attention: { view: 'text' },
      inspectTexts: { gpt2: 'the cat\nsat' },
    };
    const { page, log } = await openDashboard(browser, { state });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [importedRun('gpt2')], selectedId: null });
    await until(page, 'window.__posted.some((m) => m.type === "model/attend")');
    const reqs = (await posted(page)).filter((m) => m.type === 'model/attend');
    expect(reqs.map((m) => [m.runDir, m.text])).toEqual([['/runs/gpt2', 'the cat\nsat']]);
    expect(await page.inputValue('#attn-text')).toBe('the cat\nsat');
    clean(log);
    await page.close();
  });

  it('an answer for a text that was replaced, or for another run, never shows', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [importedRun('a'), importedRun('b')], selectedId: 'a' });
    await tab(page, 'attention');
    await page.fill('#attn-text', 'first');
    await page.locator('#panel-attention .inspect-form button.primary').click();
    await page.fill('#attn-text', 'second');
    await page.locator('#panel-attention .inspect-form button.primary').click();
    const [first, second] = (await posted(page)).filter((m) => m.type === 'model/attend') as unknown as {
      id: number;
    }[];
    await send(page, {
      type: 'model/didAttend',
      id: (second as { id: number }).id,
      output: answer(['<bos>', 'second']),
    });
    await send(page, {
      type: 'model/didAttend',
      id: (first as { id: number }).id,
      output: answer(['<bos>', 'first', 'x']),
    });
    await frames(page);
    expect(await page.locator('#panel-attention .hm-cols .hm-label').allTextContents()).toEqual(['<bos>', 'second']);
    // Run b has nothing of run a's.
    await page.selectOption('#run-picker', 'b');
    await frames(page);
    expect(await page.locator('#panel-attention .attn-body').isVisible()).toBe(false);
    expect(await page.inputValue('#attn-text')).toBe('');
    await send(page, { type: 'dashboard/didAttend', runDir: '/runs/a', snapshot: answer(['<bos>', 'third']) });
    await frames(page);
    expect(await page.locator('#panel-attention .attn-body').isVisible()).toBe(false);
    await page.selectOption('#run-picker', 'a');
    await frames(page);
    expect(await page.locator('#panel-attention .hm-cols .hm-label').allTextContents()).toEqual(['<bos>', 'third']);
    clean(log);
    await page.close();
  });
});

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);
