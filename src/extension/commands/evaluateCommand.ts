/**
 * "Attention Lab: Evaluate on Files…": scores a trained run on test files it never saw —
 * text files for a decoder-only run; one .tsv / .jsonl file, or a source and then a target
 * line file, for an encoder-decoder — in the model worker, behind a cancellable progress
 * notification, and shows loss, perplexity, exact match, BLEU, tokens and skipped files in
 * a notification and in the Attention Lab log (what `attention-lab eval --data/--pairs`
 * prints, from the same lab function, which records it in the run's evaluations.jsonl), and
 * adds it to an open dashboard.
 *
 * Leaves out: the evaluation (lab/evaluation/evaluateFiles.ts) and choosing a run (runs/pickRun.ts).
 */

import * as vscode from 'vscode';
import { shownPathsIn } from '../../lab/files/slashPaths';
import type { ModelKind } from '../../protocol/data';
import type { EvalFilesData, EvalFilesOutput } from '../../protocol/modelWorker';
import { TRUST_ACTION, messageOf, showError } from '../base/errors';
import { EVAL_MAX_PAIRS, evalLogLines, evalSummary, isPairsFile, otherSides, testDataOf } from './evalFiles';
import { pickRun } from '../runs/pickRun';
import type { RunItem } from '../runs/runsModel';
import { withWorkerProgress } from './workerProgress';
import type { DashboardCalls } from '../base/dashboardCalls';
import type { Settings } from '../base/settings';
import type { ExtensionHost } from '../host/extensionHost';
import type { LabLoader } from '../host/labLoader';
import type { RunPickDeps } from '../runs/pickRun';
import type { ModelClient } from '../workers/modelClient';

/** What evaluating on files uses. */
export interface EvaluateDeps extends RunPickDeps {
  readonly log: vscode.LogOutputChannel;
  readonly host: Pick<ExtensionHost, 'fs' | 'pathOf' | 'uriOf'>;
  readonly lab: LabLoader;
  readonly models: Pick<ModelClient, 'request'>;
  readonly dashboard: Pick<DashboardCalls, 'open' | 'showEvaluation'>;
  settings(): Settings;
  workspaceDir(): string | null;
}

function defaultUri(s: EvaluateDeps): { defaultUri: vscode.Uri } | Record<string, never> {
  const dir = s.workspaceDir();
  return dir ? { defaultUri: s.host.uriOf(dir) } : {};
}

/** Paths of chosen files on the host's file system (where the model worker reads), else undefined after saying so. */
function localPaths(s: EvaluateDeps, uris: readonly vscode.Uri[] | undefined): string[] | undefined {
  if (!uris?.length) return undefined;
  const paths = uris.map((u) => s.host.pathOf(u));
  if (paths.some((p) => p === null)) {
    void vscode.window.showWarningMessage(
      'Attention Lab reads test files from this machine’s disk; choose files there, not in a ' +
        'virtual or remote workspace.',
    );
    return undefined;
  }
  return paths as string[];
}

/** Asks for the test files of `run`; undefined when the user cancelled. */
async function pickTestFiles(s: EvaluateDeps, run: RunItem, kind: ModelKind): Promise<string[] | undefined> {
  if (kind === 'decoder-only') {
    const picked = await vscode.window.showOpenDialog({
      title: `Attention Lab: text files to evaluate ${run.name} on (files it never trained on)`,
      canSelectFiles: true,
      canSelectFolders: false,
      canSelectMany: true,
      openLabel: 'Evaluate',
      ...defaultUri(s),
    });
    return localPaths(s, picked);
  }
  const first = await vscode.window.showOpenDialog({
    title: `Attention Lab: test pairs for ${run.name}: a .tsv / .jsonl file, or the source line file`,
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
    openLabel: 'Choose',
    ...defaultUri(s),
  });
  const source = localPaths(s, first)?.[0];
  if (!source) return undefined;
  if (isPairsFile(source)) return [source];
  // The file beside it that pairs with it line for line (test.ja beside test.en), offered first.
  const { fs } = s.host;
  const sides = otherSides(
    await s.lab
      .get()
      .detectPairs(fs, [fs.dirname(source)])
      .catch(() => []),
    source,
  );
  if (sides.length > 0) {
    const other = { label: '$(folder-opened) Another file…', file: null };
    const picked = await vscode.window.showQuickPick(
      [
        ...sides.map((o) => ({
          label: `$(file) ${fs.basename(o.file)}`,
          description: `${o.pairs} lines, line for line with ${fs.basename(source)}`,
          file: o.file,
        })),
        other,
      ],
      {
        title: `Attention Lab: the target line file for ${fs.basename(source)}`,
        placeHolder: 'Line i of the target translates line i of the source',
      },
    );
    if (!picked) return undefined;
    if (picked.file !== null) return [source, picked.file];
  }
  const second = await vscode.window.showOpenDialog({
    title: `Attention Lab: the target line file (line i translates line i of ${s.host.fs.basename(source)})`,
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
    openLabel: 'Evaluate',
    defaultUri: s.host.uriOf(s.host.fs.dirname(source)),
  });
  const target = localPaths(s, second)?.[0];
  return target ? [source, target] : undefined;
}

