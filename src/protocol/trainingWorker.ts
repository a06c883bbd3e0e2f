/**
 * Host ⇄ training worker (src/lab/workers/trainingWorker.node.ts, .web.ts; its hosts are the CLI and the extension):
 * commands to start, pause, resume and stop a run, and the worker's notifications (past
 * tense; droppable ones carry snapshots, not deltas — docs/ARCHITECTURE.md, "The protocol").
 * Each message is one
 * table entry: its type and its validator both come from it (schema.ts `messages`).
 *
 * Leaves out: the data the messages carry (data.ts, model.ts).
 */

import type { Infer } from './schema';
import { bool, messages, nonNegInt, nullable, oneOf, optional, posInt, str } from './schema';
import {
  dataSummary,
  errorData,
  evalMetrics,
  prepareProgress,
  pytorchOptions,
  runSegments,
  stepMetrics,
  trainSpec,
} from './data';
import { attentionSnapshot, modelInfo } from './model';

/** Commands from the host to the training worker. */
export type ToTrainingWorker = Infer<typeof toTrainingWorker>;
export const toTrainingWorker = messages({
  'train/start': {
    runDir: str,
    spec: trainSpec,
    resume: bool,
    /** Stop (with a checkpoint) after this step, to continue later with resume; null = run to the planned total. */
    stopAt: nullable(posInt),
    /** With resume: train a finished or stopped run on to this total step (a new segment); null = the planned total. */
    extendTo: nullable(posInt),
    /** Helper threads of the WebAssembly backend; absent = as many as the host offers (the benchmark sets it). */
    helpers: optional(nonNegInt),
    /** Train with PyTorch (src/lab/pytorch/, Node hosts only) instead of our engine; null = ours. */
    pytorch: nullable(pytorchOptions),
  },
  'train/pause': {},
  'train/resume': {},
  'train/stop': {},
});

/** Notifications from the training worker. */
export type FromTrainingWorker = Infer<typeof fromTrainingWorker>;
export const fromTrainingWorker = messages({
  'worker/ready': {},
  'train/didLog': { level: oneOf('info', 'warn'), message: str },
  'train/didProgress': prepareProgress.fields,
  'train/didStart': {
    runDir: str,
    startStep: nonNegInt,
    totalSteps: posInt,
    /** The run's schedule segments (one unless it was extended); the last ends at totalSteps. */
    segments: runSegments,
    model: modelInfo,
    data: dataSummary,
  },
  'train/didStep': stepMetrics.fields,
  'train/didEval': evalMetrics.fields,
  'train/didSnapshot': attentionSnapshot.fields,
  'train/didSaveCheckpoint': { step: nonNegInt, path: str },
  'train/didPause': { step: nonNegInt },
  'train/didResume': { step: nonNegInt },
  'train/didFinish': { step: nonNegInt, reason: oneOf('completed', 'stopped') },
  'train/didFail': { step: nonNegInt, error: errorData },
});

/** Validates a command arriving at the worker; throws ProtocolError. */
export function validateToTrainingWorker(msg: unknown): ToTrainingWorker {
  return toTrainingWorker.check(msg, 'message');
}

/** Validates a notification arriving from the worker; throws ProtocolError. */
export function validateFromTrainingWorker(msg: unknown): FromTrainingWorker {
  return fromTrainingWorker.check(msg, 'message');
}
