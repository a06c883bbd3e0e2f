/**
 * How errors reach people: one notification that says what happened and what to do, with
 * "Open Log" (the full story is in the Attention Lab log) and any action that fixes it
 * ("Configure Model…", "Manage Workspace Trust"). Errors are logged with their cause;
 * nothing is swallowed (CONTRIBUTING.md, "Errors tell people what to do").
 *
 * Leaves out: deciding the message (each command words its own).
 */

import * as vscode from 'vscode';
import { shownPathsIn } from '../../lab/files/slashPaths';

/** An action button of an error notification. */
export interface ErrorAction {
  readonly title: string;
  readonly run: () => unknown;
}

/** Text of any thrown value. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Logs `message` (and the cause's stack) and shows it with "Open Log" plus `actions`.
 * Returns at once: the buttons act when clicked, so no command waits on the user.
 */
export function showError(
  log: vscode.LogOutputChannel,
  message: string,
  cause?: unknown,
  ...actions: ErrorAction[]
): void {
  log.error(message);
  const shown = shownPathsIn(message);
  if (cause instanceof Error && cause.stack && cause.message !== message) log.debug(cause.stack);
  const all = [...actions, { title: 'Open Log', run: () => log.show(true) }];
  void vscode.window
    .showErrorMessage(shown, ...all.map((a) => a.title))
    .then((chosen) => all.find((a) => a.title === chosen)?.run());
}

/** The "Configure Model…" action. */
export const CONFIGURE_ACTION: ErrorAction = {
  title: 'Configure Model…',
  run: () => vscode.commands.executeCommand('attentionLab.configure'),
};

/** The "Manage Workspace Trust" action (Restricted Mode reads no workspace files). */
export const TRUST_ACTION: ErrorAction = {
  title: 'Manage Workspace Trust',
  run: () => vscode.commands.executeCommand('workbench.trust.manage'),
};
