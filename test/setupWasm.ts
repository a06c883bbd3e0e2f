// Every vitest worker turns on relaxed SIMD first, as the CLI and the workers do
// (src/lab/platform/wasmFlags.node.ts), so the fused multiply-add build of the kernels is tested too.
import { enableWasmRelaxedSimd } from '../src/lab/platform/wasmFlags.node';

enableWasmRelaxedSimd();
