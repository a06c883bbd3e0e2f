import { describe, expect, expectTypeOf, it } from 'vitest';
import type { BackendKind as EngineBackendKind } from '../../../src/engine/backends/select';
import { createBackend } from '../../../src/engine/backends/select';
import type { ModelKind as EngineModelKind } from '../../../src/engine/config';
import { presetConfig, presetNames } from '../../../src/engine/config';
import { TRAIN_HELP } from '../../../src/cli/train';
import type { Tokenizer } from '../../../src/engine/tokenizers/special';
import { optimizerConfig } from '../../../src/lab/runs/specModel';
import type { BackendKind, DecodeStrategy, ModelKind, TokenizerType, TrainSpec } from '../../../src/protocol/data';
import {
  BACKEND_KINDS,
  DECODE_STRATEGIES,
  MODEL_KINDS,
  MODEL_PRESETS,
  OPTIMIZER_PRESETS,
  PRESET_NAMES,
  TOKENIZER_TYPES,
  trainSpec,
  validateRunSegments,
} from '../../../src/protocol/data';
import { EVAL_STRATEGIES } from '../../../src/protocol/evaluation';
import type { DecodeParams } from '../../../src/protocol/model';
import { decodeParams } from '../../../src/protocol/model';
import { ProtocolError } from '../../../src/protocol/schema';
import { validateToTrainingWorker, validateFromTrainingWorker } from '../../../src/protocol/trainingWorker';
import { validateToWebview, validateFromWebview } from '../../../src/protocol/webview';

const spec: TrainSpec = {
  model: { kind: 'encoder-decoder', preset: 'tiny', overrides: { dModel: 32 } },
  tokenizer: { type: 'char', vocabSize: 1000 },
  data: { kind: 'task', task: 'reverse' },
  training: {
    steps: 10,
    batchSize: 4,
    seqLen: 16,
    evalEvery: 5,
    checkpointEvery: 5,
    snapshotEvery: 5,
    seed: 1,
    optimizer: 'adamw',
    lr: 0,
    warmup: 0,
  },
  backend: 'reference',
};

function rejects(f: () => unknown, pattern: RegExp): void {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ProtocolError);
  expect((err as Error).message).toMatch(pattern);
}

