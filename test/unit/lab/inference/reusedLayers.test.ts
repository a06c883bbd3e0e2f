/**
 * A model whose decoder layers reuse two sets of buffers (ModelShape.activations 'streams' or 'top', what requestPlan
 * gives the lens and scoring) gives the numbers of the same model keeping every layer's own: the logits and every
 * layer's lens in several architectures (engine), and score, lens and ablation on a trained run (lab); what would read
 * a reused buffer (backward, a forward's attention maps, the lens of a model keeping only the top) is refused; and the
 * model worker's reuse rule (covers, widened) never hands such a model to a job that needs every layer's activations.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import type { ModelConfig } from '../../../../src/engine/config';
import { presetConfig, validateConfig } from '../../../../src/engine/config';
import type { KeptActivations } from '../../../../src/engine/models/inputs';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { compareHeadsOff } from '../../../../src/lab/inference/ablate';
import { createWebGpuBackend } from '../../../../src/engine/backends/webgpu/webgpuBackend';
import { logitLens, logitLensAsync } from '../../../../src/lab/inference/lens';
import type { OpenRun, RunPlan } from '../../../../src/lab/inference/openRun';
import { openRun } from '../../../../src/lab/inference/openRun';
import { covers, widened } from '../../../../src/lab/inference/requestPlan';
import { scoreText, scoreTextAsync } from '../../../../src/lab/inference/score';
import { openNodeGpu } from '../../../../src/lab/platform/webgpu.node';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';
import { numbersIn, stringsIn, worst } from './outputValues';

const gpu = await openNodeGpu();

const BACKENDS: [string, () => Backend][] = [
  ['reference', () => createReferenceBackend()],
  ...(createWasmBackend() ? [['wasm', () => createWasmBackend() as Backend] as [string, () => Backend]] : []),
];

const V = 40;
/** Four decoder layers (layers 0 and 2, 1 and 3 share buffers) of today's and of the paper's kinds. */
const CONFIGS: [string, ModelConfig][] = [
  ['GPT (LayerNorm, learned positions)', { ...presetConfig('decoder-only', 'tiny', V), nDecoderLayers: 4 }],
  [
    'Qwen-like (RMSNorm, RoPE, GQA, q/k/v biases, SwiGLU, tied)',
    {
      ...presetConfig('decoder-only', 'tiny', V),
      nDecoderLayers: 4,
      norm: 'pre',
      normType: 'rmsnorm',
      positional: 'rope',
      nHeads: 4,
      nKvHeads: 2,
      activation: 'swiglu',
      bias: false,
      qkvBias: true,
    },
  ],
  ['post-LN', { ...presetConfig('decoder-only', 'tiny', V), nDecoderLayers: 4, norm: 'post' }],
  ['encoder-decoder', { ...presetConfig('encoder-decoder', 'tiny', V, V), nDecoderLayers: 4, nEncoderLayers: 2 }],
];

