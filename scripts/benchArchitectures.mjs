#!/usr/bin/env node
// `npm run bench:arch`: the GPT-2-style `small` decoder against today's decoders (`llama-small`,
// `nanochat-small`) and against `small` with each of their options alone, on the same text for
// the same wall-clock training budget each, through the CLI (dist/cli.js). Prints the validation
// loss of each as bits per byte, the axis on which runs with different tokenizers compare.
//
// The CLI has no time limit, so the budget is filled by steps: each config first trains for a
// short calibration (a sixth of the budget, at least 10 s, after its first step; stopped with
// Ctrl-C's signal, which ends a run after the step it is on), whose steps/s (the steps after the
// third) sets the measured run's --steps to budget × steps/s. The measured run then trains that
// many steps with its whole learning-rate schedule (warm-up, cosine decay) inside the budget.
// On a shared machine the speed drifts between minutes: a run whose training time misses the
// budget by more than 20% is run again with its steps scaled by budget ÷ time (at most three
// runs), and the table shows the training seconds the kept run really took (start-up, data and
// the final evaluation are left out of the budget). `small` runs first and again last
// (`small-again`), and the others' Δ is against the mean of the two: the pair shows how far the
// machine drifted meanwhile. Every run: character tokenizer, batch 12, context 64, AdamW at
// lr 1e-3 (nanoGPT's shakespeare_char CPU recipe), seed 1, the last 10% of the text held out,
// evaluated once at the end on all of it; no checkpoints or attention snapshots on the way.
//
// Bits per byte = validation loss (nats per token) × tokens / bytes / ln 2, as the engine's
// evaluation computes it (src/lab/evaluation/bitsPerByte.ts: each scored token counts its UTF-8
// bytes, so a character above U+007F counts 2–4); the table shows bytes per token beside it
// (1 for ASCII text with the character tokenizer).
//
// Usage: node scripts/benchArchitectures.mjs --data input.txt [--seconds 300] [--configs a,b]
//        [--json] [--keep DIR]
// --configs picks among the names below (default: all). The CLI trains on every core. Runs go to
// a temporary folder, removed afterwards unless --keep DIR names where to keep them. Not a test:
// nothing is asserted.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);

/** Llama's and nanochat's decoders at `small`'s size (config.ts MODERN_PRESETS), as --set overrides of `small`. */
const NO_BIASES = ['bias=false', 'qkvBias=false', 'attnOutBias=false', 'mlpBias=false'];
const LLAMA_SMALL = [
  'positional=rope',
  'normType=rmsnorm',
  'activation=swiglu',
  'nKvHeads=2',
  'dFF=344',
  'tieEmbeddings=false',
  ...NO_BIASES,
];
const NANOCHAT_SMALL = [
  'positional=rope',
  'normType=rmsnorm',
  'normScale=false',
  'qkNorm=true',
  'activation=relu2',
  'logitSoftCap=15',
  'embedNorm=true',
  'tieEmbeddings=false',
  ...NO_BIASES,
];

/**
 * The configs: a preset, and the --set overrides that build the same model from `small` where
 * a CLI from before the modern presets joined the preset table does not know it (`fallback`).
 */
const CONFIGS = [
  { name: 'small', what: 'GPT-2-style (nanoGPT): learned positions, LayerNorm, GELU, biases, tied', preset: 'small' },
  {
    name: 'llama-small',
    what: 'Llama: RoPE, RMSNorm, SwiGLU, 2 kv heads, no biases, untied',
    preset: 'llama-small',
    fallback: LLAMA_SMALL,
  },
  {
    name: 'nanochat-small',
    what: 'nanochat: RoPE, weightless RMSNorm (+ after embeddings), QK-norm, ReLU², soft-cap 15, no biases, untied',
    preset: 'nanochat-small',
    fallback: NANOCHAT_SMALL,
  },
  { name: '+rope', what: 'small with RoPE instead of learned positions', preset: 'small', sets: ['positional=rope'] },
  { name: '+rmsnorm', what: 'small with RMSNorm instead of LayerNorm', preset: 'small', sets: ['normType=rmsnorm'] },
  {
    name: '+swiglu',
    what: 'small with SwiGLU (dFF 344: the parameters of GELU at 512)',
    preset: 'small',
    sets: ['activation=swiglu', 'dFF=344'],
  },
  { name: '+relu2', what: 'small with ReLU² instead of GELU', preset: 'small', sets: ['activation=relu2'] },
  { name: '+qkNorm', what: 'small with QK-norm', preset: 'small', sets: ['qkNorm=true'] },
  { name: '+gqa2', what: 'small with 2 key/value heads (of 4)', preset: 'small', sets: ['nKvHeads=2'] },
  { name: '+softcap15', what: 'small with logits soft-capped at 15', preset: 'small', sets: ['logitSoftCap=15'] },
  {
    name: '+parallel',
    what: 'small with parallel residual (GPT-NeoX)',
    preset: 'small',
    sets: ['parallelResidual=true'],
  },
  {
    name: '+alibi',
    what: 'small with ALiBi instead of learned positions',
    preset: 'small',
    sets: ['positional=alibi'],
  },
];

