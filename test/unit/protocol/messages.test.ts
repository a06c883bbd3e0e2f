/**
 * One fixture per message of every table (training worker, model worker, dashboard, both
 * directions): the fixture tables are typed `{ [K in type]: message K }`, so a message added
 * without a fixture fails to compile, and the test compares their keys with the tables' at
 * run time too. Each fixture must pass its validator (as the same object), and leaving out
 * any required field must fail, naming it.
 */

import { describe, expect, it } from 'vitest';
import type { AblationOutputData, LensOutputData } from '../../../src/protocol/analysis';
import type { AttentionSnapshot, DecodeOutput, DecodeParams, ModelInfo } from '../../../src/protocol/model';
import type { DataSummary, TrainSpec } from '../../../src/protocol/data';
import type { Fields, Schema, UnionSchema } from '../../../src/protocol/schema';
import { ProtocolError } from '../../../src/protocol/schema';
import type { ToModelWorker, FromModelWorker } from '../../../src/protocol/modelWorker';
import {
  toModelWorker,
  fromModelWorker,
  validateToModelWorker,
  validateFromModelWorker,
} from '../../../src/protocol/modelWorker';
import type { ToTrainingWorker, FromTrainingWorker } from '../../../src/protocol/trainingWorker';
import {
  toTrainingWorker,
  validateToTrainingWorker,
  validateFromTrainingWorker,
  fromTrainingWorker,
} from '../../../src/protocol/trainingWorker';
import type { ToWebview, FromWebview } from '../../../src/protocol/webview';
import { toWebview, validateToWebview, validateFromWebview, fromWebview } from '../../../src/protocol/webview';
import { DOCS_OUTPUT, PAIRS_RECORD } from '../../evalOutputs';

/** One sample of each message of a union. */
type Fixtures<U extends { readonly type: string }> = { readonly [K in U['type']]: Extract<U, { readonly type: K }> };

const spec: TrainSpec = {
  model: { kind: 'decoder-only', preset: 'tiny', overrides: { dModel: 32, tieEmbeddings: 'true' } },
  tokenizer: { type: 'bpe', vocabSize: 300 },
  data: { kind: 'documents', files: ['a.md'], root: '/w', maxFileBytes: 1024, skipGenerated: true },
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
  backend: 'auto',
};
const model: ModelInfo = {
  config: {
    kind: 'decoder-only',
    dModel: 32,
    nHeads: 4,
    dFF: 128,
    nDecoderLayers: 2,
    nEncoderLayers: 0,
    srcVocabSize: 0,
    vocabSize: 300,
    maxLen: 16,
    norm: 'pre',
    positional: 'learned',
    activation: 'gelu',
    dropout: 0,
    tieEmbeddings: true,
    bias: true,
    layerNormEps: 1e-5,
    embedScale: false,
    labelSmoothing: 0,
  },
  params: 1000,
  paramsByModule: { embeddings: 600, 'decoder.0': 400 },
  memoryBytes: 4096,
  flopsPerToken: 6000,
  backend: 'wasm',
};
const data: DataSummary = {
  description: '1 document',
  documents: 1,
  bytes: 100,
  trainTokens: 90,
  valTokens: 10,
  skipped: [{ path: 'big.bin', reason: 'binary', bytes: 9 }],
  validation: { kind: 'tail', text: 'the last 10% of each document' },
  prompts: ['Once'],
};
const snapshot: AttentionSnapshot = {
  step: 5,
  srcTokens: [],
  tgtTokens: ['<bos>', 'a'],
  maps: [{ stack: 'decoder.self', layer: 0, shape: [2, 2, 2], data: new Float32Array(8) }],
  masks: [{ name: 'decoder.causal', shape: [1, 1, 2, 2], data: Uint8Array.of(1, 0, 1, 1) }],
};
const params: DecodeParams = {
  input: 'ab',
  strategy: 'sample',
  beam: 4,
  lengthPenalty: 0.6,
  temperature: 0.8,
  topK: 5,
  topP: 0.9,
  maxTokens: 10,
  seed: 1,
};
const output: DecodeOutput = {
  text: 'abc',
  promptTokens: ['a'],
  tokens: ['b', 'c'],
  ids: [7, 8],
  logprobs: [-0.1, -0.2],
  score: -0.3,
  attention: {
    queryStart: 1,
    queries: 2,
    selfKeys: 3,
    sourceLength: 0,
    nHeads: 4,
    self: [new Float32Array(24)],
    cross: [],
  },
  beams: [{ text: 'abc', score: -0.3 }],
  stopReason: 'maxTokens',
};
const lensInput = { kind: 'encoder-decoder', src: 'abc', tgt: 'c' } as const;
const lens: LensOutputData = {
  tokens: ['<bos>', 'c'],
  src: ['a', 'b', 'c', '<eos>'],
  layers: [{ layer: 0, positions: [{ top: [{ token: 'c', prob: 0.5 }] }, { top: [{ token: 'b', prob: 0.4 }] }] }],
  truncation: 'Showing the last 2 of 3 tokens.',
};
const off = [{ stack: 'decoder.cross', layer: 0, head: 1 }] as const;
const ablation: AblationOutputData = {
  tokens: ['<bos>', 'c'],
  off: [...off],
  base: { loss: 0.5, scored: 2, next: [{ token: 'b', prob: 0.9 }] },
  ablated: { loss: 1.5, scored: 2, next: [{ token: 'a', prob: 0.6 }] },
  compare: [
    { token: 'b', base: 0.9, ablated: 0.1 },
    { token: 'a', base: 0.05, ablated: 0.6 },
  ],
};
const step = {
  type: 'train/didStep',
  step: 3,
  loss: 1.5,
  lr: 1e-3,
  gradNorm: 0.7,
  tokens: 40,
  tokensPerSec: 900,
  elapsedMs: 12,
} as const;
const segments = [{ fromStep: 0, toStep: 10, schedule: 'cosine' }] as const;

