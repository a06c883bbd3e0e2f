/**
 * Tiny trained runs for the tests of the lab's inference jobs and of the model worker: a decoder-only model on two short
 * documents and an encoder-decoder on the reverse task, each trained for a few steps
 * in-process (the lab's own session), then reopened as the model worker reopens them.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createReferenceBackend } from '../../../src/engine/backends/reference';
import type { OpenRun } from '../../../src/lab/runs/openRun';
import { openRun } from '../../../src/lab/runs/openRun';
import { runSession } from '../../../src/lab/training/session';
import { SessionControl } from '../../../src/lab/training/sessionControl';
import type { TrainSpec } from '../../../src/protocol/data';
import type { WorkerToHost } from '../../../src/protocol/trainingWorker';

/** A spec of a tiny model trained for `steps` steps. */
export function tinySpec(data: TrainSpec['data'], steps = 3, seqLen = 16): TrainSpec {
  return {
    model: { kind: data.kind === 'documents' ? 'decoder-only' : 'encoder-decoder', preset: 'tiny', overrides: { dModel: 32, dFF: 64 } },
    tokenizer: { type: 'char', vocabSize: 1000 },
    data,
    training: { steps, batchSize: 4, seqLen, evalEvery: 0, checkpointEvery: 0, snapshotEvery: 0, seed: 3, optimizer: 'adamw', lr: 3e-3, warmup: 0 },
    backend: 'reference',
  };
}

/** Trains `spec` into a fresh folder and opens it. */
export async function trainTiny(spec: TrainSpec): Promise<OpenRun> {
  const runDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'al-ext-run-')), 'run');
  const events: WorkerToHost[] = [];
  await runSession(runDir, spec, false, new SessionControl(), (m) => events.push(m));
  const fail = events.find((e) => e.type === 'train/didFail');
  if (fail) throw new Error(JSON.stringify(fail));
  return openRun(runDir, createReferenceBackend(), 2);
}

/** Two short documents in a temporary folder, as a documents DataSpec. */
export function tinyDocuments(): TrainSpec['data'] {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-ext-docs-'));
  const a = path.join(root, 'a.txt');
  const b = path.join(root, 'b.txt');
  fs.writeFileSync(a, 'the cat sat on the mat. the dog sat on the log. '.repeat(4));
  fs.writeFileSync(b, 'a bird in the hand is worth two in the bush. '.repeat(4));
  return { kind: 'documents', files: [a, b], root };
}
