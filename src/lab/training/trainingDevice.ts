/**
 * Which device a run trains on, from its backend kind: `webgpu` opens the platform's GPU (refused
 * in one line where none opens); `auto` probes it and trains on WebGPU only when the adapter is a
 * real GPU (src/engine/backends/webgpu/adapter.ts), else on WebAssembly, and says which and why;
 * `wasm` and `reference` never touch the GPU. It runs in the training worker (and the calibration
 * that Configure's review asks that worker for), never on the extension host, so the probe costs
 * the extension's activation nothing.
 *
 * Leaves out: opening the device (the platform layer) and the CPU backends (specModel.ts).
 */

/// <reference types="@webgpu/types" />

import type { AdapterDescription } from '../../engine/backends/webgpu/adapter';
import { autoChoice } from '../../engine/backends/webgpu/adapter';
import { EngineError } from '../../engine/errors';
import type { BackendKind } from '../../protocol/data';
import type { OpenedGpu } from '../platform/platform';

/** The device a run trains on, and why when `auto` chose it. */
export interface TrainingDevice {
  /** The GPU it trains on; null: the CPU backend its kind names (auto: WebAssembly where it loads). */
  readonly gpu: { readonly device: GPUDevice; readonly adapter: AdapterDescription } | null;
  /** What `auto` chose and why ("auto: … (software) is a software adapter, …"); null for a backend named outright. */
  readonly choice: string | null;
  /** Why `auto` found no adapter (the platform's reason, without its advice), for the log; null otherwise. */
  readonly detail: string | null;
}

/** What a run that names `wasm` or `reference` trains on: the CPU, by name. */
const CPU: TrainingDevice = { gpu: null, choice: null, detail: null };

/** One line for a run that names webgpu where the platform offers none. */
export const NO_WEBGPU_HERE = 'WebGPU is not offered where this runs yet; use backend wasm or auto.';

/**
 * The device a run of backend `kind` trains on, opened with `open` (the platform's; absent where it
 * has none). A software adapter `auto` turns down is closed again at once.
 */
export async function openTrainingDevice(
  kind: BackendKind,
  open: (() => Promise<OpenedGpu>) | undefined,
): Promise<TrainingDevice> {
  if (kind === 'webgpu') {
    if (!open) throw new EngineError('config/invalid', NO_WEBGPU_HERE);
    const opened = await open();
    if (!opened.ok) throw new EngineError('config/invalid', opened.reason);
    return { gpu: opened, choice: null, detail: null };
  }
  if (kind !== 'auto') return CPU;
  if (!open) return { gpu: null, choice: autoChoice(null, 'no WebGPU where this runs').reason, detail: null };
  const opened = await open();
  // The platform's line ends with advice for a run that named webgpu; auto needs only the why.
  if (!opened.ok)
    return {
      gpu: null,
      choice: autoChoice(null).reason,
      detail: `auto trains on WebAssembly: ${opened.reason.split(';')[0]}.`,
    };
  const choice = autoChoice(opened.adapter);
  if (!choice.webgpu) opened.device.destroy();
  return { gpu: choice.webgpu ? opened : null, choice: choice.reason, detail: null };
}
