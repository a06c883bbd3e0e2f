import { describe, expect, it } from 'vitest';
import type { TrainSpec } from '../../../src/protocol/data';
import type { DecodeParams } from '../../../src/protocol/model';
import type { EvalFilesOutput, ToModelWorker, FromModelWorker } from '../../../src/protocol/modelWorker';
import { ProtocolError } from '../../../src/protocol/schema';
import { validateToModelWorker, validateFromModelWorker } from '../../../src/protocol/modelWorker';
import { DOCS_OUTPUT, PAIRS_OUTPUT } from '../../evalOutputs';

const params: DecodeParams = {
  input: 'ab',
  strategy: 'beam',
  beam: 4,
  lengthPenalty: 0.6,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxTokens: 10,
  seed: 1,
};
const spec: TrainSpec = {
  model: { kind: 'encoder-decoder', preset: 'tiny', overrides: {} },
  tokenizer: { type: 'char', vocabSize: 1000 },
  data: { kind: 'task', task: 'reverse' },
  training: {
    steps: 10,
    batchSize: 4,
    seqLen: 16,
    evalEvery: 0,
    checkpointEvery: 0,
    snapshotEvery: 0,
    seed: 1,
    optimizer: 'adamw',
    lr: 0,
    warmup: 0,
  },
  backend: 'auto',
};

