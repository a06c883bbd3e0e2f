/**
 * The model worker's entry on Node (a `worker_threads` worker, bundled as
 * dist/modelWorker.js): Node's file system and helper threads, `parentPort` for messages,
 * and drawing a PyTorch run's pending snapshots (listed with Node's `fs`).
 *
 * Leaves out: the requests themselves (modelService.ts) and the web's entry (modelWorker.web.ts).
 */

import { serveModelRequests } from './modelService';
import { parentChannel } from './channel.node';
import { NODE_PLATFORM } from '../platform/platform.node';
import { enableWasmRelaxedSimd } from '../platform/wasmFlags.node';
import type { LabFs } from '../files/labFs';
import { SnapshotDrawer, drawPendingSnapshots } from '../pytorch/follow.node';
import { readRunJson } from '../runs/runFolder';
import { backendFor } from '../runs/specModel';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

/** A PyTorch run's pending snapshots, drawn on one thread (a few probe batches). */
async function drawSnapshots(fs: LabFs, runDir: string): Promise<number> {
  return drawPendingSnapshots(fs, runDir, async () =>
    SnapshotDrawer.open(
      fs,
      runDir,
      backendFor((await readRunJson(fs, runDir)).spec.backend, () => null),
    ),
  );
}

serveModelRequests(NODE_PLATFORM, parentChannel('dist/modelWorker.js'), drawSnapshots);
