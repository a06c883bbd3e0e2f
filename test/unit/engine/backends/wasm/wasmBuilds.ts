/**
 * The two builds of the kernel module every wasm test runs on: plain SIMD, and relaxed
 * SIMD with fused multiply-add (test/setupWasm.ts turns relaxed SIMD on, as the Node hosts
 * do; the build tests fail if it could not).
 */
export const WASM_BUILDS: readonly (readonly [label: string, fma: boolean])[] = [
  ['plain SIMD', false],
  ['relaxed SIMD (fused multiply-add)', true],
];
