// Every vitest worker turns on relaxed SIMD first, as the CLI and the workers do
// (src/lab/wasmFlags.ts), so the fused multiply-add build of the kernels is tested too.
import { enableWasmRelaxedSimd } from '../src/lab/wasmFlags';

enableWasmRelaxedSimd();
