/**
 * A random model in a Hugging Face family's folder layout, written as the Hub ships it:
 * `config.json`, bf16 `model.safetensors` (or shards of at most `shardBytes` with
 * `model.safetensors.index.json`), `tokenizer.json` (byte-level BPE: 256 bytes, byte-pair
 * merges with lowercase letters first, then longer non-ASCII tokens, and `<|endoftext|>`, so
 * `"ab".repeat(n)` is n tokens and the ids fill the embedding's rows exactly) and
 * `tokenizer_config.json`. Sizes are real models' (SmolLM2-135M, Qwen2.5-0.5B); weights are
 * normal(0, 0.02), norms 1, biases 0. Tensors are written in pieces, so generating never holds
 * the model in memory. Used by `bench --import <family>`.
 *
 * Leaves out: families other than Llama and Qwen2 (the shapes the issue's targets name).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Rng } from '../engine/rng';
import { bytesToUnicode } from '../engine/tokenizers/gpt2Files';

/** A family-shaped random model: config.json's fields and how it is stored. */
export interface RandomHfSpec {
  /** The model's own name (the folder's). */
  readonly name: string;
  readonly modelType: 'llama' | 'qwen2';
  readonly architecture: string;
  readonly layers: number;
  readonly hidden: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly intermediate: number;
  readonly vocab: number;
  readonly context: number;
  readonly ropeTheta: number;
  /** Biases on q, k and v (Qwen2). */
  readonly qkvBias: boolean;
  /** Most bytes of one shard; 0 writes one model.safetensors. */
  readonly shardBytes: number;
}

/** The random models `bench --import <name>` writes. */
export const RANDOM_HF: Readonly<Record<'smollm2' | 'qwen2.5', RandomHfSpec>> = {
  smollm2: {
    name: 'SmolLM2-135M-random',
    modelType: 'llama',
    architecture: 'LlamaForCausalLM',
    layers: 30,
    hidden: 576,
    heads: 9,
    kvHeads: 3,
    intermediate: 1536,
    vocab: 49152,
    context: 8192,
    ropeTheta: 100000,
    qkvBias: false,
    shardBytes: 0,
  },
  'qwen2.5': {
    name: 'Qwen2.5-0.5B-random',
    modelType: 'qwen2',
    architecture: 'Qwen2ForCausalLM',
    layers: 24,
    hidden: 896,
    heads: 14,
    kvHeads: 2,
    intermediate: 4864,
    vocab: 151936,
    context: 32768,
    ropeTheta: 1000000,
    qkvBias: true,
    shardBytes: 600 * 2 ** 20,
  },
};

interface TensorPlan {
  readonly name: string;
  readonly shape: readonly number[];
  readonly init: 'normal' | 'one' | 'zero';
}

function tensorsOf(s: RandomHfSpec): TensorPlan[] {
  const D = s.hidden / s.heads;
  const out: TensorPlan[] = [{ name: 'model.embed_tokens.weight', shape: [s.vocab, s.hidden], init: 'normal' }];
  for (let i = 0; i < s.layers; i++) {
    const p = `model.layers.${i}.`;
    const kv = s.kvHeads * D;
    out.push(
      { name: `${p}input_layernorm.weight`, shape: [s.hidden], init: 'one' },
      { name: `${p}self_attn.q_proj.weight`, shape: [s.hidden, s.hidden], init: 'normal' },
      { name: `${p}self_attn.k_proj.weight`, shape: [kv, s.hidden], init: 'normal' },
      { name: `${p}self_attn.v_proj.weight`, shape: [kv, s.hidden], init: 'normal' },
    );
    if (s.qkvBias)
      out.push(
        { name: `${p}self_attn.q_proj.bias`, shape: [s.hidden], init: 'zero' },
        { name: `${p}self_attn.k_proj.bias`, shape: [kv], init: 'zero' },
        { name: `${p}self_attn.v_proj.bias`, shape: [kv], init: 'zero' },
      );
    out.push(
      { name: `${p}self_attn.o_proj.weight`, shape: [s.hidden, s.hidden], init: 'normal' },
      { name: `${p}post_attention_layernorm.weight`, shape: [s.hidden], init: 'one' },
      { name: `${p}mlp.gate_proj.weight`, shape: [s.intermediate, s.hidden], init: 'normal' },
      { name: `${p}mlp.up_proj.weight`, shape: [s.intermediate, s.hidden], init: 'normal' },
      { name: `${p}mlp.down_proj.weight`, shape: [s.hidden, s.intermediate], init: 'normal' },
    );
  }
  out.push({ name: 'model.norm.weight', shape: [s.hidden], init: 'one' });
  return out;
}

