/**
 * The playground in headless Chromium against a fake host that answers model/decode with
 * recorded decodes (test/browser/fixtures/decode-*.json, from real runs): the request carries
 * the form's settings, streamed tokens appear with their probabilities, the prompt's
 * tokenization is shown, clicking a token draws its self- and cross-attention (future keys
 * masked), failures and answers to unknown requests are visible. Screenshots light and dark.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecodeOutput, DecodeParams } from '../../src/protocol/model';
import type { RunState } from '../../src/protocol/webview';
import { showToken } from '../../webview/base/format';
import { formatPercent } from '../../src/common/format';
import { decodeArrays } from '../../src/common/wireCodec';
import { clean } from './data';
import {
  HAS_CHROMIUM,
  SKIP_REASON,
  cellPixel,
  colorDistance,
  fixture,
  frames,
  launchBrowser,
  openDashboard,
  pixel,
  screenshot,
  send,
  until,
} from './harness';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

interface Recorded {
  readonly params: DecodeParams;
  readonly streamed: readonly { readonly token: string; readonly logprob: number }[];
  readonly output: DecodeOutput;
}

const enc = decodeArrays(fixture('encdec.json')) as RunState;
const dec = decodeArrays(fixture('decoder.json')) as RunState;
const decodeEnc = decodeArrays(fixture('decode-encdec.json')) as Recorded;
const decodeDec = decodeArrays(fixture('decode-decoder.json')) as Recorded;

/** A host that answers every model/decode with `rec` (or fails it). */
function fakeHost(
  rec: Recorded,
  fail = false,
): {
  requests: { id: number; runDir: string; params: DecodeParams }[];
  onPost: (msg: { type: string }, page: Page) => Promise<void>;
} {
  const requests: { id: number; runDir: string; params: DecodeParams }[] = [];
  return {
    requests,
    onPost: async (msg, page) => {
      if (msg.type !== 'model/decode') return;
      const req = msg as unknown as { id: number; runDir: string; params: DecodeParams };
      requests.push(req);
      if (fail)
        return send(page, {
          type: 'model/didFail',
          id: req.id,
          error: { code: 'input/invalid', message: 'Source of 99 tokens exceeds the context of 24; shorten it.' },
        });
      for (const t of rec.streamed)
        await send(page, { type: 'model/didToken', id: req.id, token: t.token, logprob: t.logprob });
      await send(page, { type: 'model/didDecode', id: req.id, output: rec.output });
    },
  };
}

async function decode(page: Page, runId: string, input: string): Promise<void> {
  await page.selectOption('#run-picker', runId);
  await page.click('#tab-playground');
  await frames(page);
  await page.fill('#pg-input', input);
  await page.click('.pg-form button[type="submit"]');
}

