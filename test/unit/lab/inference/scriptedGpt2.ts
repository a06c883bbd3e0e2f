/**
 * Test helper (not a test file): a GPT-2-layout run whose model writes a given script of
 * byte tokens, whatever it reads — so a decode's limit can be put inside a character, and a
 * logit-lens cell can hold the first bytes of one. The tokenizer is GPT-2's byte-level BPE
 * without merges (src/bench/randomGpt2.ts: byte b is id b, `<|endoftext|>` is 256 and is
 * BOS and EOS), so every byte of a Japanese character or an emoji is a token of its own.
 *
 * How the weights write the script: every block adds nothing (its attention and MLP weights
 * are zero), so the stream at position p is wte[token] + wpe[p]; wte[v] is 6 on the axis of
 * script token v (0 elsewhere; other tokens have none), wpe[p] is 60 on the axis of the token
 * position p must predict. After the final LayerNorm and the tied output projection, that
 * token's logit is about 30 and every other one at most about 2: probability 1 − 1e-11, for
 * greedy, beam search and sampling alike, and at every layer of the logit lens.
 *
 * Leaves out: training (the model is written, then imported as any checkpoint is).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeRandomGpt2 } from '../../../../src/bench/randomGpt2';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { openRun } from '../../../../src/lab/inference/openRun';

/** The end-of-text token: BOS and EOS of the scripted run. */
export const END = 256;

/** Positions of the scripted model (its context). */
export const SCRIPT_POSITIONS = 32;

/** The byte tokens of `text` (UTF-8), one per byte. */
export function byteTokens(text: string): number[] {
  return Array.from(new TextEncoder().encode(text));
}

/**
 * Writes into `root` a run whose model predicts `script[p]` at position p (the token after
 * position p; later positions predict `script`'s last token), and opens it. Returns the open
 * run and its folder.
 */
export async function scriptedRun(root: string, script: readonly number[]): Promise<{ r: OpenRun; runDir: string }> {
  const C = 32;
  const P = SCRIPT_POSITIONS;
  const from = path.join(root, 'scripted');
  writeRandomGpt2(from, { nLayer: 1, nEmbd: C, nHead: 1, nPositions: P, merges: 0 }, 1);
  const axes = [...new Set(script)];
  if (axes.length > C) throw new Error(`a script of at most ${C} distinct tokens, got ${axes.length}`);
  const axis = (v: number): number => axes.indexOf(v);
  const file = path.join(from, 'model.safetensors');
  const bytes = new Uint8Array(fs.readFileSync(file)); // its own buffer: the tensors are 4-byte aligned in it
  const headerLength = new DataView(bytes.buffer).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<
    string,
    { shape: number[]; data_offsets: [number, number] }
  >;
  const data = (name: string): Float32Array => {
    const t = header[name];
    if (!t) throw new Error(`no tensor ${name}`);
    const at = 8 + headerLength + t.data_offsets[0];
    return new Float32Array(bytes.buffer, at, (t.data_offsets[1] - t.data_offsets[0]) / 4);
  };
  for (const name of Object.keys(header)) {
    if (/attn\.c_attn\.weight|attn\.c_proj\.weight|mlp\.c_fc\.weight|mlp\.c_proj\.weight/.test(name))
      data(name).fill(0);
  }
  const wte = data('wte.weight').fill(0);
  for (const v of axes) wte[v * C + axis(v)] = 6;
  const wpe = data('wpe.weight').fill(0);
  for (let p = 0; p < P; p++) wpe[p * C + axis(script[Math.min(p, script.length - 1)] as number)] = 60;
  fs.writeFileSync(file, bytes);
  const runDir = path.join(root, 'run');
  await importCheckpoint(NODE_FS, { from, out: runDir });
  return { r: await openRun(NODE_FS, runDir, createReferenceBackend()), runDir };
}
