/**
 * The measurements of the benchmark on our engine, one backend at a time: training tokens/s
 * (target positions per optimizer step ÷ seconds per step, per step after warm-up), greedy
 * decoding with the key/value cache at batch 1 (ms per token, stepper creation and encoding
 * included), and square matmul GFLOP/s. Each returns median, min and max over its samples,
 * so the machine's noise shows.
 *
 * Leaves out: threads (the caller builds the backend with or without helpers), PyTorch,
 * and reporting.
 */

import type { Backend } from '../engine/backend';
import { greedyDecode } from '../engine/decode/greedy';
import { createStepper } from '../engine/models/stepper';
import { Transformer } from '../engine/models/transformer';
import { Optimizer } from '../engine/optim/optimizer';
import { Rng } from '../engine/rng';
import { Trainer } from '../engine/train';
import type { BenchConfig } from './benchConfigs';
import { randomBatch } from './benchConfigs';

/** Median, min and max of n samples. */
export interface Stats {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/** Summarizes samples (at least one). */
export function summarize(samples: readonly number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const n = s.length;
  const mid = n % 2 === 1 ? (s[(n - 1) / 2] as number) : ((s[n / 2 - 1] as number) + (s[n / 2] as number)) / 2;
  return { median: mid, min: s[0] as number, max: s[n - 1] as number, n };
}

/** A model of `cfg` on `backend`, initialized from a fixed seed, with its trainer. */
export function benchTrainer(cfg: BenchConfig, backend: Backend): Trainer {
  const shape =
    cfg.model.kind === 'encoder-decoder'
      ? { maxBatch: cfg.batch, maxLen: cfg.seq, maxSrcLen: cfg.seq }
      : { maxBatch: cfg.batch, maxLen: cfg.seq };
  const model = new Transformer(cfg.model, shape).bind(backend);
  model.initialize(new Rng(1));
  const optimizer = new Optimizer(backend, model.params, model.grads, model.segments(), cfg.optimizer);
  return new Trainer(model, optimizer, new Rng(2));
}

/**
 * Training tokens/s per timed step, after at least `warmup` untimed steps and `warmupMs` of
 * them (the JIT must reach optimized code in every thread's instance).
 */
export function measureTraining(
  trainer: Trainer,
  cfg: BenchConfig,
  warmup: number,
  steps: number,
  now: () => number,
  warmupMs = 0,
): Stats {
  const batch = randomBatch(cfg, new Rng(3));
  const warmUntil = now() + warmupMs;
  for (let i = 0; i < warmup || now() < warmUntil; i++) trainer.step(batch);
  const rates: number[] = [];
  for (let i = 0; i < steps; i++) {
    const t0 = now();
    const r = trainer.step(batch);
    rates.push(r.tokens / ((now() - t0) / 1000));
  }
  return summarize(rates);
}

/** Milliseconds per generated token of greedy decoding with the key/value cache at batch 1. */
export function measureDecode(
  trainer: Trainer,
  cfg: BenchConfig,
  backend: Backend,
  repeats: number,
  now: () => number,
): Stats {
  const model = trainer.model;
  const rng = new Rng(4);
  const tokens = cfg.seq - 1;
  const perToken: number[] = [];
  for (let r = 0; r < repeats + 2; r++) {
    const src =
      cfg.model.kind === 'encoder-decoder'
        ? Int32Array.from({ length: cfg.seq }, () => 4 + rng.int(cfg.model.srcVocabSize - 4))
        : null;
    const t0 = now();
    const stepper = createStepper(model, backend, {
      maxRows: 1,
      positions: Math.min(cfg.model.maxLen, 1 + tokens),
      ...(src ? { src } : {}),
    });
    const out = greedyDecode(stepper, Int32Array.of(1), { maxTokens: tokens, eos: -1 });
    const ms = (now() - t0) / out.tokens.length;
    if (r > 1) perToken.push(ms); // two runs warm up
  }
  return summarize(perToken);
}

/**
 * GFLOP/s of C = A·B (n × n, float32) on each backend (e.g. 1 and 2 threads), per timed
 * batch of calls over about `seconds` in all. The backends take turns batch by batch, so a
 * drift in the machine's speed (shared hosts drift by 2× over minutes) hits them alike and
 * their ratio — the thread scaling — is measured side by side.
 */
export function measureMatmul(backends: readonly Backend[], n: number, seconds: number, now: () => number): Stats[] {
  const rng = new Rng(5);
  const operands = backends.map((backend) => {
    const a = backend.alloc(n * n);
    const b = backend.alloc(n * n);
    const c = backend.alloc(n * n);
    for (let i = 0; i < n * n; i++) {
      a[i] = rng.next() - 0.5;
      b[i] = rng.next() - 0.5;
    }
    return { backend, a, b, c };
  });
  const flop = 2 * n * n * n;
  const reps = Math.max(1, Math.round(5e7 / flop));
  // Warm up for a while, not a count: every thread's instance must reach optimized code.
  for (const { backend, a, b, c } of operands) {
    const warm = now() + Math.min(300, seconds * 500);
    for (let w = 0; w < 3 || now() < warm; w++) backend.matmul(c, a, b, n, n, n, false, false, false);
  }
  const rates: number[][] = operands.map(() => []);
  const deadline = now() + seconds * 1000 * operands.length;
  while ((rates[0] as number[]).length < 5 || (now() < deadline && (rates[0] as number[]).length < 200)) {
    operands.forEach(({ backend, a, b, c }, i) => {
      const t0 = now();
      for (let r = 0; r < reps; r++) backend.matmul(c, a, b, n, n, n, false, false, false);
      (rates[i] as number[]).push((flop * reps) / ((now() - t0) / 1000) / 1e9);
    });
  }
  return rates.map(summarize);
}
