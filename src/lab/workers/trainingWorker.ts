/**
 * The training worker's entry on Node (a `worker_threads` worker, bundled as
 * dist/worker.js): Node's file system and helper threads, `parentPort` for messages, and the
 * PyTorch engine (its trainer runs as child processes this worker follows).
 *
 * Leaves out: the commands themselves (trainingService.ts) and the web's entry (webTrainingWorker.ts).
 */

import { runPytorchSession } from '../pytorch/pytorchSession';
import { parentChannel } from './nodeChannel';
import { NODE_PLATFORM } from './nodePlatform';
import { serveTraining } from './trainingService';
import { enableWasmRelaxedSimd } from './wasmFlags';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

serveTraining(NODE_PLATFORM, parentChannel('dist/worker.js'), null, runPytorchSession);