describe('model worker messages (src/protocol/modelWorker.ts)', () => {
  it('accepts every request kind as sent by the extension host', () => {
    const requests: ToModelWorker[] = [
      { type: 'model/decode', id: 1, runDir: '/r', params },
      { type: 'model/score', id: 2, runDir: '/r', source: null, text: 'abc' },
      { type: 'model/score', id: 3, runDir: '/r', source: 'abc', text: 'cba' },
      { type: 'model/attend', id: 4, runDir: '/r', text: 'x' },
      { type: 'model/export', id: 5, runDir: '/r', outDir: '/o', force: true },
      { type: 'model/calibrate', id: 6, spec, vocabSize: 300 },
    ];
    for (const r of requests) expect(validateToModelWorker(r)).toBe(r);
  });

  it('rejects malformed requests, naming the field', () => {
    expect(() => validateToModelWorker({ type: 'model/train', id: 1 })).toThrow(/unknown message type "model\/train"/);
    expect(() => validateToModelWorker({ type: 'model/score', id: 1, runDir: '/r', text: 'a' })).toThrow(
      /message\(model\/score\)\.source: expected a string, got undefined/,
    );
    expect(() => validateToModelWorker({ type: 'model/decode', id: -1, runDir: '/r', params })).toThrow(
      /\.id: expected an integer ≥ 0/,
    );
    expect(() =>
      validateToModelWorker({ type: 'model/decode', id: 1, runDir: '/r', params: { ...params, strategy: 'top' } }),
    ).toThrow(/params\.strategy: expected one of greedy, beam, sample/);
    expect(() => validateToModelWorker({ type: 'model/calibrate', id: 1, spec, vocabSize: 0 })).toThrow(ProtocolError);
  });

  it('accepts the responses, typed arrays included, and rejects broken ones', () => {
    const snapshot = {
      step: 3,
      srcTokens: [],
      tgtTokens: ['<bos>', 'a'],
      maps: [
        {
          stack: 'decoder.self' as const,
          layer: 0,
          shape: [1, 2, 2] as [number, number, number],
          data: new Float32Array(4),
        },
      ],
      masks: [],
    };
    const responses: FromModelWorker[] = [
      { type: 'worker/ready' },
      { type: 'model/didToken', id: 1, token: 'a', logprob: -0.5 },
      {
        type: 'model/didScore',
        id: 2,
        output: { tokens: ['a'], logprobs: [-1], starts: [0], ends: [1], truncated: 0 },
      },
      { type: 'model/didAttend', id: 4, output: snapshot },
      {
        type: 'model/didExport',
        id: 5,
        output: { dir: '/o/run-1', files: ['/o/run-1/model.safetensors'], tensors: 12, warnings: [] },
      },
      {
        type: 'model/didCalibrate',
        id: 6,
        output: { secondsPerStep: 0.01, flopsPerSec: 1e9, backend: 'wasm', threads: 1 },
      },
      { type: 'model/didFail', id: 7, error: { code: 'input/invalid', message: 'no' } },
    ];
    for (const r of responses) expect(validateFromModelWorker(r)).toBe(r);
    expect(() =>
      validateFromModelWorker({
        ...snapshot,
        type: 'model/didAttend',
        id: 4,
        output: { ...snapshot, maps: [{ ...snapshot.maps[0], data: new Float32Array(3) }] },
      }),
    ).toThrow(/3 values do not fill shape \[1, 2, 2\]/);
    expect(() =>
      validateFromModelWorker({
        type: 'model/didScore',
        id: 2,
        output: { tokens: ['a'], logprobs: [-1], starts: [-1], ends: [1], truncated: 0 },
      }),
    ).toThrow(/starts\[0\]: expected an integer ≥ 0/);
  });

  describe('evaluation on files', () => {
    const cancel = new Int32Array(new SharedArrayBuffer(4));
    const output: EvalFilesOutput = PAIRS_OUTPUT;

    it('accepts the request with either kind of test data and the responses', () => {
      const requests: ToModelWorker[] = [
        {
          type: 'model/evaluateFiles',
          id: 8,
          runDir: '/r',
          data: { kind: 'documents', paths: ['/w/a.md', 'docs/**/*.md'], cwd: '/w', glob: true },
          maxPairs: 1000,
          decoding: { strategy: 'greedy' },
          tokenize: null,
          cancel,
        },
        {
          type: 'model/evaluateFiles',
          id: 9,
          runDir: '/r',
          data: { kind: 'pairs', source: '/w/t.de', target: '/w/t.en' },
          maxPairs: 1,
          decoding: { strategy: 'beam', beam: 4, lengthPenalty: 0.6 },
          tokenize: 'intl',
          cancel,
        },
        {
          type: 'model/evaluateFiles',
          id: 10,
          runDir: '/r',
          data: { kind: 'pairs', source: '/w/t.tsv', target: null },
          maxPairs: 5,
          decoding: { strategy: 'greedy' },
          tokenize: 'zh',
          cancel,
        },
      ];
      for (const r of requests) expect(validateToModelWorker(r)).toBe(r);
      const responses: FromModelWorker[] = [
        { type: 'model/didProgress', id: 8, done: 3, total: 10 },
        { type: 'model/didEvaluateFiles', id: 8, output },
        { type: 'model/didEvaluateFiles', id: 9, output: DOCS_OUTPUT },
        { type: 'model/didFail', id: 10, error: { code: 'cancelled', message: 'The evaluation was cancelled.' } },
      ];
      for (const r of responses) expect(validateFromModelWorker(r)).toBe(r);
    });

    it('rejects a cancel flag that is not shared, and malformed test data, naming the field', () => {
      const base = {
        type: 'model/evaluateFiles',
        id: 1,
        runDir: '/r',
        data: { kind: 'pairs', source: 's', target: null },
        maxPairs: 10,
        decoding: { strategy: 'greedy' },
        tokenize: null,
      };
      expect(() => validateToModelWorker({ ...base, cancel: new Int32Array(1) })).toThrow(
        /message\(model\/evaluateFiles\)\.cancel: expected an Int32Array on a SharedArrayBuffer/,
      );
      expect(() => validateToModelWorker({ ...base, cancel: new Int32Array(new SharedArrayBuffer(0)) })).toThrow(
        /\.cancel: expected an Int32Array on a SharedArrayBuffer/,
      );
      expect(() => validateToModelWorker({ ...base, cancel: [0] })).toThrow(/\.cancel: expected an Int32Array/);
      expect(() => validateToModelWorker({ ...base, cancel, maxPairs: 0 })).toThrow(
        /\.maxPairs: expected an integer ≥ 1/,
      );
      expect(() => validateToModelWorker({ ...base, cancel, decoding: { strategy: 'sample' } })).toThrow(
        /\.decoding\.strategy: expected one of greedy, beam/,
      );
      expect(() =>
        validateToModelWorker({ ...base, cancel, decoding: { strategy: 'beam', beam: 0, lengthPenalty: 0.6 } }),
      ).toThrow(/\.decoding\.beam: expected an integer ≥ 1/);
      expect(() => validateToModelWorker({ ...base, cancel, tokenize: 'ja-mecab' })).toThrow(
        /\.tokenize: expected one of 13a, zh, char, intl/,
      );
      expect(() => validateToModelWorker({ ...base, cancel, data: { kind: 'task', task: 'copy' } })).toThrow(
        /\.data\.kind: expected one of documents, pairs/,
      );
      expect(() =>
        validateToModelWorker({ ...base, cancel, data: { kind: 'documents', paths: ['a'], cwd: '/w' } }),
      ).toThrow(/\.data\.glob: expected true or false/);
      expect(() => validateToModelWorker({ ...base, cancel, data: { kind: 'pairs', source: 's' } })).toThrow(
        /\.data\.target: expected a string, got undefined/,
      );
    });

    it('rejects broken results and progress', () => {
      expect(() =>
        validateFromModelWorker({ type: 'model/didEvaluateFiles', id: 1, output: { ...output, unseenChars: -1 } }),
      ).toThrow(/output\.unseenChars: expected an integer ≥ 0/);
      expect(() =>
        validateFromModelWorker({
          type: 'model/didEvaluateFiles',
          id: 1,
          output: { ...output, skipped: [{ path: 'a', reason: 'huge' }] },
        }),
      ).toThrow(
        /skipped\[0\]\.reason: expected one of binary, not-utf8, too-large, over-total, empty, unreadable, ignored, lockfile, vendored, minified, generated,/,
      );
      expect(() =>
        validateFromModelWorker({ type: 'model/didEvaluateFiles', id: 1, output: { ...output, context: 0 } }),
      ).toThrow(/output\.context: expected an integer ≥ 1/);
      expect(() =>
        validateFromModelWorker({
          type: 'model/didEvaluateFiles',
          id: 1,
          output: { ...output, translation: { ...output.translation, bleu: undefined } },
        }),
      ).toThrow(/output\.translation\.bleu: expected a number/);
      expect(() =>
        validateFromModelWorker({
          type: 'model/didEvaluateFiles',
          id: 1,
          output: { ...output, record: { ...output.record, version: 2 } },
        }),
      ).toThrow(/output\.record\.version: expected 1/);
      expect(() => validateFromModelWorker({ type: 'model/didProgress', id: 1, done: 1.5, total: 2 })).toThrow(
        /\.done: expected an integer ≥ 0/,
      );
    });
  });
});
