/**
 * Today's transformers in the dashboard, in headless Chromium: the Model tab of a Llama-style
 * run with a sliding window and a nanochat-style one (where each option acts), the masks view
 * with a window (computed from the config when the snapshot's causal mask lacks it, the
 * engine's own band when it holds it), grouped-query heads named with their key/value head in
 * the attention grid, its caption and the Heads tab, and the compare table naming the options
 * that differ. Screenshots go to test/browser/screenshots/.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfigData } from '../../src/protocol/model';
import type { RunState } from '../../src/protocol/webview';
import { windowMask } from '../../webview/panels/maskMath';
import { clean, dec, tab } from './data';
import {
  HAS_CHROMIUM,
  SKIP_REASON,
  cellPixel,
  colorDistance,
  frames,
  launchBrowser,
  openDashboard,
  screenshot,
  send,
  until,
} from './harness';
import { scoredRun } from './synthetic';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const TODAY = {
  ropeTheta: 10000,
  rotaryFraction: 1,
  normScale: true,
  qkNorm: false,
  attnSoftCap: 0,
  logitSoftCap: 0,
  slidingWindow: 0,
  parallelResidual: false,
  embedNorm: false,
  nKvHeads: 0,
  qkvBias: true,
  attnOutBias: true,
  mlpBias: true,
  normType: 'layernorm',
} as const;

/** The decoder fixture's run with config fields set over its own (its snapshots, a plain causal mask, T = 32). */
function variant(id: string, over: Partial<ModelConfigData>, causal?: Uint8Array): RunState {
  const model = dec.run.model;
  if (!model) throw new Error('the decoder fixture has a model');
  const snapshots = causal
    ? dec.snapshots.map((s) => ({
        ...s,
        masks: s.masks.map((m) => (m.name === 'decoder.causal' ? { ...m, data: causal } : m)),
      }))
    : dec.snapshots;
  return {
    ...dec,
    run: {
      ...dec.run,
      id,
      name: id,
      runDir: `/runs/${id}`,
      model: { ...model, config: { ...model.config, ...TODAY, ...over } },
    },
    snapshots,
  };
}

const LLAMA: Partial<ModelConfigData> = {
  positional: 'rope',
  normType: 'rmsnorm',
  activation: 'swiglu',
  nKvHeads: 2,
  dFF: 176,
  bias: false,
  qkvBias: false,
  attnOutBias: false,
  mlpBias: false,
  tieEmbeddings: false,
  slidingWindow: 8,
};
const NANOCHAT: Partial<ModelConfigData> = {
  positional: 'rope',
  normType: 'rmsnorm',
  normScale: false,
  qkNorm: true,
  activation: 'relu2',
  logitSoftCap: 15,
  embedNorm: true,
  parallelResidual: true,
  bias: false,
  qkvBias: false,
  attnOutBias: false,
  mlpBias: false,
};
const llama = variant('llama-window', LLAMA);
/** Qwen3's attention (issue 30): 4 heads of 32 over d_model 64, 2 key/value heads; Gemma 3's score scale. */
const qwen3 = variant('qwen3-heads', { ...LLAMA, slidingWindow: 0, qkNorm: true, headDim: 32, attnScale: 0.0625 });
const nanochat = variant('nanochat', NANOCHAT);
/** The same window, already in the snapshot's causal mask (as the engine records it once it builds windows). */
const banded = variant('llama-banded', LLAMA, windowMask(32, 8));

async function show(page: Page, runs: RunState[], id: string, t: string): Promise<void> {
  await send(page, { type: 'dashboard/didLoadRuns', runs, selectedId: id });
  await tab(page, t);
}

const text = async (page: Page, selector: string): Promise<string> =>
  (await page.locator(selector).innerText()).replace(/\s+/g, ' ');

