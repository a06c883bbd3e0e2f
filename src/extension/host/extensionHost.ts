/**
 * What differs between the two extension hosts Attention Lab runs in, behind one
 * interface the rest of the extension uses: desktop VS Code's Node extension host
 * (extensionHost.node.ts: Node's file system with the platform's paths, `worker_threads` workers,
 * the engine in a lazily required bundle) and the browser's web-worker extension host of
 * vscode.dev, github.dev and other web builds (extensionHost.web.ts: VS Code's `workspace.fs` with
 * URIs for paths, nested Web Workers started from `blob:` URLs, one bundle).
 *
 * Leaves out: the commands, views and dashboard (the same code on both hosts).
 */

import type * as vscode from 'vscode';
import type { LabFs } from '../../lab/files/labFs';
import type { LockIdentity } from '../../lab/runs/runLock';
import type { StartWorker } from '../../lab/workers/workerHandle';
import type { LabLoader, PytorchLab } from './labLoader';

/** What the extension host the extension runs in gives it: files and their paths, the lab module, the workers. */
export interface ExtensionHost {
  /** 'node': desktop (or remote) VS Code; 'web': VS Code in the browser. */
  readonly kind: 'node' | 'web';
  /** The file system runs, corpora, imports and exports go through. */
  readonly fs: LabFs;
  /** Who holds the run folders' locks taken here, and whether another holder still runs (lab/runs/runLock.ts). */
  readonly lockIdentity: LockIdentity;
  /** The path of `uri` on {@link fs}, or null where this host cannot reach it (a virtual file in desktop VS Code). */
  pathOf(uri: vscode.Uri): string | null;
  /** The URI of a path of {@link fs}. */
  uriOf(p: string): vscode.Uri;
  /** The engine-side module. */
  readonly lab: LabLoader;
  /**
   * The PyTorch engine's host side (loaded on the first call), or null where the host cannot
   * start processes (the web: the engine is not offered there).
   */
  readonly pytorch: (() => PytorchLab) | null;
  /** Starts a training worker (one per run). */
  readonly startTrainingWorker: StartWorker;
  /** Starts the model worker (decode, score, attention, export, import, calibration, evaluation). */
  readonly startModelWorker: StartWorker;
  /** How many threads the workers' WebAssembly runs on here, and why, for people ("1 thread: …"). */
  threadsNote(): string;
}
