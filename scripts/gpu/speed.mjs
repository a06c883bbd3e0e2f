#!/usr/bin/env node
// The GPU speed check of issue 31, run in one go on a machine with a GPU (scripts/gpu/speed.sh
// checks Vulkan's loader first, then runs this). One run — nanoGPT's shakespeare-char shape:
// 6 layers, 6 heads, d_model 384, context 256, batch 64, bias off, 10.7M parameters, a
// character vocabulary — trained for the same steps from the same seed, data and initial
// weights on three engines:
//
//   ours, WebGPU      attention-lab train --backend webgpu   (the GPU, through Dawn and Vulkan)
//   PyTorch, fp32     attention-lab train --engine pytorch --device cuda (the repo's PyTorch engine,
//                     python/attention_lab_trainer/model.py; float32, TF32 off, as PyTorch defaults)
//   ours, WebAssembly attention-lab train --backend wasm     (this machine's CPU, every core)
//
// and reports each one's tokens/s (median over the steps after the first 10), the achieved
// TFLOP/s (nanoGPT's estimate: 6·N + 12·L·T·d FLOPs per token, N every parameter), the ratios,
// and whether WebGPU's per-step losses stay within 1e-3 of WebAssembly's over the steps both ran
// (exit code 1 when they do not). Dropout is off (PyTorch draws its own masks; ours are
// identical on our two backends), so PyTorch's losses are shown beside ours too.
//
// It fails clearly, before any long run: no adapter (Dawn's one-line reason), or a software
// adapter (SwiftShader, llvmpipe) unless --allow-software. `--small` swaps in a small shape (2
// layers, d_model 64, context 32, batch 8, 20 steps) to check the script end to end anywhere:
//
//   node scripts/gpu/speed.mjs --small --allow-software --torch-device cpu --python /path/to/python
//
// Options: --data FILE (a text file: tinyshakespeare's input.txt; default a generated text of 65
// characters), --steps N (200), --cpu-steps N (WebAssembly's steps, default --steps: lower it when
// the CPU is slow — the losses are compared over the steps both ran), --batch N, --python PATH,
// --torch-device cuda|cpu (cuda), --no-pytorch, --no-wasm, --json FILE (the report as JSON),
// --keep (keep the run folders).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const has = (name) => argv.includes(name);
const opt = (name, fallback) => (has(name) ? argv[argv.indexOf(name) + 1] : fallback);
const fail = (msg, code = 2) => {
  console.error(`gpu speed: ${msg}`);
  process.exit(code);
};

const small = has('--small');
const shape = small
  ? { layers: 2, heads: 4, d: 64, seq: 32, batch: 8, steps: 20 }
  : { layers: 6, heads: 6, d: 384, seq: 256, batch: 64, steps: 200 };
const steps = Number(opt('--steps', String(shape.steps)));
const cpuSteps = Math.min(steps, Number(opt('--cpu-steps', String(steps))));
const batch = Number(opt('--batch', String(shape.batch)));
const torchDevice = opt('--torch-device', 'cuda');
const python = opt('--python', process.env.ATTENTION_LAB_PYTHON ?? 'python3');
for (const [name, n] of [
  ['--steps', steps],
  ['--cpu-steps', cpuSteps],
  ['--batch', batch],
])
  if (!Number.isInteger(n) || n < 1) fail(`${name} must be a positive whole number.`);
if (steps <= 10) fail('--steps must be above 10: the first 10 steps are warm-up, not timed.');

const cli = path.join(ROOT, 'dist', 'cli.js');
if (!fs.existsSync(cli)) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'al-gpu-speed-'));

/** The training text: --data, or a generated one over 65 characters (the shape is what is measured). */
function dataFile() {
  const given = opt('--data', process.env.ATTENTION_LAB_SHAKESPEARE);
  if (given) {
    if (!fs.existsSync(given))
      fail(`${given} is missing; pass --data PATH to a text file (tinyshakespeare's input.txt).`);
    return path.resolve(given);
  }
  const chars = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let s = 1;
  const rand = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8) / 2 ** 24;
  const words = Array.from({ length: 400 }, () =>
    Array.from({ length: 2 + Math.floor(rand() * 7) }, () => chars[13 + Math.floor(rand() * 52)]).join(''),
  );
  let text = chars; // every character appears: the vocabulary is the shape's 65
  while (text.length < (small ? 200_000 : 1_100_000))
    text += `${words[Math.floor(rand() * words.length)]}${rand() < 0.1 ? '.\n' : ' '}`;
  const file = path.join(work, 'input.txt');
  fs.writeFileSync(file, text);
  return file;
}