const HOST_TO_WORKER: Fixtures<ToTrainingWorker> = {
  'train/start': {
    type: 'train/start',
    runDir: '/r',
    spec,
    resume: true,
    stopAt: 5,
    extendTo: null,
    pytorch: { python: 'python3', nproc: 2, accumulate: 1, device: 'cpu', bf16: false, trainerDir: '/t' },
  },
  'train/pause': { type: 'train/pause' },
  'train/resume': { type: 'train/resume' },
  'train/stop': { type: 'train/stop' },
};

const WORKER_TO_HOST: Fixtures<FromTrainingWorker> = {
  'worker/ready': { type: 'worker/ready' },
  'train/didLog': { type: 'train/didLog', level: 'warn', message: 'skipped 1 file' },
  'train/didProgress': {
    type: 'train/didProgress',
    phase: 'encode',
    done: 10,
    total: 100,
    message: 'Encoding a.md (bpe)',
  },
  'train/didStart': { type: 'train/didStart', runDir: '/r', startStep: 0, totalSteps: 10, segments, model, data },
  'train/didStep': step,
  'train/didEval': { type: 'train/didEval', step: 5, loss: 1.2, ppl: Math.exp(1.2), exactMatch: null, bleu: 12.5 },
  'train/didSnapshot': { type: 'train/didSnapshot', ...snapshot },
  'train/didSaveCheckpoint': { type: 'train/didSaveCheckpoint', step: 5, path: '/r/model.safetensors' },
  'train/didPause': { type: 'train/didPause', step: 5 },
  'train/didResume': { type: 'train/didResume', step: 5 },
  'train/didFinish': { type: 'train/didFinish', step: 10, reason: 'completed' },
  'train/didFail': {
    type: 'train/didFail',
    step: 4,
    error: { code: 'train/nonFinite', message: 'The loss became NaN.' },
  },
};

