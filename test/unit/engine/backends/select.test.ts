import { describe, expect, it } from 'vitest';
import { createBackend } from '../../../../src/engine/backends/select';
import { wasmSimdThreadsAvailable } from '../../../../src/engine/backends/wasm/wasmModule';

describe('createBackend', () => {
  it('picks the WebAssembly SIMD backend for auto where the runtime has it (Node 20 does)', () => {
    expect(wasmSimdThreadsAvailable()).toBe(true);
    expect(createBackend('auto').name).toBe('wasm');
    expect(createBackend('wasm').name).toBe('wasm');
  });

  it('gives the reference backend when asked for it by name', () => {
    const be = createBackend('reference');
    expect(be.name).toBe('reference');
    expect(be.alloc(3)).toBeInstanceOf(Float32Array);
  });

  it('returns backends whose kernels agree on a small product', () => {
    const results = (['auto', 'reference'] as const).map((kind) => {
      const be = createBackend(kind);
      const a = be.alloc(6);
      const b = be.alloc(6);
      a.set([1, 2, 3, 4, 5, 6]);
      b.set([1, 0, -1, 2, 0.5, 3]);
      const c = be.alloc(4);
      be.matmul(c, a, b, 2, 2, 3, false, true, false);
      return Array.from(c);
    });
    expect(results[0]).toEqual([-2, 12, -2, 28.5]); // A·Bᵀ by hand: [1·1 − 3, 2 + 1 + 9; 4 − 6, 8 + 2.5 + 18]
    expect(results[1]).toEqual(results[0]);
  });
});
