// The Hugging Face import scenario of the end-to-end suite (`run.mjs --only hfimport`, issue 30), in a
// real VS Code driven by Chromium: a folder of SmolLM2-135M's shapes (LlamaForCausalLM, d 576, 9 query
// and 3 key/value heads of 64, d_ff 1536, RoPE θ 100000, tied, bf16 as the Hub ships it) with its
// layers cut to 2 and random weights, written at test time into the workspace beside a real byte-level
// BPE tokenizer.json of SmolLM2's pre-tokenizer and special tokens (512 ids, not 49,152) and a
// tokenizer_config.json with SmolLM2-Instruct's chat template (fixtures/smollm2-tokenizer, made by its
// make.py with Hugging Face `tokenizers`). "Open PyTorch Checkpoint…" opens the folder through VS Code's
// file dialog; the dashboard's header names the model ("SmolLM2-135M, Llama architecture"); a text typed
// into the Attention tab's box shows 2 layers × 9 heads labelled with the key/value head each reads
// ("head 4 · kv 2"); the playground offers the chat-template box and, ticked, decodes the prompt wrapped
// in the template (<|im_start|>user … <|im_start|>assistant). Screenshots (h1-…, h4-…) go to `shots`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAST_TRAINING } from './lib/fixtures.mjs';
import { Workbench, expectVisible, waitForText } from './lib/workbench.mjs';
import { openCheckpoint, showText } from './inspect.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The folder's name in the workspace: config.json's _name_or_path names the model, not the folder. */
const FOLDER = 'smollm2';
const LAYERS = 2;
const HEADS = 9;
const KV_HEADS = 3;
const TEXT = 'The quick brown fox jumps over the lazy dog.';
const PROMPT = 'What is the capital of France?';

export const HFIMPORT_SETTINGS = { ...FAST_TRAINING };

/** A deterministic stream of numbers in [-1, 1) (xorshift32): the same weights every run. */
function numbers(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 31 - 1;
  };
}

/** Writes a safetensors file of bf16 tensors: `tensors` is [name, shape, value(i)] in file order. */
function writeSafetensorsBf16(file, tensors) {
  const header = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = shape.reduce((a, b) => a * b, 1) * 2;
    header[name] = { dtype: 'BF16', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const head = Buffer.alloc(8 + Buffer.byteLength(json));
  head.writeBigUInt64LE(BigInt(Buffer.byteLength(json)), 0);
  head.write(json, 8);
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, head);
  for (const [, shape, value] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1);
    const f32 = new Float32Array(n);
    for (let i = 0; i < n; i++) f32[i] = value(i);
    // float32 → bfloat16, rounded to nearest even (as torch does): the top 16 bits after rounding.
    const u32 = new Uint32Array(f32.buffer);
    const out = new Uint16Array(n);
    for (let i = 0; i < n; i++) out[i] = (u32[i] + 0x7fff + ((u32[i] >>> 16) & 1)) >>> 16;
    fs.writeSync(fd, new Uint8Array(out.buffer));
  }
  fs.closeSync(fd);
}

/**
 * Writes the SmolLM2-shaped folder into the workspace: config.json as transformers writes SmolLM2-135M's
 * (layers 2, vocabulary the fixture tokenizer's), model.safetensors in bf16 (random, std ≈ 0.02 as
 * transformers initialises; norms 1), tokenizer.json and tokenizer_config.json from the fixture.
 */