const given = opt('--data', process.env.ATTENTION_LAB_SHAKESPEARE);
if (!given) {
  console.error(
    "bench:arch: name tinyshakespeare's input.txt: npm run bench:arch -- --data PATH (or set ATTENTION_LAB_SHAKESPEARE).",
  );
  process.exit(2);
}
const data = path.resolve(given);
if (!fs.existsSync(data)) {
  console.error(`bench:arch: ${data} is missing; pass --data PATH to a text file (tinyshakespeare's input.txt).`);
  process.exit(2);
}
const budget = Number(opt('--seconds', '300'));
if (!(budget >= 10)) {
  console.error('bench:arch: --seconds takes the training budget per config in seconds, at least 10.');
  process.exit(2);
}
const picked = opt('--configs', '').split(',').filter(Boolean);
for (const n of picked)
  if (!CONFIGS.some((c) => c.name === n)) {
    console.error(`bench:arch: unknown config "${n}"; choose from ${CONFIGS.map((c) => c.name).join(', ')}.`);
    process.exit(2);
  }
const configs = picked.length ? CONFIGS.filter((c) => picked.includes(c.name)) : CONFIGS;
const json = argv.includes('--json');
const keep = opt('--keep', undefined);

const cli = path.join(ROOT, 'dist', 'cli.js');
if (!fs.existsSync(cli)) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
const out = keep ? path.resolve(keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'al-bench-arch-'));
fs.mkdirSync(out, { recursive: true });
const log = (s) => process.stderr.write(`${s}\n`);

/** The step and eval lines of a run folder's metrics.jsonl so far. */
function metrics(runDir) {
  const file = path.join(runDir, 'metrics.jsonl');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return []; // a line being written
      }
    });
}

/** The CLI's train arguments for config `c` (with its fallback overrides when `fallback`). */
function trainArgs(c, fallback, steps, runDir) {
  const preset = fallback ? 'small' : c.preset;
  const sets = [...(fallback ? c.fallback : []), ...(c.sets ?? [])];
  return [
    cli,
    'train',
    '--data',
    data,
    '--preset',
    preset,
    ...sets.flatMap((s) => ['--set', s]),
    '--steps',
    String(steps),
    '--batch',
    '12',
    '--seq',
    '64',
    '--lr',
    '1e-3',
    '--seed',
    '1',
    '--eval-every',
    '0',
    '--checkpoint-every',
    '0',
    '--snapshot-every',
    '0',
    '--out',
    runDir,
    '--json',
  ];
}

/**
 * Runs the CLI; resolves with its exit code and output. With `calibrateSeconds`, stops the run
 * (SIGINT: after the step it is on) that many seconds after its first step.
 */
