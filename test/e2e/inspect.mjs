// The "look inside" scenario of the end-to-end suite (`run.mjs --only inspect`), in a real VS
// Code driven by Chromium: a Hugging Face GPT-2 checkpoint (the repository's small golden one)
// is opened with "Open PyTorch Checkpoint…" through VS Code's file dialog; the dashboard names it
// imported, not trained here, and its Attention and Heads tabs show the model on a typed text
// (it has no snapshots). Then a run with a 600-token byte-level BPE trains on Japanese text for
// a few steps, and its Attention tab, on a Japanese sentence, labels the axes with characters
// (split ones marked, never <0x..>), written upright. Last, the playground decodes one prompt
// through both runs side by side. Screenshots go to `shots`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './lib/codeServer.mjs';
import { FAST_TRAINING } from './lib/fixtures.mjs';
import { Workbench, expectVisible, waitForText } from './lib/workbench.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const STEP = /step (\d+)\/(\d+)/;
const SENTENCE = '映画を見ると必ず感動する。';

/** The session's settings: the tiny model, a 600-token BPE, trained on the Japanese folder only. */
export const INSPECT_SETTINGS = {
  ...FAST_TRAINING,
  'attentionLab.data.include': 'ja/**/*.txt',
  'attentionLab.tokenizer.type': 'bpe',
  'attentionLab.tokenizer.vocabSize': 600,
  'attentionLab.training.steps': 3000,
};

/**
 * Adds the scenario's files to the workspace: the golden GPT-2 checkpoint folder (weights,
 * config.json, vocab.json, merges.txt) and a Japanese text, sentences made from a few
 * subjects, objects and verbs (enough for a 600-token BPE, which still splits many of the
 * kanji across tokens).
 */
export function prepareInspect(workspace) {
  fs.cpSync(path.join(HERE, '../golden/import/hf-gpt2'), path.join(workspace, 'gpt2'), { recursive: true });
  const who = ['私は', '彼は', '彼女は', '子供たちは', '先生は', '友達は', '母は', '兄は'];
  const what = ['映画を', '本を', '手紙を', '音楽を', '写真を', '料理を', '日本語を', '新聞を'];
  const how = [
    '見ると必ず感動する。',
    '毎日読みます。',
    '静かに待っていた。',
    '駅で書きました。',
    '明日も勉強します。',
    '楽しそうに作った。',
    'ゆっくり聞いている。',
    'もう一度探した。',
  ];
  const lines = [];
  for (const a of who) for (const b of what) for (const c of how) lines.push(`${a}${b}${c}`);
  fs.mkdirSync(path.join(workspace, 'ja'), { recursive: true });
  fs.writeFileSync(path.join(workspace, 'ja/sentences.txt'), `${lines.join('\n')}\n`);
}

/** Runs "Open PyTorch Checkpoint…" and opens `file` through VS Code's own file dialog (its path typed in the box). */
export async function openCheckpoint(page, wb, file) {
  await wb.runCommand('Attention Lab: Open PyTorch Checkpoint…');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 20_000 });
  // The dialog writes its starting folder into the box once it has read it (on a slow host more
  // than once): type after the box has held the same text for a second.
  let last = '';
  for (let i = 0, same = 0; i < 120 && same < 4; i++, await sleep(250)) {
    const now = await input.inputValue();
    same = now !== '' && now === last ? same + 1 : 0;
    last = now;
  }
  // Enter only on the path typed: a folder written over it would be opened instead (CI saw the
  // workspace folder imported, and refused, that way).
  for (let i = 0; i < 8 && (await input.isVisible().catch(() => false)); i++) {
    if ((await input.inputValue()) !== file) {
      await input.fill(file);
      await sleep(500);
      continue;
    }
    await page.keyboard.press('Enter');
    await sleep(750);
  }
}

/** Types `text` into the Attention tab's box and shows it; waits for the grid (up to `timeoutMs`). */
export async function showText(dash, text, timeoutMs = 120_000) {
  await dash.locator('#tab-attention').click();
  const textView = dash.locator('#panel-attention button[data-view="text"]');
  await textView.click();
  await dash.locator('#attn-text').fill(text);
  await dash.locator('#panel-attention .inspect-form button.primary').click();
  return waitForText(
    dash.locator('#panel-attention .inspect-status'),
    (t) => t.includes('not a training snapshot') || t.startsWith('Could not'),
    timeoutMs,
  );
}