describe('protocol validation', () => {
  it('accepts well-formed commands and notifications', () => {
    expect(
      validateToTrainingWorker({
        type: 'train/start',
        runDir: '/r',
        spec,
        resume: false,
        stopAt: null,
        extendTo: null,
        pytorch: null,
      }).type,
    ).toBe('train/start');
    expect(validateToTrainingWorker({ type: 'train/stop' }).type).toBe('train/stop');
    const step = {
      type: 'train/didStep',
      step: 3,
      loss: 1.5,
      lr: 1e-3,
      gradNorm: 0.7,
      tokens: 40,
      tokensPerSec: 900,
      elapsedMs: 12,
    };
    expect(validateFromTrainingWorker(step)).toBe(step);
    const snap = {
      type: 'train/didSnapshot',
      step: 5,
      srcTokens: ['a'],
      tgtTokens: ['<bos>', 'a'],
      maps: [{ stack: 'decoder.self', layer: 0, shape: [2, 2, 2], data: new Float32Array(8) }],
      masks: [{ name: 'decoder.causal', shape: [1, 1, 2, 2], data: Uint8Array.of(1, 0, 1, 1) }],
    };
    expect(validateFromTrainingWorker(snap).type).toBe('train/didSnapshot');
    expect(validateFromWebview({ type: 'train/control', runDir: 'r', action: 'pause' }).type).toBe('train/control');
    expect(validateToWebview({ type: 'run/didUpdate', runDir: 'r', event: step }).type).toBe('run/didUpdate');
  });

  it.each<[string, unknown, RegExp]>([
    ['not an object', 42, /expected a message object/],
    ['no type', {}, /type: expected a message type/],
    ['unknown type', { type: 'train/explode' }, /unknown message type "train\/explode"; known: train\/start/],
    [
      'missing field',
      { type: 'train/start', runDir: '/r', resume: false, stopAt: null, extendTo: null, pytorch: null },
      /spec: expected an object/,
    ],
    [
      'wrong field type',
      { type: 'train/start', runDir: 1, spec, resume: false, stopAt: null, extendTo: null, pytorch: null },
      /runDir: expected a string/,
    ],
    [
      'bad enum',
      {
        type: 'train/start',
        runDir: '/r',
        spec: { ...spec, backend: 'gpu' },
        resume: false,
        stopAt: null,
        extendTo: null,
        pytorch: null,
      },
      /backend: expected one of auto, wasm, reference/,
    ],
    [
      'negative steps',
      {
        type: 'train/start',
        runDir: '/r',
        spec: { ...spec, training: { ...spec.training, steps: -1 } },
        resume: false,
        stopAt: null,
        extendTo: null,
        pytorch: null,
      },
      /steps: expected an integer ≥ 1/,
    ],
    ['prototype key', { type: 'constructor' }, /unknown message type/],
  ])('rejects a command that is %s', (_n, msg, pattern) => rejects(() => validateToTrainingWorker(msg), pattern));

  it('rejects a snapshot whose data does not fill its shape', () => {
    rejects(
      () =>
        validateFromTrainingWorker({
          type: 'train/didSnapshot',
          step: 1,
          srcTokens: [],
          tgtTokens: [],
          maps: [{ stack: 'decoder.self', layer: 0, shape: [1, 2, 2], data: new Float32Array(3) }],
          masks: [],
        }),
      /3 values do not fill shape \[1, 2, 2\]/,
    );
  });

  it('rejects a forwarded worker event that is itself malformed', () => {
    rejects(
      () => validateToWebview({ type: 'run/didUpdate', runDir: 'r', event: { type: 'train/didStep', step: 'x' } }),
      /event\(train\/didStep\)\.step/,
    );
  });

  it('rejects a NaN learning rate but allows a NaN loss (which the runner reports as a failure)', () => {
    const base = {
      type: 'train/didStep',
      step: 1,
      loss: Number.NaN,
      lr: 1e-3,
      gradNorm: 1,
      tokens: 1,
      tokensPerSec: 1,
      elapsedMs: 1,
    };
    expect(validateFromTrainingWorker(base).type).toBe('train/didStep');
    rejects(() => validateFromTrainingWorker({ ...base, lr: Number.NaN }), /lr: expected a number/);
  });

  it('accepts a resume that extends a run to a new total, and rejects a bad total', () => {
    const start = { type: 'train/start', runDir: '/r', spec, resume: true, stopAt: 30, extendTo: 40, pytorch: null };
    expect(validateToTrainingWorker(start)).toBe(start);
    rejects(() => validateToTrainingWorker({ ...start, extendTo: 0 }), /extendTo: expected an integer ≥ 1/);
    rejects(() => validateToTrainingWorker({ ...start, extendTo: 12.5 }), /extendTo: expected an integer ≥ 1/);
    rejects(
      () => validateToTrainingWorker({ ...start, extendTo: undefined }),
      /extendTo: expected an integer ≥ 1, got undefined/,
    );
  });

  const model = {
    config: { kind: 'decoder-only' },
    params: 1,
    paramsByModule: {},
    memoryBytes: 1,
    flopsPerToken: 1,
    backend: 'reference',
  };
  const data = { description: 'd', documents: 1, bytes: 1, trainTokens: 1, valTokens: 1, skipped: [] };
  const extended = [
    { fromStep: 0, toStep: 10, schedule: 'cosine' },
    { fromStep: 10, toStep: 25, schedule: 'restart' },
  ];

  it('carries the segments of an extended run in train/didStart and in run summaries', () => {
    const didStart = {
      type: 'train/didStart',
      runDir: '/r',
      startStep: 10,
      totalSteps: 25,
      segments: extended,
      model,
      data,
    };
    expect(validateFromTrainingWorker(didStart)).toBe(didStart);
    const run = {
      id: 'r',
      name: 'r',
      runDir: '/r',
      status: 'completed',
      kind: 'decoder-only',
      step: 25,
      totalSteps: 25,
      segments: extended,
      bestValLoss: null,
      model: null,
      data: null,
    };
    expect(
      validateToWebview({
        type: 'dashboard/didLoadRuns',
        runs: [{ run, steps: [], evals: [], snapshots: [] }],
        selectedId: null,
      }).type,
    ).toBe('dashboard/didLoadRuns');
    rejects(
      () =>
        validateToWebview({
          type: 'dashboard/didLoadRuns',
          runs: [{ run: { ...run, segments: undefined }, steps: [], evals: [], snapshots: [] }],
          selectedId: null,
        }),
      /run\.segments: expected an array/,
    );
  });

  it.each<[string, unknown, RegExp]>([
    ['empty', [], /segments: expected at least one segment/],
    ['not from step 0', [{ fromStep: 5, toStep: 10, schedule: 'cosine' }], /segments\[0\]\.fromStep: expected 0/],
    [
      'with a gap',
      [extended[0], { fromStep: 11, toStep: 25, schedule: 'restart' }],
      /segments\[1\]\.fromStep: expected 10 \(where the segment before ends\), got 11/,
    ],
    [
      'empty segment',
      [
        { fromStep: 0, toStep: 10, schedule: 'cosine' },
        { fromStep: 10, toStep: 10, schedule: 'restart' },
      ],
      /segments\[1\]\.toStep: expected more than fromStep 10/,
    ],
    [
      'of an unknown schedule',
      [{ fromStep: 0, toStep: 10, schedule: 'linear' }],
      /schedule: expected one of cosine, constant, noam, restart/,
    ],
  ])('rejects segments that are %s', (_n, segments, pattern) => {
    rejects(() => validateRunSegments(segments), pattern);
    rejects(
      () =>
        validateFromTrainingWorker({
          type: 'train/didStart',
          runDir: '/r',
          startStep: 0,
          totalSteps: 25,
          segments,
          model,
          data,
        }),
      pattern,
    );
  });
});

