/**
 * A model with today's attention options (RoPE, qk-norm, grouped-query heads, soft-cap, a
 * sliding window) trained on the WebAssembly backend with a helper thread: its loss and
 * every gradient are bit-identical to one thread's, with work large enough that the helpers
 * really share the kernels.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { WasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { validateConfig } from '../../../../src/engine/config';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { createWasmThreads } from '../../../../src/lab/platform/threads.node';

const cfg = validateConfig({
  kind: 'decoder-only',
  vocabSize: 50,
  srcVocabSize: 0,
  nEncoderLayers: 0,
  nDecoderLayers: 2,
  dModel: 64,
  nHeads: 8,
  nKvHeads: 2,
  dFF: 128,
  maxLen: 48,
  dropout: 0.1,
  norm: 'pre',
  positional: 'rope',
  rotaryFraction: 0.5,
  qkNorm: true,
  attnSoftCap: 5,
  slidingWindow: 16,
  activation: 'gelu',
  tieEmbeddings: true,
  bias: false,
  layerNormEps: 1e-5,
  embedScale: false,
  labelSmoothing: 0,
});

function lossAndGrads(be: WasmBackend): { loss: number; grads: Float32Array } {
  const m = new Transformer(cfg, { maxBatch: 3 }).bind(be);
  m.initialize(new Rng(3));
  const rng = new Rng(8);
  const B = 3;
  const T = 48;
  const input = Int32Array.from({ length: B * T }, () => 4 + rng.int(46));
  const targets = Int32Array.from({ length: B * T }, () => 4 + rng.int(46));
  const { loss } = m.forward({ B, T, input, targets }, { train: true, rng: new Rng(5) });
  m.backward();
  return { loss, grads: Float32Array.from(m.grads) };
}

describe('a model with the attention options on wasm with a helper thread', () => {
  const threads = createWasmThreads(1);
  const parallel = createWasmBackend({ runner: threads }) as WasmBackend;
  afterAll(() => parallel.dispose());

  it('gives the loss and gradients of one thread, bit for bit', async () => {
    await threads.whenReady();
    expect(parallel.threadsReady()).toBe(true);
    const single = lossAndGrads(createWasmBackend() as WasmBackend);
    const multi = lossAndGrads(parallel);
    expect(parallel.jobStats().parallel).toBeGreaterThan(0);
    expect(multi.loss).toBe(single.loss);
    let firstDiff = -1;
    for (let i = 0; i < single.grads.length && firstDiff < 0; i++)
      if (!Object.is(single.grads[i], multi.grads[i])) firstDiff = i;
    expect(firstDiff, `first differing gradient at ${firstDiff}`).toBe(-1);
  });
});
