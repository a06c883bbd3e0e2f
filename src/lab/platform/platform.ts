/**
 * What a lab job needs from the place it runs: the file system its run folders and data
 * live on, and helper threads for the WebAssembly backend. Node (the CLI, desktop
 * VS Code's workers) give Node's file system and `worker_threads` helpers (platform.node.ts);
 * the web's nested workers give their channel to the extension host and Web Workers on
 * shared memory, or no helpers where the page is not cross-origin isolated.
 *
 * A worker's messages reach it through a {@link WorkerChannel}: `parentPort` on Node,
 * the worker's global scope on the web.
 *
 * Leaves out: how either is made (platform.node.ts, platform.web.ts).
 */

/// <reference types="@webgpu/types" />

import type { ParallelRunner } from '../../engine/backends/wasm/parallel';
import type { AdapterDescription } from '../../engine/backends/webgpu/adapter';
import type { LabFs } from '../files/labFs';

/** An open WebGPU device and its adapter's name, or why there is none (one line, saying what to do). */
export type OpenedGpu =
  | { readonly ok: true; readonly device: GPUDevice; readonly adapter: AdapterDescription }
  | { readonly ok: false; readonly reason: string };

/** The file system and threads of the place a lab job runs. */
export interface LabPlatform {
  readonly fs: LabFs;
  /**
   * Helper threads for one WebAssembly backend — `helpers` of them, or as many as the platform
   * offers (every core but the caller's) — or null where there are none to give (a page
   * that is not cross-origin isolated): the backend then runs on one thread.
   */
  readonly threads: (helpers?: number) => ParallelRunner | null;
  /** Opens a WebGPU device (Node: Dawn's binding); absent where the platform has none to give yet. */
  readonly gpu?: () => Promise<OpenedGpu>;
}

/** A worker's line to the side that started it: what it posts, and the messages that arrive (not yet validated). */
export interface WorkerChannel<Out> {
  post(msg: Out, transfer?: ArrayBuffer[]): void;
  onMessage(listener: (msg: unknown) => void): void;
}
