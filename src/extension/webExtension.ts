/**
 * The extension's entry in VS Code for the web (package.json `browser`, bundled into
 * dist/web/extension.js with the lab, `vscode` external): activation on the web-worker
 * extension host.
 *
 * Leaves out: activation itself (activation.ts) and the desktop entry (extension.ts).
 */

import type * as vscode from 'vscode';
import type { AttentionLabApi } from './activation';
import { activateLab } from './activation';
import { webExtensionHost } from './host/extensionHost.web';

/** Activates the extension. */
export function activate(context: vscode.ExtensionContext): AttentionLabApi {
  return activateLab(context, webExtensionHost(context.extensionUri));
}

/** Nothing to do: everything is owned by `context.subscriptions`. */
export function deactivate(): void {
  // Disposing the subscriptions stops training (the run resumes from its last checkpoint).
}
