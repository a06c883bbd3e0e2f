/**
 * Entry of `npm run bench` (scripts/bench.mjs bundles and runs it) until the CLI's
 * `attention-lab bench` calls runBench itself. Flags: --json (one JSON object on stdout),
 * --quick (smoke run), --configs a,b, --threads 1,2, --no-pytorch, --worker <benchWorker.js>,
 * --tfjs <benchTfjs.js>. Progress goes to stderr, results to stdout.
 *
 * Leaves out: the measurements (bench.ts) and formatting (benchReport.ts).
 */

import type { BenchOptions } from './bench';
import { runBench } from './bench';
import type { BenchConfigName } from './benchConfigs';
import { BENCH_CONFIG_NAMES, isBenchConfigName } from './benchConfigs';
import { benchJson, formatBench } from './benchReport';
import { enableWasmRelaxedSimd } from './wasmFlags';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

function parse(argv: readonly string[]): BenchOptions & { json: boolean } {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = value('--configs');
  const configs: BenchConfigName[] = [];
  for (const c of list ? list.split(',') : []) {
    if (!isBenchConfigName(c)) throw new Error(`unknown config "${c}"; choose from ${BENCH_CONFIG_NAMES.join(', ')}`);
    configs.push(c);
  }
  const threads = value('--threads')?.split(',').map(Number);
  if (threads?.some((t) => !Number.isInteger(t) || t < 1)) throw new Error('--threads takes positive integers, e.g. 1,2');
  return {
    json: argv.includes('--json'),
    quick: argv.includes('--quick'),
    pytorch: !argv.includes('--no-pytorch'),
    workerScript: value('--worker') ?? null,
    tfjsScript: value('--tfjs') ?? null,
    ...(configs.length > 0 ? { configs } : {}),
    ...(threads ? { threads } : {}),
    onProgress: (line: string) => process.stderr.write(`${line}\n`),
  };
}

async function main(): Promise<void> {
  let opts: ReturnType<typeof parse>;
  try {
    opts = parse(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
    return;
  }
  const result = await runBench(opts);
  process.stdout.write(opts.json ? `${JSON.stringify(benchJson(result))}\n` : `${formatBench(result)}\n`);
}

void main();
