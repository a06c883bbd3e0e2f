/**
 * Parity with PyTorch for the options of today's transformers (issue 29): the golden files in
 * test/golden/modern/ (scripts/pytorch/make_golden.py, MODERN) hold PyTorch's weights, inputs,
 * logits, every gradient and the losses of 50 optimizer steps for each option alone on the tiny
 * decoder-only shape, the llama and nanochat presets' architectures, six Hugging Face-shaped
 * decoders (checked against transformers' own classes when the files were written: metadata
 * `hfCheck`), one modern encoder-decoder, and issue 30's heads apart from dModel / nHeads (headDim,
 * attnScale: opt-head-dim-scale, hf-qwen3-head-dim, encdec-head-dim) and Gemma 3's layers (postNorms, globalEvery,
 * ropeLocalTheta: gemma3-layers, encdec-post-norms). We load the same weights and must agree:
 * logits to 1e-5 relative (max |ours − PyTorch| / max(1, max |PyTorch|)), the loss to 1e-5,
 * gradients to 1e-3 relative (plus 1e-6 of the tensor's largest), and each of the 51 losses of
 * 50 steps to 1e-4 absolute. A file whose config uses an option the models do not build yet
 * (`unbuiltOptions`) is skipped until it is built.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import type { ModelConfig } from '../../../../src/engine/config';
import { validateConfig } from '../../../../src/engine/config';
import type { SafetensorsFile } from '../../../../src/engine/io/safetensors';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import type { Batch } from '../../../../src/engine/models/inputs';
import { unbuiltOptions } from '../../../../src/engine/models/modelParts';
import { gatherTorchTensor, torchTensors } from '../../../../src/engine/models/pytorchNames';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Optimizer } from '../../../../src/engine/optim/optimizer';
import type { OptimizerConfig } from '../../../../src/engine/optim/optimizerConfig';
import { PARITY_BACKENDS, goldenModel, goldenTensor, inRanges, zeroGrad } from './goldenParity';

const GOLDEN = join(__dirname, '../../../golden/modern');
const BACKENDS = PARITY_BACKENDS;

interface Golden {
  readonly name: string;
  readonly f: SafetensorsFile;
  readonly cfg: ModelConfig;
  /** The options of the config the models do not build yet (the case is skipped while any). */
  readonly unbuilt: string[];
}

const GOLDENS: Golden[] = readdirSync(GOLDEN)
  .filter((n) => n.endsWith('.safetensors'))
  .sort()
  .map((file) => {
    const f = decodeSafetensors(new Uint8Array(readFileSync(join(GOLDEN, file))), file);
    const cfg = validateConfig(JSON.parse(f.metadata.config as string) as ModelConfig);
    return { name: file.replace(/\.safetensors$/, ''), f, cfg, unbuilt: unbuiltOptions(cfg) };
  });

const tensor = goldenTensor;

function setup(g: Golden, backend: Backend): { model: Transformer; batch: Batch } {
  const { model, batch } = goldenModel(g.f, g.cfg, backend);
  const stored = [...g.f.tensors.keys()].filter((k) => k.startsWith('param.')).length;
  expect(torchTensors(model).filter((t) => !t.alias).length, 'every stored parameter is one of ours').toBe(stored);
  return { model, batch };
}

/** max |got − want| / max(1, max |want|). */
function relativeError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  expect(got.length).toBe(want.length);
  let diff = 0;
  let scale = 1;
  for (let i = 0; i < want.length; i++) {
    diff = Math.max(diff, Math.abs((got[i] as number) - (want[i] as number)));
    scale = Math.max(scale, Math.abs(want[i] as number));
  }
  return diff / scale;
}

