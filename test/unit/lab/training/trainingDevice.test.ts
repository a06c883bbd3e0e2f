/**
 * Which device a run trains on (src/lab/training/trainingDevice.ts): `auto` trains on WebGPU only
 * on a real GPU and says why it chose either way; a software adapter it turns down is closed again;
 * `webgpu` by name uses even a software adapter, and is refused in one line where none opens. The
 * adapters are descriptions (no GPU needed); the devices are fakes that count their destroy().
 */

import { describe, expect, it } from 'vitest';
import { describeAdapter } from '../../../../src/engine/backends/webgpu/adapter';
import type { OpenedGpu } from '../../../../src/lab/platform/platform';
import { NO_WEBGPU_HERE, openTrainingDevice } from '../../../../src/lab/training/trainingDevice';

/** A fake opened device on an adapter described by (vendor, architecture, description, fallback). */
function fake(
  vendor: string,
  architecture: string,
  description: string,
  isFallbackAdapter = false,
): { open: () => Promise<OpenedGpu>; destroyed: () => number; opened: () => number } {
  let destroyed = 0;
  let opened = 0;
  const device = { destroy: () => void destroyed++ } as unknown as GPUDevice;
  const adapter = describeAdapter({ vendor, architecture, description, device: '', isFallbackAdapter }, 'Vulkan');
  return {
    open: async () => (opened++, { ok: true, device, adapter }),
    destroyed: () => destroyed,
    opened: () => opened,
  };
}

describe('the device a run trains on', () => {
  it('auto with a software adapter trains on WebAssembly, says why, and closes the device', async () => {
    const swift = fake('google', 'swiftshader', 'SwiftShader driver 5.0.0', true);
    const d = await openTrainingDevice('auto', swift.open);
    expect(d.gpu).toBeNull();
    expect(d.choice).toBe(
      'auto: google swiftshader · Vulkan (software) is a software adapter, slower than WebAssembly on the same cores',
    );
    expect(swift.destroyed()).toBe(1);
    const llvm = await openTrainingDevice('auto', fake('mesa', '', 'llvmpipe (LLVM 15.0.6, 256 bits)').open);
    expect(llvm.gpu).toBeNull();
    expect(llvm.choice).toMatch(/^auto: mesa · Vulkan \(software\) is a software adapter/);
  });

  it('auto with a real GPU trains on WebGPU and says so', async () => {
    const nvidia = fake('nvidia', 'hopper', 'NVIDIA H100 80GB HBM3');
    const d = await openTrainingDevice('auto', nvidia.open);
    expect(d.gpu?.adapter.name).toBe('nvidia hopper · Vulkan');
    expect(d.choice).toBe('auto: nvidia hopper · Vulkan is a GPU');
    expect(nvidia.destroyed()).toBe(0);
  });

  it('auto without an adapter, or without WebGPU at all, trains on WebAssembly and keeps the reason for the log', async () => {
    const reason = 'No WebGPU adapter: Dawn found no GPU driver (it needs libvulkan.so.1); use --backend wasm.';
    const none = await openTrainingDevice('auto', async () => ({ ok: false, reason }));
    expect(none).toEqual({
      gpu: null,
      choice: 'auto: no WebGPU adapter',
      detail: 'auto trains on WebAssembly: No WebGPU adapter: Dawn found no GPU driver (it needs libvulkan.so.1).',
    });
    expect(await openTrainingDevice('auto', undefined)).toEqual({
      gpu: null,
      choice: 'auto: no WebGPU where this runs',
      detail: null,
    });
  });

  it('webgpu by name uses a software adapter too; wasm and reference never open one', async () => {
    const swift = fake('google', 'swiftshader', '', true);
    const d = await openTrainingDevice('webgpu', swift.open);
    expect(d.gpu?.adapter.name).toBe('google swiftshader · Vulkan (software)');
    expect(d.choice).toBeNull();
    expect(swift.destroyed()).toBe(0);
    for (const kind of ['wasm', 'reference'] as const) {
      const spy = fake('nvidia', 'hopper', '');
      expect(await openTrainingDevice(kind, spy.open)).toEqual({ gpu: null, choice: null, detail: null });
      expect(spy.opened()).toBe(0);
    }
  });

  it('webgpu by name is refused in one line where none opens', async () => {
    await expect(openTrainingDevice('webgpu', undefined)).rejects.toThrow(NO_WEBGPU_HERE);
    await expect(openTrainingDevice('webgpu', async () => ({ ok: false, reason: 'No adapter here.' }))).rejects.toThrow(
      'No adapter here.',
    );
  });
});