describe.skipIf(!HAS_CHROMIUM)("today's transformers in Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('the Model tab draws heads apart from d_model / h (headDim) and their score scale', async () => {
    const { page, log } = await openDashboard(browser);
    await show(page, [qwen3], qwen3.run.id, 'model');
    const l = await text(page, '.panel.model');
    expect(l).toContain('4 heads × d_k = 32 (headDim, not d_model / h)');
    expect(l).toContain('W_Q: 64×128; W_K, W_V: 64×64; W_O: 128×64');
    expect(l).toContain('scores scaled by 0.0625, not 1/√d_k');
    expect(l).toContain('GQA 4 q / 2 kv heads · heads of 32 · scores × 0.0625');
    clean(log);
    await page.close();
  });

  it('the Model tab says where each option acts', async () => {
    const { page, log } = await openDashboard(browser);
    await show(page, [llama, nanochat], llama.run.id, 'model');
    const l = await text(page, '.panel.model');
    expect(l).toContain('no positions added: RoPE θ 10000 rotates queries and keys (max 64)');
    expect(l).toContain('GQA 4 q / 2 kv heads: each kv head serves 2 query heads');
    expect(l).toContain('W_Q, W_O: 64×64; W_K, W_V: 64×32');
    expect(l).toContain('Feed-forward (SwiGLU, gated)');
    expect(l).toContain('gate, up: 64 → 176; down: 176 → 64, no biases');
    expect(l).toContain('down(SiLU(gate(x)) ⊙ up(x)): three matrices');
    expect(l).toContain('sliding window: each position sees the last 8');
    expect(l).toContain('decoder-only · pre-norm · RMSNorm ·');
    expect(l).toContain('RMSNorm ε 0.00001');
    expect(l).toContain('RoPE θ 10000 · RMSNorm · SwiGLU · GQA 4 q / 2 kv heads · no biases · sliding window 8');
    expect(l).not.toContain('QK-norm');
    await screenshot(page, 'model-llama-window', true);
    await page.selectOption('#run-picker', nanochat.run.id);
    await frames(page);
    const n = await text(page, '.panel.model');
    expect(n).toContain('then the embedding norm: RMSNorm (no scale)');
    expect(n).toContain('QK-norm: RMSNorm of each head’s q and k before the scores');
    expect(n).toContain('parallel residual: x + attn(norm₁(x)) + mlp(norm₂(x))');
    expect(n).toContain('logits soft-capped: 15 · tanh(z / 15)');
    expect(n).toContain('activation relu2 (ReLU²)');
    expect(n).toContain('W_Q, W_K, W_V, W_O: 64×64');
    await screenshot(page, 'model-nanochat', true);
    clean(log);
    await page.close();
  });

  it('the masks view draws a sliding window as a band of the causal square', async () => {
    const { page, log } = await openDashboard(browser);
    await show(page, [llama, banded], llama.run.id, 'masks');
    expect(await text(page, '.panel.masks > .note')).toContain('a sliding window of 8 positions');
    // The snapshot's causal mask is plain: the window is computed from the config, and says so.
    const card = '.mask-card[data-mask="decoder.window (computed)"]';
    expect(await text(page, card)).toContain("Computed here from the run's config");
    expect(await text(page, card)).toContain('query t may attend to keys t − 8 < s ≤ t only');
    const band = `${card} canvas`;
    const inside = await cellPixel(page, band, 20, 13);
    const behind = await cellPixel(page, band, 20, 12);
    const ahead = await cellPixel(page, band, 20, 21);
    expect(colorDistance(inside, behind)).toBeGreaterThan(60);
    expect(colorDistance(behind, ahead)).toBeLessThanOrEqual(2);
    // The plain causal mask lets the key 8 back through.
    const causal = '.mask-card[data-mask="decoder.causal"] canvas';
    expect(colorDistance(await cellPixel(page, causal, 20, 12), inside)).toBeLessThanOrEqual(2);
    await screenshot(page, 'masks-window-computed', true);
    // The engine's causal mask holds the band: it is shown as the window, with nothing computed beside it.
    await page.selectOption('#run-picker', banded.run.id);
    await frames(page);
    expect(await page.locator(card).count()).toBe(0);
    expect(await text(page, '.mask-card[data-mask="decoder.causal"]')).toContain(
      'Sliding-window causal mask (slidingWindow 8)',
    );
    expect(colorDistance(await cellPixel(page, causal, 20, 12), behind)).toBeLessThanOrEqual(2);
    clean(log);
    await page.close();
  });

  it('names a grouped-query head with its key/value head in the grid, the caption and the Heads tab', async () => {
    const { page, log } = await openDashboard(browser);
    await show(page, [llama], llama.run.id, 'attention');
    expect(await page.locator('.attn-grid-colhead').allTextContents()).toEqual([
      'head 1 · kv 1',
      'head 2 · kv 1',
      'head 3 · kv 2',
      'head 4 · kv 2',
    ]);
    await page.click('.attn-cell[data-layer="1"][data-head="2"]');
    await frames(page);
    expect(await page.locator('.attn-caption').textContent()).toContain('layer 2 · head 3 · kv 2 ·');
    expect(await page.locator('.attn-cell[data-layer="1"][data-head="2"]').getAttribute('aria-label')).toContain(
      'layer 2, head 3 · kv 2: mean entropy',
    );
    await screenshot(page, 'attention-gqa');
    // Multi-head attention keeps plain head names.
    await show(page, [nanochat], nanochat.run.id, 'attention');
    expect(await page.locator('.attn-grid-colhead').first().textContent()).toBe('head 1');
    // The Heads tab, on a run with head scores.
    const scored = scoredRun('gqa-heads', 2, 4, 100);
    const model = scored.run.model;
    if (!model) throw new Error('the scored run has a model');
    const gqa: RunState = {
      ...scored,
      run: { ...scored.run, model: { ...model, config: { ...model.config, nHeads: 4, nKvHeads: 1 } } },
    };
    await show(page, [gqa], gqa.run.id, 'heads');
    await until(page, `!!document.querySelector('.heads-name')`);
    const names = await page.locator('.heads-stack[data-stack="decoder.self"] .heads-name').allTextContents();
    expect(names.slice(0, 4)).toEqual([
      'layer 1 · head 1 · kv 1',
      'layer 1 · head 2 · kv 1',
      'layer 1 · head 3 · kv 1',
      'layer 1 · head 4 · kv 1',
    ]);
    await screenshot(page, 'heads-mqa');
    clean(log);
    await page.close();
  });

  it('the compare table names the architecture options that differ', async () => {
    const { page, log } = await openDashboard(browser);
    const gpt = variant('gpt-today', {});
    await show(page, [gpt, llama, nanochat], gpt.run.id, 'curves');
    for (const box of await page.locator('input[id^="curves-compare-"]').all()) await box.check();
    await until(page, `!!document.querySelector('#config-diff')`);
    const rows = new Map<string, string[]>();
    for (const row of await page.locator('#config-diff tbody tr').all())
      rows.set((await row.locator('th').textContent()) ?? '', await row.locator('td').allTextContents());
    const header = await page.locator('#config-diff thead th').allTextContents();
    const col = (name: string): number => header.indexOf(name) - 1;
    const at = (key: string, run: string): string | undefined => rows.get(key)?.[col(run)];
    expect(at('architecture.positions', 'gpt-today')).toBe('learned positions');
    expect(at('architecture.positions', 'llama-window')).toBe('RoPE θ 10000');
    expect(at('architecture.norm', 'nanochat')).toBe('pre-norm · RMSNorm (no scale)');
    expect(at('architecture.feed-forward', 'llama-window')).toBe('SwiGLU (gated: 3 matrices)');
    expect(at('architecture.attention heads', 'llama-window')).toBe('GQA 4 q / 2 kv heads');
    expect(at('architecture.attention window', 'llama-window')).toBe('sliding window 8');
    expect(at('architecture.soft-caps', 'nanochat')).toBe('logit soft-cap 15');
    // The raw fields are not repeated beside their names.
    expect([...rows.keys()].filter((k) => /^model\.(positional|normType|nKvHeads|activation)$/.test(k))).toEqual([]);
    await screenshot(page, 'compare-architecture', true);
    clean(log);
    await page.close();
  });
});
