/**
 * Tiny trained runs for the tests of the lab's inference jobs and of the model worker: a decoder-only model on two short
 * documents and an encoder-decoder on the reverse task, each trained for a few steps
 * in-process (the lab's own session), then reopened as the model worker reopens them —
 * on Node's file system by default, or on any the tests make (files/fileSystems.ts).
 */

import { createReferenceBackend } from '../../../src/engine/backends/reference';
import type { LabFs } from '../../../src/lab/files/labFs';
import { writeFile } from '../../../src/lab/files/labFs';
import type { OpenRun } from '../../../src/lab/inference/openRun';
import { openRun } from '../../../src/lab/inference/openRun';
import { runSession } from '../../../src/lab/training/session';
import { SessionControl } from '../../../src/lab/training/sessionControl';
import type { SessionRequest } from '../../../src/lab/training/sessionSetup';
import type { LabPlatform } from '../../../src/lab/platform/platform';
import type { TrainSpec } from '../../../src/protocol/data';
import type { FromTrainingWorker } from '../../../src/protocol/trainingWorker';
import type { TestFs } from './files/fileSystems';
import { nodeTestFs } from './files/fileSystems';

/** A spec of a tiny model trained for `steps` steps. */
export function tinySpec(data: TrainSpec['data'], steps = 3, seqLen = 16): TrainSpec {
  return {
    model: {
      kind: data.kind === 'documents' ? 'decoder-only' : 'encoder-decoder',
      preset: 'tiny',
      overrides: { dModel: 32, dFF: 64 },
    },
    tokenizer: { type: 'char', vocabSize: 1000 },
    data,
    training: {
      steps,
      batchSize: 4,
      seqLen,
      evalEvery: 0,
      checkpointEvery: 0,
      snapshotEvery: 0,
      seed: 3,
      optimizer: 'adamw',
      lr: 3e-3,
      warmup: 0,
    },
    backend: 'reference',
  };
}

/** A platform of `fs` with no helper threads (the tiny runs use the reference backend). */
export function platformOf(fs: LabFs): LabPlatform {
  return { fs, threads: () => null };
}

/** The train/start request of a session of `spec` in `runDir`: a new run unless `more` says otherwise. */
export function sessionRequest(runDir: string, spec: TrainSpec, more: Partial<SessionRequest> = {}): SessionRequest {
  return { runDir, spec, resume: false, stopAt: null, extendTo: null, ...more };
}

/** Runs a session of `spec` into `runDir` of `t`; returns its notifications, throwing on train/didFail. */
export async function trainInto(t: TestFs, runDir: string, spec: TrainSpec): Promise<FromTrainingWorker[]> {
  const events: FromTrainingWorker[] = [];
  await runSession({
    platform: platformOf(t.fs),
    request: sessionRequest(runDir, spec),
    control: new SessionControl(),
    emit: (m) => events.push(m),
  });
  const fail = events.find((e) => e.type === 'train/didFail');
  if (fail) throw new Error(JSON.stringify(fail));
  return events;
}

/** Trains `spec` into a fresh folder of `t` (Node's file system by default) and opens it. */
export async function trainTiny(spec: TrainSpec, t: TestFs = nodeTestFs()): Promise<OpenRun> {
  const runDir = t.fs.join(await t.dir(), 'run');
  await trainInto(t, runDir, spec);
  return openRun(t.fs, runDir, createReferenceBackend(), 2);
}

/** Two short documents in a fresh folder of `t` (Node's by default), as a documents DataSpec. */
export async function tinyDocuments(t: TestFs = nodeTestFs()): Promise<TrainSpec['data']> {
  const root = await t.dir();
  const a = t.fs.join(root, 'a.txt');
  const b = t.fs.join(root, 'b.txt');
  await writeFile(t.fs, a, 'the cat sat on the mat. the dog sat on the log. '.repeat(4));
  await writeFile(t.fs, b, 'a bird in the hand is worth two in the bush. '.repeat(4));
  return { kind: 'documents', files: [a, b], root };
}
