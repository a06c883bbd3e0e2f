/** Naming adapters and keeping `auto` off software ones (pure: no GPU needed). */

import { describe, expect, it } from 'vitest';
import {
  autoChoice,
  autoPicksWebGpu,
  dawnApiFor,
  describeAdapter,
  isSoftwareAdapter,
} from '../../../../../src/engine/backends/webgpu/adapter';

const info = (vendor: string, architecture: string, description = '', device = '', isFallbackAdapter = false) => ({
  vendor,
  architecture,
  description,
  device,
  isFallbackAdapter,
});

describe('WebGPU adapters', () => {
  it('names an adapter by vendor, architecture and API', () => {
    // What Dawn reports for Chromium's SwiftShader on this machine.
    const swift = info('google', 'swiftshader', 'SwiftShader driver 5.0.0', 'swiftshader-device-subzero-', true);
    expect(describeAdapter(swift, 'Vulkan')).toEqual({
      name: 'google swiftshader · Vulkan (software)',
      software: true,
    });
    expect(describeAdapter(swift, 'WebGPU').name).toBe('google swiftshader · WebGPU (software)');
    expect(describeAdapter(info('apple', 'metal-3'), 'Metal').name).toBe('apple metal-3 · Metal');
    expect(describeAdapter(info('', '', 'NVIDIA H100 80GB HBM3'), 'Vulkan').name).toBe(
      'NVIDIA H100 80GB HBM3 · Vulkan',
    );
    expect(describeAdapter(info('', ''), 'WebGPU').name).toBe('unnamed adapter · WebGPU');
  });

  it('knows software adapters by flag or by name, and real GPUs as not', () => {
    expect(isSoftwareAdapter(info('google', 'swiftshader'))).toBe(true);
    expect(isSoftwareAdapter(info('mesa', '', 'llvmpipe (LLVM 15.0.6, 256 bits)'))).toBe(true);
    expect(isSoftwareAdapter(info('mesa', '', 'Lavapipe'))).toBe(true);
    expect(isSoftwareAdapter(info('microsoft', '', 'Microsoft Basic Render Driver'))).toBe(true);
    expect(isSoftwareAdapter(info('x', 'y', '', '', true))).toBe(true);
    expect(isSoftwareAdapter(info('nvidia', 'hopper', 'NVIDIA H100'))).toBe(false);
    expect(isSoftwareAdapter(info('apple', 'metal-3'))).toBe(false);
    expect(isSoftwareAdapter(info('intel', 'gen-12lp', 'Intel(R) Iris(R) Xe Graphics'))).toBe(false);
  });

  it('auto never picks a software adapter', () => {
    const gpuReal = describeAdapter(info('nvidia', 'hopper'), 'Vulkan');
    const soft = describeAdapter(info('google', 'swiftshader'), 'Vulkan');
    const llvm = describeAdapter(info('mesa', 'llvmpipe'), 'Vulkan');
    expect(autoPicksWebGpu(gpuReal)).toBe(true);
    expect(autoPicksWebGpu(soft)).toBe(false);
    expect(autoPicksWebGpu(llvm)).toBe(false);
    expect(autoPicksWebGpu(null)).toBe(false);
  });

  it('auto says what it chose and why', () => {
    const swift = describeAdapter(info('google', 'swiftshader', 'SwiftShader driver 5.0.0', '', true), 'Vulkan');
    expect(autoChoice(swift)).toEqual({
      webgpu: false,
      reason:
        'auto: google swiftshader · Vulkan (software) is a software adapter, slower than WebAssembly on the same cores',
    });
    const basic = describeAdapter(info('microsoft', '', 'Microsoft Basic Render Driver'), 'D3D12');
    expect(autoChoice(basic).webgpu).toBe(false);
    expect(autoChoice(describeAdapter(info('nvidia', 'hopper', 'NVIDIA H100'), 'Vulkan'))).toEqual({
      webgpu: true,
      reason: 'auto: nvidia hopper · Vulkan is a GPU',
    });
    expect(autoChoice(null, 'no WebGPU binding here')).toEqual({
      webgpu: false,
      reason: 'auto: no WebGPU binding here',
    });
  });

  it("names Dawn's API per platform", () => {
    expect(dawnApiFor('linux')).toBe('Vulkan');
    expect(dawnApiFor('darwin')).toBe('Metal');
    expect(dawnApiFor('win32')).toBe('D3D12');
  });
});