describe('modern golden files', () => {
  it('cover every option alone, both presets, the Hugging Face shapes and the encoder-decoder', () => {
    const names = GOLDENS.map((g) => g.name);
    expect(names.filter((n) => n.startsWith('opt-')).length).toBe(21);
    expect(names).toEqual(
      expect.arrayContaining(['preset-llama', 'preset-nanochat', 'encdec-modern', 'encdec-head-dim']),
    );
    // headDim and attnScale (issue 30): heads apart from dModel / nHeads in both model kinds.
    for (const n of ['opt-head-dim-scale', 'hf-qwen3-head-dim', 'encdec-head-dim']) {
      const cfg = GOLDENS.find((g) => g.name === n)?.cfg;
      expect(cfg && cfg.headDim > 0 && cfg.headDim !== cfg.dModel / cfg.nHeads, n).toBe(true);
    }
    // Gemma 3's layers (issue 30): sandwich norms, one global layer of two, a local RoPE θ; the encoder-decoder's
    // post norms on all three sublayers.
    const gemma = GOLDENS.find((g) => g.name === 'gemma3-layers')?.cfg;
    expect(gemma && gemma.postNorms && gemma.globalEvery === 2 && gemma.ropeLocalTheta > 0).toBe(true);
    const encdec = GOLDENS.find((g) => g.name === 'encdec-post-norms')?.cfg;
    expect(encdec && encdec.postNorms && encdec.globalEvery === 2 && encdec.kind === 'encoder-decoder').toBe(true);
    for (const g of GOLDENS) {
      expect(JSON.parse(g.f.metadata.losses as string), g.name).toHaveLength(51);
      // The configs with a Hugging Face class say which one checked them, and that it agreed.
      if (g.name === 'preset-llama' || g.name.startsWith('hf-')) {
        const hf = JSON.parse(g.f.metadata.hfCheck as string) as { class: string; checked: boolean };
        expect(hf.class, g.name).toMatch(/ForCausalLM$/);
        expect(hf.checked, g.name).toBe(true);
      }
    }
  });
});

describe.each(BACKENDS)('PyTorch parity of today’s options (%s backend)', (_b, makeBackend) => {
  describe.each(GOLDENS)('$name', (g) => {
    const skip = g.unbuilt.length > 0;

    it.skipIf(skip)('matches the logits to 1e-5 relative and the loss to 1e-5', () => {
      const { model, batch } = setup(g, makeBackend());
      const { loss } = model.forward(batch, { train: true, labelSmoothing: g.cfg.labelSmoothing });
      expect(Math.abs(loss - Number(g.f.metadata.loss))).toBeLessThan(1e-5);
      expect(relativeError(model.logits(), tensor(g.f, 'output.logits').data)).toBeLessThan(1e-5);
    });

    it.skipIf(skip)('matches every gradient to 1e-3 relative', () => {
      const { model, batch } = setup(g, makeBackend());
      model.forward(batch, { train: true, labelSmoothing: g.cfg.labelSmoothing });
      model.backward();
      const zero = zeroGrad(g.f);
      for (const t of torchTensors(model)) {
        if (t.alias) continue;
        const want = tensor(g.f, `grad.${t.name}`).data;
        const got = gatherTorchTensor(t, true);
        let scale = 0;
        for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i] as number));
        for (let i = 0; i < want.length; i++) {
          const a = got[i] as number;
          const b = want[i] as number;
          const tol = inRanges(i, zero[t.name]) ? 1e-6 : 1e-3 * Math.abs(b) + 1e-6 * Math.max(scale, 1e-3);
          if (Math.abs(a - b) > tol) expect.fail(`${t.name}[${i}]: ours ${a}, PyTorch ${b}`);
        }
      }
    });

    it.skipIf(skip)('follows the 50 optimizer steps (each loss to 1e-4)', () => {
      const { model, batch } = setup(g, makeBackend());
      const opt = JSON.parse(g.f.metadata.optimizer as string) as OptimizerConfig;
      const optimizer = new Optimizer(model.backendOrThrow(), model.params, model.grads, model.segments(), {
        ...opt,
        lr: opt.lr ?? 0.01,
      });
      const losses = JSON.parse(g.f.metadata.losses as string) as number[];
      let worst = 0;
      for (let s = 0; s <= 50; s++) {
        const { loss } = model.forward(batch, { train: true, labelSmoothing: g.cfg.labelSmoothing });
        const d = Math.abs(loss - (losses[s] as number));
        worst = Math.max(worst, d);
        if (d >= 1e-4) expect.fail(`loss before step ${s + 1}: ours ${loss}, PyTorch ${losses[s]}`);
        if (s === 50) break;
        model.backward();
        optimizer.step();
      }
      expect(worst).toBeLessThan(1e-4);
    });
  });
});
