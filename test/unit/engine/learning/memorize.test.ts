/**
 * The decoder-only model (nanoGPT's architecture) memorizes a short text: after a fixed
 * number of steps with a fixed seed, greedy decoding from its first 8 characters
 * reproduces the rest of the context exactly.
 */
import { describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { presetConfig } from '../../../../src/engine/config';
import { greedyDecode } from '../../../../src/engine/decode/greedy';
import { Transformer } from '../../../../src/engine/models/transformer';
import { createStepper } from '../../../../src/engine/models/stepper';
import { Optimizer } from '../../../../src/engine/optim/optimizer';
import { Rng } from '../../../../src/engine/rng';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { EOS } from '../../../../src/engine/tokenizers/special';
import { Trainer } from '../../../../src/engine/train';

const TEXT =
  'Attention is all you need. The dominant sequence transduction models are based on complex recurrent or convolutional neural networks.';

describe('learning: decoder-only memorizes a short text', () => {
  it('reproduces the text from an 8-character prompt after 300 steps', () => {
    const tok = trainCharTokenizer([TEXT]);
    const ids = tok.encode(TEXT);
    const T = 32;
    const B = 8;
    const cfg = {
      ...presetConfig('decoder-only', 'tiny', tok.vocabSize),
      dModel: 48,
      nHeads: 4,
      dFF: 192,
      nDecoderLayers: 2,
      maxLen: T,
    };
    const backend = createReferenceBackend();
    const model = new Transformer(cfg, { maxBatch: B }).bind(backend);
    const rng = new Rng(3);
    model.initialize(rng.split());
    const steps = 300;
    const optimizer = new Optimizer(backend, model.params, model.grads, model.segments(), {
      type: 'adamw',
      lr: 1e-2,
      beta1: 0.9,
      beta2: 0.95,
      eps: 1e-8,
      weightDecay: 0,
      clipGradNorm: 1,
      schedule: { type: 'cosine', warmup: 20, maxSteps: steps, minLr: 1e-3 },
    });
    const trainer = new Trainer(model, optimizer, rng.split());
    const data = rng.split();
    const losses: number[] = [];
    for (let s = 1; s <= steps; s++) {
      const input = new Int32Array(B * T);
      const targets = new Int32Array(B * T);
      for (let b = 0; b < B; b++) {
        const start = data.int(ids.length - T);
        for (let t = 0; t < T; t++) {
          input[b * T + t] = ids[start + t] as number;
          targets[b * T + t] = ids[start + t + 1] as number;
        }
      }
      losses.push(trainer.step({ B, T, input, targets }).loss);
    }
    const tail = losses.slice(-20).reduce((a, b) => a + b, 0) / 20;
    expect(tail).toBeLessThan(0.3);
    expect(tail).toBeLessThan((losses[0] as number) / 15);
    const stepper = createStepper(model, backend, { maxRows: 1 });
    const out = greedyDecode(stepper, ids.slice(0, 8), { maxTokens: T - 8, eos: EOS });
    expect(tok.decode(ids.slice(0, 8)) + tok.decode(out.tokens)).toBe(TEXT.slice(0, T));
  });
});
