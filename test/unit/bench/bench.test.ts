/**
 * The benchmark's plumbing (no timings are asserted — numbers depend on the machine):
 * the five configs, statistics, the PyTorch output parser, the JSON shape
 * and the tables, and one tiny real run end to end.
 */
import { describe, expect, it } from 'vitest';
import type { BenchResult } from '../../../src/bench/bench';
import { runBench } from '../../../src/bench/bench';
import { BENCH_CONFIG_NAMES, benchConfig, randomBatch } from '../../../src/bench/benchConfigs';
import type { EnginesResult } from '../../../src/bench/benchEngines';
import { benchJson, formatBench, formatEngines } from '../../../src/bench/benchReport';
import type { Stats } from '../../../src/bench/benchRun';
import { summarize } from '../../../src/bench/benchRun';
import { parseTorchResult } from '../../../src/bench/benchTorch';
import { benchTaskSpec, measureScoresCost } from '../../../src/bench/benchScores';
import { Transformer } from '../../../src/engine/models/transformer';
import { Rng } from '../../../src/engine/rng';

const st = (median: number): Stats => ({ median, min: median * 0.9, max: median * 1.1, n: 5 });

describe('bench configs', () => {
  it('are the five configs: tiny and small decoder, tiny modern decoder, tiny and base encoder-decoder', () => {
    const dims = BENCH_CONFIG_NAMES.map((n) => {
      const c = benchConfig(n);
      const m = c.model;
      return [n, m.dModel, m.nHeads, m.nEncoderLayers, m.nDecoderLayers, m.dFF, c.seq, c.batch, m.vocabSize];
    });
    expect(dims).toEqual([
      ['tiny-decoder', 64, 4, 0, 2, 256, 64, 32, 256],
      ['small-decoder', 128, 4, 0, 4, 512, 64, 12, 65],
      ['tiny-modern', 64, 4, 0, 2, 176, 64, 32, 256],
      ['tiny-encdec', 64, 4, 2, 2, 256, 64, 32, 256],
      ['base-encdec', 512, 8, 6, 6, 2048, 100, 8, 5000],
    ]);
    expect(benchConfig('tiny-encdec').model.dropout).toBe(0.1);
    expect(benchConfig('tiny-decoder').model.dropout).toBe(0);
  });

  it("tiny-modern is the llama-tiny architecture, the parameter count of bench.py's PyTorch model", () => {
    const m = benchConfig('tiny-modern').model;
    expect([m.positional, m.normType, m.activation, m.nKvHeads, m.tieEmbeddings]).toEqual([
      'rope',
      'rmsnorm',
      'swiglu',
      2,
      false,
    ]);
    expect([m.bias, m.qkvBias, m.attnOutBias, m.mlpBias]).toEqual([false, false, false, false]);
    expect(benchConfig('tiny-modern').optimizer).toEqual(benchConfig('tiny-decoder').optimizer);
    // 2·256·64 (untied) + 2 layers · (2·64 norms + 64² q + 2·64·32 k/v + 64² o + 3·64·176) + 64
    const model = new Transformer(m, { maxBatch: 1, maxLen: 64 });
    expect(model.paramList.reduce((n, p) => n + p.size, 0)).toBe(125_248);
  });

  it('draw batches of real tokens (no PAD/BOS/EOS/UNK) of the right size', () => {
    const b = randomBatch(benchConfig('tiny-encdec'), new Rng(1));
    expect(b.B * b.T).toBe(32 * 64);
    expect(b.src?.length).toBe(32 * 64);
    expect(Math.min(...b.input, ...b.targets, ...(b.src ?? []))).toBeGreaterThanOrEqual(4);
  });
});