const count = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/** Writes one safetensors file of `tensors` (bf16) at `file`. */
function writeShard(file: string, tensors: readonly TensorPlan[], rng: Rng): void {
  let offset = 0;
  const entries = ['"__metadata__":{"format":"pt"}'];
  for (const t of tensors) {
    const n = 2 * count(t.shape);
    entries.push(
      `${JSON.stringify(t.name)}:{"dtype":"BF16","shape":[${t.shape.join(',')}],` +
        `"data_offsets":[${offset},${offset + n}]}`,
    );
    offset += n;
  }
  const json = Buffer.from(`{${entries.join(',')}}`, 'utf8');
  const headerLength = Math.ceil(json.length / 8) * 8;
  const head = Buffer.alloc(8 + headerLength, 0x20);
  head.writeUInt32LE(headerLength, 0);
  head.writeUInt32LE(0, 4);
  json.copy(head, 8);
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, head);
    const f32 = new Float32Array(1 << 20);
    const bits = new Uint32Array(f32.buffer);
    const piece = new Uint16Array(f32.length);
    for (const t of tensors) {
      const n = count(t.shape);
      for (let done = 0; done < n; done += f32.length) {
        const k = Math.min(f32.length, n - done);
        for (let i = 0; i < k; i++) f32[i] = t.init === 'normal' ? 0.02 * rng.normal() : t.init === 'one' ? 1 : 0;
        for (let i = 0; i < k; i++) piece[i] = (bits[i] as number) >>> 16; // bf16: float32's upper half
        fs.writeSync(fd, new Uint8Array(piece.buffer, 0, 2 * k));
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** tokenizer.json's vocabulary and merges: exactly `V` ids, the last `<|endoftext|>`. */
function tokenizerJson(V: number): string {
  const b2u = bytesToUnicode();
  const ch = (b: number): string => b2u[b] as string;
  const vocab: Record<string, number> = {};
  const tokens: string[] = [];
  const add = (t: string): void => {
    vocab[t] = tokens.length;
    tokens.push(t);
  };
  for (let b = 0; b < 256; b++) add(ch(b));
  const merges: [string, string][] = [];
  const merge = (a: string, b: string): void => {
    if (tokens.length >= V - 1 || vocab[a + b] !== undefined) return;
    merges.push([a, b]);
    add(a + b);
  };
  const letters = Array.from({ length: 26 }, (_, i) => 97 + i);
  for (const a of letters) for (const b of letters) merge(ch(a), ch(b));
  for (let a = 0; a < 256; a++) for (let b = 0; b < 256; b++) merge(ch(a), ch(b));
  // Past the 65,536 pairs: a pair of non-ASCII bytes and one more byte (never touches "abab…").
  for (let a = 128; a < 256 && tokens.length < V - 1; a++)
    for (let b = 128; b < 256 && tokens.length < V - 1; b++) for (let c = 0; c < 256; c++) merge(ch(a) + ch(b), ch(c));
  if (tokens.length !== V - 1) throw new Error(`could not make ${V} token ids`);
  const added = [
    {
      id: V - 1,
      content: '<|endoftext|>',
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    },
  ];
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return JSON.stringify({
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: null,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  });
}

/** Writes the folder `dir` (created) for `spec`; returns its parameter count and bytes of weights. */
export function writeRandomHf(dir: string, spec: RandomHfSpec, seed = 135): { params: number; bytes: number } {
  fs.mkdirSync(dir, { recursive: true });
  const tensors = tensorsOf(spec);
  const params = tensors.reduce((a, t) => a + count(t.shape), 0);
  const rng = new Rng(seed);
  const shards: TensorPlan[][] = [[]];
  let size = 0;
  for (const t of tensors) {
    const b = 2 * count(t.shape);
    if (spec.shardBytes > 0 && size > 0 && size + b > spec.shardBytes) {
      shards.push([]);
      size = 0;
    }
    (shards[shards.length - 1] as TensorPlan[]).push(t);
    size += b;
  }
  if (shards.length === 1) writeShard(path.join(dir, 'model.safetensors'), tensors, rng);
  else {
    const weightMap: Record<string, string> = {};
    shards.forEach((ts, i) => {
      const file = `model-${String(i + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`;
      writeShard(path.join(dir, file), ts, rng);
      for (const t of ts) weightMap[t.name] = file;
    });
    const index = { metadata: { total_size: 2 * params }, weight_map: weightMap };
    fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify(index, null, 2));
  }
  const config = {
    architectures: [spec.architecture],
    model_type: spec.modelType,
    hidden_size: spec.hidden,
    intermediate_size: spec.intermediate,
    num_attention_heads: spec.heads,
    num_key_value_heads: spec.kvHeads,
    num_hidden_layers: spec.layers,
    max_position_embeddings: spec.context,
    rms_norm_eps: 1e-6,
    rope_theta: spec.ropeTheta,
    tie_word_embeddings: true,
    vocab_size: spec.vocab,
    hidden_act: 'silu',
    torch_dtype: 'bfloat16',
    bos_token_id: spec.vocab - 1,
    eos_token_id: spec.vocab - 1,
  };
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), tokenizerJson(spec.vocab));
  const tokConfig = { bos_token: null, eos_token: '<|endoftext|>', model_max_length: spec.context };
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(tokConfig, null, 2));
  return { params, bytes: 2 * params };
}
