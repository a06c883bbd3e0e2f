import { describe, expect, it } from 'vitest';
import type { TrainSpec } from '../../src/protocol';
import { ProtocolError, validateHostToWebview, validateHostToWorker, validateWebviewToHost, validateWorkerToHost } from '../../src/protocol';

const spec: TrainSpec = {
  model: { kind: 'encoder-decoder', preset: 'tiny', overrides: { dModel: 32 } },
  tokenizer: { type: 'char', vocabSize: 1000 },
  data: { kind: 'task', task: 'reverse' },
  training: { steps: 10, batchSize: 4, seqLen: 16, evalEvery: 5, checkpointEvery: 5, snapshotEvery: 5, seed: 1, optimizer: 'adamw', lr: 0, warmup: 0 },
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
    expect(validateHostToWorker({ type: 'train/start', runDir: '/r', spec, resume: false, stopAt: null }).type).toBe('train/start');
    expect(validateHostToWorker({ type: 'train/stop' }).type).toBe('train/stop');
    const step = { type: 'train/didStep', step: 3, loss: 1.5, lr: 1e-3, gradNorm: 0.7, tokens: 40, tokensPerSec: 900, elapsedMs: 12 };
    expect(validateWorkerToHost(step)).toBe(step);
    const snap = {
      type: 'train/didSnapshot', step: 5, srcTokens: ['a'], tgtTokens: ['<bos>', 'a'],
      maps: [{ stack: 'decoder', kind: 'self', layer: 0, shape: [2, 2, 2], data: new Float32Array(8) }],
      masks: [{ name: 'decoder.causal', shape: [1, 1, 2, 2], data: Uint8Array.of(1, 0, 1, 1) }],
    };
    expect(validateWorkerToHost(snap).type).toBe('train/didSnapshot');
    expect(validateWebviewToHost({ type: 'train/control', runId: 'r', action: 'pause' }).type).toBe('train/control');
    expect(validateHostToWebview({ type: 'run/didUpdate', runId: 'r', event: step }).type).toBe('run/didUpdate');
  });

  it.each<[string, unknown, RegExp]>([
    ['not an object', 42, /expected a message object/],
    ['no type', {}, /type: expected a message type/],
    ['unknown type', { type: 'train/explode' }, /unknown message type "train\/explode"; known: train\/start/],
    ['missing field', { type: 'train/start', runDir: '/r', resume: false, stopAt: null }, /spec: expected an object/],
    ['wrong field type', { type: 'train/start', runDir: 1, spec, resume: false, stopAt: null }, /runDir: expected a string/],
    ['bad enum', { type: 'train/start', runDir: '/r', spec: { ...spec, backend: 'gpu' }, resume: false, stopAt: null }, /backend: expected one of auto, wasm, reference/],
    ['negative steps', { type: 'train/start', runDir: '/r', spec: { ...spec, training: { ...spec.training, steps: -1 } }, resume: false, stopAt: null }, /steps: expected an integer ≥ 1/],
    ['prototype key', { type: 'constructor' }, /unknown message type/],
  ])('rejects a command that is %s', (_n, msg, pattern) => rejects(() => validateHostToWorker(msg), pattern));

  it('rejects a snapshot whose data does not fill its shape', () => {
    rejects(
      () => validateWorkerToHost({ type: 'train/didSnapshot', step: 1, srcTokens: [], tgtTokens: [], maps: [{ stack: 'decoder', kind: 'self', layer: 0, shape: [1, 2, 2], data: new Float32Array(3) }], masks: [] }),
      /3 values do not fill shape \[1, 2, 2\]/,
    );
  });

  it('rejects a forwarded worker event that is itself malformed', () => {
    rejects(() => validateHostToWebview({ type: 'run/didUpdate', runId: 'r', event: { type: 'train/didStep', step: 'x' } }), /event\(train\/didStep\)\.step/);
  });

  it('rejects a NaN learning rate but allows a NaN loss (which the runner reports as a failure)', () => {
    const base = { type: 'train/didStep', step: 1, loss: Number.NaN, lr: 1e-3, gradNorm: 1, tokens: 1, tokensPerSec: 1, elapsedMs: 1 };
    expect(validateWorkerToHost(base).type).toBe('train/didStep');
    rejects(() => validateWorkerToHost({ ...base, lr: Number.NaN }), /lr: expected a number/);
  });
});
