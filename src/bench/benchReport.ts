/**
 * The benchmark's two outputs: readable tables (with ours/PyTorch ratios and the machine's
 * noise as min–max), and one JSON object —
 * `{"configs": {"tiny-decoder": {"train_tokens_per_s": …, "decode_ms_per_token": …}, …},
 * "matmul_gflops": {"256": …, …}}` with medians at the most threads measured — to which the
 * full detail (every thread count, min/max, PyTorch, TF.js, event loop) is added under
 * further keys.
 *
 * Leaves out: measuring (bench.ts).
 */

import { formatCount } from '../common/format';
import type { BenchResult, Skipped } from './bench';
import type { BenchConfigName } from './benchConfigs';
import type { Stats } from './benchRun';
import type { TorchResult } from './benchTorch';

function isSkipped(x: unknown): x is Skipped {
  return typeof x === 'object' && x !== null && 'skipped' in x;
}

function num(x: number, digits: number): string {
  return x >= 1000 ? formatCount(x) : x.toFixed(digits);
}

function cell(s: Stats | undefined, digits: number): string {
  return s ? `${num(s.median, digits)} [${num(s.min, digits)}–${num(s.max, digits)}]` : '—';
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]): string =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function ratio(a: number | undefined, b: number | undefined): string {
  return a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(2)}×` : '—';
}

/** Top thread count measured. */
function topThreads(r: BenchResult): string {
  return String(r.threads[r.threads.length - 1] ?? 1);
}

/** The JSON object's headline shape (medians at the most threads), plus the full detail under further keys. */
export function benchJson(r: BenchResult): Record<string, unknown> {
  const t = topThreads(r);
  const configs: Record<string, { train_tokens_per_s: number | null; decode_ms_per_token: number | null }> = {};
  for (const [name, c] of Object.entries(r.configs)) {
    configs[name] = {
      train_tokens_per_s: c?.train[t]?.median ?? null,
      decode_ms_per_token: c?.decode[t]?.median ?? null,
    };
  }
  const matmul: Record<string, number> = {};
  for (const [n, s] of Object.entries(r.matmul[t] ?? {})) matmul[n] = s.median;
  const torch = isSkipped(r.pytorch) ? null : r.pytorch;
  return {
    configs,
    matmul_gflops: matmul,
    threads: Number(t),
    event_loop_delay_p99_ms: isSkipped(r.eventLoop) ? null : r.eventLoop.p99Ms,
    pytorch:
      torch === null
        ? null
        : {
            configs: Object.fromEntries(
              Object.entries(torch.configs).map(([n, c]) => [
                n,
                { train_tokens_per_s: c.train[t]?.median ?? null, decode_ms_per_token: c.decode[t]?.median ?? null },
              ]),
            ),
            matmul_gflops: Object.fromEntries(Object.entries(torch.matmul[t] ?? {}).map(([n, s]) => [n, s.median])),
          },
    tfjs_train_tokens_per_s: isSkipped(r.tfjs) ? null : r.tfjs.train.median,
    engines: isSkipped(r.engines)
      ? null
      : Object.fromEntries(
          r.engines.map((e) => [
            e.task,
            Object.fromEntries(
              [...e.engines, ...(isSkipped(e.webgpu) ? [] : [e.webgpu])].map((x) => [x.engine, x.tokensPerS.median]),
            ),
          ]),
        ),
    head_scores: isSkipped(r.headScores)
      ? null
      : Object.fromEntries(
          r.headScores.map((c) => [
            c.task,
            {
              on_tokens_per_s: c.on.median,
              off_tokens_per_s: c.off.median,
              on_over_off: c.ratio.median,
              snapshot_ms_on: c.snapshotMs.on.median,
              snapshot_ms_off: c.snapshotMs.off.median,
              share_of_training: c.overhead,
            },
          ]),
        ),
    details: r,
  };
}

function torchConfig(torch: TorchResult | null, name: string): TorchResult['configs'][string] | undefined {
  return torch?.configs[name];
}

/** Readable tables of a benchmark result. */
export function formatBench(r: BenchResult): string {
  const torch = isSkipped(r.pytorch) ? null : r.pytorch;
  const out: string[] = [];
  out.push(
    `Attention Lab benchmark — ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node} ` +
      `(V8 ${r.machine.v8}), ${r.backend} backend`,
  );
  const [l0, l1] = r.machine.loadAverage;
  out.push(
    `Figures are median [min–max] over the timed samples. Load average (1 min) ${l0.toFixed(2)} ` +
      `before, ${l1.toFixed(2)} ` +
      `after${Math.max(l0, l1) > 0.5 ? ' — other processes were using the cores, so expect noise' : ''}.`,
  );
  out.push(
    torch
      ? `PyTorch ${torch.torchVersion}${torch.blas ? ` with ${torch.blas}` : ''}`
      : `PyTorch: not compared — ${(r.pytorch as Skipped).skipped}`,
  );

  const trainRows: string[][] = [];
  const decodeRows: string[][] = [];
  for (const [name, c] of Object.entries(r.configs) as [
    BenchConfigName,
    NonNullable<BenchResult['configs'][BenchConfigName]>,
  ][]) {
    const tc = torchConfig(torch, name);
    for (const t of r.threads) {
      const k = String(t);
      trainRows.push([
        name,
        k,
        cell(c.train[k], 0),
        cell(tc?.train[k], 0),
        ratio(c.train[k]?.median, tc?.train[k]?.median),
      ]);
      decodeRows.push([
        name,
        k,
        cell(c.decode[k], 3),
        cell(tc?.decode[k], 3),
        ratio(tc?.decode[k]?.median, c.decode[k]?.median),
      ]);
    }
  }
  out.push('', 'Training tokens/s (target positions per optimizer step × steps/s)');
  out.push(table(['config', 'threads', 'ours', 'PyTorch', 'ours/PyTorch'], trainRows));
  out.push(
    '',
    'Greedy decoding, ms/token at batch 1 (ours with the key/value cache; PyTorch re-runs the ' +
      'prefix, as the tutorials do)',
  );
  out.push(table(['config', 'threads', 'ours', 'PyTorch', 'PyTorch/ours'], decodeRows));

  const sizes = Object.keys(r.matmul[String(r.threads[0] ?? 1)] ?? {});
  // Our thread scaling (the thread counts were timed in turns, so drift cancels out of it).
  const scaled = r.threads.includes(1) ? r.threads.filter((t) => t > 1) : [];
  const mmRows = sizes.map((n) => [
    n,
    ...r.threads.flatMap((t) => [
      cell(r.matmul[t]?.[n], 1),
      cell(torch?.matmul[t]?.[n], 1),
      ratio(r.matmul[t]?.[n]?.median, torch?.matmul[t]?.[n]?.median),
    ]),
    ...scaled.map((t) => ratio(r.matmul[t]?.[n]?.median, r.matmul[1]?.[n]?.median)),
  ]);
  out.push('', 'Matmul GFLOP/s (n × n × n, float32)');
  out.push(
    table(
      [
        'n',
        ...r.threads.flatMap((t) => [`ours ${t}t`, `PyTorch ${t}t`, 'ratio']),
        ...scaled.map((t) => `ours ${t}t/1t`),
      ],
      mmRows,
    ),
  );

  out.push('');
  if (isSkipped(r.eventLoop)) out.push(`Event-loop delay: not measured — ${r.eventLoop.skipped}`);
  else {
    const e = r.eventLoop;
    out.push(
      `Event-loop delay of the main thread while ${e.config} trains in a worker (${e.threads} ` +
        `threads, ${formatCount(e.trainTokensPerS)} tokens/s meanwhile): p99 ${e.p99Ms.toFixed(1)} ` +
        `ms, mean ${e.meanMs.toFixed(1)} ms, max ${e.maxMs.toFixed(1)} ms`,
    );
  }
  if (isSkipped(r.tfjs)) out.push(`TensorFlow.js: not compared — ${r.tfjs.skipped}`);
  else {
    const ours = r.configs['tiny-decoder']?.train[topThreads(r)];
    out.push(
      `TensorFlow.js (${r.tfjs.backend} backend, 1 thread) tiny-decoder training: ` +
        `${cell(r.tfjs.train, 0)} tokens/s; ours/TF.js ${ratio(ours?.median, r.tfjs.train.median)}`,
    );
  }
  out.push('', ...formatScoresCost(r.headScores));
  out.push('', ...formatEngines(r.engines));
  return out.join('\n');
}

/**
 * Our engine and the PyTorch engine on the same run: tokens/s and ours ÷ theirs. A WebGPU row
 * on a real GPU gets its own column of WebGPU ÷ each engine; one on a software adapter is
 * reported with its steps and not compared; without one, a line says why.
 */
export function formatEngines(engines: BenchResult['engines']): string[] {
  if (isSkipped(engines)) return [`Engines on the same run: not measured — ${engines.skipped}`];
  return engines.flatMap((e, i) => {
    const ours = e.engines[0]?.tokensPerS.median;
    const gpu = isSkipped(e.webgpu) ? null : e.webgpu;
    const compared = gpu !== null && !gpu.software;
    const rows = e.engines.map((x) => [
      x.engine,
      cell(x.tokensPerS, 0),
      ratio(ours, x.tokensPerS.median),
      ...(compared ? [ratio(gpu.tokensPerS.median, x.tokensPerS.median)] : []),
    ]);
    if (gpu) {
      const row = [gpu.engine, cell(gpu.tokensPerS, 0)];
      if (compared) rows.splice(1, 0, [...row, ratio(ours, gpu.tokensPerS.median), '—']);
      else
        rows.splice(1, 0, [
          ...row,
          `software adapter: reported, not compared (${gpu.steps} steps, each timed after the first)`,
        ]);
    }
    return [
      ...(i > 0 ? [''] : []),
      `Engines on the same run: train --task ${e.task}, ${e.steps} steps, no evaluation or ` +
        `snapshots (tokens/s per block of 10 steps after the first; ${e.torch})`,
      table(['engine', 'tokens/s', 'ours/engine', ...(compared ? ['WebGPU/engine'] : [])], rows),
      ...(isSkipped(e.webgpu) ? [`WebGPU: not measured — ${e.webgpu.skipped}`] : []),
    ];
  });
}

/** The head-scores table: tokens/s on vs off and their ratio (target ≥ 0.97, at most 3% slower). */
function formatScoresCost(costs: BenchResult['headScores']): string[] {
  if (isSkipped(costs)) return [`Head scores: not measured — ${costs.skipped}`];
  const rows = costs.map((c) => [
    c.task,
    String(c.snapshotEvery),
    cell(c.on, 0),
    cell(c.off, 0),
    `${c.ratio.median.toFixed(3)} [${c.ratio.min.toFixed(3)}–${c.ratio.max.toFixed(3)}]`,
    `${cell(c.snapshotMs.on, 1)} / ${cell(c.snapshotMs.off, 1)}`,
    `${(100 * c.overhead).toFixed(2)}%`,
    c.overhead <= 0.03 ? 'yes' : 'no',
  ]);
  return [
    'Training tokens/s with head scores on vs off (the session as `train --task` runs it, at the ' +
      'snapshot cadence each task sets; the two take turns block by block)',
    table(
      [
        'task',
        'snapshot every',
        'scores on',
        'scores off',
        'on/off',
        'snapshot ms on / off',
        "scores' share",
        '≤ 3% slower',
      ],
      rows,
    ),
  ];
}
