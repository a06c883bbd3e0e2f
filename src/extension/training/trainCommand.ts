/**
 * "Attention Lab: Train", resuming a run, and "Continue Training…" (a finished or stopped run
 * trained on for more steps, as a new schedule segment): checks the settings, finds the data,
 * names a new run folder, and hosts the run through the training controller (a worker thread)
 * with a cancellable progress notification, the dashboard opened on the run, the data
 * summary (files, bytes, what was skipped and why) in the log, and an end notification
 * that offers the next step.
 *
 * The engine and the kernel backend are the settings' (attentionLab.training.engine, .backend):
 * a run created by one resumes with whichever is chosen now, from its checkpoint files.
 *
 * Leaves out: the status bar (statusBar.ts) and the training loop (the worker).
 */

import * as vscode from 'vscode';
import { errorKind } from '../../lab/base/errorCodes';
import { resumeActionFor } from './stopActions';
import { RunLockedError, runLockProblem } from '../../lab/runs/runLock';
import type { RunOutcome } from '../../lab/workers/trainingClient';
import type { BackendKind, SkippedFile, TrainSpec } from '../../protocol/data';
import { summarizeSkipped } from '../../protocol/data';
import { CONFIGURE_ACTION, TRUST_ACTION, messageOf, showError } from '../base/errors';
import { formatBytes, formatCount, formatLoss, formatPercent } from '../../common/format';
import { dataLine, skippedReason } from '../base/summaryLines';
import { EXTENDABLE, extendedTotal, moreStepsPrompt, moreStepsProblem } from './moreSteps';
import { pickRun } from '../runs/pickRun';
import { trainingProgressMessage } from '../runs/runLines';
import type { Settings } from '../base/settings';
import { mismatch, specFromSettings } from '../base/settings';
import { DataError, FindCancelled, MAX_FILES, documentsRoot, findDocumentFiles, findTrainingData } from './trainData';
import { fineTuneEstimate, fineTuneSources } from './fineTune';
import { NO_PYTORCH_HERE, pytorchOptions } from './pytorchEngine';
import type { DashboardCalls } from '../base/dashboardCalls';
import type { ExtensionHost } from '../host/extensionHost';
import type { LabLoader } from '../host/labLoader';
import type { RunPickDeps } from '../runs/pickRun';
import type { RunsRoot } from '../runs/runStore';
import type { ModelClient } from '../workers/modelClient';
import type { PytorchDeps } from './pytorchEngine';
import type { TrainingController } from './trainingController';

/** What the training commands use. */
export interface TrainDeps extends RunPickDeps, PytorchDeps {
  readonly log: vscode.LogOutputChannel;
  readonly host: Pick<ExtensionHost, 'fs' | 'pathOf' | 'lockIdentity' | 'pytorch'>;
  readonly lab: LabLoader;
  readonly controller: TrainingController;
  readonly models: Pick<ModelClient, 'request'>;
  readonly dashboard: Pick<DashboardCalls, 'open'>;
  settings(): Settings;
  runsRoot(): RunsRoot;
  workspaceDir(): string | null;
}

function busy(s: TrainDeps): boolean {
  const live = s.controller.state;
  if (!live) return false;
  void vscode.window
    .showInformationMessage(
      `${live.name} is training (step ${live.step} of ${live.totalSteps}). Stop it before starting another run.`,
      'Open Dashboard',
      'Stop Training',
    )
    .then((a) => {
      if (a === 'Open Dashboard') s.dashboard.open(live.runId);
      if (a === 'Stop Training') s.controller.stop();
    });
  return true;
}

/** Trains a new run as the settings describe. */
export async function trainCommand(s: TrainDeps): Promise<void> {
  if (busy(s)) return;
  const settings = s.settings();
  const wrong = mismatch(settings);
  if (wrong) return showError(s.log, wrong, undefined, CONFIGURE_ACTION);
  const root = s.runsRoot();
  if (root.note) s.log.warn(root.note);
  let found;
  try {
    found = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: 'Attention Lab: finding training data',
        cancellable: true,
      },
      (progress, token) =>
        findTrainingData(s.host, settings, s.workspaceDir(), root.root, token, {
          onProgress: (message) => progress.report({ message }),
        }),
    );
  } catch (e) {
    if (e instanceof FindCancelled)
      return s.log.info('Train: cancelled while finding the training data; nothing was started.');
    if (e instanceof DataError)
      return showError(
        s.log,
        e.message,
        undefined,
        ...(e.fix === 'trust' ? [TRUST_ACTION, CONFIGURE_ACTION] : e.fix === 'configure' ? [CONFIGURE_ACTION] : []),
      );
    return showError(s.log, `Could not find the training data: ${messageOf(e)}`, e);
  }
  const spec = specFromSettings(settings, found.data);
  const lab = s.lab.get();
  try {
    const est = lab.estimateSpec(spec);
    s.log.info(
      `Model: ${spec.model.kind} ${spec.model.preset}, about ${formatCount(est.params)} parameters; ` +
        `data: ${found.found}.`,
    );
  } catch (e) {
    return showError(s.log, `The model configuration is invalid: ${messageOf(e)}`, e, CONFIGURE_ACTION);
  }
  const runDir = await lab.newRunDir(s.host.fs, root.root);
  await runWithUi(s, runDir, spec, false);
}

