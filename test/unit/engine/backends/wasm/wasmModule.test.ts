import { describe, expect, it } from 'vitest';
import {
  compileKernels,
  CONSTANT_NAMES,
  decodeBase64,
  instantiateKernels,
  wasmFmaAvailable,
  wasmSimdThreadsAvailable,
} from '../../../../../src/engine/backends/wasm/wasmModule';
import { webAssembly } from '../../../../../src/engine/backends/wasm/webAssemblyApi';
import { Rng } from '../../../../../src/engine/rng';

describe('wasm kernel module', () => {
  it('decodes base64 exactly as Node does, for every length mod 3', () => {
    const rng = new Rng(1);
    for (const n of [0, 1, 2, 3, 4, 5, 255, 1000]) {
      const bytes = Uint8Array.from({ length: n }, () => rng.int(256));
      expect(Array.from(decodeBase64(Buffer.from(bytes).toString('base64')))).toEqual(Array.from(bytes));
    }
    expect(() => decodeBase64('ab*d')).toThrow(/invalid base64/);
  });

  it('detects SIMD and shared memory, and compiles and instantiates with every constant the wrappers read', () => {
    expect(wasmSimdThreadsAvailable()).toBe(true);
    const wa = webAssembly()!;
    const memory = new wa.Memory({ initial: 2, maximum: 16, shared: true });
    const { fns, consts } = instantiateKernels(compileKernels(false), memory);
    for (const name of CONSTANT_NAMES) expect(Number.isInteger(consts[name]), name).toBe(true);
    const ids = CONSTANT_NAMES.filter((n) => n.startsWith('K_')).map((n) => consts[n]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(fns.heapBase()).toBeGreaterThan(0);
    expect(fns.heapBase()).toBeLessThan(65536);
    expect(fns.matmulScratchBytes(64)).toBeGreaterThan(4 * 256 * 512);
  });

  it('has the relaxed-SIMD build where relaxed SIMD is on (test/setupWasm.ts turns it on, as the hosts do), with the same exports', () => {
    expect(wasmFmaAvailable()).toBe(true);
    const api = (globalThis as unknown as { WebAssembly: { Module: { exports(m: unknown): { name: string }[] } } })
      .WebAssembly;
    const names = (fma: boolean): string[] =>
      api.Module.exports(compileKernels(fma))
        .map((e) => e.name)
        .sort();
    const plain = names(false);
    const fma = names(true);
    expect(fma).toEqual(plain);
  });
});
