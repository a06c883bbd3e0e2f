// Writes test/golden/llama-export/: a tiny Llama-shaped run trained here and exported with
// `attention-lab export --format hf` (the folder tiny/), then expected.json, transformers'
// LlamaForCausalLM's per-token log-probabilities of its example
// (scripts/pytorch/make_llama_export_golden.py). Needs `npm run build` first, and a Python with
// transformers: PYTHON=/path/to/python node scripts/makeLlamaExportFixture.mjs (default python3).
//
// The run: the reference backend, a fixed seed and a generated text, so it is the same run on
// every machine; grouped-query attention (4 heads, 2 key/value heads), q/k/v/o and MLP biases,
// an untied output projection, RoPE θ 1000 and RMSNorm ε 1e-6 (not Llama's defaults, so a
// field that is not read shows).

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'test', 'golden', 'llama-export');
const cli = path.join(root, 'dist', 'cli.js');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'llama-fixture-'));
const EXAMPLE = 'the cat sat on the mat';

// A deterministic text: words picked by a linear congruential generator.
const words = 'the cat sat on mat and dog ran to log while a bird sang in tree'.split(' ');
let s = 12345;
const picked = [];
for (let i = 0; i < 4000; i++) {
  s = (s * 1103515245 + 12345) % 2147483648;
  picked.push(words[s % words.length]);
}
fs.writeFileSync(path.join(work, 'doc.txt'), picked.join(' '));

const sets = {
  dModel: 32,
  nHeads: 4,
  nKvHeads: 2,
  dFF: 64,
  nDecoderLayers: 2,
  maxLen: 32,
  dropout: 0,
  norm: 'pre',
  positional: 'rope',
  ropeTheta: 1000,
  normType: 'rmsnorm',
  layerNormEps: 1e-6,
  activation: 'swiglu',
  embedScale: false,
  tieEmbeddings: false,
  qkvBias: true,
  attnOutBias: true,
  mlpBias: true,
};
const run = (args) => execFileSync(process.execPath, [cli, ...args], { cwd: work, stdio: 'inherit' });
run([
  'train',
  '--data',
  'doc.txt',
  '--model',
  'decoder-only',
  ...Object.entries(sets).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
  '--steps',
  '60',
  '--batch',
  '4',
  '--seq',
  '32',
  '--lr',
  '0.003',
  '--seed',
  '7',
  '--backend',
  'reference',
  '--out',
  'tiny',
  '--json',
]);
fs.rmSync(path.join(out, 'tiny'), { recursive: true, force: true });
run(['export', '--run', 'tiny', '--out', out, '--format', 'hf', '--text', EXAMPLE]);
execFileSync(
  process.env.PYTHON ?? 'python3',
  [
    path.join(root, 'scripts', 'pytorch', 'make_llama_export_golden.py'),
    path.join(out, 'tiny'),
    '--out',
    path.join(out, 'expected.json'),
  ],
  { stdio: 'inherit' },
);
fs.rmSync(work, { recursive: true, force: true });
