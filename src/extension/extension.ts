/**
 * The extension's entry in desktop VS Code (package.json `main`, bundled into
 * dist/extension.js, `vscode` external): activation on the Node extension host.
 *
 * Leaves out: activation itself (activation.ts) and the web entry (webExtension.ts).
 */

import type * as vscode from 'vscode';
import type { AttentionLabApi } from './activation';
import { activateLab } from './activation';
import { nodeExtensionHost } from './host/extensionHost.node';

/** Activates the extension. */
export function activate(context: vscode.ExtensionContext): AttentionLabApi {
  return activateLab(context, nodeExtensionHost(context.extensionPath));
}

/** Nothing to do: everything is owned by `context.subscriptions`. */
export function deactivate(): void {
  // Disposing the subscriptions stops training (the run resumes from its last checkpoint).
}
