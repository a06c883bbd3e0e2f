/**
 * VS Code in the browser (vscode.dev, github.dev, any web build): the extension runs in the
 * web-worker extension host, with no Node. Files go through `workspace.fs` (host/workspaceFs.ts:
 * workspace files of any provider, runs in the extension's storage), the training and model
 * workers are nested Web Workers started from `blob:` URLs of the classic bundles in
 * dist/web/ (read through `workspace.fs`; a worker cannot be started from the extension's own
 * URL there), and the engine-side module is part of this one bundle. WebAssembly gets helper
 * threads only where the page is cross-origin isolated (vscode.dev with `?vscode-coi=on`, a
 * server that sends COOP/COEP); elsewhere it runs on one thread.
 *
 * Leaves out: the desktop host (extensionHost.node.ts).
 */

import * as vscode from 'vscode';
import { uncheckedIdentity } from '../../lab/runs/runLock';
import * as hostLab from '../../lab/editor/extensionLab';
import { defaultWebHelpers, webThreadsAvailable } from '../../lab/platform/threads.web';
import { startWebWorker } from '../../lab/workers/startWorker.web';
import type { ExtensionHost } from './extensionHost';
import { WorkspaceFs, pathOfUri, uriOfPath } from './workspaceFs';

/** The web-worker extension host of VS Code for the web, for the extension at `extensionUri`. */
export function webExtensionHost(extensionUri: vscode.Uri): ExtensionHost {
  const fs = new WorkspaceFs();
  const bundles = new Map<string, Promise<string>>();
  // Each bundle is read once, when its worker is first needed.
  const bundle = (name: string): Promise<string> => {
    let text = bundles.get(name);
    if (!text) {
      text = Promise.resolve(vscode.workspace.fs.readFile(vscode.Uri.joinPath(extensionUri, 'dist', 'web', name))).then(
        (b) => new TextDecoder().decode(b),
      );
      bundles.set(name, text);
    }
    return text;
  };
  return {
    kind: 'web',
    fs,
    // No process ids in a browser: a lock taken here is kept alive by its heartbeat alone.
    lockIdentity: uncheckedIdentity('VS Code for the web'),
    pathOf: (uri) => pathOfUri(uri),
    uriOf: (p) => uriOfPath(p),
    lab: { get: () => hostLab, isLoaded: true },
    pytorch: null,
    startTrainingWorker: () => startWebWorker(bundle('trainingWorker.js'), fs, 'training worker'),
    startModelWorker: () => startWebWorker(bundle('modelWorker.js'), fs, 'model worker'),
    threadsNote: () => {
      if (!webThreadsAvailable()) return '1 thread (the page is not cross-origin isolated)';
      const n = 1 + defaultWebHelpers();
      return `${n} ${n === 1 ? 'thread' : 'threads'} (the page is cross-origin isolated)`;
    },
  };
}
