/**
 * The handler of every contributed command (one table, typed over the command ids so a
 * command without a handler does not compile). Handlers resolve to a value the extension
 * tests can check (a run folder, decoded text…); user errors are shown, not thrown.
 *
 * Leaves out: the commands' logic (one module per command family).
 */

import * as vscode from 'vscode';
import type { CommandId } from './commandIds';
import { COMMAND_IDS } from './commandIds';
import { configureModel } from '../configure/configure';
import { decodeCommand } from './decodeCommand';
import type { DisposableLike } from '../base/disposables';
import { messageOf, showError } from '../base/errors';
import { evaluateFilesCommand } from './evaluateCommand';
import { openPytorchCheckpointCommand } from './importCommand';
import { pickRun, runDirOf } from '../runs/pickRun';
import { pickActiveRunCommand } from '../runs/activeRunStatus';
import {
  deleteRunCommand,
  editRunNoteCommand,
  exportRunCommand,
  findStrayRunsCommand,
  openRunCommand,
  renameRunCommand,
  revealRunCommand,
} from '../runs/runActions';
import { showAttentionCommand } from './attentionCommand';
import type { ScoreDecorations } from './scoreDecorations';
import { continueCommand, fineTuneCommand, resumeCommand, trainCommand } from '../training/trainCommand';
import type { ConfigureDeps } from '../configure/configure';
import type { RunActionDeps } from '../runs/runActions';
import type { TrainDeps } from '../training/trainCommand';
import type { AttentionDeps } from './attentionCommand';
import type { DecodeDeps } from './decodeCommand';
import type { EvaluateDeps } from './evaluateCommand';
import type { ImportDeps } from './importCommand';

/** What the commands use: each family's dependencies together (one table registers them all). */
export type CommandDeps = ConfigureDeps &
  TrainDeps &
  RunActionDeps &
  DecodeDeps &
  AttentionDeps &
  EvaluateDeps &
  ImportDeps;

type Handler = (...args: unknown[]) => unknown;

function stopTraining(s: CommandDeps): boolean {
  if (s.controller.stop()) {
    s.log.info('Stopping after the current step (a checkpoint is saved)…');
    return true;
  }
  void vscode.window.showInformationMessage('Nothing is training.');
  return false;
}

function togglePause(s: CommandDeps): boolean | null {
  const paused = s.controller.togglePause();
  if (paused === null) void vscode.window.showInformationMessage('Nothing is training.');
  else s.log.info(paused ? 'Pausing after the current step…' : 'Resuming…');
  return paused;
}

/** The handlers, by command id. */
export function commandTable(s: CommandDeps, scores: ScoreDecorations): { readonly [K in CommandId]: Handler } {
  return {
    'attentionLab.configure': () => configureModel(s),
    'attentionLab.train': () => trainCommand(s),
    'attentionLab.stop': () => stopTraining(s),
    'attentionLab.togglePause': () => togglePause(s),
    'attentionLab.decode': (arg, text) => decodeCommand(s, arg, typeof text === 'string' ? text : undefined),
    'attentionLab.openDashboard': (arg) =>
      s.dashboard.open(runDirOf(s, arg) ?? s.controller.state?.runId ?? s.active.id()),
    'attentionLab.openRun': (arg) => openRunCommand(s, arg),
    'attentionLab.findRuns': () => findStrayRunsCommand(s),
    'attentionLab.export': (arg, out, format) =>
      exportRunCommand(
        s,
        arg,
        typeof out === 'string' ? out : undefined,
        format === 'hf' || format === 'pytorch' ? format : undefined,
      ),
    // From the Runs view the second argument is the tree's selection, not a list of files.
    'attentionLab.evaluateFiles': (arg, files) =>
      evaluateFilesCommand(
        s,
        arg,
        Array.isArray(files) && files.length > 0 && files.every((f) => typeof f === 'string')
          ? (files as string[])
          : undefined,
      ),
    'attentionLab.openPytorchCheckpoint': (arg) => openPytorchCheckpointCommand(s, arg),
    'attentionLab.scoreSelection': (arg) => scores.score(arg),
    'attentionLab.showAttention': (arg, text) =>
      showAttentionCommand(s, arg, typeof text === 'string' ? text : undefined),
    'attentionLab.clearScores': () => scores.clear(),
    'attentionLab.refreshRuns': async () => (await s.runs.refresh()).length,
    'attentionLab.continueTraining': (arg, more) =>
      continueCommand(s, arg, typeof more === 'number' ? more : undefined),
    'attentionLab.run.openDashboard': async (arg) => {
      const run = await pickRun(s, arg, { trained: false, purpose: 'open' });
      if (!run) return;
      await s.active.set(run.runDir);
      s.dashboard.open(run.runDir);
    },
    'attentionLab.run.resume': async (arg) => {
      const run = await pickRun(s, arg, { trained: true, purpose: 'resume' });
      if (run) await resumeCommand(s, run.runDir);
    },
    'attentionLab.run.fineTune': (arg) => fineTuneCommand(s, arg),
    'attentionLab.run.decode': (arg, text) => decodeCommand(s, arg, typeof text === 'string' ? text : undefined),
    'attentionLab.run.export': (arg, out) => exportRunCommand(s, arg, typeof out === 'string' ? out : undefined),
    'attentionLab.run.reveal': (arg) => revealRunCommand(s, arg),
    // From the Runs view the second argument is the tree's selection (several runs at once).
    'attentionLab.run.delete': (arg, selection) => deleteRunCommand(s, arg, selection),
    'attentionLab.pickActiveRun': () => pickActiveRunCommand(s.active, s.runs),
    'attentionLab.run.setActive': async (arg) => {
      const run = await pickRun(s, arg, { trained: false, purpose: 'make active' });
      if (!run) return undefined;
      await s.active.set(run.runDir);
      return run.runDir;
    },
    'attentionLab.run.rename': (arg, name) => renameRunCommand(s, arg, typeof name === 'string' ? name : undefined),
    'attentionLab.run.editNote': (arg, note) => editRunNoteCommand(s, arg, typeof note === 'string' ? note : undefined),
  };
}

/** Registers every command; a handler that throws is reported with "Open Log". */
export function registerCommands(s: CommandDeps, scores: ScoreDecorations): DisposableLike[] {
  const table = commandTable(s, scores);
  return COMMAND_IDS.map((id) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await table[id](...args);
      } catch (e) {
        await showError(s.log, `Attention Lab: ${id.replace('attentionLab.', '')} failed: ${messageOf(e)}`, e);
        return undefined;
      }
    }),
  );
}
