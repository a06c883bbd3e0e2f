/**
 * The training worker's entry on Node (a `worker_threads` worker, bundled as
 * dist/worker.js): Node's file system and helper threads, `parentPort` for messages, and the
 * PyTorch engine (its trainer runs as child processes this worker follows).
 *
 * Leaves out: the commands themselves (trainingService.ts) and the web's entry (trainingWorker.web.ts).
 */

import { runPytorchSession } from '../pytorch/pytorchSession.node';
import { parentChannel } from './channel.node';
import { NODE_PLATFORM } from '../platform/platform.node';
import { serveTraining } from './trainingService';
import { enableWasmRelaxedSimd } from '../platform/wasmFlags.node';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

serveTraining(NODE_PLATFORM, parentChannel('dist/worker.js'), null, runPytorchSession);
