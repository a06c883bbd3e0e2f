/**
 * Turns on WebAssembly relaxed SIMD in Node runtimes that ship it behind a flag, so the
 * wasm backend can use its fused multiply-add build (see
 * src/engine/backends/wasm/wasmModule.ts).
 *
 * Node 20's V8 (11.3) implements relaxed SIMD but enables it only with
 * `--experimental-wasm-relaxed-simd`; V8 11.4 and later (Node 22, the Electron of current
 * VS Code) have it on by default, and there this does nothing. V8 reads wasm feature flags
 * when it validates or compiles a module, so setting the flag at run time, before the first
 * kernel module is compiled, is enough. The flag is process-wide and only adds
 * instructions a module may use; nothing that already compiles changes meaning.
 *
 * Every Node entry point that may create a wasm backend (the CLI, the training and model
 * workers, the benchmark) calls this first. `ATTENTION_LAB_WASM_FMA=0` leaves the flag alone
 * (the plain SIMD build is then used), for comparing the two builds.
 *
 * Leaves out: browsers (Chromium, where VS Code for the web starts its workers, has relaxed SIMD
 * on by default).
 */

import { setFlagsFromString } from 'node:v8';
import { wasmFmaAvailable } from '../../engine/backends/wasm/wasmModule';

/** Makes relaxed SIMD available if this runtime has it behind a flag; returns whether it is available. */
export function enableWasmRelaxedSimd(): boolean {
  if (process.env.ATTENTION_LAB_WASM_FMA === '0') return false;
  if (wasmFmaAvailable()) return true;
  try {
    setFlagsFromString('--experimental-wasm-relaxed-simd');
  } catch {
    return false;
  }
  return wasmFmaAvailable();
}
