import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/browser/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    setupFiles: ['test/setupWasm.ts'],
    // SwiftShader's Vulkan driver for the WebGPU tests, found before the forks start.
    globalSetup: ['test/setupWebGpu.ts'],
  },
});
