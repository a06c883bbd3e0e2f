/**
 * Node's WebGPU opener without Dawn's binding (the universal .vsix ships none; an install without
 * optional dependencies has none): `--backend webgpu` gets one line naming the platform, the load
 * error and WebAssembly, never a crash.
 *
 * Leaves out: opening a real adapter (test/unit/engine/backends/webgpu/, test/unit/cli/webgpuTrain.test.ts).
 */

import { describe, expect, it } from 'vitest';
import { bindingMissing, openNodeGpu } from '../../../../src/lab/platform/webgpu.node';

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
