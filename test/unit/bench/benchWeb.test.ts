/**
 * The web benchmark's plumbing (no timings asserted): tokens/s read back from a run's logged
 * steps — the first tenth left out, the rest whole and in ten windows — and the table that
 * sets each web run beside Node's on the same threads in the same round.
 * The runs themselves (Chromium, the workers) are `npm run bench:web`'s; the browser test
 * trains through the same page.
 */
import { describe, expect, it } from 'vitest';
import type { WebBenchResult, WebBenchRun } from '../../../src/bench/benchWeb';
import { formatWebBench } from '../../../src/bench/benchWeb';
import type { WorkerTraining } from '../../../src/bench/workerTraining';
import { warmThroughput } from '../../../src/bench/workerTraining';
import type { StepMetrics } from '../../../src/protocol/data';

/** `n` steps of `tokens` tokens each, `ms` apart (a slower first tenth: the warm-up). */
function steps(n: number, tokens: number, ms: number): StepMetrics[] {
  let at = 0;
  return Array.from({ length: n }, (_, i) => {
    at += i < n / 10 ? ms * 5 : ms;
    return { step: i + 1, loss: 1, lr: 1e-3, gradNorm: 1, tokens, tokensPerSec: 0, elapsedMs: at };
  });
}

describe('warmThroughput', () => {
  it('is tokens over time after the first tenth, whole and per window', () => {
    const t = warmThroughput(steps(200, 320, 40));
    expect(t.tokensPerSec).toBeCloseTo(8000, 6);
    expect(t.windows).toMatchObject({ n: 10 });
    expect(t.windows?.median).toBeCloseTo(8000, 6);
    expect(t.windows?.min).toBeCloseTo(8000, 6);
  });

  it('shows a slow stretch (an evaluation) in the windows, not only in the whole', () => {
    const logged = steps(200, 320, 40);
    const slow = logged.map((m) => (m.step >= 120 ? { ...m, elapsedMs: m.elapsedMs + 2000 } : m));
    const t = warmThroughput(slow);
    expect(t.tokensPerSec).toBeLessThan(8000);
    expect(t.windows?.median).toBeCloseTo(8000, 6);
    expect(t.windows?.min).toBeLessThan(4000);
  });

  it('gives 0 and no windows for too few steps', () => {
    expect(warmThroughput([])).toEqual({ tokensPerSec: 0, windows: null });
    expect(warmThroughput(steps(1, 10, 10))).toEqual({ tokensPerSec: 0, windows: null });
    expect(warmThroughput(steps(12, 10, 10)).windows).toBeNull();
  });
});

function training(tokensPerSec: number, threads: number, failed = false): WorkerTraining {
  return {
    outcome: failed
      ? { kind: 'failed', step: 3, error: { code: 'internal', message: 'The training worker crashed: out of memory' } }
      : { kind: 'finished', step: 500, reason: 'completed' },
    threads,
    backend: 'wasm',
    backendChoice: null,
    exactMatch: failed ? null : 0.5,
    logs: [],
    status: failed ? 'failed' : 'completed',
    files: [],
    steps: 500,
    losses: [],
    tokensPerSec,
    windows: { median: tokensPerSec, min: tokensPerSec / 2, max: tokensPerSec * 2, n: 10 },
  };
}

describe('formatWebBench', () => {
  it('puts each web run beside Node on the same threads in the same round', () => {
    const runs: WebBenchRun[] = [
      { where: 'node', round: 1, helpers: 0, run: training(6000, 1) },
      { where: 'web', round: 1, helpers: 0, run: training(9000, 1) },
      { where: 'node', round: 1, helpers: 1, run: training(8000, 2) },
      { where: 'web-isolated', round: 1, helpers: 1, run: training(4000, 2, true) },
    ];
    const r: WebBenchResult = {
      task: 'reverse',
      steps: 500,
      machine: { cpu: 'Some CPU', cores: 2, node: '20.0.0', chromium: '150.0' },
      runs,
    };
    const lines = formatWebBench(r).split('\n');
    expect(lines[0]).toMatch(/^Training tokens\/s, the reverse task's default run for 500 steps/);
    expect(lines[1]).toBe('Some CPU, 2 cores; Node 20.0.0, Chromium 150.0');
    const rows = lines.slice(4);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatch(/^Node's worker thread \(desktop\) +1 +1 +6,000 +6,000 \(3,000–12,000\) +0\.500$/);
    expect(rows[1]).toMatch(/^Web Worker, page not isolated +1 +1 +9,000 +9,000 \(4,500–18,000\) +1\.50× +0\.500$/);
    expect(rows[3]).toMatch(
      /^Web Worker, COOP\/COEP page +1 +2 +4,000 .* 0\.50× +— +failed: The training worker crashed: out of memory$/,
    );
  });
});
