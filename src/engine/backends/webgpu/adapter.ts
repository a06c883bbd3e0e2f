/**
 * Naming a WebGPU adapter and deciding whether `--backend auto` may train on it: pure
 * functions of what `GPUAdapter.info` reports, so they run (and are tested) without a GPU.
 *
 * `auto` picks WebGPU only for a real GPU. A software adapter — SwiftShader (Chromium's and
 * Dawn's CPU Vulkan), Mesa's llvmpipe/lavapipe/softpipe, Microsoft's WARP — runs shaders on
 * the same CPU cores the WebAssembly backend already uses, only slower; it is there for
 * correctness tests, and `--backend webgpu` still runs on it when asked by name.
 *
 * Leaves out: opening the device (the platform layer: src/lab/platform/webgpu.node.ts in
 * Node, `navigator.gpu` in the web worker) and the kernels (webgpuKernels.ts).
 */

/** The fields of `GPUAdapterInfo` this file reads (all strings may be empty, as browsers may hide them). */
export interface AdapterInfoLike {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  readonly description: string;
  /** True for an adapter the implementation itself calls a fallback (software) adapter. */
  readonly isFallbackAdapter?: boolean;
}

/** The graphics API under WebGPU: what Dawn uses on each platform, or 'WebGPU' in a browser. */
export type GpuApi = 'Vulkan' | 'Metal' | 'D3D12' | 'WebGPU';

/** An adapter, as the progress line, the dashboard header and Configure's review name it. */
export interface AdapterDescription {
  /** "google swiftshader · Vulkan (software)", "apple m2 · Metal", "nvidia … · Vulkan". */
  readonly name: string;
  /** True for a CPU (software) implementation: see {@link isSoftwareAdapter}. */
  readonly software: boolean;
}

const SOFTWARE = /swiftshader|llvmpipe|lavapipe|softpipe|microsoft basic render|\bwarp\b/i;

/** The API Dawn's Node binding uses on `platform` (a `process.platform` value). */
export function dawnApiFor(platform: string): GpuApi {
  if (platform === 'darwin') return 'Metal';
  if (platform === 'win32') return 'D3D12';
  return 'Vulkan';
}

/**
 * True when the adapter is a software rasterizer on the CPU: flagged as a fallback adapter, or
 * named like one (SwiftShader, llvmpipe, lavapipe, softpipe, WARP) in any of its fields.
 */
export function isSoftwareAdapter(info: AdapterInfoLike): boolean {
  if (info.isFallbackAdapter === true) return true;
  return [info.vendor, info.architecture, info.device, info.description].some((s) => SOFTWARE.test(s));
}

/**
 * The adapter's short name: vendor and architecture (else the description, else the device id),
 * then the API, and "(software)" after a software adapter: "google swiftshader · WebGPU (software)",
 * "apple metal-3 · Metal".
 */
export function describeAdapter(info: AdapterInfoLike, api: GpuApi): AdapterDescription {
  const vendorArch = [info.vendor, info.architecture].filter((s) => s.length > 0).join(' ');
  const base = vendorArch || info.description || info.device || 'unnamed adapter';
  const software = isSoftwareAdapter(info);
  return { name: `${base} · ${api}${software ? ' (software)' : ''}`, software };
}

/**
 * What `--backend auto` trains on, given the adapter (null: none): WebGPU for a real GPU, never
 * a software one; otherwise WebAssembly. Every operation of both kinds of model and of every
 * optimizer trains on WebGPU (test/unit/cli/webgpuTrain.test.ts), so the adapter alone decides.
 */
export function autoPicksWebGpu(adapter: AdapterDescription | null): boolean {
  return adapter !== null && !adapter.software;
}

/** What `auto` chose and why, in a few words for the progress line and the dashboard header. */
export interface AutoChoice {
  readonly webgpu: boolean;
  /** "auto: google swiftshader · Vulkan (software) is a software adapter", "auto: nvidia hopper · Vulkan is a GPU". */
  readonly reason: string;
}

/**
 * `auto`'s choice for `adapter` (null: none opened, `missing` says why in a few words): WebGPU on a
 * real GPU; WebAssembly on a software adapter (faster on the same cores) or without one.
 */
export function autoChoice(adapter: AdapterDescription | null, missing = 'no WebGPU adapter'): AutoChoice {
  if (autoPicksWebGpu(adapter)) return { webgpu: true, reason: `auto: ${adapter?.name} is a GPU` };
  if (adapter === null) return { webgpu: false, reason: `auto: ${missing}` };
  return {
    webgpu: false,
    reason: `auto: ${adapter.name} is a software adapter, slower than WebAssembly on the same cores`,
  };
}
