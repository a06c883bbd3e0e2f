// The readable-tokens scenario of the end-to-end suite (`run.mjs --only tokens`), in a real VS
// Code driven by Chromium, on a run with a byte-level BPE tokenizer (the session's settings):
// Show Attention for Selection on ASCII text labels the heatmap's axes with the text each token
// stands for (a leading space as `·`, never raw bytes like `<0x20>`); Decode… with sampling,
// 200 tokens asked of a model whose context is 32 tokens, gives 200 tokens (a sliding window),
// and the playground and the notification say how many came, why the decode stopped and that the
// window slid; the playground's prompt tiles read as text too. Each check throws with what it
// saw; screenshots go to `shots`.
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { FAST_TRAINING } from './lib/fixtures.mjs';
import { Workbench, expectVisible, waitForText } from './lib/workbench.mjs';

const STEP = /step (\d+)\/(\d+)/;

/** The session's settings: the fast tiny model with a BPE tokenizer; Decode… samples 200 tokens. */
export const TOKENS_SETTINGS = {
  ...FAST_TRAINING,
  'attentionLab.tokenizer.type': 'bpe',
  'attentionLab.tokenizer.vocabSize': 400,
  'attentionLab.training.steps': 3000,
  'attentionLab.decode.strategy': 'sample',
  'attentionLab.decode.maxTokens': 200,
  // The end-of-text token, rare in the training text, is never among the likeliest eight
  // mid-sentence: the sample runs to the 200 asked for instead of ending a "document".
  'attentionLab.decode.topK': 8,
};

/** Tokens as the page shows them: ["3: ·model", …] → ["·model", …] (the label's title is "index: token"). */
function tokensOf(titles) {
  return titles.map((t) => t.replace(/^\d+: /, ''));
}

/** Throws unless every token reads as text and one shows its leading space as `·`. */
function expectReadable(what, tokens) {
  if (tokens.length < 5) throw new Error(`${what}: only ${tokens.length} tokens: ${JSON.stringify(tokens)}`);
  const raw = tokens.filter((t) => t.includes('<0x'));
  if (raw.length)
    throw new Error(`${what} show ASCII text as raw bytes: ${JSON.stringify(raw)} among ${JSON.stringify(tokens)}`);
  if (!tokens.some((t) => t.startsWith('·')))
    throw new Error(`${what}: no token shows its leading space as ·: ${JSON.stringify(tokens)}`);
}

/** Runs the scenario; resolves true when every check passed. */
export async function runTokens(page, { shots, log }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));

  // 1. Train the BPE run for a few steps from the palette, then stop it.
  await wb.runCommand('Attention Lab: Train');
  const status = await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= 20, 120_000);
  log(`status bar: "${status}"`);
  await wb.runCommand('Attention Lab: Stop Training');
  await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 60_000);

  // 2. Show Attention for Selection on an ASCII text: the heatmap's axis labels read as text.
  await wb.openFile('attention.txt');
  await page
    .locator('.editor-group-container.active .monaco-editor .view-line', { hasText: 'Attention lets every token' })
    .first()
    .waitFor({ state: 'visible', timeout: 30_000 });
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
  await page.keyboard.press('Control+A');
  await wb.runCommand('Attention Lab: Show Attention for Selection');
  const dash = wb.dashboard();
  await waitForText(dash.locator('#panel-attention .inspect-status'), (t) => t.includes('not a training snapshot'));
  await dash.locator('#tab-attention').click();
  const large = dash.locator('.panel.attention .attn-large');
  await expectVisible(large.locator('.hm-cols .hm-label'), "the heatmap's column labels");
  // Every label's title names its token (shown or not, when the cells are too small for all).
  const cols = tokensOf(
    await large.locator('.hm-cols .hm-label').evaluateAll((els) => els.map((e) => e.getAttribute('title') ?? '')),
  );
  const rows = tokensOf(
    await large.locator('.hm-rows .hm-label').evaluateAll((els) => els.map((e) => e.getAttribute('title') ?? '')),
  );
  const shown = (await large.locator('.hm-cols .hm-label, .hm-rows .hm-label').allTextContents()).filter(
    (t) => t !== '',
  );
  log(`heatmap: ${cols.length} columns ${JSON.stringify(cols.slice(0, 12))}…, ${shown.length} labels drawn`);
  expectReadable('the heatmap columns', cols);
  expectReadable('the heatmap rows', rows);
  expectReadable('the drawn heatmap labels', shown);
  if (cols.join('') !== rows.join(''))
    throw new Error(
      `rows and columns of self-attention name different tokens: ${JSON.stringify(rows)} vs ${JSON.stringify(cols)}`,
    );
  await shot('t1-bpe-attention-labels.png');

  // 3. Decode… samples 200 tokens past the 32-token context; the notification says why it stopped.
  await wb.runCommand('Attention Lab: Decode…');
  await wb.answerInput('The model learns to attend to ');
  // The decode lands in the playground; the dashboard stays on the tab it was on.
  const pg = wb.dashboard();
  await pg.locator('#tab-playground').click();
  const pgStatus = pg.locator('.pg-status');
  let said = '';
  for (let i = 0; i < 120 && !said.startsWith('Done'); i++, await sleep(250))
    said = ((await pgStatus.textContent({ timeout: 1_000 }).catch(() => '')) ?? '').trim();
  log(`playground: "${said}"`);
  const expected = 'Done: 200 token(s) — as many as asked for (max tokens).';
  if (!said.startsWith(expected))
    throw new Error(`the playground does not say 200 tokens came, as many as asked for: ${JSON.stringify(said)}`);
  if (!said.includes("Generated 200 tokens past the model's context of 32 with a sliding window"))
    throw new Error(`the playground does not say the window slid past the context: ${JSON.stringify(said)}`);
  const tiles = await pg.locator('.pg-output .chip.token .tok').allTextContents();
  if (tiles.length !== 200) throw new Error(`the playground shows ${tiles.length} generated tokens, not 200`);
  const prompt = await pg.locator('.pg-prompt .chip').allTextContents();
  log(`prompt tiles: ${JSON.stringify(prompt)}`);
  expectReadable('the prompt tiles', prompt);
  // The model learnt from ASCII text; where what it wrote is ASCII too, its tiles read as text.
  const generated = (await pg.locator('.pg-text-gen').textContent()) ?? '';
  log(`generated tiles: ${JSON.stringify(tiles.slice(0, 16))}…`);
  // oxlint-disable-next-line no-control-regex -- ASCII, control characters included
  if (/^[\x00-\x7f]*$/.test(generated)) expectReadable('the generated tiles', tiles);
  else log('(the sample is not all ASCII: its tiles may show raw bytes)');
  await pg.locator('.pg-prompt').scrollIntoViewIfNeeded();
  await shot('t2-bpe-sample-200.png');
  const notes = await wb.notifications();
  const note = notes.find((n) => n.startsWith('Attention Lab: Decoded'));
  log(`notification: ${JSON.stringify(note)}`);
  if (
    !note ||
    !/^Attention Lab: Decoded 200 token\(s\) with \S+ — as many as asked for \(max tokens\); the setting attentionLab\.decode\.maxTokens asks for more\. Generated 200 tokens past the model's context of 32 with a sliding window/.test(
      note,
    )
  ) {
    throw new Error(
      `no notification says how many tokens came and why it stopped; the notification centre holds ${JSON.stringify(notes)}`,
    );
  }
  return true;
}
