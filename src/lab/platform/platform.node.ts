/**
 * The lab on Node: Node's file system, and helper threads on every core but the caller's
 * (`worker_threads`, threads.node.ts) — what the CLI, the benchmark and desktop VS Code's
 * workers run on — and WebGPU devices through Dawn's binding (webgpu.node.ts).
 *
 * Leaves out: the web's platform (platform.web.ts).
 */

import { NODE_FS } from '../files/fs.node';
import type { LabPlatform } from './platform';
import { createWasmThreads } from './threads.node';
import { openNodeGpu } from './webgpu.node';

/** Node's platform (stateless: each `threads()` call makes a new set of helpers). */
export const NODE_PLATFORM: LabPlatform = {
  fs: NODE_FS,
  threads: (helpers) => createWasmThreads(helpers),
  gpu: openNodeGpu,
};
