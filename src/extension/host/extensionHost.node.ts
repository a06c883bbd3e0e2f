/**
 * Desktop VS Code's extension host (Node): Node's file system with the platform's paths
 * (workspace files on disk; a virtual workspace's files are out of reach), the training
 * and model workers as `worker_threads` running dist/worker.js and dist/modelWorker.js with
 * helper threads on every core, and the engine-side module required from
 * dist/extensionLab.js on first use, so activation stays small.
 *
 * Leaves out: the web host (extensionHost.web.ts).
 */

import { availableParallelism } from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { NODE_FS } from '../../lab/files/fs.node';
import { nodeLockIdentity } from '../../lab/runs/lockIdentity.node';
import { startNodeWorker } from '../../lab/workers/startWorker.node';
import type { ExtensionHost } from './extensionHost';
import { requireLab } from './requireLab.node';

/** Desktop VS Code's Node extension host, for the extension installed at `extensionPath`. */
export function nodeExtensionHost(extensionPath: string): ExtensionHost {
  const dist = path.join(extensionPath, 'dist');
  const lab = requireLab(dist);
  return {
    kind: 'node',
    fs: NODE_FS,
    lockIdentity: nodeLockIdentity('VS Code'),
    pathOf: (uri) => (uri.scheme === 'file' ? uri.fsPath : null),
    uriOf: (p) => vscode.Uri.file(p),
    lab,
    pytorch: () => lab.get(),
    startTrainingWorker: () => startNodeWorker(path.join(dist, 'worker.js'), 'training worker'),
    startModelWorker: () => startNodeWorker(path.join(dist, 'modelWorker.js'), 'model worker'),
    threadsNote: () => {
      const n = availableParallelism();
      return `${n} ${n === 1 ? 'thread' : 'threads'} (every core)`;
    },
  };
}