describe('declared names (each list declared once)', () => {
  it('lists each preset once, and the kinds as the keys of the presets', () => {
    expect(MODEL_KINDS).toEqual(['decoder-only', 'encoder-decoder']);
    expect(PRESET_NAMES).toEqual([
      'tiny',
      'small',
      'gpt',
      'llama-tiny',
      'llama-small',
      'nanochat-tiny',
      'nanochat-small',
      'base',
    ]);
    expect(BACKEND_KINDS).toEqual(['auto', 'wasm', 'reference', 'webgpu']);
  });

  it('names exactly the presets the engine builds, for each kind', () => {
    for (const kind of MODEL_KINDS) {
      expect(presetNames(kind), kind).toEqual(MODEL_PRESETS[kind]);
      for (const preset of MODEL_PRESETS[kind]) expect(presetConfig(kind, preset, 50).kind).toBe(kind);
    }
    expect(() => presetConfig('decoder-only', 'toString', 50)).toThrow(
      /Unknown preset "toString" for decoder-only; choose one of tiny, small, gpt/,
    );
  });

  it("names exactly the engine's model kinds and backends (webgpu beside the CPU ones createBackend makes)", () => {
    expectTypeOf<ModelKind>().toEqualTypeOf<EngineModelKind>();
    expectTypeOf<BackendKind>().toEqualTypeOf<EngineBackendKind | 'webgpu'>();
    for (const kind of BACKEND_KINDS)
      if (kind !== 'webgpu') expect(createBackend(kind).name, kind).toMatch(kind === 'reference' ? /^reference/ : /./);
  });

  it("validates tokenizers, optimizers and decodes by the lists, and the engine's tokenizer types are the same", () => {
    expectTypeOf<Tokenizer['type']>().toEqualTypeOf<TokenizerType>();
    expectTypeOf<DecodeParams['strategy']>().toEqualTypeOf<DecodeStrategy>();
    expect(trainSpec.fields.tokenizer.fields.type.values).toEqual(TOKENIZER_TYPES);
    expect(trainSpec.fields.training.fields.optimizer.values).toEqual(OPTIMIZER_PRESETS);
    expect(decodeParams.fields.strategy.values).toEqual(DECODE_STRATEGIES);
    for (const s of EVAL_STRATEGIES) expect(DECODE_STRATEGIES).toContain(s);
    // Each optimizer preset builds an optimizer (the lab's one reading of the names).
    const cfg = presetConfig('encoder-decoder', 'tiny', 50);
    const types = OPTIMIZER_PRESETS.map(
      (optimizer) => optimizerConfig({ ...spec, training: { ...spec.training, optimizer } }, cfg).type,
    );
    expect(types).toEqual(['adamw', 'adam', 'muon']);
  });

  it('validates run specs against the lists', () => {
    rejects(
      () =>
        validateToTrainingWorker({
          type: 'train/start',
          runDir: '/r',
          spec: { ...spec, model: { ...spec.model, preset: 'huge' } },
          resume: false,
          stopAt: null,
          extendTo: null,
          pytorch: null,
        }),
      /preset: expected one of tiny, small, gpt, llama-tiny, llama-small, nanochat-tiny, nanochat-small, base/,
    );
    rejects(
      () =>
        validateToTrainingWorker({
          type: 'train/start',
          runDir: '/r',
          spec: { ...spec, model: { ...spec.model, kind: 'rnn' } },
          resume: false,
          stopAt: null,
          extendTo: null,
          pytorch: null,
        }),
      /kind: expected one of decoder-only, encoder-decoder/,
    );
  });

  it("puts every name in the CLI's train help", () => {
    expect(TRAIN_HELP).toContain(`--backend ${BACKEND_KINDS.join('|')}`);
    expect(TRAIN_HELP).toContain(
      'tiny | small | gpt | llama-tiny | llama-small | nanochat-tiny | nanochat-small (decoder-only); ' +
        'tiny | small | base (encoder-decoder)',
    );
    expect(TRAIN_HELP).toContain('--model KIND           decoder-only | encoder-decoder');
  });
});