/** Runs the scenario; resolves true when every check passed. */
export async function runInspect(page, { shots, log, workspace }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));

  // 1. Open the GPT-2 checkpoint through VS Code's own file dialog (a path typed in its box).
  await openCheckpoint(page, wb, path.join(workspace, 'gpt2/model.safetensors'));
  const dash = wb.dashboard();
  const header = await waitForText(dash.locator('.run-status'), (t) => t.startsWith('imported'), 120_000);
  log(`imported run's header: "${header}"`);
  if (!/^imported · Hugging Face GPT-2 · [\d.]+k? parameters · not trained here/.test(header))
    throw new Error(`the imported run does not read as imported: ${JSON.stringify(header)}`);

  // 2. Its Attention and Heads tabs: the model now, on a typed text.
  const status = await showText(dash, 'the rain in the east ran at the station');
  log(`GPT-2 attention: "${status}"`);
  if (!status.includes('not a training snapshot'))
    throw new Error(`the imported model's attention did not come: ${JSON.stringify(status)}`);
  await expectVisible(dash.locator('#panel-attention .attn-grid canvas'), "the imported model's heads");
  const cells = await dash.locator('#panel-attention .attn-grid .attn-cell').count();
  if (cells !== 2 * 4) throw new Error(`the grid shows ${cells} heads, not the checkpoint's 2 layers × 4 heads`);
  await shot('i1-imported-attention.png');
  await dash.locator('#tab-heads').click();
  await expectVisible(
    dash.locator('.heads-note', { hasText: 'measured on your text' }),
    "the imported model's head scores",
  );
  const heads = await dash.locator('.heads-stack[data-stack="decoder.self"] .heads-cell').count();
  if (heads !== 8) throw new Error(`the Heads tab shows ${heads} heads, not 8`);
  await shot('i2-imported-heads.png');

  // 3. A 600-token BPE trained on Japanese: its axes read as characters.
  await wb.runCommand('Attention Lab: Train');
  await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= 10, 180_000);
  await wb.runCommand('Attention Lab: Stop Training');
  await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 60_000);
  const runs = await dash.locator('#run-picker option').allTextContents();
  const ja = runs.find((r) => !/imported/.test(r) && r !== runs.find((x) => x.includes('hf-gpt2')));
  log(`runs: ${JSON.stringify(runs)}`);
  if (!ja) throw new Error(`no trained run beside the imported one: ${JSON.stringify(runs)}`);
  await dash.locator('#run-picker').selectOption({ label: ja });
  const jaStatus = await showText(dash, SENTENCE);
  log(`Japanese attention: "${jaStatus}"`);
  const large = dash.locator('.panel.attention .attn-large');
  await expectVisible(large.locator('.hm-cols .hm-label'), "the Japanese heatmap's column labels");
  const cols = await large.locator('.hm-cols .hm-label').allTextContents();
  log(`columns: ${JSON.stringify(cols)}`);
  if (cols.some((c) => c.includes('<0x')))
    throw new Error(`Japanese reads as bytes on the axes: ${JSON.stringify(cols)}`);
  for (const ch of ['映', '画', '感', '動'])
    if (!cols.some((c) => c.includes(ch))) throw new Error(`the axes do not show ${ch}: ${JSON.stringify(cols)}`);
  const upright = await large
    .locator('.hm-cols .hm-label')
    .first()
    .evaluate((e) => `${getComputedStyle(e).writingMode} ${getComputedStyle(e).transform}`);
  if (upright !== 'vertical-rl none')
    throw new Error(`column labels are turned (${upright}), so CJK would lie on its side`);
  await shot('i3-japanese-axes.png');

  // 4. The playground: one prompt through both runs, side by side.
  await dash.locator('#tab-playground').click();
  await dash.locator('#pg-input').fill('私は');
  const other = dash.locator('.pg-compare-run input');
  await expectVisible(other, 'the run to compare with');
  await other.first().check();
  await dash.locator('.pg-compare button').click();
  await waitForText(
    dash.locator('.pg-columns'),
    (t) => !t.includes('Decoding…') && !t.includes('Reading the logit lens') && t.length > 0,
    120_000,
  );
  const columns = await dash.locator('.pg-column h4').allTextContents();
  log(`side by side: ${JSON.stringify(columns)}`);
  if (columns.length !== 2) throw new Error(`the playground shows ${columns.length} columns, not 2`);
  await dash.locator('.pg-columns').scrollIntoViewIfNeeded();
  await shot('i4-side-by-side.png');
  return true;
}