function train(args, runDir, calibrateSeconds) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: out, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let timer = null;
    if (calibrateSeconds) {
      let firstStepAt = 0;
      timer = setInterval(() => {
        if (!firstStepAt && metrics(runDir).some((l) => l.type === 'step')) firstStepAt = Date.now();
        if (firstStepAt && Date.now() - firstStepAt >= calibrateSeconds * 1000) {
          clearInterval(timer);
          child.kill('SIGINT');
        }
      }, 250);
    }
    child.on('close', (code) => {
      if (timer) clearInterval(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Whether the CLI refused the preset's name (it predates the modern presets): then the overrides build it. */
const refusedPreset = (r) => /--preset must be one of/.test(r.stderr);

/** A measured run whose training time misses the budget by more than this fraction is run again, steps scaled. */
const TOLERANCE = 0.2;
const MAX_ATTEMPTS = 3;

const results = [];
log(
  `bench:arch on ${data} (${fs.statSync(data).size.toLocaleString('en-US')} bytes): ${budget} s of training per config, ` +
    `${configs.length} configs; load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
);
// With other configs, `small` is measured first and again last: the baseline brackets the run, so
// the drift of a shared machine's speed shows, and the others compare to the mean of the two.
const plan =
  configs.length > 1 && configs[0].name === 'small'
    ? [...configs, { ...configs[0], name: 'small-again', what: 'small once more, last: how far the machine drifted' }]
    : configs;
for (const c of plan) {
  let fallback = false;
  const calDir = path.join(out, `${c.name}-calibration`);
  const calSeconds = Math.max(10, budget / 6);
  let cal = await train(trainArgs(c, fallback, 1_000_000, calDir), calDir, calSeconds);
  if (cal.code !== 0 && c.fallback && refusedPreset(cal)) {
    fallback = true;
    fs.rmSync(calDir, { recursive: true, force: true });
    cal = await train(trainArgs(c, fallback, 1_000_000, calDir), calDir, calSeconds);
  }
  const calSteps = metrics(calDir).filter((l) => l.type === 'step');
  if (calSteps.length < 5) {
    log(
      `bench:arch: ${c.name}: calibration reached ${calSteps.length} steps (exit ${cal.code}): ${cal.stderr.trim().split('\n').at(-1)}`,
    );
    process.exitCode = 1;
    continue;
  }
  const a = calSteps[2];
  const b = calSteps.at(-1);
  const stepsPerS = (b.step - a.step) / ((b.elapsedMs - a.elapsedMs) / 1000);
  if (!keep) fs.rmSync(calDir, { recursive: true, force: true });
  let steps = Math.max(1, Math.round(stepsPerS * budget));
  const runDir = path.join(out, c.name);
  log(
    `${c.name}: ${stepsPerS.toFixed(2)} steps/s in calibration → ${steps} steps` +
      (fallback ? ' (preset built by --set overrides)' : ''),
  );
  let last = null;
  let evalLine = null;
  let attempts = 0;
  while (attempts < MAX_ATTEMPTS) {
    attempts++;
    fs.rmSync(runDir, { recursive: true, force: true });
    const r = await train(trainArgs(c, fallback, steps, runDir), runDir, 0);
    if (r.code !== 0) {
      log(`bench:arch: ${c.name} failed (exit ${r.code}): ${r.stderr.trim().split('\n').at(-1)}`);
      last = null;
      break;
    }
    const lines = metrics(runDir);
    last = lines.filter((l) => l.type === 'step').at(-1);
    evalLine = lines.filter((l) => l.type === 'eval').at(-1);
    const seconds = last.elapsedMs / 1000;
    if (Math.abs(seconds / budget - 1) <= TOLERANCE || attempts === MAX_ATTEMPTS) break;
    const next = Math.max(1, Math.round((steps * budget) / seconds));
    log(
      `${c.name}: ${steps} steps took ${seconds.toFixed(1)} s, not ${budget} s (the machine's speed moved): again with ${next}`,
    );
    steps = next;
  }
  if (!last || !evalLine) {
    process.exitCode = 1;
    continue;
  }
  const run = JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8'));
  const params = paramCount(path.join(runDir, 'model.safetensors'));
  const row = {
    name: c.name,
    what: c.what,
    params,
    steps: last.step,
    trainSeconds: last.elapsedMs / 1000,
    tokensPerS: (last.step * 12 * 64) / (last.elapsedMs / 1000),
    valLoss: evalLine.loss,
    bpb: evalLine.bpb,
    bytesPerToken: evalLine.loss / (evalLine.bpb * Math.LN2),
    valTokens: run.data.valTokens,
    overrides: fallback,
    attempts,
  };
  results.push(row);
  log(
    `${c.name}: ${row.steps} steps in ${row.trainSeconds.toFixed(1)} s, validation loss ${row.valLoss.toFixed(4)} = ${row.bpb.toFixed(4)} bits/byte`,
  );
  if (!keep) fs.rmSync(runDir, { recursive: true, force: true });
}
if (!keep) fs.rmSync(out, { recursive: true, force: true });

/** Parameters in a safetensors file: the element count of every tensor in its header. */
function paramCount(file) {
  const buf = fs.readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  let total = 0;
  for (const [k, v] of Object.entries(header)) if (k !== '__metadata__') total += v.shape.reduce((x, y) => x * y, 1);
  return total;
}

if (json) {
  console.log(JSON.stringify({ data, budgetSeconds: budget, loadavg: os.loadavg(), results }));
} else {
  const smalls = results.filter((r) => r.name === 'small' || r.name === 'small-again');
  const base = smalls.length ? smalls.reduce((x, r) => x + r.bpb, 0) / smalls.length : null;
  console.log(
    `\n${budget} s of training per config on ${path.basename(data)}; load average now ${os.loadavg()[0].toFixed(1)}\n`,
  );
  console.log(
    `| config | params | steps | training s (runs) | tok/s | val loss | bits/byte | Δ vs small${smalls.length > 1 ? ' (mean of 2)' : ''} | bytes/token |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of results)
    console.log(
      `| ${r.name} | ${r.params.toLocaleString('en-US')} | ${r.steps} | ${r.trainSeconds.toFixed(1)} (${r.attempts}) | ${Math.round(r.tokensPerS).toLocaleString('en-US')} | ` +
        `${r.valLoss.toFixed(4)} | ${r.bpb.toFixed(4)} | ${base === null ? '' : (r.bpb - base >= 0 ? '+' : '') + (r.bpb - base).toFixed(4)} | ${r.bytesPerToken.toFixed(3)} |`,
    );
  console.log('');
  for (const r of results)
    console.log(`${r.name}: ${r.what}${r.overrides ? ' (built by --set overrides of small)' : ''}`);
}