/** Continues a run from its last checkpoint: to its planned total, or on to `extendTo` (a new segment). */
export async function resumeCommand(
  s: TrainDeps,
  runDir: string,
  extendTo: number | null = null,
  backend: BackendKind | null = null,
): Promise<void> {
  if (busy(s)) return;
  let spec: TrainSpec;
  try {
    spec = await s.lab.get().readSpec(s.host.fs, runDir);
    // The kernel backend is the settings' now, as the engine is (a run trained on WebGPU continues on wasm), or
    // the one asked for ("Resume on WebAssembly" after a lost GPU); the session takes it and run.json keeps it.
    spec = { ...spec, backend: backend ?? s.settings().training.backend };
  } catch (e) {
    return showError(s.log, `Cannot resume ${s.host.fs.basename(runDir)}: ${messageOf(e)}`, e);
  }
  if (spec.data.kind !== 'task' && !vscode.workspace.isTrusted) {
    return showError(
      s.log,
      `${s.host.fs.basename(runDir)} trains on workspace files, which Attention Lab does not read in Restricted Mode.`,
      undefined,
      TRUST_ACTION,
    );
  }
  await runWithUi(s, runDir, spec, true, extendTo);
}

/**
 * "Fine-tune…" on an imported model (its training action): asks which documents to train it
 * on — starting in the workspace — writes them into the run, then trains it as Resume does
 * (the fine-tuning schedule `import` planned: AdamW, a small peak learning rate, cosine).
 */
