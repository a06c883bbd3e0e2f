/**
 * The training loop of one run, as the worker runs it: prepare (or reopen) the run folder,
 * then step — logging metrics, evaluating, snapshotting attention, checkpointing — until
 * the step budget is spent or the host says stop. It emits protocol notifications; it
 * never touches a thread or a terminal, so the CLI, the extension and the tests host the
 * same code. Pause, resume and stop arrive through {@link SessionControl} between steps;
 * creating or reopening the run folder, and reporting a failure, live in sessionSetup.ts.
 *
 * On WebGPU the step is `Trainer.stepAsync` (the loss and norm read back once per step); evaluation
 * and snapshots run on a CPU copy of the model whose weights are downloaded first, and a
 * checkpoint downloads the weights and the optimizer's state before it is written.
 */

import { saveCheckpoint } from '../runs/checkpoint';
import type { LabPlatform } from '../platform/platform';
import { yieldToEvents } from '../base/yieldToEvents';
import { STREAMS, stepRng } from '../data/dataset';
import { ByteCounter } from '../evaluation/bitsPerByte';
import type { EvalResult } from '../evaluation/evaluate';
import { evaluate } from '../evaluation/evaluate';
import { grokkingMetrics } from '../evaluation/grokking';
import type { GrokkingMetrics } from '../../protocol/data';
import { appendMetrics, updateRunJson } from '../runs/runFolder';
import { emitSnapshot } from './sessionControl';
import type { PreparedSession, SessionStart } from './sessionSetup';
import { NOT_OWNED, prepareSession, reportFailure } from './sessionSetup';
import { saveSnapshot } from '../runs/snapshotFiles';
import { takeSnapshot } from '../inference/takeSnapshot';

/** A session on our engine: the start, on `platform`'s file system and threads. */
export interface BuiltinStart extends SessionStart {
  readonly platform: LabPlatform;
}

/**
 * Runs (or resumes) the run in `request.runDir` (on `platform`'s file system and threads) to
 * `spec.training.steps` (or `request.stopAt`, whichever comes first; a run stopped early resumes
 * exactly where it stopped). With `resume`, `extendTo` trains a finished or stopped run on to
 * that total as a new schedule segment (segments.ts). Never throws: failures are reported as
 * `train/didFail` (the last checkpoint stays loadable; a refused resume leaves the run folder
 * as it was).
 */
