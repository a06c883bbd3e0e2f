import { describe, expect, it } from 'vitest';
import type { DecodeParams, HostToModelWorker, ModelWorkerToHost, TrainSpec } from '../../src/protocol';
import { ProtocolError, validateHostToModelWorker, validateModelWorkerToHost } from '../../src/protocol';

const params: DecodeParams = { input: 'ab', strategy: 'beam', beam: 4, lengthPenalty: 0.6, temperature: 1, topK: 0, topP: 1, maxTokens: 10, seed: 1 };
const spec: TrainSpec = {
  model: { kind: 'encoder-decoder', preset: 'tiny', overrides: {} },
  tokenizer: { type: 'char', vocabSize: 1000 },
  data: { kind: 'task', task: 'reverse' },
  training: { steps: 10, batchSize: 4, seqLen: 16, evalEvery: 0, checkpointEvery: 0, snapshotEvery: 0, seed: 1, optimizer: 'adamw', lr: 0, warmup: 0 },
  backend: 'auto',
};

describe('model worker messages (src/protocol.ts)', () => {
  it('accepts every request kind as sent by the extension host', () => {
    const requests: HostToModelWorker[] = [
      { type: 'model/decode', id: 1, runDir: '/r', params },
      { type: 'model/score', id: 2, runDir: '/r', source: null, text: 'abc' },
      { type: 'model/score', id: 3, runDir: '/r', source: 'abc', text: 'cba' },
      { type: 'model/attend', id: 4, runDir: '/r', text: 'x' },
      { type: 'model/export', id: 5, runDir: '/r', outDir: '/o' },
      { type: 'model/calibrate', id: 6, spec, vocabSize: 300 },
    ];
    for (const r of requests) expect(validateHostToModelWorker(r)).toBe(r);
  });

  it('rejects malformed requests, naming the field', () => {
    expect(() => validateHostToModelWorker({ type: 'model/train', id: 1 })).toThrow(/unknown message type "model\/train"/);
    expect(() => validateHostToModelWorker({ type: 'model/score', id: 1, runDir: '/r', text: 'a' })).toThrow(/message\(model\/score\)\.source: expected a string, got undefined/);
    expect(() => validateHostToModelWorker({ type: 'model/decode', id: -1, runDir: '/r', params })).toThrow(/\.id: expected an integer ≥ 0/);
    expect(() => validateHostToModelWorker({ type: 'model/decode', id: 1, runDir: '/r', params: { ...params, strategy: 'top' } })).toThrow(/params\.strategy: expected one of greedy, beam, sample/);
    expect(() => validateHostToModelWorker({ type: 'model/calibrate', id: 1, spec, vocabSize: 0 })).toThrow(ProtocolError);
  });

  it('accepts the responses, typed arrays included, and rejects broken ones', () => {
    const snapshot = { step: 3, srcTokens: [], tgtTokens: ['<bos>', 'a'], maps: [{ stack: 'decoder' as const, kind: 'self' as const, layer: 0, shape: [1, 2, 2] as [number, number, number], data: new Float32Array(4) }], masks: [] };
    const responses: ModelWorkerToHost[] = [
      { type: 'worker/ready' },
      { type: 'model/didToken', id: 1, token: 'a', logprob: -0.5 },
      { type: 'model/didScore', id: 2, output: { tokens: ['a'], logprobs: [-1], starts: [0], ends: [1], truncated: 0 } },
      { type: 'model/didAttend', id: 4, snapshot },
      { type: 'model/didExport', id: 5, output: { files: ['/o/model.safetensors'], tensors: 12, warnings: [] } },
      { type: 'model/didCalibrate', id: 6, secondsPerStep: 0.01, flopsPerSec: 1e9, backend: 'wasm' },
      { type: 'model/didFail', id: 7, error: { code: 'input/invalid', message: 'no' } },
    ];
    for (const r of responses) expect(validateModelWorkerToHost(r)).toBe(r);
    expect(() => validateModelWorkerToHost({ ...snapshot, type: 'model/didAttend', id: 4, snapshot: { ...snapshot, maps: [{ ...snapshot.maps[0], data: new Float32Array(3) }] } })).toThrow(/3 values do not fill shape \[1, 2, 2\]/);
    expect(() => validateModelWorkerToHost({ type: 'model/didScore', id: 2, output: { tokens: ['a'], logprobs: [-1], starts: [-1], ends: [1], truncated: 0 } })).toThrow(/starts\[0\]: expected an integer ≥ 0/);
  });
});
