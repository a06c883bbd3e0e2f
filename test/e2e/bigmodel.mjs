// The "big model" scenario of the end-to-end suite (`run.mjs --only bigmodel`), in a real VS
// Code driven by Chromium: a random checkpoint of GPT-2 small's real shape (124M parameters,
// 500 MB of F32, written at test time into the session's workspace by src/bench/randomGpt2.ts,
// never committed) is opened with "Open PyTorch Checkpoint…", and every view of a trained
// model answers on it in the editor — Attention and Heads on a 1,000-token text, the
// playground's logit lens and decode, and Score Selection — where each used to fail at once
// asking for 7.74 GiB of WebAssembly memory (the model worker opened every run for 4 sequences
// of its whole context). The model worker's peak memory on this path is what
// `attention-lab bench --import` measures (docs/speed.md). Screenshots go to `shots`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { sleep } from './lib/codeServer.mjs';
import { FAST_TRAINING } from './lib/fixtures.mjs';
import { Workbench, expectVisible, waitForText } from './lib/workbench.mjs';
import { openCheckpoint, showText } from './inspect.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** 1,000 tokens of the random model's tokenizer (its first merge makes "ab" one token). */
const TEXT = 'ab'.repeat(1000);
/** Long enough for a 124M model's answers on a 2-core machine shared with other work. */
const SLOW = 600_000;

export const BIGMODEL_SETTINGS = { ...FAST_TRAINING };

/** Writes the random GPT-2 small (weights, config.json, vocab.json, merges.txt) and a 1,000-token text file into the workspace. */
export function prepareBigModel(workspace) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'al-e2e-gpt2-')), 'randomGpt2.cjs');
  buildSync({
    entryPoints: [path.join(HERE, '../../src/bench/randomGpt2.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile: out,
    logLevel: 'error',
  });
  const { GPT2_SMALL, writeRandomGpt2 } = createRequire(import.meta.url)(out);
  writeRandomGpt2(path.join(workspace, 'gpt2'), GPT2_SMALL);
  // The same 1,000 tokens for Score Selection, one "ab" a line: every line's shade is its own span
  // (on one line, equal shades of a random model's tokens would merge into one).
  fs.writeFileSync(path.join(workspace, 'text.txt'), 'ab\n'.repeat(500));
}

/** Runs the scenario; resolves true when every check passed. */
export async function runBigModel(page, { shots, log, workspace }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));
  const t0 = Date.now();
  const lap = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

  await openCheckpoint(page, wb, path.join(workspace, 'gpt2/model.safetensors'));
  const dash = wb.dashboard();
  const header = await waitForText(dash.locator('.run-status'), (t) => t.startsWith('imported'), SLOW);
  log(`imported (${lap()}): "${header}"`);
  if (!/12\d(\.\d+)?M parameters/.test(header))
    throw new Error(`the imported run is not GPT-2 small's size: ${JSON.stringify(header)}`);

  // Attention and Heads, "Your text": 1,000 tokens.
  const status = await showText(dash, TEXT, SLOW);
  log(`attention (${lap()}): "${status}"`);
  if (!status.includes('not a training snapshot'))
    throw new Error(`the attention of 1,000 tokens did not come: ${JSON.stringify(status)}`);
  const cells = await dash.locator('#panel-attention .attn-grid .attn-cell').count();
  if (cells !== 12 * 12) throw new Error(`the grid shows ${cells} heads, not GPT-2 small's 12 layers × 12 heads`);
  await shot('b1-attention-1000.png');
  await dash.locator('#tab-heads').click();
  await expectVisible(
    dash.locator('.heads-note', { hasText: 'measured on your text' }),
    'the head scores on the text',
    SLOW,
  );
  await shot('b2-heads.png');

  // The playground: the logit lens of the same text, then a decode.
  await dash.locator('#tab-playground').click();
  await dash.locator('#pg-input').fill(TEXT);
  await dash.locator('#pg-lens').click();
  const lensSaid = await waitForText(dash.locator('.lens-status'), (t) => !t.startsWith('Computing'), SLOW);
  if (lensSaid.startsWith('Logit lens failed')) throw new Error(lensSaid);
  await expectVisible(dash.locator('.lens-grid .lens-cell'), 'the logit lens grid', SLOW);
  log(`lens (${lap()}): ${await dash.locator('.lens-grid tbody tr').count()} layer rows`);
  await shot('b3-lens.png');
  await dash.locator('#pg-input').fill('ab');
  await dash.locator('.pg-form button[type="submit"]').click();
  const decoded = await waitForText(
    dash.locator('.pg-status'),
    (t) => t.startsWith('Done') || t.startsWith('Decode failed'),
    SLOW,
  );
  log(`decode (${lap()}): "${decoded}"`);
  if (!decoded.startsWith('Done')) throw new Error(decoded);
  await shot('b4-decode.png');

  // Score Selection on the 1,000-token file.
  await wb.openFile('text.txt');
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
  await page.keyboard.press('Control+A');
  await wb.runCommand('Attention Lab: Score Selection');
  const shaded = page.locator('.editor-group-container.active .monaco-editor [class*="ced-"]');
  let shades = 0;
  for (const end = Date.now() + SLOW; shades < 20 && Date.now() < end; await sleep(1000)) shades = await shaded.count();
  log(`Score Selection (${lap()}): ${shades} decorated spans`);
  if (shades < 20) throw new Error(`Score Selection decorated only ${shades} spans`);
  await shot('b5-score.png');
  return true;
}
