/**
 * Decoding with a chat template, end to end: a GPT-2-layout checkpoint imported with a Hugging
 * Face tokenizer.json and a tokenizer_config.json that has a chat template; the run folder
 * keeps both, the reopened run decodes the template's text around the prompt (no BOS of its
 * own), and a run without a template, or an encoder-decoder, refuses the chat option.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { chatIds } from '../../../../src/lab/inference/chatTemplate';
import { decodeInput, decodeText } from '../../../../src/lab/inference/decode';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { openRun } from '../../../../src/lab/inference/openRun';
import { exportRun } from '../../../../src/lab/interop/exportFolder';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { HfTokenizer } from '../../../../src/lab/runs/hfTokenizer';
import { loadRunState } from '../../../../src/lab/runs/runState';
import type { DecodeParams } from '../../../../src/protocol/model';
import { cli } from '../../cli/cliHarness';
import { END, byteTokens, scriptedRun } from './scriptedGpt2';

const TEMPLATE =
  "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}" +
  '{% if add_generation_prompt %}assistant:{% endif %}';

let root: string;
let plain: OpenRun;
let chat: OpenRun;

/** GPT-2's tokenizer.json for the scripted vocabulary (bytes are ids 0..255, <|endoftext|> 256). */
function tokenizerJson(dir: string): unknown {
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, 'vocab.json'), 'utf8')) as unknown;
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    added_tokens: [{ id: END, content: '<|endoftext|>', special: true, normalized: true }],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: null,
    decoder: byteLevel,
    model: { type: 'BPE', vocab, merges: [] },
  };
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-decode-chat-'));
  // The templated prompt of 'hi' is 20 tokens: its last position predicts script[19].
  plain = (await scriptedRun(root, [...byteTokens('x'.repeat(19)), ...byteTokens('ok'), END])).r;
  const from = path.join(root, 'scripted');
  fs.writeFileSync(path.join(from, 'tokenizer.json'), JSON.stringify(tokenizerJson(from)));
  fs.writeFileSync(
    path.join(from, 'tokenizer_config.json'),
    JSON.stringify({ bos_token: '<|endoftext|>', eos_token: '<|endoftext|>', chat_template: TEMPLATE }),
  );
  const runDir = path.join(root, 'chat-run');
  await importCheckpoint(NODE_FS, { from, out: runDir });
  chat = await openRun(NODE_FS, runDir, createReferenceBackend());
}, 60_000);

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const params = (input: string, withChat: boolean): DecodeParams => ({
  input,
  strategy: 'greedy',
  beam: 1,
  lengthPenalty: 0.6,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxTokens: 8,
  seed: 1,
  ...(withChat ? { chat: true } : {}),
});

describe('decode with the chat template', () => {
  it('the imported run keeps the Hugging Face tokenizer and its template, and the dashboard is told', async () => {
    expect(chat.tok).toBeInstanceOf(HfTokenizer);
    expect((chat.tok as HfTokenizer).chatTemplate).toBe(TEMPLATE);
    expect((await loadRunState(NODE_FS, chat.runDir)).run.tokenizer?.chatTemplate).toBe(true);
    expect((await loadRunState(NODE_FS, plain.runDir)).run.tokenizer?.chatTemplate).toBeUndefined();
  });

  it('the prompt is the template around the input, BOS written by the template only', () => {
    const ids = Array.from(decodeInput(chat, 'hi', 32, true).prompt);
    expect(ids).toEqual(Array.from(chatIds(chat.tok, [{ role: 'user', content: 'hi' }])));
    expect(chat.tok.decode(ids)).toBe('<|endoftext|>user: hi\nassistant:');
    expect(ids.filter((id) => id === END)).toHaveLength(1);
    // Without the template the prompt is the input as transformers tokenizes it: this tokenizer's post-processor
    // (ByteLevel) adds no BOS, so neither does the lab.
    expect(chat.tok.promptBos).toBe(false);
    expect(Array.from(decodeInput(chat, 'hi', 32, false).prompt)).toEqual(byteTokens('hi'));
  });

  it('decodes the reply after the templated prompt', () => {
    const d = decodeText(chat, params('hi', true)).output;
    expect(d.promptTokens.length).toBe('<|endoftext|>user: hi\nassistant:'.length - '<|endoftext|>'.length + 1);
    expect(d.text).toBe('ok');
  });

  it('a run without a template refuses the chat option in one line', () => {
    expect(() => decodeText(plain, params('hi', true))).toThrow(/has no chat template/);
  });

  it('an export writes the Hugging Face files as they came, and importing it back keeps them', async () => {
    const res = await exportRun(NODE_FS, chat, path.join(root, 'exported'));
    const dir = res.dir;
    const read = (f: string): unknown => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    expect(read('tokenizer.json')).toEqual(tokenizerJson(path.join(root, 'scripted')));
    expect(read('tokenizer_config.json')).toEqual({
      bos_token: '<|endoftext|>',
      eos_token: '<|endoftext|>',
      chat_template: TEMPLATE,
    });
    const lab = (read('config.json') as { attention_lab: { tokenizer: Record<string, unknown> } }).attention_lab;
    expect(lab.tokenizer).toMatchObject({ file: 'tokenizer.json', huggingface: true });
    const again = path.join(root, 'reimported');
    await importCheckpoint(NODE_FS, { from: dir, out: again });
    const r = await openRun(NODE_FS, again, createReferenceBackend());
    expect((r.tok as HfTokenizer).chatTemplate).toBe(TEMPLATE);
    expect(Array.from(r.tok.encode('hi <|endoftext|>'))).toEqual(Array.from(chat.tok.encode('hi <|endoftext|>')));
  });

  it('the CLI: decode --chat prints the reply only (dist/cli.js)', () => {
    const r = cli(['decode', '--run', chat.runDir, '--prompt', 'hi', '--chat', '--max-tokens', '8'], root);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('ok');
    const without = cli(['decode', '--run', plain.runDir, '--prompt', 'hi', '--chat'], root);
    expect(without.code).not.toBe(0);
    expect(without.stderr).toMatch(/has no chat template/);
  });
});
