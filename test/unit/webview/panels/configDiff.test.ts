import { describe, expect, it } from 'vitest';
import { configDiff } from '../../../../webview/panels/configDiff';
import type { RunSummary } from '../../../../src/protocol/webview';

const run = (
  name: string,
  over: { config?: Record<string, unknown>; training?: Record<string, unknown>; backend?: string; steps?: number },
): RunSummary =>
  ({
    id: `/r/${name}`,
    name,
    runDir: `/r/${name}`,
    status: 'completed',
    kind: 'decoder-only',
    step: 10,
    totalSteps: over.steps ?? 10,
    segments: [],
    bestValLoss: null,
    model: {
      config: { kind: 'decoder-only', dModel: 64, nLayers: 2, dropout: 0.1, ...over.config },
      params: 1000,
      paramsByModule: {},
      memoryBytes: 1,
      flopsPerToken: 1,
      backend: over.backend ?? 'wasm',
    },
    data: null,
    training: { steps: over.steps ?? 10, batchSize: 8, lr: 0.001, optimizer: 'adamw', ...over.training },
  }) as unknown as RunSummary;

describe('configDiff', () => {
  it('lists only the settings whose values differ, one value per run', () => {
    const rows = configDiff([
      run('a', {}),
      run('b', { config: { dModel: 128 }, training: { lr: 0.0003 } }),
      run('c', { steps: 20, backend: 'reference' }),
    ]);
    expect(rows).toEqual([
      { key: 'steps', values: ['10', '10', '20'] },
      { key: 'model.dModel', values: ['64', '128', '64'] },
      { key: 'backend', values: ['wasm', 'wasm', 'reference'] },
      { key: 'training.lr', values: ['0.001', '0.0003', '0.001'] },
    ]);
  });

  it('names the schedule each run trains with: cosine where run.json has none, wsd, the paper’s noam', () => {
    expect(
      configDiff([
        run('a', {}),
        run('b', { training: { optimizer: 'muon', schedule: 'wsd' } }),
        run('c', { training: { optimizer: 'paper' } }),
      ]),
    ).toEqual([
      { key: 'training.lr', values: ['0.001', '0.001', 'noam factor 0.001'] },
      { key: 'training.optimizer', values: ['adamw', 'muon', 'paper'] },
      { key: 'training.schedule', values: ['cosine', 'wsd', 'noam'] },
    ]);
  });

  it('shows the learning rate a run trains with where its settings say 0 (the default), not "0"', () => {
    expect(configDiff([run('a', { training: { lr: 0 } }), run('b', { training: { lr: 0.0003 } })])).toEqual([
      { key: 'training.lr', values: ['0.001 (default)', '0.0003'] },
    ]);
    // The default and the same rate given by hand train alike, and the table says which is which.
    expect(configDiff([run('a', { training: { lr: 0 } }), run('b', {})])).toEqual([
      { key: 'training.lr', values: ['0.001 (default)', '0.001'] },
    ]);
    const paper = configDiff([
      run('a', { training: { lr: 0, optimizer: 'paper' } }),
      run('b', { training: { lr: 2, optimizer: 'paper' } }),
    ]);
    expect(paper).toEqual([{ key: 'training.lr', values: ['noam factor 1 (default)', 'noam factor 2'] }]);
  });

  it('marks a key one run lacks, and finds nothing between equal runs', () => {
    expect(configDiff([run('a', {}), run('b', { config: { window: 16 } })])).toEqual([
      { key: 'model.window', values: ['—', '16'] },
    ]);
    expect(configDiff([run('a', {}), run('b', {})])).toEqual([]);
  });

  it('names the architecture options that differ, in words, instead of their raw fields', () => {
    const gpt = {
      nHeads: 4,
      norm: 'pre',
      positional: 'learned',
      ropeTheta: 10000,
      rotaryFraction: 1,
      normType: 'layernorm',
      normScale: true,
      qkNorm: false,
      activation: 'gelu',
      nKvHeads: 0,
      qkvBias: true,
      attnOutBias: true,
      mlpBias: true,
      attnSoftCap: 0,
      logitSoftCap: 0,
      slidingWindow: 0,
      parallelResidual: false,
      embedNorm: false,
    };
    const llama = {
      ...gpt,
      positional: 'rope',
      normType: 'rmsnorm',
      activation: 'swiglu',
      nKvHeads: 2,
      qkvBias: false,
      attnOutBias: false,
      mlpBias: false,
    };
    const nanochat = { ...llama, nKvHeads: 0, normScale: false, qkNorm: true, activation: 'relu2', logitSoftCap: 15 };
    const rows = configDiff([run('a', { config: gpt }), run('b', { config: llama }), run('c', { config: nanochat })]);
    expect(rows).toEqual([
      { key: 'architecture.positions', values: ['learned positions', 'RoPE θ 10000', 'RoPE θ 10000'] },
      {
        key: 'architecture.norm',
        values: ['pre-norm · LayerNorm', 'pre-norm · RMSNorm', 'pre-norm · RMSNorm (no scale)'],
      },
      { key: 'architecture.QK-norm', values: ['no QK-norm', 'no QK-norm', 'QK-norm'] },
      { key: 'architecture.feed-forward', values: ['GELU', 'SwiGLU (gated: 3 matrices)', 'ReLU²'] },
      { key: 'architecture.attention heads', values: ['MHA 4 heads', 'GQA 4 q / 2 kv heads', 'MHA 4 heads'] },
      { key: 'architecture.biases', values: ['biases everywhere', 'no biases', 'no biases'] },
      { key: 'architecture.soft-caps', values: ['none', 'none', 'logit soft-cap 15'] },
    ]);
    // RoPE's base alone differs: one row, in words.
    expect(configDiff([run('a', { config: llama }), run('b', { config: { ...llama, ropeTheta: 500000 } })])).toEqual([
      { key: 'architecture.positions', values: ['RoPE θ 10000', 'RoPE θ 500000'] },
    ]);
    expect(
      configDiff([
        run('a', { config: gpt }),
        run('b', { config: { ...gpt, slidingWindow: 16, parallelResidual: true } }),
      ]),
    ).toEqual([
      { key: 'architecture.attention window', values: ['the whole context', 'sliding window 16'] },
      { key: 'architecture.residual', values: ['sequential residual', 'parallel residual'] },
    ]);
  });
});