const HOST_TO_MODEL_WORKER: Fixtures<ToModelWorker> = {
  'model/decode': { type: 'model/decode', id: 1, runDir: '/r', params },
  'model/score': { type: 'model/score', id: 2, runDir: '/r', source: null, text: 'abc' },
  'model/attend': { type: 'model/attend', id: 3, runDir: '/r', text: 'abc' },
  'model/attendLayer': { type: 'model/attendLayer', id: 3, runDir: '/r', text: 'abc', stack: 'decoder.self', layer: 1 },
  'model/drawSnapshots': { type: 'model/drawSnapshots', id: 12, runDir: '/r' },
  'model/export': { type: 'model/export', id: 4, runDir: '/r', outDir: '/o', force: false },
  'model/calibrate': { type: 'model/calibrate', id: 5, spec, vocabSize: 300 },
  'model/evaluateFiles': {
    type: 'model/evaluateFiles',
    id: 6,
    runDir: '/r',
    data: { kind: 'documents', paths: ['test/*.md'], cwd: '/w', glob: true },
    maxPairs: 100,
    decoding: { strategy: 'greedy' },
    tokenize: null,
    cancel: new Int32Array(new SharedArrayBuffer(4)),
  },
  'model/lens': {
    type: 'model/lens',
    id: 7,
    runDir: '/r',
    input: { kind: 'decoder-only', prompt: 'the' },
    topK: 5,
    fit: true,
  },
  'model/ablate': { type: 'model/ablate', id: 8, runDir: '/r', input: lensInput, off: [...off], topK: 5, fit: false },
  'model/attribute': {
    type: 'model/attribute',
    id: 10,
    runDir: '/r',
    params: {
      clean: 'When Mary and John went, John gave it to',
      corrupted: 'When Mary and John went, Mary gave it to',
      metric: { kind: 'logit-diff', answer: ' Mary', wrong: ' John' },
      what: 'attribution',
    },
    cancel: new Int32Array(new SharedArrayBuffer(4)),
  },
  'model/import': {
    type: 'model/import',
    id: 9,
    from: '/w/gpt2',
    outDir: '/w/runs/gpt2',
    cancel: new Int32Array(new SharedArrayBuffer(4)),
  },
  'model/patch': {
    type: 'model/patch',
    id: 10,
    runDir: '/r',
    request: {
      clean: 'ab ab',
      corrupted: 'ab cd',
      answer: 'a',
      wrong: 'c',
      metric: 'logit-diff',
      what: ['heads', 'path'],
      receivers: [{ layer: 1, head: 0 }],
      input: 'q',
      top: 5,
    },
  },
  'model/steer': {
    type: 'model/steer',
    id: 11,
    runDir: '/r',
    request: { vector: { plus: 'Love', minus: 'Hate', layer: 2, alpha: 4 }, decode: params },
  },
};

const MODEL_WORKER_TO_HOST: Fixtures<FromModelWorker> = {
  'worker/ready': { type: 'worker/ready' },
  'model/didToken': { type: 'model/didToken', id: 1, token: 'b', logprob: -0.1 },
  'model/didDecode': { type: 'model/didDecode', id: 1, output },
  'model/didScore': {
    type: 'model/didScore',
    id: 2,
    output: { tokens: ['a'], logprobs: [-1], starts: [0], ends: [1], truncated: 0 },
  },
  'model/didAttend': { type: 'model/didAttend', id: 3, output: snapshot },
  'model/didAttendLayer': {
    type: 'model/didAttendLayer',
    id: 3,
    output: { stack: 'decoder.self', layer: 1, shape: [1, 2, 2], data: Uint8Array.of(255, 0, 128, 180) },
  },
  'model/didDrawSnapshots': { type: 'model/didDrawSnapshots', id: 12, output: 3 },
  'model/didExport': {
    type: 'model/didExport',
    id: 4,
    output: {
      dir: '/o/run-1',
      files: ['/o/run-1/model.safetensors', '/o/run-1/config.json'],
      tensors: 12,
      warnings: [],
    },
  },
  'model/didCalibrate': {
    type: 'model/didCalibrate',
    id: 5,
    output: { secondsPerStep: 0.01, flopsPerSec: 1e9, backend: 'wasm', threads: 1 },
  },
  'model/didProgress': { type: 'model/didProgress', id: 6, done: 1, total: 3 },
  'model/didEvaluateFiles': {
    type: 'model/didEvaluateFiles',
    id: 6,
    output: DOCS_OUTPUT,
  },
  'model/didLens': { type: 'model/didLens', id: 7, output: lens },
  'model/didAblate': { type: 'model/didAblate', id: 8, output: ablation },
  'model/didAttribute': {
    type: 'model/didAttribute',
    id: 10,
    output: {
      what: 'dla',
      tokens: ['<bos>', 'a'],
      answer: 'b',
      wrong: 'c',
      note: 'clean scale',
      excluded: [0.1, 0.1],
      logitDiff: [1, 2],
      components: [{ kind: 'head', layer: 0, head: 1, values: [0.5, 1.5] }],
    },
  },
  'model/didImport': {
    type: 'model/didImport',
    id: 9,
    output: {
      runDir: '/w/runs/gpt2',
      layout: 'hf-gpt2',
      layoutText: 'Hugging Face GPT-2',
      modelFile: '/w/gpt2/model.safetensors',
      params: 124439808,
      tensors: 148,
      tokenizer: '/w/gpt2/vocab.json + merges.txt',
      notes: [],
    },
  },
  'model/didPatch': {
    type: 'model/didPatch',
    id: 10,
    output: {
      tokens: { clean: ['<bos>', 'a'], corrupted: ['<bos>', 'c'] },
      answer: 'a',
      wrong: 'c',
      metric: 'logit-diff',
      clean: 2,
      corrupted: -1,
      maps: [
        {
          what: 'heads',
          rows: ['L1'],
          cols: ['H1', 'H2'],
          values: [2, -1],
          normalised: [1, 0],
          top: [[{ token: 'a', p: 0.5 }], [{ token: 'c', p: 0.25 }]],
        },
      ],
      top: { clean: [{ token: 'a', p: 0.5 }], corrupted: [{ token: 'c', p: 0.75 }] },
    },
  },
  'model/didSteer': {
    type: 'model/didSteer',
    id: 11,
    output: { layer: 2, alpha: 4, norm: 3.5, streamNorm: 20, steered: output, unsteered: output },
  },
  'model/didFail': {
    type: 'model/didFail',
    id: 6,
    error: { code: 'cancelled', message: 'The evaluation was cancelled.' },
  },
};

