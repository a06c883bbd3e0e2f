/**
 * Opening a WebGPU device in Node through Dawn's binding (the optional npm package `webgpu`,
 * "WebGPU for node": a native dawn.node per platform, ~21 MB for linux-x64). The engine never
 * opens devices itself; the training and model workers call this and hand the GPUDevice to the
 * WebGPU kernels (src/engine/backends/webgpu/). The web worker's counterpart is `navigator.gpu`.
 *
 * Dawn picks the platform's API: Vulkan on Linux (the Vulkan loader libvulkan.so.1 and a driver
 * must be installed), Metal on macOS, D3D12 on Windows. On a machine without a GPU, a software
 * Vulkan driver gives a (slow) adapter: the tests point `VK_ICD_FILENAMES` at SwiftShader's
 * (test/setupWebGpu.ts); this file never does, so a user's real GPU is never hidden.
 *
 * Leaves out: choosing between backends (src/engine/backends/webgpu/adapter.ts) and the browser.
 */

/// <reference types="@webgpu/types" />

import { dawnApiFor, describeAdapter } from '../../engine/backends/webgpu/adapter';
import type { OpenedGpu } from './platform';

/** An open device and its adapter's name, or why there is none (one line, saying what to do). */
export type NodeGpu = OpenedGpu;

/**
 * Why `--backend webgpu` cannot train without Dawn's binding: one line naming the platform, the
 * load error's first line, and what trains instead.
 */
export function bindingMissing(error: string, platform = `${process.platform}-${process.arch}`): string {
  return (
    `No WebGPU binding for ${platform} here (the optional package "webgpu" did not load: ${error.split('\n')[0]}); ` +
    'this package trains on WebAssembly: use backend wasm or auto, or install the .vsix for your platform ' +
    '(or the CLI with optional dependencies) for WebGPU.'
  );
}

interface DawnModule {
  create(flags: string[]): GPU;
}

/**
 * Dawn's instance, kept for the life of the process: a device outlives nothing it came from
 * (its instance collected while the device works crashes the process).
 */
let instance: GPU | null = null;

/**
 * Opens the highest-performance adapter Dawn finds and a device on it with the adapter's own
 * limits for buffer sizes and workgroup memory (the defaults are lower than most GPUs allow).
 * `load` imports the binding (a parameter for the tests). Where it does not load — the universal
 * .vsix ships no binary, an install without optional dependencies has none — the reason says so
 * in one line; `auto` trains on WebAssembly there without asking.
 */
export async function openNodeGpu(load: () => Promise<unknown> = () => import('webgpu')): Promise<NodeGpu> {
  let dawn: DawnModule;
  try {
    dawn = (await load()) as DawnModule;
  } catch (e) {
    return { ok: false, reason: bindingMissing((e as Error).message) };
  }
  const gpu = (instance ??= dawn.create([]));
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter)
    return {
      ok: false,
      reason:
        'No WebGPU adapter: Dawn found no GPU driver (on Linux it needs the Vulkan loader libvulkan.so.1 and a ' +
        'Vulkan driver); use --backend wasm.',
    };
  const l = adapter.limits;
  const device = await adapter.requestDevice({
    requiredLimits: {
      maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
      maxBufferSize: l.maxBufferSize,
      maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
      maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    },
  });
  return { ok: true, device, adapter: describeAdapter(adapter.info, dawnApiFor(process.platform)) };
}
