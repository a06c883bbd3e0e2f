import { describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { presetConfig } from '../../../../src/engine/config';
import { estimateModel, memoryProblem, stepperBytes } from '../../../../src/engine/models/estimate';
import { qwen25Config } from './hubShapes';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Optimizer } from '../../../../src/engine/optim/optimizer';
import { Rng } from '../../../../src/engine/rng';
import { tinyConfig } from './fixtures';

/** Parameters of the paper's encoder-decoder, counted by hand from §3 (untied, with biases). */
function paperParams(Vs: number, Vt: number, C: number, F: number, N: number): number {
  const attn = 4 * (C * C + C);
  const ffn = C * F + F + F * C + C;
  const ln = 2 * C;
  const enc = N * (attn + ffn + 2 * ln);
  const dec = N * (2 * attn + ffn + 3 * ln);
  return Vs * C + Vt * C + enc + dec + (C * Vt + Vt);
}

describe('estimateModel', () => {
  it('counts the paper base model exactly as the architecture implies', () => {
    const cfg = presetConfig('encoder-decoder', 'base', 37000, 37000);
    expect(estimateModel(cfg, { maxBatch: 1 }).params).toBe(paperParams(37000, 37000, 512, 2048, 6));
  });

  it("matches GPT-2 small's well-known 124,439,808 parameters for nanoGPT's gpt preset", () => {
    const cfg = presetConfig('decoder-only', 'gpt', 50257);
    expect(estimateModel(cfg, { maxBatch: 1 }).params).toBe(124_439_808);
  });

  it('reports exactly the floats that bind() then allocates, without allocating', () => {
    const cfg = tinyConfig('encoder-decoder', { dropout: 0.1 });
    const est = estimateModel(cfg, { maxBatch: 2 });
    const m = new Transformer(cfg, { maxBatch: 2 });
    let allocated = 0;
    const ref = createReferenceBackend();
    m.bind({ ...ref, alloc: (n: number) => ((allocated += n), ref.alloc(n)) });
    expect(allocated * 4).toBe(est.paramBytes + est.activationBytes - m.arena.otherBytes);
    expect(m.grads.length).toBe(est.params); // gradients are allocated at their first use
    expect(allocated * 4).toBe(est.paramBytes + est.gradBytes + est.activationBytes - m.arena.otherBytes);
    expect(est.totalBytes).toBe(est.paramBytes * 4 + est.activationBytes);
    const sum = Object.values(est.paramsByModule).reduce((a, b) => a + b, 0);
    expect(sum).toBe(est.params);
    expect(Object.keys(est.paramsByModule)).toEqual(
      expect.arrayContaining(['embeddings', 'encoder.0', 'decoder.1', 'output']),
    );
  });

  it("counts, names and sizes Muon's state exactly as the Optimizer allocates it", () => {
    const cfg = presetConfig('decoder-only', 'small', 65);
    const adamw = estimateModel(cfg, { maxBatch: 2 });
    const muon = estimateModel(cfg, { maxBatch: 2 }, 'muon');
    expect(adamw.optimizerState).toBe('Adam moments');
    expect(adamw.optimizerBytes).toBe(2 * adamw.params * 4);
    expect(muon.optimizerState).toBe('Muon momentum, Adam moments and Newton–Schulz buffers');
    // The floats new Optimizer(…, muon) allocates: m, v and the Newton–Schulz buffers.
    const ref = createReferenceBackend();
    const model = new Transformer(cfg, { maxBatch: 2 }).bind(ref);
    let allocated = 0;
    const counting = { ...ref, alloc: (n: number) => ((allocated += n), ref.alloc(n)) };
    new Optimizer(counting, model.params, model.grads, model.segments(), {
      type: 'muon',
      lr: 1e-3,
      beta1: 0.9,
      beta2: 0.95,
      eps: 1e-8,
      weightDecay: 0,
      clipGradNorm: 1,
      schedule: { type: 'constant', warmup: 0 },
      muonLr: 0.02,
      muonMomentum: 0.95,
    });
    expect(muon.optimizerBytes).toBe(allocated * 4);
    // Two [512·128] and three [128·128] buffers beside the moments.
    expect(muon.optimizerBytes - adamw.optimizerBytes).toBe((2 * 512 * 128 + 3 * 128 * 128) * 4);
    expect(muon.totalBytes - adamw.totalBytes).toBe(muon.optimizerBytes - adamw.optimizerBytes);
  });

  it('grows activation memory with the batch but not the parameter count', () => {
    const cfg = presetConfig('decoder-only', 'small', 65);
    const a = estimateModel(cfg, { maxBatch: 4 });
    const b = estimateModel(cfg, { maxBatch: 8 });
    expect(b.params).toBe(a.params);
    expect(b.activationBytes).toBeGreaterThan(1.9 * a.activationBytes);
    expect(a.trainFlopsPerToken).toBeGreaterThan(6 * a.params * 0.5);
  });
});