export async function fineTuneCommand(s: TrainDeps, arg: unknown): Promise<void> {
  if (busy(s)) return;
  const run = await pickRun(s, arg, { trained: true, purpose: 'fine-tune' });
  if (!run) return;
  const docs = await fineTuneDocuments(s, run.name);
  if (!docs) return;
  // Its data is written into run.json below: not while another session trains it.
  const locked = await runLockProblem(s.host.fs, run.runDir, s.host.lockIdentity);
  if (locked) return showError(s.log, locked);
  let spec: TrainSpec;
  try {
    spec = (await s.lab.get().setFineTuneData(s.host.fs, run.runDir, docs.files, docs.root)).spec;
  } catch (e) {
    return showError(s.log, `Cannot fine-tune ${run.name}: ${messageOf(e)}`, e);
  }
  // How long it takes here, measured before it starts (as Configure's review says for a new run).
  const steps = Math.max(0, spec.training.steps - run.step);
  const time = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Attention Lab: measuring a step of ${run.name} on this machine…`,
    },
    () =>
      s.models
        .request('calibrate', { spec, vocabSize: spec.tokenizer.vocabSize })
        .catch((e: unknown) => ({ error: messageOf(e) })),
  );
  const go = await vscode.window.showInformationMessage(
    fineTuneEstimate(run.name, docs.files.length, steps, time),
    { modal: true },
    'Fine-tune',
  );
  if (go !== 'Fine-tune') return;
  await resumeCommand(s, run.runDir);
}

/**
 * The documents a fine-tuning trains on: the workspace's (as Train finds them) or files chosen by hand; undefined when
 * cancelled.
 */
async function fineTuneDocuments(s: TrainDeps, name: string): Promise<{ files: string[]; root: string } | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const ws = s.workspaceDir();
  const { include, exclude } = s.settings().data;
  const items = fineTuneSources(include, ws !== null && vscode.workspace.isTrusted);
  const source =
    items.length === 1
      ? items[0]
      : await vscode.window.showQuickPick(items, {
          title: `Attention Lab: Fine-tune ${name} on…`,
          placeHolder: 'The documents to fine-tune on',
        });
  if (!source) return undefined;
  if (source.value === 'workspace') {
    const found = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Attention Lab: finding documents' },
      () => findDocumentFiles(s.host, include, exclude, s.runsRoot().root, MAX_FILES),
    );
    if (found.files.length === 0) {
      showError(
        s.log,
        `No files in this workspace match "${include}"; change attentionLab.data.include in ` +
          `"Configure Model…", or choose files.`,
        undefined,
        CONFIGURE_ACTION,
      );
      return undefined;
    }
    return { files: [...found.files], root: documentsRoot(s.host, found.files) };
  }
  const picked = await vscode.window.showOpenDialog({
    title: `Attention Lab: Fine-tune ${name} on…`,
    openLabel: 'Fine-tune on These',
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: true,
    ...(folder ? { defaultUri: folder } : {}),
  });
  if (!picked?.length) return undefined;
  const paths = picked.flatMap((u) => s.host.pathOf(u) ?? []);
  if (paths.length < picked.length) {
    showError(
      s.log,
      `Cannot fine-tune ${name} on files the training worker cannot read here (a virtual workspace ` +
        `in desktop VS Code); pick files on disk.`,
    );
    return undefined;
  }
  return { files: paths, root: ws ?? s.host.fs.dirname(paths[0] as string) };
}

/**
 * "Continue Training…": asks how many more steps (unless `more` is given), then trains the
 * run on to its planned total plus that many, through the same path as Resume.
 */
export async function continueCommand(s: TrainDeps, arg: unknown, more?: number): Promise<void> {
  if (busy(s)) return;
  const run = await pickRun(s, arg, { trained: true, purpose: 'continue training', only: EXTENDABLE });
  if (!run) return;
  let steps = more;
  if (steps === undefined) {
    const typed = await vscode.window.showInputBox({
      title: `Attention Lab: Continue Training ${run.name}`,
      prompt: moreStepsPrompt(run),
      value: String(run.totalSteps),
      validateInput: moreStepsProblem,
      ignoreFocusOut: true,
    });
    if (typed === undefined) return;
    steps = Number(typed.trim());
  }
  const problem = moreStepsProblem(String(steps));
  if (problem) return showError(s.log, problem);
  await resumeCommand(s, run.runDir, extendedTotal(run, steps));
}

async function runWithUi(
  s: TrainDeps,
  runDir: string,
  spec: TrainSpec,
  resume: boolean,
  extendTo: number | null = null,
): Promise<void> {
  const runId = s.host.fs.resolve(runDir);
  const settings = s.settings();
  if (settings.training.engine === 'pytorch' && !s.host.pytorch)
    return showError(s.log, NO_PYTORCH_HERE, undefined, CONFIGURE_ACTION);
  if (settings.training.engine === 'pytorch' && !vscode.workspace.isTrusted) {
    return showError(
      s.log,
      'The PyTorch engine starts a Python interpreter, which Attention Lab does not do in ' +
        'Restricted Mode; trust the workspace, or set attentionLab.training.engine to builtin.',
      undefined,
      TRUST_ACTION,
      CONFIGURE_ACTION,
    );
  }
  const torch = await pytorchOptions(s, settings);
  if (torch)
    s.log.info(
      `Engine: PyTorch (${torch.options.nproc} ` +
        `${torch.options.nproc === 1 ? 'process' : 'processes'}, device ` +
        `${torch.options.device}${torch.options.bf16 ? ', bf16' : ''}) with ${torch.python.python} ` +
        `from ${torch.python.from}.`,
    );
  const known = s.runs.find(runId);
  const name = known?.name ?? s.host.fs.basename(runId);
  let skipped: readonly SkippedFile[] = [];
  // The run becomes the active run once it trains: a start refused or cancelled while the
  // data is read keeps the run that was active.
  const sub = s.controller.onEvent(({ runId: id, event }) => {
    if (id !== runId || event.type !== 'train/didStart') return;
    void s.active.set(runId);
    s.log.info(`${name}: ${event.data.description} — ${dataLine(event.data)}.`);
    if (event.data.validation) s.log.info(`  validation: ${event.data.validation.text}`);
    skipped = event.data.skipped;
    for (const f of event.data.skipped)
      s.log.info(
        `  skipped ${f.path}: ${skippedReason(f.reason)}${f.bytes !== undefined ? ` (${formatBytes(f.bytes)})` : ''}`,
      );
    if (event.data.skipped.length > 0) {
      s.log.info(
        '  (.gitignore and files.exclude are honored; lockfiles, vendored and build folders, ' +
          'minified and generated files are skipped unless attentionLab.data.skipGenerated is off; ' +
          'files over attentionLab.data.maxFileSizeMB, or past attentionLab.data.maxTotalSizeMB in all, are skipped)',
      );
    }
    s.dashboard.open(runId, true);
  });
  let outcome: RunOutcome;
  try {
    outcome = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title:
          'Attention Lab: ' +
          (extendTo !== null
            ? `training ${name} on to step ${extendTo}`
            : resume
              ? `training ${name} from its checkpoint at step ${known?.step ?? 0}`
              : `training ${name}`),
        cancellable: true,
      },
      (progress, token) => {
        token.onCancellationRequested(() => s.controller.stop());
        if (resume) progress.report({ message: 'resuming from the last checkpoint…' });
        let reported = 0;
        let wasState = 'running';
        // Before the first step: what the worker is reading, training or encoding, and how far.
        const preparing = s.controller.onEvent(({ runId: id, event }) => {
          if (id !== runId || event.type !== 'train/didProgress') return;
          const pct = event.total > 0 ? ` · ${formatPercent(event.done / event.total)}` : '';
          progress.report({ message: `${event.message}${pct}` });
        });
        const steps = s.controller.onDidChange((st) => {
          if (!st || st.runId !== runId) return;
          const pct = (100 * st.step) / Math.max(1, st.totalSteps);
          // Pausing, resuming and stopping are reported at once, whatever the progress did.
          const state = st.stopping ? 'stopping' : st.paused ? 'paused' : 'running';
          if (pct - reported < 1 && st.step !== st.totalSteps && state === wasState) return;
          wasState = state;
          progress.report({ increment: Math.max(0, pct - reported), message: trainingProgressMessage(st) });
          reported = Math.max(reported, pct);
        });
        return s.controller.start(runId, spec, resume, extendTo, torch?.options ?? null).finally(() => {
          steps.dispose();
          preparing.dispose();
        });
      },
    );
  } catch (e) {
    sub.dispose();
    // Another session trains the run: its line says who; the active run stays as it was.
    if (RunLockedError.is(e)) return showError(s.log, e.message);
    return showError(s.log, `Could not start training: ${messageOf(e)}`, e);
  }
  sub.dispose();
  await s.runs.refresh();
  announce(s, runId, outcome, skipped);
}

/** The finish message's note on files the data left out ("" when none): how many and why, and where they are listed. */
export function skippedNotice(skipped: readonly SkippedFile[]): string {
  if (skipped.length === 0) return '';
  return (
    ` ${formatCount(skipped.length)} ${skipped.length === 1 ? 'file was' : 'files were'} not ` +
    `trained on (${summarizeSkipped(skipped)}); the log lists ${skipped.length === 1 ? 'it' : 'them'}.`
  );
}

/**
 * Says how the run ended, and which files it left out; never waits for the user (the Train command resolves when
 * training ends).
 */
function announce(s: TrainDeps, runId: string, outcome: RunOutcome, skipped: readonly SkippedFile[]): void {
  const name = s.runs.find(runId)?.name ?? s.host.fs.basename(runId);
  if (outcome.kind === 'failed') {
    const kind = errorKind(outcome.error.code);
    const resume = resumeActionFor(outcome.error.code);
    if (kind === 'cancelled')
      void vscode.window.showInformationMessage(
        `${name}: cancelled before training started (${outcome.error.message}); nothing was trained.`,
      );
    // A full disk or a lost GPU stopped the run with its checkpoint kept: it resumes (a lost GPU's on WebAssembly).
    else if (resume)
      void showError(s.log, `${name} stopped: ${outcome.error.message}`, undefined, {
        title: resume.title,
        run: () => resumeCommand(s, runId, null, resume.backend),
      });
    // A file in the way or a read-only disk is fixed on the disk (the message says how), not in the model's settings.
    else
      void showError(
        s.log,
        `${name} failed at step ${outcome.step}: ${outcome.error.message}`,
        undefined,
        ...(kind === 'fixable' && outcome.error.code !== 'file/unusable' ? [CONFIGURE_ACTION] : []),
      );
    return;
  }
  const best = s.runs.find(runId)?.bestValLoss ?? null;
  const verb = outcome.reason === 'completed' ? 'finished' : 'stopped';
  const text =
    `${name} ${verb} at step ${outcome.step}` +
    `${best !== null ? ` · best validation loss ${formatLoss(best)}` : ''}.` +
    `${skippedNotice(skipped)}`;
  void vscode.window
    .showInformationMessage(text, 'Decode…', 'Open Dashboard', ...(skipped.length > 0 ? ['Open Log'] : []))
    .then((choice) => {
      if (choice === 'Open Log') s.log.show();
      if (choice === 'Decode…') void vscode.commands.executeCommand('attentionLab.run.decode', runId);
      if (choice === 'Open Dashboard') s.dashboard.open(runId);
    });
}