export function prepareHfImport(workspace) {
  const dir = path.join(workspace, FOLDER);
  fs.mkdirSync(dir, { recursive: true });
  const fixture = path.join(HERE, 'fixtures/smollm2-tokenizer');
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    fs.copyFileSync(path.join(fixture, f), path.join(dir, f));
  const tok = JSON.parse(fs.readFileSync(path.join(fixture, 'tokenizer.json'), 'utf8'));
  const vocab = Math.max(...Object.values(tok.model.vocab), ...tok.added_tokens.map((t) => t.id)) + 1;
  const C = 576;
  const F = 1536;
  const D = 64;
  const config = {
    _name_or_path: 'HuggingFaceTB/SmolLM2-135M',
    architectures: ['LlamaForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: 0,
    eos_token_id: 0,
    head_dim: D,
    hidden_act: 'silu',
    hidden_size: C,
    initializer_range: 0.041666666666666664,
    intermediate_size: F,
    max_position_embeddings: 8192,
    mlp_bias: false,
    model_type: 'llama',
    num_attention_heads: HEADS,
    num_hidden_layers: LAYERS,
    num_key_value_heads: KV_HEADS,
    pretraining_tp: 1,
    rms_norm_eps: 1e-5,
    rope_scaling: null,
    rope_theta: 100000,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    transformers_version: '4.40.1',
    use_cache: true,
    vocab_size: vocab,
  };
  fs.writeFileSync(path.join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  const rand = numbers(0x5a0c2);
  const w = () => rand() * 0.035; // uniform with std ≈ 0.02
  const one = () => 1;
  const tensors = [['model.embed_tokens.weight', [vocab, C], w]];
  for (let l = 0; l < LAYERS; l++) {
    const p = `model.layers.${l}`;
    tensors.push(
      [`${p}.input_layernorm.weight`, [C], one],
      [`${p}.self_attn.q_proj.weight`, [HEADS * D, C], w],
      [`${p}.self_attn.k_proj.weight`, [KV_HEADS * D, C], w],
      [`${p}.self_attn.v_proj.weight`, [KV_HEADS * D, C], w],
      [`${p}.self_attn.o_proj.weight`, [C, HEADS * D], w],
      [`${p}.post_attention_layernorm.weight`, [C], one],
      [`${p}.mlp.gate_proj.weight`, [F, C], w],
      [`${p}.mlp.up_proj.weight`, [F, C], w],
      [`${p}.mlp.down_proj.weight`, [C, F], w],
    );
  }
  tensors.push(['model.norm.weight', [C], one]);
  writeSafetensorsBf16(path.join(dir, 'model.safetensors'), tensors);
}

/** Runs the scenario; resolves true when every check passed. */
export async function runHfImport(page, { shots, log, workspace }) {
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));

  // 1. Open the folder's model.safetensors through VS Code's file dialog; the header names the model.
  await openCheckpoint(page, wb, path.join(workspace, FOLDER, 'model.safetensors'));
  const dash = wb.dashboard();
  const header = await waitForText(dash.locator('.run-status'), (t) => t.startsWith('imported'), 180_000);
  log(`imported run's header: "${header}"`);
  if (!header.startsWith('imported · SmolLM2-135M, Llama architecture · '))
    throw new Error(`the header does not name the model: ${JSON.stringify(header)}`);
  await shot('h1-imported-header.png');

  // 2. The Attention tab on a typed text: 2 layers × 9 heads, each labelled with its key/value head.
  const status = await showText(dash, TEXT, 180_000);
  log(`attention: "${status}"`);
  if (!status.includes('not a training snapshot'))
    throw new Error(`the imported model's attention did not come: ${JSON.stringify(status)}`);
  await expectVisible(dash.locator('#panel-attention .attn-grid canvas'), "the imported model's heads");
  const cells = await dash.locator('#panel-attention .attn-grid .attn-cell').count();
  if (cells !== LAYERS * HEADS)
    throw new Error(`the grid shows ${cells} heads, not SmolLM2's ${HEADS} heads in each of ${LAYERS} layers`);
  const cols = (await dash.locator('#panel-attention .attn-grid-colhead').allTextContents()).map((c) => c.trim());
  log(`Attention tab heads: ${JSON.stringify(cols)}`);
  const want = Array.from({ length: HEADS }, (_, h) => `head ${h + 1} · kv ${Math.floor(h / (HEADS / KV_HEADS)) + 1}`);
  if (JSON.stringify(cols) !== JSON.stringify(want))
    throw new Error(`the Attention tab's heads read ${JSON.stringify(cols)}, expected ${JSON.stringify(want)}`);
  // Each label stands over its own column (it used to spread over the panel's width, 9 labels
  // wider than the cells, "head 6 · kv 2" over head 8's map).
  const boxes = async (sel) => Promise.all((await dash.locator(sel).all()).slice(0, HEADS).map((l) => l.boundingBox()));
  const heads = await boxes('#panel-attention .attn-grid-colhead');
  const firstRow = await boxes('#panel-attention .attn-grid .attn-cell');
  heads.forEach((b, j) => {
    const c = firstRow[j];
    const mid = b.x + b.width / 2;
    if (!(mid >= c.x && mid <= c.x + c.width))
      throw new Error(
        `"${want[j]}" is not over its column: its centre at x ${mid}, the map at ${c.x}…${c.x + c.width}`,
      );
  });
  await shot('h2-attention-gqa.png');

  // 3. The playground: the chat-template box is offered; ticked, the prompt is wrapped in the template.
  await dash.locator('#tab-playground').click();
  const chat = dash.locator('#pg-chat');
  await expectVisible(chat, "the playground's chat-template box");
  await dash.locator('#pg-input').fill(PROMPT);
  if (!(await chat.isChecked())) await chat.check();
  await dash.locator('.pg-form button[type="submit"]').click();
  const decoded = await waitForText(
    dash.locator('.pg-status'),
    (t) => t.startsWith('Done') || t.startsWith('Decode failed'),
    180_000,
  );
  log(`decode: "${decoded}"`);
  if (!decoded.startsWith('Done')) throw new Error(decoded);
  const prompt = (await dash.locator('.pg-prompt .chip').allTextContents()).map((t) => t.trim());
  log(`prompt tokens (${prompt.length}): ${JSON.stringify(prompt.slice(0, 40))}`);
  const joined = prompt.join('');
  for (const part of ['<|im_start|>', 'system', 'user', 'assistant', '<|im_end|>'])
    if (!joined.includes(part))
      throw new Error(`the decoded prompt is not wrapped in the chat template: lacks ${part}`);
  if (joined.indexOf('user') > joined.lastIndexOf('assistant'))
    throw new Error('the chat template does not end in the assistant turn');
  const out = await dash.locator('.pg-text-gen').first().innerText();
  log(`generated: ${JSON.stringify(out.slice(0, 200))}`);
  await shot('h3-playground-chat.png');

  // 4. The same prompt without the template: BOS and the prompt only.
  await chat.uncheck();
  await dash.locator('.pg-form button[type="submit"]').click();
  const plain = await waitForText(
    dash.locator('.pg-status'),
    (t) => (t.startsWith('Done') || t.startsWith('Decode failed')) && t !== decoded,
    180_000,
  ).catch(() => '');
  const plainPrompt = (await dash.locator('.pg-prompt .chip').allTextContents()).map((t) => t.trim());
  log(`without the template: "${plain}"; prompt tokens ${JSON.stringify(plainPrompt)}`);
  if (plainPrompt.join('').includes('user'))
    throw new Error('the prompt is still wrapped in the chat template with the box unticked');
  await shot('h4-playground-plain.png');
  return true;
}