/** Runs `attention-lab train` with `args`; returns its JSON answer, or the one-line reason it failed. */
function train(args, timeoutMs) {
  const r = spawnSync(process.execPath, [cli, 'train', ...args, '--json'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 1 << 26,
  });
  if (r.status === 0) return { ok: true, json: JSON.parse(r.stdout.trim().split('\n').pop()) };
  const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').pop();
  return { ok: false, reason: why.replace(/^attention-lab: /, '') };
}

/** The per-step records of a run folder's metrics.jsonl. */
function stepsOf(dir) {
  return fs
    .readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
    .filter((m) => m.type === 'step');
}

/** Every parameter of a run's model.safetensors. */
function parameters(dir) {
  const a = fs.readFileSync(path.join(dir, 'model.safetensors'));
  const header = JSON.parse(a.subarray(8, 8 + Number(a.readBigUInt64LE(0))).toString('utf8'));
  return Object.entries(header)
    .filter(([k]) => k !== '__metadata__')
    .reduce((n, [, t]) => n + t.shape.reduce((x, y) => x * y, 1), 0);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : Number.NaN;
};

const data = dataFile();
const common = (n) => [
  '--data',
  data,
  '--preset',
  'small',
  '--set',
  `dModel=${shape.d}`,
  '--set',
  `nHeads=${shape.heads}`,
  '--set',
  `nDecoderLayers=${shape.layers}`,
  '--set',
  `dFF=${4 * shape.d}`,
  '--set',
  `maxLen=${shape.seq}`,
  '--set',
  'bias=false',
  '--set',
  'dropout=0',
  '--seq',
  String(shape.seq),
  '--batch',
  String(batch),
  '--steps',
  String(n),
  '--lr',
  '1e-3',
  '--warmup',
  String(Math.min(10, n - 1)),
  '--seed',
  '1',
  '--eval-every',
  '0',
  '--checkpoint-every',
  '0',
  '--snapshot-every',
  '0',
];

// 1. The adapter, before any long run: a one-step run names it (run.json's backendUsed).
const probeDir = path.join(work, 'probe');
const probe = train([...common(1), '--backend', 'webgpu', '--out', probeDir], 600_000);
if (!probe.ok) fail(`WebGPU did not open: ${probe.reason}`, 3);
const backendUsed = JSON.parse(fs.readFileSync(path.join(probeDir, 'run.json'), 'utf8')).backendUsed ?? 'webgpu';
const adapter = backendUsed.replace(/^webgpu \((.*)\)$/, '$1');
if (/swiftshader|llvmpipe|lavapipe|softpipe|warp|software/i.test(adapter) && !has('--allow-software'))
  fail(
    `the WebGPU adapter is a software one (${adapter}), not a GPU: on a machine with NVIDIA's driver, check ` +
      "`vulkaninfo --summary` lists the GPU (Vulkan's loader libvulkan.so.1 and nvidia_icd.json); " +
      'pass --allow-software (with --small) only to check this script.',
    3,
  );
console.log(`adapter: ${adapter}; data: ${data}; ${steps} steps (WebAssembly: ${cpuSteps}), batch ${batch}`);

