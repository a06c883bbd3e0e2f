/**
 * A random model in Hugging Face GPT-2's layout, written to a folder as a user would have
 * it: `model.safetensors` (GPT2Model names, Conv1D weights [in, out], F32, with the
 * `attn.bias` mask buffers older transformers versions saved), `config.json`, and a GPT-2
 * style `vocab.json` + `merges.txt` whose merges join pairs of bytes (lowercase letters
 * first), so `"ab".repeat(n)` is n tokens. The default sizes are GPT-2 small's: 124M
 * parameters, 498 MB. The file is written tensor by tensor in pieces, so generating it never
 * holds the whole model in memory. Used by the import bench and the import memory test.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Rng } from '../engine/rng';
import { bytesToUnicode } from '../engine/tokenizers/gpt2Files';

/** Sizes of the random model; defaults are GPT-2 small's. */
export interface RandomGpt2Sizes {
  readonly nLayer: number;
  readonly nEmbd: number;
  readonly nHead: number;
  readonly nPositions: number;
  /** Merges in merges.txt; the vocabulary is 256 + merges + 1 (<|endoftext|>). */
  readonly merges: number;
}

export const GPT2_SMALL: RandomGpt2Sizes = { nLayer: 12, nEmbd: 768, nHead: 12, nPositions: 1024, merges: 50000 };

/** Byte pairs in merge order: lowercase letters first, then every other pair. */
function mergePairs(n: number): [number, number][] {
  const letters = Array.from({ length: 26 }, (_, i) => 97 + i);
  const out: [number, number][] = [];
  const seen = new Set<number>();
  const add = (a: number, b: number): void => {
    if (out.length < n && !seen.has(a * 256 + b)) {
      seen.add(a * 256 + b);
      out.push([a, b]);
    }
  };
  for (const a of letters) for (const b of letters) add(a, b);
  for (let a = 0; a < 256 && out.length < n; a++) for (let b = 0; b < 256; b++) add(a, b);
  if (out.length < n) throw new Error(`at most 65536 byte-pair merges, asked for ${n}`);
  return out;
}

/** Writes the model and its tokenizer files into `dir` (created); returns the model file and its parameter count. */
export function writeRandomGpt2(
  dir: string,
  sizes: RandomGpt2Sizes = GPT2_SMALL,
  seed = 124,
): { file: string; params: number; bytes: number } {
  fs.mkdirSync(dir, { recursive: true });
  const { nLayer: L, nEmbd: C, nHead: H, nPositions: P } = sizes;
  const V = 256 + sizes.merges + 1;
  const tensors: { name: string; shape: number[]; init: 'normal' | 'one' | 'zero' | 'mask' }[] = [
    { name: 'wte.weight', shape: [V, C], init: 'normal' },
    { name: 'wpe.weight', shape: [P, C], init: 'normal' },
  ];
  for (let i = 0; i < L; i++) {
    const h = `h.${i}.`;
    tensors.push(
      { name: `${h}ln_1.weight`, shape: [C], init: 'one' },
      { name: `${h}ln_1.bias`, shape: [C], init: 'zero' },
      { name: `${h}attn.bias`, shape: [1, 1, P, P], init: 'mask' },
      { name: `${h}attn.c_attn.weight`, shape: [C, 3 * C], init: 'normal' },
      { name: `${h}attn.c_attn.bias`, shape: [3 * C], init: 'zero' },
      { name: `${h}attn.c_proj.weight`, shape: [C, C], init: 'normal' },
      { name: `${h}attn.c_proj.bias`, shape: [C], init: 'zero' },
      { name: `${h}ln_2.weight`, shape: [C], init: 'one' },
      { name: `${h}ln_2.bias`, shape: [C], init: 'zero' },
      { name: `${h}mlp.c_fc.weight`, shape: [C, 4 * C], init: 'normal' },
      { name: `${h}mlp.c_fc.bias`, shape: [4 * C], init: 'zero' },
      { name: `${h}mlp.c_proj.weight`, shape: [4 * C, C], init: 'normal' },
      { name: `${h}mlp.c_proj.bias`, shape: [C], init: 'zero' },
    );
  }
  tensors.push({ name: 'ln_f.weight', shape: [C], init: 'one' }, { name: 'ln_f.bias', shape: [C], init: 'zero' });
  let offset = 0;
  const entries: string[] = ['"__metadata__":{"format":"pt"}'];
  let params = 0;
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (t.init !== 'mask') params += n;
    entries.push(
      `${JSON.stringify(t.name)}:{"dtype":"F32","shape":[${t.shape.join(',')}],` +
        `"data_offsets":[${offset},${offset + 4 * n}]}`,
    );
    offset += 4 * n;
  }
  const json = Buffer.from(`{${entries.join(',')}}`, 'utf8');
  const headerLength = Math.ceil(json.length / 8) * 8;
  const head = Buffer.alloc(8 + headerLength, 0x20);
  head.writeUInt32LE(headerLength, 0);
  head.writeUInt32LE(0, 4);
  json.copy(head, 8);
  const file = path.join(dir, 'model.safetensors');
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, head);
    const rng = new Rng(seed);
    const piece = new Float32Array(1 << 20);
    for (const t of tensors) {
      const n = t.shape.reduce((a, b) => a * b, 1);
      for (let done = 0; done < n; done += piece.length) {
        const k = Math.min(piece.length, n - done);
        for (let i = 0; i < k; i++) {
          const at = done + i;
          piece[i] =
            t.init === 'normal'
              ? 0.02 * rng.normal()
              : t.init === 'one'
                ? 1
                : t.init === 'zero'
                  ? 0
                  : at % P <= Math.floor(at / P) % P
                    ? 1
                    : 0;
        }
        fs.writeSync(fd, new Uint8Array(piece.buffer, 0, 4 * k));
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  fs.writeFileSync(
    path.join(dir, 'config.json'),
    `${JSON.stringify(
      {
        model_type: 'gpt2',
        vocab_size: V,
        n_positions: P,
        n_embd: C,
        n_layer: L,
        n_head: H,
        activation_function: 'gelu_new',
        layer_norm_epsilon: 1e-5,
      },
      null,
      2,
    )}\n`,
  );
  writeTokenizerFiles(dir, sizes.merges);
  return { file, params, bytes: 8 + headerLength + offset };
}

function writeTokenizerFiles(dir: string, merges: number): void {
  const table = bytesToUnicode();
  const vocab: Record<string, number> = {};
  table.forEach((ch, b) => {
    vocab[ch] = b;
  });
  const lines = ['#version: 0.2'];
  let next = 256;
  for (const [a, b] of mergePairs(merges)) {
    const x = table[a] as string;
    const y = table[b] as string;
    vocab[x + y] = next++;
    lines.push(`${x} ${y}`);
  }
  vocab['<|endoftext|>'] = 256 + merges;
  fs.writeFileSync(path.join(dir, 'vocab.json'), JSON.stringify(vocab));
  fs.writeFileSync(path.join(dir, 'merges.txt'), `${lines.join('\n')}\n`);
}
