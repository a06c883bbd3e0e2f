import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import type { ModelConfig } from '../../../../src/engine/config';
import { EngineError } from '../../../../src/engine/errors';
import { estimateModel, memoryProblem } from '../../../../src/engine/models/estimate';
import { qwen25Config } from './hubShapes';
import type { Batch } from '../../../../src/engine/models/inputs';
import { LOGIT_CHUNK_BYTES, logitChunkRows } from '../../../../src/engine/models/inputs';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { tinyBatch, tinyConfig } from './fixtures';

const BACKENDS: [string, () => Backend][] = [
  ['reference', () => createReferenceBackend()],
  ...(createWasmBackend({ fma: false })
    ? [['wasm', () => createWasmBackend({ fma: false }) as Backend] as [string, () => Backend]]
    : []),
];

const VARIANTS: [string, ModelConfig][] = [
  ['decoder-only, pre-LN', tinyConfig('decoder-only')],
  ['decoder-only, post-LN, soft-capped', tinyConfig('decoder-only', { norm: 'post', logitSoftCap: 3 })],
  ['decoder-only, a vocabulary of 300', tinyConfig('decoder-only', { vocabSize: 300, dModel: 16, maxLen: 8 })],
  ['encoder-decoder, label smoothing', tinyConfig('encoder-decoder', { norm: 'pre' })],
];

const CASES = BACKENDS.flatMap(([b, mk]) => VARIANTS.map(([v, cfg]) => [`${v} on ${b}`, cfg, mk] as const));

/** Two models of the same weights: one holding every row's logits, one `rows` of them. */
function pair(cfg: ModelConfig, backend: () => Backend, rows: number): { whole: Transformer; sliced: Transformer } {
  const whole = new Transformer(cfg, { maxBatch: 2 }).bind(backend());
  whole.initialize(new Rng(3));
  const sliced = new Transformer(cfg, { maxBatch: 2, logitRows: rows }).bind(backend());
  sliced.params.set(whole.params);
  return { whole, sliced };
}

/** The rows `rows` of `logits` [N, V]. */
function rowsOf(logits: ArrayLike<number>, rows: readonly number[], V: number): number[] {
  return rows.flatMap((r) => Array.from({ length: V }, (_, v) => logits[r * V + v] as number));
}

function expectClose(a: ArrayLike<number>, b: ArrayLike<number>, tol = 0): void {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
  expect(worst).toBeLessThanOrEqual(tol);
}

