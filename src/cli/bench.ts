/**
 * `attention-lab bench`: training tokens/s, decode ms/token and matmul GFLOP/s of the
 * engine on the benchmark's five configs (src/bench/benchConfigs.ts), with PyTorch (and TF.js) measured in the same run
 * where
 * they are installed, and ratios against them. The measurements live in src/bench/.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { runBench } from '../bench/bench';
import type { BenchConfigName } from '../bench/benchConfigs';
import { BENCH_CONFIG_NAMES, isBenchConfigName } from '../bench/benchConfigs';
import { benchJson, formatBench } from '../bench/benchReport';
import { formatImportBench, runImportBench } from '../bench/benchImport';
import { formatGrokkingBench, runGrokkingBench } from '../bench/benchGrokking';
import { GPT2_SMALL } from '../bench/randomGpt2';
import { RANDOM_HF } from '../bench/randomHf';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { trainerDirOf } from './trainPytorch';

export const BENCH_HELP =
  `attention-lab bench [--configs ${BENCH_CONFIG_NAMES.join(',')}] [--threads 1,2] [--quick] ` +
  `[--no-pytorch] [--no-scores] [--python PATH] [--import [gpt2|smollm2|qwen2.5]] [--grokking [--seeds 1,2,3]] [--json]
  Training tokens/s (median after warm-up, min–max), decode ms/token with the key/value cache,
  matmul GFLOP/s at 64–1024, and the event-loop delay while a run trains in a worker.
  Where \`/usr/bin/python3 -c 'import torch'\` works, PyTorch runs the same configs in the same
  invocation (scripts/pytorch/bench.py) and the table shows ours/PyTorch ratios. Last, the
  training session of --task reverse and --task induction with head scores on and off, taking
  turns, at the default snapshot cadence (--no-scores skips it). Then the engines on the same
  run: --task induction and --task reverse trained by ours and by the PyTorch engine (the CPU,
  and CUDA in fp32 and bf16 where torch sees a GPU; --python PATH picks the Python, default
  /usr/bin/python3), tokens/s side by side, and by ours on WebGPU where Dawn opens an adapter (on a
  GPU compared with both; a software one such as SwiftShader trains 3 steps once, reported, not compared).
  --import: instead, a random 124M-parameter GPT-2-layout checkpoint (498 MB) is written,
  imported, opened on wasm, decoded for 20 tokens and asked for 64 tokens' attention: load
  seconds, peak memory and ms/token. --import smollm2 / qwen2.5: a random SmolLM2-135M- or
  Qwen2.5-0.5B-shaped Hugging Face folder (bf16, Qwen sharded), imported, its attention over 1024
  tokens (all layers and heads), the logit lens and scores of that text, and a decode of 20 tokens.
  --grokking: instead, --task modular-addition's default run once per seed (--seeds, default
  1,2,3), each stopped when its test accuracy first reaches 99%: the wall-clock time to it.`;

/** `bench`. */
export async function benchCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags(
    'bench',
    argv,
    {
      configs: { type: 'string' },
      threads: { type: 'string' },
      quick: { type: 'boolean' },
      'no-pytorch': { type: 'boolean' },
      'no-scores': { type: 'boolean' },
      import: { type: 'boolean' },
      python: { type: 'string' },
      grokking: { type: 'boolean' },
      seeds: { type: 'string' },
    },
    1,
  );
  if (f.bool('help')) return ctx.help(BENCH_HELP);
  const family = f.positionals[0];
  if (family !== undefined && !f.bool('import'))
    throw new UsageError(`unexpected argument "${family}" for \`bench\`; a model name goes after --import.`);
  if (f.bool('import')) {
    if (family !== undefined && family !== 'gpt2' && !(family in RANDOM_HF))
      throw new UsageError(`--import: unknown model "${family}"; choose gpt2, ${Object.keys(RANDOM_HF).join(', ')}.`);
    const source = family === undefined || family === 'gpt2' ? GPT2_SMALL : RANDOM_HF[family as keyof typeof RANDOM_HF];
    const r = await runImportBench(
      source,
      (line) => ctx.err(line),
      family === undefined || family === 'gpt2' ? 1000 : 1024,
    );
    ctx.out(f.bool('json') ? JSON.stringify(r) : formatImportBench(r));
    return 0;
  }
  if (f.bool('grokking')) {
    const seeds = (f.str('seeds') ?? '1,2,3').split(',').map(Number);
    if (seeds.some((s) => !Number.isInteger(s)))
      throw new UsageError('--seeds takes whole numbers separated by commas, e.g. 1,2,3.');
    const r = await runGrokkingBench(seeds, (line) => ctx.err(line));
    ctx.out(f.bool('json') ? JSON.stringify(r) : formatGrokkingBench(r));
    return 0;
  }
  const configs: BenchConfigName[] = [];
  for (const c of (f.str('configs') ?? '').split(',').filter(Boolean)) {
    if (!isBenchConfigName(c))
      throw new UsageError(`--configs: unknown config "${c}"; choose from ${BENCH_CONFIG_NAMES.join(', ')}.`);
    configs.push(c);
  }
  const threads = f.str('threads')?.split(',').map(Number);
  if (threads?.some((t) => !Number.isInteger(t) || t < 1))
    throw new UsageError('--threads takes positive whole numbers, e.g. 1,2.');
  const dist = path.dirname(ctx.workerScript);
  const sibling = (name: string): string | null =>
    fs.existsSync(path.join(dist, name)) ? path.join(dist, name) : null;
  const result = await runBench({
    quick: f.bool('quick'),
    pytorch: !f.bool('no-pytorch'),
    scores: !f.bool('no-scores'),
    workerScript: sibling('benchWorker.js'),
    tfjsScript: sibling('benchTfjs.js'),
    trainerDir: fs.existsSync(trainerDirOf(ctx)) ? trainerDirOf(ctx) : null,
    ...(f.str('python') ? { python: f.str('python') as string } : {}),
    ...(configs.length ? { configs } : {}),
    ...(threads ? { threads } : {}),
    onProgress: (line) => ctx.err(line),
  });
  ctx.out(f.bool('json') ? JSON.stringify(benchJson(result)) : formatBench(result));
  return 0;
}