describe('bench statistics and parsing', () => {
  it('summarizes median, min and max', () => {
    expect(summarize([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, n: 3 });
    expect(summarize([4, 1, 2, 3]).median).toBe(2.5);
  });

  it('parses the PyTorch script output and rejects malformed output', () => {
    const text = JSON.stringify({
      torch_version: '1.13',
      blas: '/usr/lib/libblas.so.3',
      configs: { 'tiny-decoder': { train_tokens_per_s: { 1: st(100) }, decode_ms_per_token: { 1: st(2) } } },
      matmul_gflops: { 1: { 64: st(50) } },
    });
    const r = parseTorchResult(text);
    expect(r.configs['tiny-decoder']?.train['1']?.median).toBe(100);
    expect(r.matmul['1']?.['64']?.median).toBe(50);
    expect(r.blas).toBe('/usr/lib/libblas.so.3');
    expect(() => parseTorchResult('{"configs": {}}')).toThrow(/torch_version/);
    expect(() => parseTorchResult(text.replace('"median":100', '"median":"fast"'))).toThrow(/median/);
  });
});

function fakeResult(): BenchResult {
  return {
    machine: { cpu: 'Test CPU', cores: 2, node: '20', v8: '11', loadAverage: [0.1, 2.5] },
    backend: 'wasm',
    threads: [1, 2],
    configs: { 'tiny-decoder': { train: { 1: st(30000), 2: st(60000) }, decode: { 1: st(0.1), 2: st(0.08) } } },
    matmul: { 1: { 64: st(30) }, 2: { 64: st(55) } },
    eventLoop: { config: 'tiny-decoder', threads: 2, p99Ms: 12.5, maxMs: 20, meanMs: 10.1, trainTokensPerS: 50000 },
    pytorch: {
      torchVersion: '1.13',
      blas: null,
      configs: { 'tiny-decoder': { train: { 1: st(50000), 2: st(40000) }, decode: { 1: st(0.6), 2: st(0.5) } } },
      matmul: { 1: { 64: st(100) }, 2: { 64: st(110) } },
    },
    tfjs: { skipped: 'not installed' },
    headScores: [
      {
        task: 'reverse',
        snapshotEvery: 75,
        rounds: 6,
        on: st(9800),
        off: st(10000),
        ratio: { median: 0.98, min: 0.95, max: 1.01, n: 6 },
        snapshotMs: { on: st(30), off: st(20) },
        overhead: 0.004,
      },
    ],
    engines: [
      {
        task: 'induction',
        steps: 120,
        torch: 'torch 2.3.1 (Python 3.12.1) · CUDA: 1 × H100',
        engines: [
          { engine: 'ours (wasm)', tokensPerS: st(20000) },
          { engine: 'pytorch cpu', tokensPerS: st(10000) },
          { engine: 'pytorch cuda', tokensPerS: st(400000) },
        ],
        webgpu: { skipped: 'No WebGPU adapter: Dawn found no GPU driver; use --backend wasm.' },
      },
    ],
  };
}

describe('bench report', () => {
  it('prints the headline JSON shape, at the most threads measured', () => {
    const j = benchJson(fakeResult());
    expect(j.configs).toEqual({ 'tiny-decoder': { train_tokens_per_s: 60000, decode_ms_per_token: 0.08 } });
    expect(j.matmul_gflops).toEqual({ 64: 55 });
    expect(j.event_loop_delay_p99_ms).toBe(12.5);
    expect(
      (j.pytorch as { configs: Record<string, { train_tokens_per_s: number }> }).configs['tiny-decoder']
        ?.train_tokens_per_s,
    ).toBe(40000);
    expect(JSON.parse(JSON.stringify(j)).threads).toBe(2);
  });

  it('prints tables with ours/PyTorch ratios and says what was not compared', () => {
    const text = formatBench(fakeResult());
    expect(text).toContain('60,000 [54,000–66,000]');
    expect(text).toContain('1.50×'); // 60000 / 40000 at 2 threads
    expect(text).toContain('0.60×'); // 30000 / 50000 at 1 thread
    expect(text).toContain('6.25×'); // decode: PyTorch 0.5 ms / ours 0.08 ms
    expect(text).toContain('ours 2t/1t');
    expect(text).toMatch(/64 .*1\.83×\s*$/m); // matmul thread scaling: 55 / 30
    expect(text).toContain('p99 12.5 ms');
    expect(text).toContain('TensorFlow.js: not compared — not installed');
    expect(text).toContain('2.50 after — other processes were using the cores');
    expect(text).toMatch(
      /reverse\s+75\s+9,800 \[8,820–10,780\]\s+10,000 \[9,000–11,000\]\s+0\.980 \[0\.950–1\.010\]\s+30\.0 \[27\.0–33\.0\] \/ 20\.0 \[18\.0–22\.0\]\s+0\.40%\s+yes/,
    );
    expect(text).toContain('Engines on the same run: train --task induction, 120 steps');
    expect(text).toMatch(/pytorch cpu\s+10,000 \[9,000–11,000\]\s+2\.00×/);
    expect(text).toMatch(/pytorch cuda\s+400,000 \[360,000–440,000\]\s+0\.05×/);
    expect(benchJson(fakeResult()).engines).toEqual({
      induction: { 'ours (wasm)': 20000, 'pytorch cpu': 10000, 'pytorch cuda': 400000 },
    });
    expect(benchJson(fakeResult()).head_scores).toEqual({
      reverse: {
        on_tokens_per_s: 9800,
        off_tokens_per_s: 10000,
        on_over_off: 0.98,
        snapshot_ms_on: 30,
        snapshot_ms_off: 20,
        share_of_training: 0.004,
      },
    });
  });
});

describe('the WebGPU row of the engines table', () => {
  const run = (webgpu: EnginesResult['webgpu']): EnginesResult => ({
    task: 'induction',
    steps: 120,
    torch: 'torch 2.3.1 (Python 3.12.1) · CUDA: 1 × H100',
    engines: [
      { engine: 'ours (wasm)', tokensPerS: st(20000) },
      { engine: 'pytorch cpu', tokensPerS: st(10000) },
      { engine: 'pytorch cuda', tokensPerS: st(400000) },
    ],
    webgpu,
  });
  const gpu = (adapter: string, software: boolean, median: number): EnginesResult['webgpu'] => ({
    engine: `ours (webgpu) on ${adapter}`,
    tokensPerS: st(median),
    adapter,
    software,
    steps: software ? 3 : 120,
    block: software ? 1 : 10,
  });

  it('on a software adapter: the row names the adapter, with no ratio and no WebGPU column', () => {
    const text = formatEngines([run(gpu('google swiftshader (software) · Vulkan', true, 150))]).join('\n');
    const row = text.split('\n').find((l) => l.startsWith('ours (webgpu)'));
    expect(row).toMatch(
      /^ours \(webgpu\) on google swiftshader \(software\) · Vulkan\s+150 \[135–165\]\s+software adapter: reported, not compared \(3 steps/,
    );
    expect(row).not.toContain('×');
    expect(text).not.toContain('WebGPU/engine');
    expect(text).not.toContain('WebGPU: not measured');
    expect(text).toMatch(/pytorch cpu\s+10,000 \[9,000–11,000\]\s+2\.00×\s*$/m); // the others as before
  });

  it('on a real GPU: the row is compared with WebAssembly and each PyTorch device', () => {
    const text = formatEngines([run(gpu('NVIDIA H100 · Vulkan', false, 200000))]).join('\n');
    expect(text).toMatch(/engine\s+tokens\/s\s+ours\/engine\s+WebGPU\/engine/);
    expect(text).toMatch(/ours \(wasm\)\s+20,000 \[18,000–22,000\]\s+1\.00×\s+10\.00×/);
    expect(text).toMatch(/ours \(webgpu\) on NVIDIA H100 · Vulkan\s+200,000 \[180,000–220,000\]\s+0\.10×\s+—/);
    expect(text).toMatch(/pytorch cpu\s+10,000 \[9,000–11,000\]\s+2\.00×\s+20\.00×/);
    expect(text).toMatch(/pytorch cuda\s+400,000 \[360,000–440,000\]\s+0\.05×\s+0\.50×/);
    expect(text).not.toContain('not compared');
  });

  it('without an adapter: one line says why, and the table is as before', () => {
    const lines = formatEngines([run({ skipped: 'No WebGPU adapter: Dawn found no GPU driver.' })]);
    expect(lines.filter((l) => l.includes('WebGPU'))).toEqual([
      'WebGPU: not measured — No WebGPU adapter: Dawn found no GPU driver.',
    ]);
    expect(lines.join('\n')).not.toContain('ours (webgpu)');
  });

  it('puts the WebGPU row into the JSON beside the others', () => {
    const r = { ...fakeResult(), engines: [run(gpu('NVIDIA H100 · Vulkan', false, 200000))] };
    expect(benchJson(r).engines).toEqual({
      induction: {
        'ours (wasm)': 20000,
        'ours (webgpu) on NVIDIA H100 · Vulkan': 200000,
        'pytorch cpu': 10000,
        'pytorch cuda': 400000,
      },
    });
  });
});

describe('runBench', () => {
  it('measures a tiny real run end to end (one config, one thread, no PyTorch)', async () => {
    const lines: string[] = [];
    const r = await runBench({
      configs: ['tiny-decoder'],
      threads: [1],
      matmulSizes: [64],
      quick: true,
      pytorch: false,
      scores: false,
      onProgress: (l) => lines.push(l),
    });
    expect(r.backend).toBe('wasm (SIMD with fused multiply-add)'); // test/setupWasm.ts turns relaxed SIMD on
    const c = r.configs['tiny-decoder']!;
    expect(c.train['1']!.median).toBeGreaterThan(0);
    expect(c.train['1']!.n).toBe(3);
    expect(c.decode['1']!.median).toBeGreaterThan(0);
    expect(r.matmul['1']!['64']!.min).toBeGreaterThan(0);
    expect(r.eventLoop).toEqual({ skipped: expect.stringContaining('no worker script') });
    expect(r.pytorch).toEqual({ skipped: 'disabled' });
    expect(lines.some((l) => l.startsWith('ours tiny-decoder 1 thread'))).toBe(true);
    expect(formatBench(r)).toContain('PyTorch: not compared — disabled');
    expect(formatBench(r)).toContain('Head scores: not measured — disabled');
    expect(formatBench(r)).toContain('Engines on the same run: not measured — disabled');
  });

  it('times the training session with head scores on and off, block by block', async () => {
    const spec = benchTaskSpec('reverse');
    const tiny = {
      ...spec,
      model: {
        ...spec.model,
        overrides: { ...spec.model.overrides, dModel: 16, dFF: 32, nEncoderLayers: 1, nDecoderLayers: 1 },
      },
      training: { ...spec.training, steps: 40, batchSize: 8, snapshotEvery: 2 },
    };
    const c = await measureScoresCost('reverse', 2, () => performance.now(), tiny);
    expect(c).toMatchObject({ task: 'reverse', snapshotEvery: 2, rounds: 2 });
    expect(c.on.n).toBe(2);
    expect(c.off.n).toBe(2);
    expect(c.on.min).toBeGreaterThan(0);
    expect(c.ratio.n).toBe(2);
    expect(c.snapshotMs.on.n).toBe(2);
    expect(c.snapshotMs.off.n).toBe(2);
    expect(Number.isFinite(c.overhead)).toBe(true);
    expect(c.ratio.min).toBeGreaterThan(0);
  });
});
