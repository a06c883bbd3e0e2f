/**
 * "Attention Lab: Train" and resuming a run: checks the settings, finds the data, names a
 * new run folder, and hosts the run through the training controller (a worker thread)
 * with a cancellable progress notification, the dashboard opened on the run, the data
 * summary (files, bytes, what was skipped and why) in the log, and an end notification
 * that offers the next step.
 *
 * Leaves out: the status bar (statusBar.ts) and the training loop (the worker).
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunOutcome } from '../lab/host';
import type { TrainSpec } from '../protocol';
import { CONFIGURE_ACTION, TRUST_ACTION, messageOf, showError } from './errors';
import { dataLine, formatLoss, skippedReason } from './format';
import type { Services } from './services';
import { mismatch, specFromSettings } from './settings';
import { DataError, findTrainingData } from './trainData';

function busy(s: Services): boolean {
  const live = s.controller.state;
  if (!live) return false;
  void vscode.window.showInformationMessage(`${live.name} is training (step ${live.step} of ${live.totalSteps}). Stop it before starting another run.`, 'Open Dashboard', 'Stop Training').then((a) => {
    if (a === 'Open Dashboard') s.dashboard.open(live.runId);
    if (a === 'Stop Training') s.controller.stop();
  });
  return true;
}

/** Trains a new run as the settings describe. */
export async function trainCommand(s: Services): Promise<void> {
  if (busy(s)) return;
  const settings = s.settings();
  const wrong = mismatch(settings);
  if (wrong) return showError(s.log, wrong, undefined, CONFIGURE_ACTION);
  const root = s.runsRoot();
  if (root.note) s.log.warn(root.note);
  let found;
  try {
    found = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Attention Lab: finding training data' }, (_p, token) => findTrainingData(settings, s.workspaceDir(), root.root, token));
  } catch (e) {
    if (e instanceof DataError) return showError(s.log, e.message, undefined, ...(e.fix === 'trust' ? [TRUST_ACTION, CONFIGURE_ACTION] : e.fix === 'configure' ? [CONFIGURE_ACTION] : []));
    return showError(s.log, `Could not find the training data: ${messageOf(e)}`, e);
  }
  const spec = specFromSettings(settings, found.data);
  const lab = s.lab.get();
  try {
    const est = lab.estimateSpec(spec);
    s.log.info(`Model: ${spec.model.kind} ${spec.model.preset}, about ${est.params.toLocaleString('en-US')} parameters; data: ${found.found}.`);
  } catch (e) {
    return showError(s.log, `The model configuration is invalid: ${messageOf(e)}`, e, CONFIGURE_ACTION);
  }
  const runDir = lab.newRunDir(root.root);
  await runWithUi(s, runDir, spec, false);
}

/** Continues a run from its last checkpoint. */
export async function resumeCommand(s: Services, runDir: string): Promise<void> {
  if (busy(s)) return;
  let spec: TrainSpec;
  try {
    spec = s.lab.get().readSpec(runDir);
  } catch (e) {
    return showError(s.log, `Cannot resume ${path.basename(runDir)}: ${messageOf(e)}`, e);
  }
  if (spec.data.kind !== 'task' && !vscode.workspace.isTrusted) {
    return showError(s.log, `${path.basename(runDir)} trains on workspace files, which Attention Lab does not read in Restricted Mode.`, undefined, TRUST_ACTION);
  }
  await runWithUi(s, runDir, spec, true);
}

async function runWithUi(s: Services, runDir: string, spec: TrainSpec, resume: boolean): Promise<void> {
  const runId = path.resolve(runDir);
  const name = path.basename(runId);
  await s.registry.select(runId);
  const sub = s.controller.onEvent(({ runId: id, event }) => {
    if (id !== runId || event.type !== 'train/didStart') return;
    s.log.info(`${name}: ${event.data.description} — ${dataLine(event.data)}.`);
    for (const f of event.data.skipped) s.log.info(`  skipped ${f.path}: ${skippedReason(f.reason)}`);
    if (event.data.skipped.length > 0) s.log.info('  (.gitignore and files.exclude are honored; binary, non-UTF-8, empty and files over 1 MB are left out)');
    s.dashboard.open(runId, true);
  });
  let outcome: RunOutcome;
  try {
    outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Attention Lab: ${resume ? 'resuming' : 'training'} ${name}`, cancellable: true },
      (progress, token) => {
        token.onCancellationRequested(() => s.controller.stop());
        let reported = 0;
        const steps = s.controller.onDidChange((st) => {
          if (!st || st.runId !== runId) return;
          const pct = (100 * st.step) / Math.max(1, st.totalSteps);
          if (pct - reported < 1 && st.step !== st.totalSteps) return;
          progress.report({ increment: pct - reported, message: `step ${st.step}/${st.totalSteps} · loss ${formatLoss(st.loss)}${st.paused ? ' · paused' : ''}` });
          reported = pct;
        });
        return s.controller.start(runId, spec, resume).finally(() => steps.dispose());
      },
    );
  } catch (e) {
    sub.dispose();
    return showError(s.log, `Could not start training: ${messageOf(e)}`, e);
  }
  sub.dispose();
  s.runs.refresh();
  announce(s, runId, outcome);
}

/** Says how the run ended; never waits for the user (the Train command resolves when training ends). */
function announce(s: Services, runId: string, outcome: RunOutcome): void {
  const name = path.basename(runId);
  if (outcome.kind === 'failed') {
    const fixable = /^(input|config|tokenizer)\//.test(outcome.error.code);
    void showError(s.log, `${name} failed at step ${outcome.step}: ${outcome.error.message}`, undefined, ...(fixable ? [CONFIGURE_ACTION] : []));
    return;
  }
  const best = s.runs.find(runId)?.bestValLoss ?? null;
  const verb = outcome.reason === 'completed' ? 'finished' : 'stopped';
  void vscode.window.showInformationMessage(`${name} ${verb} at step ${outcome.step}${best !== null ? ` · best validation loss ${formatLoss(best)}` : ''}.`, 'Decode…', 'Open Dashboard').then((choice) => {
    if (choice === 'Decode…') void vscode.commands.executeCommand('attentionLab.run.decode', runId);
    if (choice === 'Open Dashboard') s.dashboard.open(runId);
  });
}