describe('memoryProblem: what fits in WebAssembly memory, before anything is allocated', () => {
  const gpt2 = { ...presetConfig('decoder-only', 'gpt', 50257), activation: 'geluTanh' as const };

  it('GPT-2 small (124M) fits for inference at its whole context', () => {
    expect(memoryProblem(gpt2, { maxBatch: 1 }, 'inference')).toBeNull();
  });

  it('training GPT-2 small at batch 8 × 1024 does not, and the message names batch size and sequence length, no flag', () => {
    const msg = memoryProblem(gpt2, { maxBatch: 8, maxLen: 1024 }, 'training');
    expect(msg).toMatch(
      /124439808 parameters needs [\d.]+ GiB of WebAssembly memory .*more than the 4\.00 GiB it has; lower the batch size \(8\) or the sequence length \(1024\) until/,
    );
    expect(msg).not.toMatch(/--seq|maxLen/);
    expect(memoryProblem(gpt2, { maxBatch: 1, maxLen: 128 }, 'training')).toBeNull();
  });

  it("training names the optimizer's state: Adam's moments, or Muon's with its Newton–Schulz buffers", () => {
    const adamw = memoryProblem(gpt2, { maxBatch: 8, maxLen: 1024 }, 'training');
    expect(adamw).toMatch(/, Adam moments 0\.93 GiB\)/);
    const muon = memoryProblem(gpt2, { maxBatch: 8, maxLen: 1024 }, 'training', { optimizer: 'muon' });
    expect(muon).toMatch(/, Muon momentum, Adam moments and Newton–Schulz buffers 0\.95 GiB\)/);
  });

  it("GPT-2 XL (1.5B) cannot fit at all: training names the model's sizes, running it names none (an opened model is not retrained)", () => {
    const xl = { ...gpt2, dModel: 1600, nHeads: 25, dFF: 6400, nDecoderLayers: 48 };
    expect(memoryProblem(xl, { maxBatch: 1, maxLen: 16 }, 'training')).toMatch(
      /the model itself is too large for it: use fewer layers \(nDecoderLayers 48\) or a smaller dModel \(1600\)/,
    );
    const run = memoryProblem(xl, { maxBatch: 1, maxLen: 16 }, 'inference', { lower: 'shorten the text (16 tokens)' });
    expect(run).toMatch(/the model itself is too large to run in WebAssembly/);
    expect(run).not.toMatch(/nDecoderLayers|dModel|batch|shorten/);
  });

  it('running: the advice is only what the caller says the person can lower, and the decoding rows count', () => {
    const msg = memoryProblem(gpt2, { maxBatch: 4, maxLen: 1024 }, 'inference', {
      lower: 'shorten the text (1000 tokens)',
    });
    expect(msg).toMatch(/; shorten the text \(1000 tokens\) until the rest fits in [\d.]+ GiB\.$/);
    expect(msg).not.toMatch(/batch|--seq|maxLen|positions planned/);
    expect(memoryProblem(gpt2, { maxBatch: 1, maxLen: 1 }, 'inference', { decodeRows: 1 })).toBeNull();
    const beam = memoryProblem(gpt2, { maxBatch: 1, maxLen: 1 }, 'inference', {
      decodeRows: 64,
      lower: 'lower the beam width (64)',
    });
    expect(beam).toMatch(/decoding [\d.]+ GiB for 64 rows.*lower the beam width \(64\)/);
    expect(stepperBytes(gpt2, 2)).toBeGreaterThan(stepperBytes(gpt2, 1));
  });
});

describe('memory of a model that only runs: real-size imports', () => {
  // Qwen2.5-0.5B's shape (config.json of the Hub's checkpoint): 494M parameters, a context of 32768.
  const qwen = qwen25Config();

  it('counts no gradients for inference (bind allocates none), so Qwen2.5-0.5B runs; training still counts them', () => {
    expect(estimateModel(qwen, { maxBatch: 1, maxLen: 1 }).params).toBe(494032768);
    const opts = { decodeRows: 1, decodePositions: 1024 };
    expect(memoryProblem(qwen, { maxBatch: 1, maxLen: 1 }, 'inference', opts)).toBeNull();
    expect(memoryProblem(qwen, { maxBatch: 1, maxLen: 1 }, 'inference', { ...opts, gradients: true })).toMatch(
      /parameters 1\.84 GiB, gradients 1\.84 GiB/,
    );
    expect(memoryProblem(qwen, { maxBatch: 1, maxLen: 1 }, 'training')).toMatch(/gradients 1\.84 GiB/);
  });

  it("sizes the decoding buffers by the job's positions: a 1024-token text fits, the whole 32768 context does not", () => {
    const whole = memoryProblem(qwen, { maxBatch: 1, maxLen: 1 }, 'inference', {
      decodeRows: 1,
      lower: 'shorten the text (32767 tokens)',
    });
    expect(whole).toMatch(/decoding [\d.]+ GiB for 1 row × 32768 positions.*shorten the text \(32767 tokens\)/);
    // The prefill's [H, T, T] probabilities dominate: a long decode of a short prompt is small.
    expect(stepperBytes(qwen, 1, 0, 8192, 64)).toBeLessThan(stepperBytes(qwen, 1, 0, 1024) * 2);
    expect(stepperBytes(qwen, 1, 0, 1024)).toBeLessThan(200 * 2 ** 20);
  });

  it('a bound model allocates its gradients at the first backward, once', () => {
    const inner = createReferenceBackend();
    let floats = 0;
    const backend = { ...inner, alloc: (n: number) => ((floats += n), inner.alloc(n)) };
    const cfg = tinyConfig('decoder-only');
    const model = new Transformer(cfg, { maxBatch: 1, maxLen: 4 }).bind(backend);
    model.initialize(new Rng(2));
    const bound = floats;
    const n = model.store.count;
    model.forward(
      { B: 1, T: 4, input: Int32Array.of(1, 4, 5, 6), targets: Int32Array.of(4, 5, 6, 7) },
      { train: true },
    );
    expect(floats).toBe(bound);
    model.backward();
    expect(floats).toBe(bound + n);
    expect(Array.from(model.grads.subarray(0, n)).some((g) => g !== 0)).toBe(true);
    model.backward();
    expect(floats).toBe(bound + n);
  });
});
