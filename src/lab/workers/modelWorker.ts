/**
 * The model worker's entry on Node (a `worker_threads` worker, bundled as
 * dist/modelWorker.js): Node's file system and helper threads, `parentPort` for messages.
 *
 * Leaves out: the requests themselves (modelService.ts) and the web's entry (webModelWorker.ts).
 */

import { serveModelRequests } from './modelService';
import { parentChannel } from './nodeChannel';
import { NODE_PLATFORM } from './nodePlatform';
import { enableWasmRelaxedSimd } from './wasmFlags';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

serveModelRequests(NODE_PLATFORM, parentChannel('dist/modelWorker.js'));