/** Runs the evaluation in the model worker with a cancellable progress notification; undefined when cancelled. */
function evaluateWithProgress(
  s: EvaluateDeps,
  run: RunItem,
  data: EvalFilesData,
): Thenable<EvalFilesOutput | undefined> {
  return withWorkerProgress(
    `Attention Lab: evaluating ${run.name}`,
    (done, total) => `${done} of ${total} batches and decodes`,
    (hooks) =>
      s.models.request(
        'evaluateFiles',
        { runDir: run.runDir, data, maxPairs: EVAL_MAX_PAIRS, decoding: { strategy: 'greedy' }, tokenize: null },
        hooks,
      ),
  );
}

/**
 * Evaluates a run (`arg`, else the selected or a picked one) on test files: `files` when
 * given (absolute paths, as the file dialogs would return them), else chosen in dialogs.
 * Resolves to the result, or undefined when cancelled or failed (failures are shown).
 */
export async function evaluateFilesCommand(
  s: EvaluateDeps,
  arg: unknown,
  files?: readonly string[],
): Promise<EvalFilesOutput | undefined> {
  const run = await pickRun(s, arg, { trained: true, purpose: 'evaluate' });
  if (!run) return undefined;
  if (!vscode.workspace.isTrusted) {
    showError(
      s.log,
      'This workspace is in Restricted Mode, so Attention Lab does not read its files to evaluate a ' +
        'run. Trust the workspace first.',
      undefined,
      TRUST_ACTION,
    );
    return undefined;
  }
  const kind = run.kind;
  if (kind === null) {
    void vscode.window.showWarningMessage(
      `${run.name} has not said what kind of model it is yet; try again once it has saved a checkpoint.`,
    );
    return undefined;
  }
  const chosen = files ?? (await pickTestFiles(s, run, kind));
  if (!chosen) return undefined;
  const found = testDataOf(s.host.fs, kind, chosen, s.workspaceDir());
  if ('error' in found) {
    void vscode.window.showWarningMessage(shownPathsIn(found.error));
    return undefined;
  }
  // Test documents are read within the same size limits as training data.
  const limits = s.settings().data;
  const data: EvalFilesData =
    found.kind === 'documents'
      ? {
          ...found,
          maxFileBytes: Math.round(limits.maxFileSizeMB * 2 ** 20),
          maxTotalBytes: Math.round(limits.maxTotalSizeMB * 2 ** 20),
        }
      : found;
  let out: EvalFilesOutput | undefined;
  try {
    out = await evaluateWithProgress(s, run, data);
  } catch (e) {
    await showError(s.log, `Evaluating ${run.name} on files failed: ${messageOf(e)}`, e);
    return undefined;
  }
  if (!out) {
    s.log.info(`Evaluation of ${run.name} cancelled.`);
    return undefined;
  }
  for (const line of evalLogLines(out)) s.log.info(`${run.name}: ${line}`);
  const result = out;
  s.dashboard.showEvaluation(run.runDir, result.record);
  void vscode.window
    .showInformationMessage(
      `${run.name} on ${shownPathsIn(result.source)}: ${evalSummary(result)}`,
      'Open Dashboard',
      'Open Log',
    )
    .then((a) => {
      if (a === 'Open Log') s.log.show(true);
      if (a === 'Open Dashboard') s.dashboard.open(run.runDir);
    });
  return result;
}
