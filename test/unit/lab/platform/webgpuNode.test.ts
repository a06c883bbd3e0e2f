/**
 * Node's WebGPU opener without Dawn's binding (the universal .vsix ships none; an install without
 * optional dependencies has none): `--backend webgpu` gets one line naming the platform, the load
 * error and WebAssembly, never a crash.
 *
 * On Linux, the Vulkan loader and a driver are looked for before Dawn loads (Dawn's own warnings
 * go to stderr from native code): each way of missing one gets its own line.
 *
 * Leaves out: opening a real adapter (test/unit/engine/backends/webgpu/, test/unit/cli/webgpuTrain.test.ts).
 */

import { describe, expect, it } from 'vitest';
import type { VulkanProbe } from '../../../../src/lab/platform/webgpu.node';
import { bindingMissing, missingVulkan, openNodeGpu } from '../../../../src/lab/platform/webgpu.node';

/** A machine with `files` (paths; a folder's entries are the files under it) and `env`, without a linker cache. */
function machine(files: readonly string[], env: Record<string, string> = {}, ldCache = ''): VulkanProbe {
  return {
    env: { HOME: '/home/u', ...env },
    exists: (p) => files.some((f) => f === p || f.startsWith(`${p}/`)),
    list: (dir) => files.filter((f) => f.startsWith(`${dir}/`)).map((f) => f.slice(dir.length + 1)),
    ldCache: () => ldCache,
  };
}

describe('WebGPU in Node without the binding', () => {
  it('refuses in one line that names the platform and what trains instead', async () => {
    const r = await openNodeGpu(() =>
      Promise.reject(new Error("Cannot find package 'webgpu' imported from /ext/dist/worker.js\n    at stack")),
    );
    expect(r).toEqual({
      ok: false,
      reason:
        `No WebGPU binding for ${process.platform}-${process.arch} here (the optional package "webgpu" did not ` +
        "load: Cannot find package 'webgpu' imported from /ext/dist/worker.js); this package trains on " +
        'WebAssembly: use backend wasm or auto, or install the .vsix for your platform (or the CLI with ' +
        'optional dependencies) for WebGPU.',
    });
    expect(bindingMissing('gone', 'win32-arm64')).toMatch(/^No WebGPU binding for win32-arm64 here .*gone\)/);
    expect(r.ok ? '' : r.reason).not.toContain('\n');
  });
});

describe('looking for Vulkan before Dawn loads (Linux)', () => {
  const loader = '/usr/lib/x86_64-linux-gnu/libvulkan.so.1';
  const icd = '/usr/share/vulkan/icd.d/nvidia_icd.json';

  it('finds the loader on LD_LIBRARY_PATH, in a system folder or the linker cache, and a driver in icd.d', () => {
    expect(missingVulkan(machine([loader, icd]))).toBeNull();
    expect(missingVulkan(machine(['/opt/vk/libvulkan.so.1', icd], { LD_LIBRARY_PATH: '/opt/vk' }))).toBeNull();
    expect(missingVulkan(machine([icd], {}, '...libvulkan.so.1\0/usr/lib/libvulkan.so.1'))).toBeNull();
    expect(missingVulkan(machine([loader, '/etc/vulkan/icd.d/radeon_icd.x86_64.json']))).toBeNull();
    expect(missingVulkan(machine([loader, '/home/u/.local/share/vulkan/icd.d/mine.json']))).toBeNull();
    expect(
      missingVulkan(machine([loader, '/sw/icd.json'], { VK_ICD_FILENAMES: '/gone.json:/sw/icd.json' })),
    ).toBeNull();
  });

  it('without the loader: one line naming it and what to install', () => {
    const r = missingVulkan(machine([icd], { LD_LIBRARY_PATH: '/opt/none' }));
    expect(r).toBe(
      'No WebGPU adapter: the Vulkan loader (libvulkan.so.1) is not installed, so Dawn finds no GPU driver; ' +
        "install your GPU's Vulkan driver (Debian/Ubuntu: libvulkan1 and mesa-vulkan-drivers), or use --backend wasm.",
    );
  });

  it('without a driver: one line, naming the variable whose files do not exist', () => {
    expect(missingVulkan(machine([loader, icd], { VK_DRIVER_FILES: '/a.json:/b.json' }))).toBe(
      'No WebGPU adapter: VK_DRIVER_FILES names no Vulkan driver that exists here (/a.json, /b.json); ' +
        "point it at a driver's .json or unset it, or use --backend wasm.",
    );
    expect(missingVulkan(machine([loader, '/usr/share/vulkan/icd.d/README']))).toMatch(
      /^No WebGPU adapter: no Vulkan driver is installed \(no \.json in \/usr\/share\/vulkan\/icd\.d/,
    );
    expect(missingVulkan(machine([loader, '/x.json'], { VK_ADD_DRIVER_FILES: '/x.json' }))).toBeNull();
  });
});