const HOST_TO_WEBVIEW: Fixtures<ToWebview> = {
  'dashboard/didLoadRuns': {
    type: 'dashboard/didLoadRuns',
    selectedId: '/r',
    runs: [
      {
        run: {
          id: '/r',
          name: 'r',
          runDir: '/r',
          status: 'completed',
          kind: 'decoder-only',
          step: 10,
          totalSteps: 10,
          segments,
          bestValLoss: 1.1,
          model,
          data,
          tokenizer: { type: 'bpe', vocabSize: 300 },
        },
        steps: [step],
        evals: [],
        snapshots: [snapshot],
        evaluations: [DOCS_OUTPUT.record],
      },
    ],
  },
  'run/didUpdate': { type: 'run/didUpdate', runDir: '/r', event: step },
  'run/didEvaluate': { type: 'run/didEvaluate', runDir: '/r', evaluation: PAIRS_RECORD },
  'model/didToken': { type: 'model/didToken', id: 1, token: 'b', logprob: -0.1 },
  'model/didProgress': { type: 'model/didProgress', id: 4, done: 10, total: 40 },
  'model/didDecode': { type: 'model/didDecode', id: 1, output },
  'model/didFail': { type: 'model/didFail', id: 1, error: { code: 'input/invalid', message: 'Type a prompt.' } },
  'playground/didDecode': { type: 'playground/didDecode', runDir: '/r', params, output },
  'dashboard/show': { type: 'dashboard/show', runDir: null, tab: 'attention' },
  'model/didLens': { type: 'model/didLens', id: 2, output: lens },
  'model/didAblate': { type: 'model/didAblate', id: 3, output: ablation },
  'model/didSteer': {
    type: 'model/didSteer',
    id: 6,
    output: { layer: 1, alpha: -2, norm: 1, streamNorm: 4, steered: output, unsteered: output },
  },
  'model/didPatch': {
    type: 'model/didPatch',
    id: 7,
    output: {
      tokens: { clean: ['<bos>', 'a'], corrupted: ['<bos>', 'c'] },
      answer: 'a',
      wrong: 'c',
      metric: 'logit-diff',
      clean: 2,
      corrupted: -1,
      maps: [{ what: 'resid', rows: ['L1'], cols: ['0 <bos>', '1 a'], values: [-1, 2], normalised: [0, 1] }],
    },
  },
  'model/didAttribute': {
    type: 'model/didAttribute',
    id: 8,
    output: {
      what: 'resid-accum',
      tokens: ['<bos>', 'a'],
      answer: 'b',
      wrong: 'c',
      note: 'clean scale',
      excluded: [0.1, 0.1],
      logitDiff: [0.5, 1],
      layers: [{ layer: 0, values: [0.2, 0.4] }],
    },
  },
  'dashboard/didSetActiveRun': { type: 'dashboard/didSetActiveRun', runDir: '/r' },
  'model/didAttend': { type: 'model/didAttend', id: 4, output: { ...snapshot, source: 'selection', text: 'ab' } },
  'model/didAttendLayer': {
    type: 'model/didAttendLayer',
    id: 5,
    output: { stack: 'decoder.self', layer: 0, shape: [1, 2, 2], data: Uint8Array.of(255, 0, 128, 180) },
  },
  'dashboard/didAttend': {
    type: 'dashboard/didAttend',
    runDir: '/r',
    snapshot: { ...snapshot, source: 'selection', text: 'ab' },
  },
};

