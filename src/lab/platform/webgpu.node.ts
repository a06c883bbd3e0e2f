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
 * On Linux, before Dawn loads, {@link missingVulkan} looks for the Vulkan loader and a driver as the
 * loader itself would: without either, Dawn prints its own warnings ("Couldn't load Vulkan", "Found
 * no drivers!") straight to the process's stderr from native code, where Node cannot catch or silence
 * them (no dup2 of fd 2 without a native addon, and a worker thread shares the fd); checking first
 * keeps our one-line refusal the only line.
 *
 * Leaves out: choosing between backends (src/engine/backends/webgpu/adapter.ts) and the browser.
 */

/// <reference types="@webgpu/types" />

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
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
  const noVulkan = instance === null && process.platform === 'linux' ? missingVulkan() : null;
  if (noVulkan !== null) return { ok: false, reason: noVulkan };
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

/** What {@link missingVulkan} reads of the machine (the tests give their own). */
export interface VulkanProbe {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** True when the file or folder exists. */
  exists(p: string): boolean;
  /** The names in a folder ([] when it cannot be read). */
  list(dir: string): readonly string[];
  /** The bytes of /etc/ld.so.cache as text ('' when absent), where the dynamic linker finds libraries. */
  ldCache(): string;
}

const NODE_PROBE: VulkanProbe = {
  env: process.env,
  exists: existsSync,
  list: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
  ldCache: () => {
    try {
      return readFileSync('/etc/ld.so.cache', 'latin1');
    } catch {
      return '';
    }
  },
};

/** Where distributions put libvulkan.so.1 when the linker cache lacks it (NixOS: /run/opengl-driver/lib). */
const LIB_DIRS = [
  '/lib',
  '/usr/lib',
  '/lib64',
  '/usr/lib64',
  '/usr/local/lib',
  '/lib/x86_64-linux-gnu',
  '/usr/lib/x86_64-linux-gnu',
  '/lib/aarch64-linux-gnu',
  '/usr/lib/aarch64-linux-gnu',
  '/run/opengl-driver/lib',
];

/** Splits a path list variable (':'-separated; empty entries dropped). */
const pathList = (v: string | undefined): string[] => (v ?? '').split(':').filter((p) => p.length > 0);

/**
 * Why Dawn would find no Vulkan driver on this Linux machine, in one line saying what to do, or null when
 * the Vulkan loader (libvulkan.so.1 on LD_LIBRARY_PATH, in the linker's cache or a system library folder)
 * and a driver manifest (the files VK_DRIVER_FILES / VK_ICD_FILENAMES name, else a .json in the loader's
 * icd.d folders, or one VK_ADD_DRIVER_FILES adds) are there. Reads only file names and the linker's cache.
 */
export function missingVulkan(probe: VulkanProbe = NODE_PROBE): string | null {
  const { env } = probe;
  const lib = 'libvulkan.so.1';
  const loader =
    [...pathList(env.LD_LIBRARY_PATH), ...LIB_DIRS].some((d) => probe.exists(path.join(d, lib))) ||
    probe.ldCache().includes(lib);
  if (!loader)
    return (
      'No WebGPU adapter: the Vulkan loader (libvulkan.so.1) is not installed, so Dawn finds no GPU driver; ' +
      "install your GPU's Vulkan driver (Debian/Ubuntu: libvulkan1 and mesa-vulkan-drivers), or use --backend wasm."
    );
  const named = env.VK_DRIVER_FILES ? 'VK_DRIVER_FILES' : env.VK_ICD_FILENAMES ? 'VK_ICD_FILENAMES' : null;
  const added = pathList(env.VK_ADD_DRIVER_FILES).some((f) => probe.exists(f));
  if (named !== null) {
    const files = pathList(env[named]);
    if (files.some((f) => probe.exists(f)) || added) return null;
    return (
      `No WebGPU adapter: ${named} names no Vulkan driver that exists here (${files.join(', ')}); ` +
      "point it at a driver's .json or unset it, or use --backend wasm."
    );
  }
  const home = env.HOME ?? os.homedir();
  const dirs = [
    ...(pathList(env.XDG_CONFIG_HOME).length ? pathList(env.XDG_CONFIG_HOME) : [path.join(home, '.config')]),
    ...(pathList(env.XDG_CONFIG_DIRS).length ? pathList(env.XDG_CONFIG_DIRS) : ['/etc/xdg']),
    '/etc',
    '/usr/local/etc',
    ...(pathList(env.XDG_DATA_HOME).length ? pathList(env.XDG_DATA_HOME) : [path.join(home, '.local/share')]),
    ...(pathList(env.XDG_DATA_DIRS).length ? pathList(env.XDG_DATA_DIRS) : ['/usr/local/share', '/usr/share']),
  ].map((d) => path.join(d, 'vulkan', 'icd.d'));
  if (added || dirs.some((d) => probe.list(d).some((n) => n.endsWith('.json')))) return null;
  return (
    'No WebGPU adapter: no Vulkan driver is installed (no .json in /usr/share/vulkan/icd.d or the other icd.d ' +
    "folders); install your GPU's Vulkan driver (Debian/Ubuntu: mesa-vulkan-drivers), or use --backend wasm."
  );
}
