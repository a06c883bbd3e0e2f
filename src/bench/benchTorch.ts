/**
 * Running the PyTorch side of the benchmark (scripts/pytorch/bench.py) in the same
 * invocation, when Debian's Python has torch: `/usr/bin/python3` on purpose — the
 * `python3` first on PATH may be another interpreter without it. The script prints one
 * JSON object; it is validated here before anything reads it.
 *
 * Leaves out: what to do without PyTorch (bench.ts says so in the report).
 */

import { execFile } from 'node:child_process';
import type { Stats } from './benchRun';

/** The interpreter the benchmark uses for PyTorch. */
export const TORCH_PYTHON = '/usr/bin/python3';

/** Per config and thread count ("1", "2"): PyTorch's training and uncached-decoding speed. */
export interface TorchConfigResult {
  readonly train: Readonly<Record<string, Stats>>;
  readonly decode: Readonly<Record<string, Stats>>;
}

/** What scripts/pytorch/bench.py measured. */
export interface TorchResult {
  readonly torchVersion: string;
  /** The BLAS library torch loaded (reference BLAS is ~30× slower than OpenBLAS). */
  readonly blas: string | null;
  readonly configs: Readonly<Record<string, TorchConfigResult>>;
  /** threads → matrix size → GFLOP/s. */
  readonly matmul: Readonly<Record<string, Readonly<Record<string, Stats>>>>;
}

function run(
  file: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, [...args], { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as { code?: unknown }).code === 'number'
          ? (err as { code: number }).code
          : 1
        : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Why PyTorch cannot be used, or null when `/usr/bin/python3 -c 'import torch'` works. */
export async function torchUnavailableReason(): Promise<string | null> {
  const r = await run(TORCH_PYTHON, ['-c', 'import torch'], 60_000);
  if (r.code === 0) return null;
  const last = r.stderr.trim().split('\n').pop() ?? '';
  return `${TORCH_PYTHON} -c 'import torch' failed${last ? ` (${last})` : ''}`;
}

function isStats(x: unknown): x is Stats {
  const s = x as Record<string, unknown>;
  return typeof x === 'object' && x !== null && ['median', 'min', 'max', 'n'].every((k) => typeof s[k] === 'number');
}

function statsTable(x: unknown, what: string): Record<string, Stats> {
  if (typeof x !== 'object' || x === null) throw new Error(`bench.py output: ${what} is not an object`);
  const out: Record<string, Stats> = {};
  for (const [k, v] of Object.entries(x)) {
    if (!isStats(v)) throw new Error(`bench.py output: ${what}.${k} is not {median, min, max, n}`);
    out[k] = v;
  }
  return out;
}

/** Validates the script's JSON output. */
export function parseTorchResult(text: string): TorchResult {
  const raw = JSON.parse(text) as Record<string, unknown>;
  if (typeof raw.torch_version !== 'string') throw new Error('bench.py output lacks torch_version');
  const configs: Record<string, TorchConfigResult> = {};
  for (const [name, c] of Object.entries((raw.configs ?? {}) as Record<string, Record<string, unknown>>)) {
    configs[name] = {
      train: statsTable(c.train_tokens_per_s, `${name}.train_tokens_per_s`),
      decode: statsTable(c.decode_ms_per_token, `${name}.decode_ms_per_token`),
    };
  }
  const matmul: Record<string, Record<string, Stats>> = {};
  for (const [threads, sizes] of Object.entries((raw.matmul_gflops ?? {}) as Record<string, unknown>))
    matmul[threads] = statsTable(sizes, `matmul_gflops.${threads}`);
  return { torchVersion: raw.torch_version, blas: typeof raw.blas === 'string' ? raw.blas : null, configs, matmul };
}

/**
 * Runs bench.py for these configs (none: only matmul) and thread counts, with or without
 * its matmul part; throws with its stderr if it fails.
 */
export async function runTorchBench(
  script: string,
  configs: readonly string[],
  threads: readonly number[],
  quick: boolean,
  matmul: boolean,
): Promise<TorchResult> {
  const args = [script, '--configs', configs.length > 0 ? configs.join(',') : 'none', '--threads', threads.join(',')];
  if (quick) args.push('--quick');
  if (!matmul) args.push('--no-matmul');
  const r = await run(TORCH_PYTHON, args, 30 * 60_000);
  if (r.code !== 0)
    throw new Error(
      `${TORCH_PYTHON} ${script} failed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
    );
  return parseTorchResult(r.stdout);
}
