/**
 * A checkpoint must belong to its run: a model.safetensors copied in from a run of another
 * architecture (here GELU instead of ReLU, so every tensor has the same name and shape) is
 * refused in one line wherever the run opens — the lab's openRun, a resume's load, the model
 * worker, and the CLI's eval, export and decode.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { EngineError } from '../../../../src/engine/errors';
import { Transformer } from '../../../../src/engine/models/transformer';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { loadModelCheckpoint } from '../../../../src/lab/runs/checkpoint';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { openRun } from '../../../../src/lab/inference/openRun';
import type { TrainSpec } from '../../../../src/protocol/data';
import { cli } from '../../cli/cliHarness';
import type { WorkerDoor } from './frontDoors';
import { startModelWorker } from './frontDoors';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

let own: OpenRun;
let foreign: string;
let worker: WorkerDoor;

const MESSAGE =
  /model\.safetensors is not this run's model \(activation gelu in the checkpoint, relu in run\.json\); restore the run's own model\.safetensors/;

function withActivation(spec: TrainSpec, activation: 'relu' | 'gelu'): TrainSpec {
  return { ...spec, model: { ...spec.model, overrides: { ...spec.model.overrides, activation } } };
}

beforeAll(async () => {
  const docs = await tinyDocuments();
  own = await trainTiny(withActivation(tinySpec(docs), 'relu'));
  const other = await trainTiny(withActivation(tinySpec(docs), 'gelu'));
  foreign = path.join(path.dirname(own.runDir), 'foreign');
  fs.cpSync(own.runDir, foreign, { recursive: true });
  fs.copyFileSync(path.join(other.runDir, 'model.safetensors'), path.join(foreign, 'model.safetensors'));
  worker = await startModelWorker();
}, 120_000);
afterAll(() => worker?.close());

/** Exit 2 with one line matching {@link MESSAGE}. */
function expectRefused(args: string[]): void {
  const r = cli(args, path.dirname(foreign));
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(MESSAGE);
}

describe('a checkpoint of another architecture', () => {
  it('is refused when the run opens, in one line naming both configs', async () => {
    const e = await openRun(NODE_FS, foreign, createReferenceBackend(), 1).then(
      () => null,
      (err: unknown) => err,
    );
    expect(EngineError.is(e) && e.code).toBe('checkpoint/invalid');
    expect((e as Error).message).toMatch(MESSAGE);
    expect((e as Error).message).not.toContain('\n');
    await expect(openRun(NODE_FS, own.runDir, createReferenceBackend(), 1)).resolves.toMatchObject({ step: own.step }); // its own still opens
  });

  it('is refused by a resume, though every tensor has the shape the model expects', async () => {
    const model = new Transformer(own.run.config, { maxBatch: 1, padId: 0 }).bind(createReferenceBackend());
    await expect(loadModelCheckpoint(NODE_FS, foreign, model)).rejects.toThrow(MESSAGE);
    await expect(loadModelCheckpoint(NODE_FS, own.runDir, model)).resolves.toBe(own.step);
  });

  it('is refused by the model worker', async () => {
    const reply = (
      await worker.request({
        type: 'model/lens',
        runDir: foreign,
        input: { kind: 'decoder-only', prompt: 'the' },
        topK: 3,
        fit: false,
      })
    ).at(-1);
    expect(reply).toMatchObject({
      type: 'model/didFail',
      error: { code: 'checkpoint/invalid', message: expect.stringMatching(MESSAGE) },
    });
  });

  it('is refused by eval, export and decode', () => {
    expectRefused(['eval', '--run', foreign, '--backend', 'reference']);
    expectRefused(['export', '--run', foreign, '--out', 'exported']);
    expectRefused(['decode', '--run', foreign, '--prompt', 'the', '--backend', 'reference']);
  });
});
