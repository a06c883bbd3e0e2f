/**
 * Parity with PyTorch: the golden files in test/golden/ hold PyTorch's weights, inputs,
 * logits, loss, every gradient and 5 optimizer steps for tiny models of each kind
 * (scripts/pytorch/make_golden.py). We load the same weights and must agree to 1e-4
 * (logits, loss) and 1e-3 relative (gradients).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import type { ModelConfig } from '../../../../src/engine/config';
import { validateConfig } from '../../../../src/engine/config';
import type { SafetensorsFile } from '../../../../src/engine/io/safetensors';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { gatherTorchTensor, torchTensors } from '../../../../src/engine/models/pytorchNames';
import type { Batch } from '../../../../src/engine/models/inputs';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Optimizer } from '../../../../src/engine/optim/optimizer';
import type { OptimizerConfig } from '../../../../src/engine/optim/optimizerConfig';
import { PARITY_BACKENDS, goldenModel, goldenTensor, inRanges, zeroGrad } from './goldenParity';

const GOLDEN = join(__dirname, '../../../golden');
const BACKENDS = PARITY_BACKENDS;
const FILES = ['encdec-paper', 'encdec-pre', 'gpt', 'gpt-post', 'gpt2'];

const tensor = goldenTensor;

function setup(
  name: string,
  backend: Backend,
): { f: SafetensorsFile; cfg: ModelConfig; model: Transformer; batch: Batch } {
  const f = decodeSafetensors(new Uint8Array(readFileSync(join(GOLDEN, `${name}.safetensors`))), `${name}.safetensors`);
  const cfg = validateConfig(JSON.parse(f.metadata.config as string) as ModelConfig);
  return { f, cfg, ...goldenModel(f, cfg, backend) };
}

describe.each(BACKENDS)('PyTorch parity (%s backend)', (_b, makeBackend) => {
  describe.each(FILES)('%s', (name) => {
    it('matches the logits to 1e-4 and the loss to 1e-4, with the same sinusoidal table', () => {
      const { f, cfg, model, batch } = setup(name, makeBackend());
      const { loss } = model.forward(batch, { train: true, labelSmoothing: cfg.labelSmoothing });
      expect(Math.abs(loss - Number(f.metadata.loss))).toBeLessThan(1e-4);
      const want = tensor(f, 'output.logits').data;
      const got = model.logits();
      expect(got.length).toBe(want.length);
      let worst = 0;
      for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs((got[i] as number) - (want[i] as number)));
      expect(worst).toBeLessThan(1e-4);
      if (cfg.positional === 'sinusoidal') {
        const pe = tensor(f, 'buffer.pe').data;
        const ours = model.decEmbed.positionTable;
        for (let i = 0; i < pe.length; i++)
          expect(Math.abs((ours[i] as number) - (pe[i] as number))).toBeLessThan(1e-6);
      }
    });

    it('matches every gradient to 1e-3 relative', () => {
      const { f, cfg, model, batch } = setup(name, makeBackend());
      model.forward(batch, { train: true, labelSmoothing: cfg.labelSmoothing });
      model.backward();
      const zero = zeroGrad(f);
      let checked = 0;
      for (const t of torchTensors(model)) {
        if (t.alias) continue;
        const want = tensor(f, `grad.${t.name}`).data;
        const got = gatherTorchTensor(t, true);
        let scale = 0;
        for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i] as number));
        for (let i = 0; i < want.length; i++) {
          const a = got[i] as number;
          const b = want[i] as number;
          const tol = inRanges(i, zero[t.name]) ? 1e-6 : 1e-3 * Math.abs(b) + 1e-6 * Math.max(scale, 1e-3);
          if (Math.abs(a - b) > tol) expect.fail(`${t.name}[${i}]: ours ${a}, PyTorch ${b}`);
        }
        checked++;
      }
      expect(checked).toBe(torchTensors(model).filter((t) => !t.alias).length);
      expect(checked).toBeGreaterThan(10);
    });

    it('follows the same 5 optimizer steps (losses to 1e-4, final weights to 1e-3)', () => {
      const { f, cfg, model, batch } = setup(name, makeBackend());
      const opt = JSON.parse(f.metadata.optimizer as string) as OptimizerConfig;
      const optimizer = new Optimizer(model.backendOrThrow(), model.params, model.grads, model.segments(), {
        ...opt,
        lr: opt.lr ?? 0.01,
      });
      const losses = JSON.parse(f.metadata.losses as string) as number[];
      for (let s = 0; s < 5; s++) {
        const { loss } = model.forward(batch, { train: true, labelSmoothing: cfg.labelSmoothing });
        expect(Math.abs(loss - (losses[s] as number)), `loss before step ${s + 1}`).toBeLessThan(1e-4);
        model.backward();
        optimizer.step();
      }
      const { loss } = model.forward(batch, { train: true, labelSmoothing: cfg.labelSmoothing });
      expect(Math.abs(loss - (losses[5] as number))).toBeLessThan(1e-4);
      const zero = zeroGrad(f);
      for (const t of torchTensors(model)) {
        if (t.alias) continue;
        const want = tensor(f, `adam_final.${t.name}`).data;
        const got = gatherTorchTensor(t);
        for (let i = 0; i < want.length; i++) {
          if (inRanges(i, zero[t.name])) continue;
          const a = got[i] as number;
          const b = want[i] as number;
          if (Math.abs(a - b) > 1e-3 * Math.abs(b) + 1e-4)
            expect.fail(`${t.name}[${i}] after 5 steps: ours ${a}, PyTorch ${b}`);
        }
      }
    });
  });
});
