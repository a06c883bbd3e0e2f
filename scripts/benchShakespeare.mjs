#!/usr/bin/env node
// `npm run bench:shakespeare`: nanoGPT's CPU recipe on the full, untrimmed tinyshakespeare
// input.txt, ours against PyTorch on the same split, tokens and validation windows.
//
//   ours:    attention-lab train --data input.txt --preset small --steps 2000 --batch 12 --seq 64
//            --lr 1e-3 --set bias=false --eval-every 250   (the last 10% held out)
//   PyTorch: scripts/pytorch/recipe.py trains the run's own config on the run's own tokens
//
// Prints both validation losses, their difference, and the training wall time of each with
// the ratio (the host's speed drifts, so the two are run back to back, ours first, and the
// ratio is what to read, not the seconds). Not a test: nothing here is asserted.
//
// Usage: node scripts/benchShakespeare.mjs --data input.txt [--steps N] [--threads 2] [--no-pytorch]
// input.txt is tinyshakespeare (1,115,394 bytes; char-rnn's data/tinyshakespeare/input.txt, the
// file nanoGPT's shakespeare_char prepares). ATTENTION_LAB_SHAKESPEARE may name it instead.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const given = opt('--data', process.env.ATTENTION_LAB_SHAKESPEARE);
if (!given) {
  console.error(
    "bench:shakespeare: name tinyshakespeare's input.txt: npm run bench:shakespeare -- --data PATH (or set ATTENTION_LAB_SHAKESPEARE).",
  );
  process.exit(2);
}
const data = path.resolve(given);
const steps = opt('--steps', '2000');
const threads = opt('--threads', '2');
if (!fs.existsSync(data)) {
  console.error(`bench:shakespeare: ${data} is missing; pass --data PATH to tinyshakespeare's input.txt.`);
  process.exit(2);
}
const cli = path.join(ROOT, 'dist', 'cli.js');
if (!fs.existsSync(cli)) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'al-bench-shakespeare-'));
const runDir = path.join(out, 'run');

console.log(
  `nanoGPT CPU recipe on ${data} (${(fs.statSync(data).size / 2 ** 20).toFixed(2)} MB), ${steps} steps (ours: every core; PyTorch: ${threads} threads)`,
);
const t0 = Date.now();
const ours = JSON.parse(
  execFileSync(
    process.execPath,
    [
      cli,
      'train',
      '--data',
      data,
      '--preset',
      'small',
      '--steps',
      steps,
      '--batch',
      '12',
      '--seq',
      '64',
      '--lr',
      '1e-3',
      '--set',
      'bias=false',
      '--eval-every',
      '250',
      '--out',
      runDir,
      '--json',
    ],
    { cwd: out, encoding: 'utf8', maxBuffer: 1 << 26 },
  ),
);
const wall = (Date.now() - t0) / 1000;
const run = JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8'));
const lines = fs
  .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));
const lastStep = lines.filter((l) => l.type === 'step').at(-1);
const oursSeconds = lastStep.elapsedMs / 1000;
const evals = lines.filter((l) => l.type === 'eval').map((l) => [l.step, l.loss]);
console.log(`data: ${run.data.description}; validation: ${run.data.validation.text}`);
console.log(
  `ours:    validation loss ${ours.eval.loss.toFixed(4)}  training ${oursSeconds.toFixed(1)} s (${wall.toFixed(1)} s with start-up and data)  ${((lastStep.step * 12 * 64) / oursSeconds).toFixed(0)} tok/s`,
);
console.log(`         evals ${evals.map(([s, l]) => `${s}:${l.toFixed(3)}`).join(' ')}`);
if (!argv.includes('--no-pytorch')) {
  const py = JSON.parse(
    execFileSync(
      '/usr/bin/python3',
      [path.join(ROOT, 'scripts/pytorch/recipe.py'), '--run', runDir, '--data', data, '--threads', threads],
      { encoding: 'utf8' },
    ),
  );
  console.log(
    `PyTorch: validation loss ${py.val_loss.toFixed(4)}  training ${py.train_seconds.toFixed(1)} s  ${py.tokens_per_s.toFixed(0)} tok/s`,
  );
  console.log(`         evals ${py.evals.map(([s, l]) => `${s}:${l.toFixed(3)}`).join(' ')}`);
  console.log(
    `Δ validation loss (ours − PyTorch): ${(ours.eval.loss - py.val_loss).toFixed(4)}   wall-time ratio (PyTorch / ours): ${(py.train_seconds / oursSeconds).toFixed(2)}×`,
  );
}
fs.rmSync(out, { recursive: true, force: true });