describe.skipIf(!HAS_CHROMIUM)('playground in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('decodes the same prompt through two runs side by side: one column each, with its tokens and its next-token lens', async () => {
    const other: RunState = {
      ...dec,
      run: { ...dec.run, id: '/runs/other', name: 'other run', runDir: '/runs/other' },
    };
    const posted: { type: string; id: number; runDir?: string; params?: DecodeParams }[] = [];
    const { page, log } = await openDashboard(browser, {
      onPost: async (msg, p) => {
        const m = msg as unknown as {
          type: string;
          id: number;
          runDir?: string;
          params?: DecodeParams;
        };
        if (m.type !== 'model/decode' && m.type !== 'model/lens') return;
        posted.push(m);
        if (m.type === 'model/decode')
          await send(p, {
            type: 'model/didDecode',
            id: m.id,
            output: { ...decodeDec.output, text: `${m.runDir} wrote this` },
          });
        else
          await send(p, {
            type: 'model/didLens',
            id: m.id,
            output: {
              tokens: ['<bos>', 'a'],
              layers: [
                {
                  layer: 0,
                  positions: [
                    { top: [{ token: 'x', prob: 0.5 }] },
                    { top: [{ token: m.runDir === '/runs/other' ? 'other' : 'mine', prob: 0.75 }] },
                  ],
                },
              ],
            },
          });
      },
    });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [enc, dec, other], selectedId: dec.run.id });
    await page.click('#tab-playground');
    await frames(page);
    // Only runs of the same kind can stand beside it.
    expect(await page.locator('.pg-compare-run').allTextContents()).toEqual([' other run']);
    await page.fill('#pg-input', 'To be');
    await page.check('#pg-compare-\\/runs\\/other');
    await page.click('.pg-compare button');
    await until(
      page,
      'document.querySelectorAll(".pg-column").length === 2 && !document.querySelector(".pg-columns").textContent.includes("Decoding…")',
    );
    const decodes = posted.filter((m) => m.type === 'model/decode');
    expect(decodes.map((m) => m.runDir)).toEqual([dec.run.runDir, '/runs/other']);
    expect(decodes.every((m) => m.params?.input === 'To be')).toBe(true);
    expect(posted.filter((m) => m.type === 'model/lens').map((m) => m.runDir)).toEqual([dec.run.runDir, '/runs/other']);
    expect(await page.locator('.pg-column h4').allTextContents()).toEqual([
      `${dec.run.name} (shown above)`,
      'other run',
    ]);
    expect(await page.locator('.pg-column .pg-text').allTextContents()).toEqual([
      `${dec.run.runDir} wrote this`,
      '/runs/other wrote this',
    ]);
    expect(await page.locator('.pg-column').nth(1).locator('.pg-output .chip').count()).toBe(
      decodeDec.output.tokens.length,
    );
    expect(await page.locator('.pg-column .pg-next code').allTextContents()).toEqual(['mine', 'other']);
    await screenshot(page, 'playground-side-by-side', true);
    clean(log);
    await page.close();
  });

  it('takes newlines in the prompt box: Enter types one, Ctrl+Enter decodes, and the request keeps them', async () => {
    const host = fakeHost(decodeDec);
    const { page, log } = await openDashboard(browser, { onPost: host.onPost });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [enc, dec], selectedId: dec.run.id });
    await page.click('#tab-playground');
    await frames(page);
    await page.click('#pg-input');
    await page.keyboard.type('First line');
    await page.keyboard.press('Enter');
    await page.keyboard.type('second line');
    expect(await page.inputValue('#pg-input')).toBe('First line\nsecond line');
    expect(host.requests).toHaveLength(0);
    await page.keyboard.press('Control+Enter');
    await until(page, 'window.__posted.some((m) => m.type === "model/decode")');
    expect(host.requests[0]?.params.input).toBe('First line\nsecond line');
    clean(log);
    await page.close();
  });

  it('sends the settings, streams tokens with probabilities, and shows attention on click', async () => {
    const host = fakeHost(decodeEnc);
    const { page, log } = await openDashboard(browser, { onPost: host.onPost });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [enc, dec], selectedId: enc.run.id });
    await decode(page, enc.run.id, decodeEnc.params.input);
    await until(page, `document.querySelector('.pg-status').textContent.startsWith('Done')`);
    expect(host.requests).toHaveLength(1);
    expect(host.requests[0]?.runDir).toBe(enc.run.runDir);
    expect(host.requests[0]?.params).toMatchObject({ input: decodeEnc.params.input, strategy: 'greedy' });
    const out = decodeEnc.output;
    // The status says how many tokens and why the decode stopped (this one chose EOS).
    expect(await page.locator('.pg-status').textContent()).toContain(
      `Done: ${out.tokens.length} token(s) — the model ended the text (it chose the end-of-sequence token). Score `,
    );
    expect(await page.locator('.pg-output .chip .tok').allTextContents()).toEqual(out.tokens.map(showToken));
    const probs = await page.locator('.pg-output .chip .prob').allTextContents();
    expect(probs).toEqual(out.logprobs.map((lp) => formatPercent(Math.exp(lp))));
    expect(await page.locator('.pg-prompt .chip').allTextContents()).toEqual(out.promptTokens.map(showToken));
    // Attention of the second generated token.
    const i = 1;
    await page.click(`.pg-output button[data-index="${i}"]`);
    await frames(page);
    const a = out.attention;
    if (!a) throw new Error('fixture decode has no attention');
    const self = '.pg-map[data-stack="decoder.self"] canvas';
    const cross = '.pg-map[data-stack="decoder.cross"] canvas';
    expect(Number(await page.getAttribute(self, 'data-rows'))).toBe(a.self.length * a.nHeads);
    expect(Number(await page.getAttribute(self, 'data-cols'))).toBe(a.selfKeys);
    expect(Number(await page.getAttribute(cross, 'data-cols'))).toBe(a.sourceLength);
    // Keys after the query's own position are in its future: masked.
    const q = a.queryStart + i;
    const future = await cellPixel(page, self, 0, q + 1);
    const past = await cellPixel(page, self, 0, 0);
    expect(colorDistance(future, past)).toBeGreaterThan(20);
    const swatchTheme = await cellPixel(page, self, a.nHeads - 1, a.selfKeys - 1);
    expect(colorDistance(future, swatchTheme)).toBeLessThanOrEqual(2);
    // Cross-attention cell = ramp colour of its value (layer 1, head 1, row i).
    const S = a.sourceLength;
    const row = Array.from((a.cross[0] as Float32Array).subarray(i * S, (i + 1) * S));
    const s = row.indexOf(Math.max(...row));
    const rampW = 240;
    await page.click('#tab-attention');
    await frames(page);
    const legend = await pixel(page, '.panel.attention .legend-ramp', Math.round((row[s] as number) * (rampW - 1)), 5);
    await page.click('#tab-playground');
    await frames(page);
    expect(colorDistance(await cellPixel(page, cross, 0, s), legend)).toBeLessThanOrEqual(8);
    expect(log.blocked).toEqual([]);
    expect(log.errors).toEqual([]);
    await screenshot(page, 'light-playground-decoded');
    await page.close();
  });

  it('shows the prompt tokenization of a decoder-only decode (dark screenshot)', async () => {
    const host = fakeHost(decodeDec);
    const { page, log } = await openDashboard(browser, { onPost: host.onPost, theme: 'dark' });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [enc, dec], selectedId: dec.run.id });
    await decode(page, dec.run.id, decodeDec.params.input);
    await until(page, `document.querySelector('.pg-status').textContent.startsWith('Done')`);
    expect(await page.locator('.pg-prompt .chip').allTextContents()).toEqual(
      decodeDec.output.promptTokens.map(showToken),
    );
    expect(await page.locator('.pg-output .chip').count()).toBe(decodeDec.output.tokens.length);
    expect(await page.locator('.pg-status').textContent()).toContain(
      `Done: ${decodeDec.output.tokens.length} token(s) — as many as asked for (max tokens).`,
    );
    await page.click('.pg-output button[data-index="3"]');
    await frames(page);
    expect(await page.locator('.pg-map[data-stack="decoder.cross"]').count()).toBe(0);
    expect(log.errors).toEqual([]);
    await screenshot(page, 'dark-playground-decoded');
    await page.close();
  });

  it('shows a decode the host ran itself (the Decode command) and switches to it with dashboard/show', async () => {
    const { page, log } = await openDashboard(browser);
    await send(page, { type: 'dashboard/didLoadRuns', runs: [enc, dec], selectedId: dec.run.id });
    await send(page, {
      type: 'playground/didDecode',
      runDir: enc.run.runDir,
      params: decodeEnc.params,
      output: decodeEnc.output,
    });
    await send(page, { type: 'dashboard/show', runDir: enc.run.runDir, tab: 'playground' });
    await frames(page);
    expect(await page.getAttribute('#tab-playground', 'aria-selected')).toBe('true');
    expect(await page.inputValue('#run-picker')).toBe(enc.run.id);
    expect(await page.inputValue('#pg-input')).toBe(decodeEnc.params.input);
    expect(await page.locator('.pg-output .chip .tok').allTextContents()).toEqual(
      decodeEnc.output.tokens.map(showToken),
    );
    await send(page, { type: 'dashboard/show', runDir: null, tab: 'attention' });
    await frames(page);
    expect(await page.getAttribute('#tab-attention', 'aria-selected')).toBe('true');
    await send(page, { type: 'dashboard/show', runDir: 'no-such-run', tab: 'masks' });
    expect(await page.locator('.banner').textContent()).toContain('dashboard/show for run "no-such-run"');
    expect(log.errors).toEqual([]);
    await page.close();
  });

  it("shows the decoded text above the tiles, keeps the playground per run, and suggests prompts from the run's data", async () => {
    const note =
      "Generated 16 tokens past the model's context of 8 with a sliding window: each token was chosen from the last 4–8 tokens before it.";
    const host = fakeHost({ ...decodeDec, output: { ...decodeDec.output, contextNote: note } });
    const withPrompts = (r: RunState, prompts: string[]): RunState => ({
      ...r,
      run: { ...r.run, data: r.run.data ? { ...r.run.data, prompts } : null },
    });
    const encP = withPrompts(enc, ['ghfedcba', 'abc']);
    const decP = withPrompts(dec, ['First Citizen:\nBefore we proceed any further, hear me speak.']);
    const { page, log } = await openDashboard(browser, { onPost: host.onPost });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [encP, decP], selectedId: dec.run.id });
    await page.click('#tab-playground');
    await frames(page);
    expect(await page.getAttribute('#pg-input', 'placeholder')).toBe(
      'a prompt, e.g. First Citizen: Before we proceed any…',
    );
    await decode(page, dec.run.id, decodeDec.params.input);
    await until(page, `document.querySelector('.pg-status').textContent.startsWith('Done')`);
    expect(await page.locator('.pg-status').textContent()).toContain(note);
    expect(await page.locator('.pg-text').textContent()).toBe(decodeDec.params.input + decodeDec.output.text);
    expect(await page.locator('.pg-text-gen').textContent()).toBe(decodeDec.output.text);
    for (const t of await page.locator('.pg-output .chip .tok').allTextContents()) expect(t).not.toContain('<0x');
    await screenshot(page, 'light-playground-text');
    // Another run: its own (empty) playground, never the previous run's prompt or tokens.
    await page.selectOption('#run-picker', enc.run.id);
    await frames(page);
    expect(await page.inputValue('#pg-input')).toBe('');
    expect(await page.getAttribute('#pg-input', 'placeholder')).toBe('a source sentence, e.g. ghfedcba');
    expect(await page.locator('.pg-prompt .chip').count()).toBe(0);
    expect(await page.locator('.pg-output .chip').count()).toBe(0);
    expect(await page.locator('.pg-text').count()).toBe(0);
    // Back: the decoder run's prompt, text and tiles are still there.
    await page.selectOption('#run-picker', dec.run.id);
    await frames(page);
    expect(await page.inputValue('#pg-input')).toBe(decodeDec.params.input);
    expect(await page.locator('.pg-output .chip').count()).toBe(decodeDec.output.tokens.length);
    expect(await page.locator('.pg-text').textContent()).toBe(decodeDec.params.input + decodeDec.output.text);
    expect(log.errors).toEqual([]);
    await page.close();
  });

  it('shows a failed decode and refuses answers to requests it never made', async () => {
    const host = fakeHost(decodeEnc, true);
    const { page, log } = await openDashboard(browser, { onPost: host.onPost });
    await send(page, { type: 'dashboard/didLoadRuns', runs: [enc, dec], selectedId: enc.run.id });
    await decode(page, enc.run.id, 'x'.repeat(99));
    await until(page, `document.querySelector('.pg-status').textContent.startsWith('Decode failed')`);
    expect(await page.locator('.pg-status').textContent()).toContain('exceeds the context of 24');
    await send(page, { type: 'model/didToken', id: 777, token: 'a', logprob: -1 });
    expect(await page.locator('.banner').textContent()).toContain(
      'model/didToken for decode 777, which this page never requested',
    );
    expect(log.posted.some((m) => m.type === 'webview/didError')).toBe(true);
    await page.close();
  });
});