// 2. The three runs, from one initial checkpoint each (the same seed gives the same weights).
const engines = [
  { name: 'webgpu', label: `ours, WebGPU (${adapter})`, args: ['--backend', 'webgpu'], n: steps },
  ...(has('--no-pytorch')
    ? []
    : [
        {
          name: 'pytorch',
          label: `PyTorch fp32 (${torchDevice})`,
          args: ['--engine', 'pytorch', '--device', torchDevice, '--python', python],
          n: steps,
        },
      ]),
  ...(has('--no-wasm')
    ? []
    : [{ name: 'wasm', label: 'ours, WebAssembly (CPU)', args: ['--backend', 'wasm'], n: cpuSteps }]),
];
const results = {};
let params = 0;
for (const e of engines) {
  const dir = path.join(work, e.name);
  const t0 = Date.now();
  const r = train([...common(e.n), ...e.args, '--out', dir], 4 * 3600_000);
  if (!r.ok) {
    results[e.name] = { label: e.label, error: r.reason };
    console.log(`${e.label}: FAILED — ${r.reason}`);
    continue;
  }
  const recs = stepsOf(dir);
  params ||= parameters(dir);
  const timed = recs.slice(10).map((m) => m.tokensPerSec);
  results[e.name] = {
    label: e.label,
    steps: recs.length,
    tokensPerSec: median(timed),
    minTokensPerSec: Math.min(...timed),
    maxTokensPerSec: Math.max(...timed),
    wallSeconds: (Date.now() - t0) / 1000,
    losses: recs.map((m) => m.loss),
  };
  console.log(`${e.label}: ${recs.length} steps, ${Math.round(median(timed)).toLocaleString('en-US')} tokens/s`);
}

// 3. The report.
const flopsPerToken = 6 * params + 12 * shape.layers * shape.seq * shape.d;
const rows = Object.values(results);
const tflops = (r) => (r.tokensPerSec * flopsPerToken) / 1e12;
console.log(
  `\nshape: ${shape.layers} layers, ${shape.heads} heads, d_model ${shape.d}, context ${shape.seq}, batch ${batch}; ` +
    `${(params / 1e6).toFixed(2)}M parameters; ${(flopsPerToken / 1e6).toFixed(1)} MFLOP per token`,
);
console.log('| engine | tokens/s (median [min–max]) | TFLOP/s |');
console.log('|---|---|---|');
for (const r of rows)
  console.log(
    r.error
      ? `| ${r.label} | failed: ${r.error} | — |`
      : `| ${r.label} | ${Math.round(r.tokensPerSec).toLocaleString('en-US')} ` +
          `[${Math.round(r.minTokensPerSec).toLocaleString('en-US')}–${Math.round(r.maxTokensPerSec).toLocaleString('en-US')}] ` +
          `| ${tflops(r).toPrecision(3)} |`,
  );
const gpu = results.webgpu;
const ratios = {};
for (const other of ['pytorch', 'wasm'])
  if (gpu?.tokensPerSec && results[other]?.tokensPerSec) {
    ratios[other] = gpu.tokensPerSec / results[other].tokensPerSec;
    console.log(`WebGPU / ${results[other].label}: ${ratios[other].toFixed(3)}×`);
  }

/** The largest per-step |a − b| over the steps both ran. */
const worst = (a, b) => Math.max(...a.slice(0, Math.min(a.length, b.length)).map((x, i) => Math.abs(x - b[i])));
let lossOk = true;
if (gpu?.losses && results.wasm?.losses) {
  const w = worst(gpu.losses, results.wasm.losses);
  lossOk = w < 1e-3;
  const over = Math.min(gpu.losses.length, results.wasm.losses.length);
  console.log(
    `losses, WebGPU vs WebAssembly over ${over} steps: worst |Δ| ${w.toExponential(2)} (${lossOk ? 'within' : 'NOT within'} 1e-3)`,
  );
}
if (gpu?.losses && results.pytorch?.losses)
  console.log(
    `losses, WebGPU vs PyTorch: worst |Δ| ${worst(gpu.losses, results.pytorch.losses).toExponential(2)} (not gated)`,
  );

const report = { adapter, shape: { ...shape, batch, steps, cpuSteps }, params, flopsPerToken, results, ratios, lossOk };
const jsonOut = opt('--json', null);
if (jsonOut) fs.writeFileSync(jsonOut, `${JSON.stringify(report, null, 2)}\n`);
if (!has('--keep')) fs.rmSync(work, { recursive: true, force: true });
else console.log(`run folders kept in ${work}`);
const failed = rows.some((r) => r.error) || !lossOk;
process.exit(failed ? 1 : 0);