describe.each(BACKENDS)('layers reusing buffers give the same numbers (%s)', (_b, backend) => {
  it.each(CONFIGS)('%s: logits and the lens of every layer', (_name, raw) => {
    const cfg = validateConfig(raw);
    const T = 12;
    const models = (['backward', 'streams', 'top'] as KeptActivations[]).map((activations) => {
      const m = new Transformer(cfg, { maxBatch: 1, maxLen: 16, logitRows: 8, activations }).bind(backend());
      m.initialize(new Rng(7));
      return m;
    });
    const [own, streams, top] = models as [Transformer, Transformer, Transformer];
    const rng = new Rng(3);
    const input = Int32Array.from({ length: T }, () => 4 + rng.int(V - 4));
    const src = Int32Array.from({ length: 9 }, () => 4 + rng.int(V - 4));
    const batch = { B: 1, T, input, targets: input, ...(cfg.kind === 'encoder-decoder' ? { S: 9, src } : {}) };
    const rows = Array.from({ length: 8 }, (_, i) => i + 4);
    const read = (m: Transformer): { loss: number; logits: Float32Array } => {
      const { loss } = m.forward(batch, { train: false });
      return { loss, logits: Float32Array.from(m.logitsAt(rows)) };
    };
    const a = read(own);
    for (const m of [streams, top]) {
      const b = read(m);
      expect(Math.abs(b.loss - a.loss)).toBeLessThanOrEqual(1e-6);
      expect(worst(b.logits, a.logits)).toBeLessThanOrEqual(1e-6);
    }
    // the lens: after each forward of the same batch, every layer's logits at the same rows
    own.forward(batch, { train: false, loss: false });
    streams.forward(batch, { train: false, loss: false });
    for (let layer = 0; layer <= cfg.nDecoderLayers; layer++) {
      const x = Float32Array.from(own.residualLogits(layer, 'logits', rows));
      const y = Float32Array.from(streams.residualLogits(layer, 'logits', rows));
      expect(worst(y, x), `layer ${layer}`).toBeLessThanOrEqual(1e-6);
    }
    // the layers really share: a reused model plans far fewer activation floats
    expect(streams.arena.floats).toBeLessThan(own.arena.floats);
    expect(top.arena.floats).toBeLessThan(streams.arena.floats);
  });

  it('what would read a reused buffer is refused in one line', () => {
    const cfg = validateConfig({ ...presetConfig('decoder-only', 'tiny', V), nDecoderLayers: 4 });
    const m = new Transformer(cfg, { maxBatch: 1, maxLen: 16, activations: 'top' }).bind(backend());
    m.initialize(new Rng(1));
    const input = Int32Array.from({ length: 8 }, (_, i) => 4 + i);
    m.forward({ B: 1, T: 8, input, targets: input }, { train: false });
    expect(() => m.backward()).toThrow(/backward\(\) needs every layer's activations.*activations 'top'/);
    expect(() => m.captureAttention(0)).toThrow(/captureAttention\(\) needs every layer's activations/);
    expect(() => m.residualLogits(2, 'logits', [0, 1, 2, 3])).toThrow(/keeps only the top's.*'streams'/);
    // the top and the embeddings are still there
    expect(m.residualLogits(4, 'logits', [0, 1, 2, 3]).length).toBe(4 * V);
    expect(m.residualLogits(0, 'logits', [0, 1, 2, 3]).length).toBe(4 * V);
  });
});

describe('a trained run opened with reused layers: score, lens and ablation as before', () => {
  const TEXT = 'the cat sat on the mat. the dog sat on the log.';
  let runDir = '';
  const opened = new Map<string, OpenRun>();
  const plan = (activations?: KeptActivations, logitRows?: number): RunPlan => ({
    shape: {
      maxBatch: 1,
      maxLen: 64,
      ...(activations ? { activations } : {}),
      ...(logitRows ? { logitRows } : {}),
    },
  });
  beforeAll(async () => {
    const spec = tinySpec(await tinyDocuments(), 3, 64);
    runDir = (
      await trainTiny({ ...spec, model: { ...spec.model, overrides: { dModel: 32, dFF: 64, nDecoderLayers: 3 } } })
    ).runDir;
    opened.set('backward', await openRun(NODE_FS, runDir, createReferenceBackend(), plan()));
    opened.set('streams', await openRun(NODE_FS, runDir, createReferenceBackend(), plan('streams', 8)));
    opened.set('top', await openRun(NODE_FS, runDir, createReferenceBackend(), plan('top', 8)));
  }, 120_000);
  const run = (k: string): OpenRun => opened.get(k) as OpenRun;

  it('score (top and streams) equals every layer keeping its own', () => {
    const a = scoreText(run('backward'), null, TEXT).output;
    expect(a.logprobs.length).toBeGreaterThan(20);
    for (const k of ['top', 'streams']) {
      const b = scoreText(run(k), null, TEXT).output;
      expect(b.tokens).toEqual(a.tokens);
      expect(worst(b.logprobs, a.logprobs)).toBeLessThanOrEqual(1e-6);
    }
  });

  it('lens (streams) equals every layer keeping its own; a model keeping only the top refuses it', () => {
    const a = logitLens(run('backward'), { prompt: TEXT }, { topK: 3 });
    const b = logitLens(run('streams'), { prompt: TEXT }, { topK: 3 });
    expect(a.layers).toHaveLength(4);
    expect(stringsIn(b)).toEqual(stringsIn(a));
    expect(worst(numbersIn(b), numbersIn(a))).toBeLessThanOrEqual(1e-6);
    expect(() => logitLens(run('top'), { prompt: TEXT }, { topK: 3 })).toThrow(/keeps only the top's/);
  });

  it('ablation (a head off) equals every layer keeping its own', () => {
    const off = [{ stack: 'decoder.self' as const, layer: 1, head: 1 }];
    const a = compareHeadsOff(run('backward'), { prompt: TEXT }, off, { topK: 5 });
    const b = compareHeadsOff(run('top'), { prompt: TEXT }, off, { topK: 5 });
    expect(stringsIn(b)).toEqual(stringsIn(a));
    expect(worst(numbersIn(b), numbersIn(a))).toBeLessThanOrEqual(1e-6);
  });

  it("the worker's reuse rule: a model keeping less never serves a job needing more; widening keeps the most", () => {
    expect(covers(run('streams'), plan('top', 8))).toBe(true);
    expect(covers(run('streams'), plan('streams', 8))).toBe(true);
    expect(covers(run('top'), plan('streams', 8))).toBe(false);
    expect(covers(run('streams'), plan(undefined, 8))).toBe(false); // patching, attribution: every layer's own
    expect(covers(run('backward'), plan('top', 8))).toBe(true);
    expect(widened(run('top'), plan('streams', 8)).shape.activations).toBe('streams');
    expect(widened(run('streams'), plan(undefined, 8)).shape.activations).toBe('backward');
    expect(widened(run('backward'), plan('top', 8)).shape.activations).toBe('backward');
  });
});

describe.skipIf(!gpu.ok)('on WebGPU: the stream copies are made on the device', () => {
  const TEXT = 'the cat sat on the mat.';
  let own: OpenRun;
  let reused: OpenRun;
  beforeAll(async () => {
    if (!gpu.ok) return;
    const spec = tinySpec(await tinyDocuments(), 3, 32);
    const { runDir } = await trainTiny({
      ...spec,
      model: { ...spec.model, overrides: { dModel: 32, dFF: 64, nDecoderLayers: 3 } },
    });
    const shape = { maxBatch: 1, maxLen: 32, logitRows: 8 };
    own = await openRun(NODE_FS, runDir, createWebGpuBackend(gpu.device), { shape });
    reused = await openRun(NODE_FS, runDir, createWebGpuBackend(gpu.device), {
      shape: { ...shape, activations: 'streams' },
    });
  }, 120_000);
  afterAll(() => {
    if (gpu.ok) gpu.device.destroy();
  });

  it('lens and score equal the same device keeping every layer', async () => {
    const a = await logitLensAsync(own, { prompt: TEXT }, { topK: 3 });
    const b = await logitLensAsync(reused, { prompt: TEXT }, { topK: 3 });
    expect(stringsIn(b)).toEqual(stringsIn(a));
    expect(worst(numbersIn(b), numbersIn(a))).toBeLessThanOrEqual(1e-6);
    const sa = (await scoreTextAsync(own, null, TEXT)).output.logprobs;
    const sb = (await scoreTextAsync(reused, null, TEXT)).output.logprobs;
    expect(worst(sb, sa)).toBeLessThanOrEqual(1e-6);
  });
});
