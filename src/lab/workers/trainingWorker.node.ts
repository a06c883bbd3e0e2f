/**
 * The training worker's entry on Node (a `worker_threads` worker, bundled as
 * dist/worker.js): Node's file system and helper threads, `parentPort` for messages, and the
 * PyTorch engine (its trainer runs as child processes this worker follows).
 *
 * Leaves out: the commands themselves (trainingService.ts) and the web's entry (trainingWorker.web.ts).
 */

import type { FromTrainingWorker } from '../../protocol/trainingWorker';
import { runPytorchSession } from '../pytorch/pytorchSession.node';
import { parentChannel } from './channel.node';
import type { LabPlatform, WorkerChannel } from '../platform/platform';
import { NODE_PLATFORM } from '../platform/platform.node';
import { serveTraining } from './trainingService';
import { enableWasmRelaxedSimd } from '../platform/wasmFlags.node';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

/**
 * The tests' stand-in for a driver reset (test/unit/cli/gpuLost.test.ts): with
 * ATTENTION_LAB_TEST_LOSE_GPU_AFTER_STEP=N, the WebGPU device is destroyed as step N is reported,
 * which fires `GPUDevice.lost` as a real loss does. Unset (always, outside those tests): nothing changes.
 */
function losingGpuAfter(
  step: number,
  platform: LabPlatform,
  channel: WorkerChannel<FromTrainingWorker>,
): [LabPlatform, WorkerChannel<FromTrainingWorker>] {
  const open = platform.gpu;
  if (!(step > 0) || !open) return [platform, channel];
  let device: GPUDevice | null = null;
  const gpu: LabPlatform['gpu'] = async () => {
    const opened = await open();
    if (opened.ok) device = opened.device;
    return opened;
  };
  return [
    { ...platform, gpu },
    {
      ...channel,
      post(msg, transfer) {
        channel.post(msg, transfer);
        if (msg.type === 'train/didStep' && msg.step === step) device?.destroy();
      },
    },
  ];
}

const [platform, channel] = losingGpuAfter(
  Number(process.env.ATTENTION_LAB_TEST_LOSE_GPU_AFTER_STEP ?? 0),
  NODE_PLATFORM,
  parentChannel<FromTrainingWorker>('dist/worker.js'),
);
serveTraining(platform, channel, null, runPytorchSession);