describe.each(CASES)('logits in chunks of rows (ModelShape.logitRows): %s', (_name, cfg, backend) => {
  const batch: Batch = tinyBatch(cfg); // B 2 × T 5: 10 rows
  const V = cfg.vocabSize;
  const train = { train: false, labelSmoothing: cfg.labelSmoothing };

  it('the loss over chunks of 4 rows is the loss over all 10 at once', () => {
    const { whole, sliced } = pair(cfg, backend, 4);
    const a = whole.forward(batch, train);
    const b = sliced.forward(batch, train);
    expect(b.tokens).toBe(a.tokens);
    expect(Math.abs(b.loss - a.loss)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(a.loss)));
  });

  it('logitsAt gives the whole projection’s rows: consecutive, scattered, after a forward without loss', () => {
    const { whole, sliced } = pair(cfg, backend, 4);
    whole.forward(batch, train);
    const all = Float32Array.from(whole.logits());
    sliced.forward(batch, train);
    for (const rows of [[0, 1, 2, 3], [7, 8, 9], [9, 0, 4], [5], [6, 7, 8, 9]])
      expectClose(sliced.logitsAt(rows), rowsOf(all, rows, V));
    sliced.forward(batch, { ...train, loss: false });
    expectClose(sliced.logitsAt([4, 9]), rowsOf(all, [4, 9], V));
    // a whole forward's consecutive rows are a view of its own logits: the same numbers bit for bit
    expect(Float32Array.from(whole.logitsAt([5, 6, 7]))).toEqual(Float32Array.from(rowsOf(all, [5, 6, 7], V)));
  });

  it('the lens reads chosen rows of every layer as the whole lens does', () => {
    const { whole, sliced } = pair(cfg, backend, 4);
    whole.forward(batch, train);
    sliced.forward(batch, { ...train, loss: false });
    for (let layer = 0; layer <= cfg.nDecoderLayers; layer++) {
      const all = Float32Array.from(whole.residualLogits(layer));
      expectClose(sliced.residualLogits(layer, 'logits', [6, 7, 8, 9]), rowsOf(all, [6, 7, 8, 9], V));
      expectClose(sliced.residualLogits(layer, 'logits', [3, 0]), rowsOf(all, [3, 0], V));
    }
  });

  it('refuses what a chunked forward does not hold: logits(), backward(), too many rows, rows out of range', () => {
    const { sliced } = pair(cfg, backend, 4);
    sliced.forward(batch, train);
    expect(() => sliced.logits()).toThrow(/logitsAt/);
    expect(() => sliced.backward()).toThrow(/whole/);
    expect(() => sliced.logitsAt([0, 1, 2, 3, 4])).toThrow(EngineError);
    expect(() => sliced.logitsAt([10])).toThrow(/Row 10 does not exist/);
    expect(() => sliced.residualLogits(0, 'logits')).toThrow(/pass rows/);
    // a batch that fits the rows is whole again: its logits and backward work
    const one: Batch = { ...batch, B: 1, input: batch.input.slice(0, 3), targets: batch.targets.slice(0, 3), T: 3 };
    const src = batch.src ? { S: batch.S as number, src: batch.src.slice(0, batch.S) } : {};
    sliced.forward({ ...one, ...src }, train);
    expect(sliced.logits()).toHaveLength(3 * V);
    expect(() => sliced.backward()).not.toThrow();
  });
});

describe('what the plan holds', () => {
  it('a model planned for R logit rows (R ≥ 4) holds (B·T − R)·V floats fewer, twice (the logits and their gradient)', () => {
    const cfg = tinyConfig('decoder-only', { vocabSize: 300, maxLen: 8 });
    const whole = estimateModel(cfg, { maxBatch: 2 });
    const sliced = estimateModel(cfg, { maxBatch: 2, logitRows: 5 });
    expect(whole.activationBytes - sliced.activationBytes).toBe(2 * (16 - 5) * 300 * 4);
    // at least 4 rows (WebAssembly's matmul sums 1–3 rows in another order)
    expect(new Transformer(cfg, { maxBatch: 2, logitRows: 1 }).logitRows).toBe(4);
    expect(new Transformer(cfg, { maxBatch: 1, maxLen: 2, logitRows: 1 }).logitRows).toBe(2);
    expect(whole.params).toBe(sliced.params);
  });

  it('Qwen2.5-0.5B: logits in chunks of 55 rows (2 × 33 MB), not 2 × 622 MB for 1,024 positions', () => {
    const qwen = qwen25Config();
    const rows = logitChunkRows(qwen, 1024);
    expect(rows).toBe(Math.floor(LOGIT_CHUNK_BYTES / (4 * 151_936)));
    expect(rows).toBe(55);
    const whole = estimateModel(qwen, { maxBatch: 1, maxLen: 1024 });
    const sliced = estimateModel(qwen, { maxBatch: 1, maxLen: 1024, logitRows: rows });
    expect(whole.activationBytes - sliced.activationBytes).toBe(2 * (1024 - 55) * 151_936 * 4);
    // the lens of a 512-token text (one sequence, its forward's activations kept per layer): refused with whole
    // logits, fits with them in chunks
    const at512 = { maxBatch: 1, maxLen: 512 };
    expect(memoryProblem(qwen, at512, 'inference')).toMatch(/needs 4\.\d\d GiB/);
    expect(memoryProblem(qwen, { ...at512, logitRows: logitChunkRows(qwen, 512) }, 'inference')).toBeNull();
  });
});