export async function runSession(start: BuiltinStart): Promise<void> {
  const { platform, request, control, emit, options = {} } = start;
  const { runDir, resume, stopAt, extendTo, helpers } = request;
  let step = 0;
  let prepared: PreparedSession | null = null;
  const { fs } = platform;
  try {
    prepared = await prepareSession({
      platform,
      runDir,
      spec: request.spec,
      resume,
      stopAt,
      extendTo,
      control,
      emit,
      ...(helpers === undefined ? {} : { helpers }),
    });
    const { model, trainer, dataset, tok, info, gpu } = prepared;
    /** The model evaluation and snapshots read: on WebGPU, the CPU copy with the weights downloaded now. */
    const readable = async (): Promise<typeof model> => {
      if (!gpu) return model;
      await gpu.backend.download(model.params);
      gpu.host.params.set(model.params);
      return gpu.host;
    };
    const t = prepared.run.spec.training;
    step = prepared.startStep;
    const segments = prepared.run.segments;
    emit({
      type: 'train/didStart',
      runDir,
      startStep: step,
      totalSteps: t.steps,
      segments,
      model: info,
      data: prepared.run.data,
    });
    // Each segment's last step evaluates (the run's last step among them).
    const segmentEnds = new Set(segments.map((s) => s.toStep));
    let bestVal = prepared.run.bestValLoss;
    const byteCounter = new ByteCounter(tok, model.padId);
    const snapshot = async (): Promise<void> => {
      const snap = takeSnapshot(await readable(), dataset, tok, step, t.seed, options.headScores ?? true);
      await saveSnapshot(fs, runDir, snap);
      emitSnapshot(emit, snap);
    };
    const checkpoint = async (): Promise<void> => {
      // From a lost device nothing is written: a download then throws gpu/lost, and the last checkpoint stays.
      await gpu?.backend.downloadAll();
      const file = await saveCheckpoint(fs, runDir, model, trainer.optimizer, step);
      await updateRunJson(fs, runDir, { step, bestValLoss: bestVal });
      emit({ type: 'train/didSaveCheckpoint', step, path: file });
    };
    if (t.snapshotEvery > 0 && step === 0) await snapshot();
    const t0 = Date.now();
    let tokensSince = 0;
    let since = Date.now();
    let reason: 'completed' | 'stopped' = 'completed';
    const last = stopAt === null ? t.steps : Math.min(stopAt, t.steps);
    if (last < t.steps) reason = 'stopped';
    while (step < last) {
      await yieldToEvents();
      if (control.isPaused) {
        emit({ type: 'train/didPause', step });
        await updateRunJson(fs, runDir, { status: 'paused' });
        await control.waitWhilePaused();
        if (!control.isStopped) {
          await updateRunJson(fs, runDir, { status: 'training' });
          emit({ type: 'train/didResume', step });
        }
        since = Date.now();
        tokensSince = 0;
      }
      if (control.isStopped) {
        reason = 'stopped';
        break;
      }
      const next = step + 1;
      const batch = dataset.trainBatch(next);
      const rng = stepRng(t.seed, STREAMS.dropout, next);
      const r = gpu ? await trainer.stepAsync(batch, gpu.backend, rng) : trainer.step(batch, rng);
      step = next;
      tokensSince += r.tokens;
      const now = Date.now();
      const bytes = byteCounter.bytes(batch.targets, batch.B * batch.T);
      const metrics = {
        step,
        loss: r.loss,
        lr: r.lr,
        gradNorm: r.gradNorm,
        tokens: r.tokens,
        tokensPerSec: tokensSince / Math.max(1e-3, (now - since) / 1000),
        elapsedMs: now - t0,
        bytes,
      };
      await appendMetrics(fs, runDir, { type: 'step', ...metrics });
      emit({ type: 'train/didStep', ...metrics });
      if (now - since > 2000) {
        since = now;
        tokensSince = 0;
      }
      if ((t.evalEvery > 0 && step % t.evalEvery === 0) || segmentEnds.has(step)) {
        const ev = dataset.modular
          ? modularEval(grokkingMetrics(await readable(), dataset.modular))
          : evaluate(await readable(), dataset, tok, { maxPairs: 100 });
        if (bestVal === null || ev.loss < bestVal) bestVal = ev.loss;
        const e = { step, ...ev };
        await appendMetrics(fs, runDir, { type: 'eval', ...e });
        emit({ type: 'train/didEval', ...e });
      }
      if (t.snapshotEvery > 0 && step % t.snapshotEvery === 0) await snapshot();
      if (t.checkpointEvery > 0 && step % t.checkpointEvery === 0 && step !== t.steps) await checkpoint();
    }
    await checkpoint();
    await updateRunJson(fs, runDir, { status: reason, step, bestValLoss: bestVal });
    emit({ type: 'train/didFinish', step, reason });
  } catch (e) {
    await reportFailure(fs, runDir, prepared?.own ?? NOT_OWNED, e, step, emit);
  }
}

/**
 * The modular-addition task's validation: its one pass over every pair gives the test loss (the
 * validation loss), the test accuracy (the exact match of the answer) and the progress measures.
 */
function modularEval(g: GrokkingMetrics): EvalResult & { grokking: GrokkingMetrics } {
  return { loss: g.testLoss, ppl: Math.exp(g.testLoss), bpb: null, exactMatch: g.testAcc, bleu: null, grokking: g };
}