const WEBVIEW_TO_HOST: Fixtures<FromWebview> = {
  'webview/ready': { type: 'webview/ready' },
  'webview/didError': { type: 'webview/didError', message: 'boom' },
  'model/cancel': { type: 'model/cancel', id: 4 },
  'model/decode': { type: 'model/decode', id: 1, runDir: '/r', params },
  'model/steer': {
    type: 'model/steer',
    id: 6,
    runDir: '/r',
    request: { vector: { plus: 'a', minus: 'b', layer: 0, alpha: 1.5 }, decode: params },
  },
  'model/patch': {
    type: 'model/patch',
    id: 7,
    runDir: '/r',
    request: { clean: 'ab', corrupted: 'cd', answer: 'a', wrong: null, metric: 'logprob', what: ['resid', 'mlp'] },
  },
  'model/attribute': {
    type: 'model/attribute',
    id: 8,
    runDir: '/r',
    params: { clean: 'ab', corrupted: 'cd', metric: { kind: 'logprob', answer: 'a' }, what: 'attribution' },
  },
  'train/control': { type: 'train/control', runDir: '/r', action: 'stop' },
  'export/save': {
    type: 'export/save',
    fileName: 'r-loss-step10.svg',
    kind: 'svg',
    content: '<svg xmlns="http://www.w3.org/2000/svg"/>',
  },
  'model/lens': { type: 'model/lens', id: 2, runDir: '/r', input: lensInput, topK: 5, fit: true },
  'model/ablate': {
    type: 'model/ablate',
    id: 3,
    runDir: '/r',
    input: { kind: 'decoder-only', prompt: 'the' },
    off: [...off],
    topK: 5,
    fit: true,
  },
  'dashboard/didSelectRun': { type: 'dashboard/didSelectRun', runDir: '/r' },
  'model/attend': { type: 'model/attend', id: 4, runDir: '/r', text: 'the cat\nsat' },
  'model/attendLayer': {
    type: 'model/attendLayer',
    id: 5,
    runDir: '/r',
    text: 'the cat\nsat',
    stack: 'decoder.cross',
    layer: 1,
  },
};

interface Channel {
  readonly schema: UnionSchema<'type', { readonly [type: string]: Fields }>;
  readonly fixtures: { readonly [type: string]: { readonly type: string } };
  readonly validate: (msg: unknown) => unknown;
}

const CHANNELS: { readonly [name: string]: Channel } = {
  'host → training worker': { schema: toTrainingWorker, fixtures: HOST_TO_WORKER, validate: validateToTrainingWorker },
  'training worker → host': {
    schema: fromTrainingWorker,
    fixtures: WORKER_TO_HOST,
    validate: validateFromTrainingWorker,
  },
  'host → model worker': {
    schema: toModelWorker,
    fixtures: HOST_TO_MODEL_WORKER,
    validate: validateToModelWorker,
  },
  'model worker → host': {
    schema: fromModelWorker,
    fixtures: MODEL_WORKER_TO_HOST,
    validate: validateFromModelWorker,
  },
  'host → dashboard': { schema: toWebview, fixtures: HOST_TO_WEBVIEW, validate: validateToWebview },
  'dashboard → host': { schema: fromWebview, fixtures: WEBVIEW_TO_HOST, validate: validateFromWebview },
};

function isOptional(s: Schema<unknown>): boolean {
  return 'isOptional' in s && s.isOptional === true;
}

describe.each(Object.entries(CHANNELS))('messages %s', (_name, { schema, fixtures, validate }) => {
  it('has one fixture per message type of its table', () => {
    expect(Object.keys(fixtures).sort()).toEqual(Object.keys(schema.table).sort());
  });

  it.each(Object.keys(schema.table))('accepts a %s and rejects it without any one of its required fields', (type) => {
    const msg = fixtures[type];
    expect(msg?.type).toBe(type);
    expect(validate(msg)).toBe(msg);
    const fields = schema.table[type] ?? {};
    for (const [field, s] of Object.entries(fields)) {
      if (isOptional(s)) continue;
      const without: { [key: string]: unknown } = { ...msg };
      delete without[field];
      expect(() => validate(without), `${type} without ${field}`).toThrow(ProtocolError);
      expect(() => validate(without), `${type} without ${field}`).toThrow(`message(${type}).${field}: expected`);
    }
  });
});
