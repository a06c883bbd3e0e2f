/**
 * Opening a WebGPU device in a browser's worker through `navigator.gpu`: the web extension
 * host's nested training worker (VS Code for the web, code-server) and the browser tests. The
 * engine never opens devices itself; the web platform (platform.web.ts) hands this to the
 * training session as `LabPlatform.gpu`, as Node's does with Dawn (webgpu.node.ts).
 *
 * Where it runs: tried in code-server 4.139's web-worker extension host in headless Chromium 156 —
 * a nested worker started from a `blob:` URL has `navigator.gpu` (a secure context: https, or
 * http on localhost) and opens an adapter and a device. Chrome offers an adapter on Windows,
 * macOS and ChromeOS (and Linux where its GPU list allows); headless Linux Chromium only with
 * `--enable-unsafe-webgpu`, and then SwiftShader's ("google swiftshader", a software adapter).
 * Firefox and Safari ship WebGPU behind their own switches: without an adapter the run is refused
 * in one line that names WebAssembly.
 *
 * Leaves out: choosing between backends (src/engine/backends/webgpu/adapter.ts) and Node.
 */

/// <reference types="@webgpu/types" />

import { describeAdapter } from '../../engine/backends/webgpu/adapter';
import type { OpenedGpu } from './platform';

/**
 * Opens the high-performance adapter of `navigator.gpu` and a device with the adapter's own limits
 * for buffer sizes and workgroup memory; or says in one line why there is none.
 */
export async function openWebGpu(): Promise<OpenedGpu> {
  const gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu)
    return {
      ok: false,
      reason:
        'This browser offers no WebGPU here (no navigator.gpu: Chrome 113+ on Windows, macOS or ChromeOS has it); ' +
        'use backend wasm or auto.',
    };
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null);
  if (!adapter)
    return {
      ok: false,
      reason:
        'This browser gave no WebGPU adapter (its GPU may be blocked, or WebGPU switched off); ' +
        'use backend wasm or auto.',
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
  return { ok: true, device, adapter: describeAdapter(adapter.info, 'WebGPU') };
}
