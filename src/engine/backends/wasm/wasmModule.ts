/**
 * Loading the kernel module: feature detection (SIMD, shared memory, atomics), decoding the
 * generated base64 bytes, compiling, and the typed view of the module's exports.
 *
 * Detection validates a tiny module that uses a SIMD instruction (as jax-js's feature probe
 * does) rather than trusting version strings, and creates a shared memory rather than
 * looking for the `SharedArrayBuffer` global: a page that is not cross-origin isolated has no
 * such global, yet Chromium still gives WebAssembly shared memory there (only sharing it with
 * another thread needs isolation), so the kernels run on one thread. A runtime without SIMD
 * or shared WebAssembly memory gets `null` and the caller falls back to the reference backend.
 *
 * The kernels come in two builds of the same sources: plain SIMD, and relaxed SIMD, whose
 * fused multiply-add halves the instructions of every matrix product. The relaxed build is
 * used where the runtime validates it (Chromium/Electron since V8 11.4; Node 20 only with
 * V8's --experimental-wasm-relaxed-simd, which the Node hosts turn on: src/lab/platform/wasmFlags.node.ts).
 *
 * Leaves out: the memory allocator (wasmHeap.ts) and the kernels' TypeScript wrappers.
 */

import { KERNELS_FMA_WASM_BASE64, KERNELS_WASM_BASE64 } from './kernelsWasm.generated';
import type { WasmMemory, WasmModule } from './webAssemblyApi';
import { webAssembly } from './webAssemblyApi';

/** The functions and constants the kernel module exports (see assembly/kernels.ts). */
export interface KernelExports {
  /**
   * Runs a kernel whose arguments are in the control block, in nChunks chunks, with the helpers (1) or alone (0); 0 if
   * a helper failed.
   */
  run(kernel: number, nChunks: number, helpers: number): number;
  setControl(control: number, tid: number): void;
  helperAttach(control: number, tid: number): number;
  helperLoop(seen: number): void;
  stopHelpers(control: number): void;
  heapBase(): number;
  matmulScratchBytes(K: number): number;
  attentionScratchBytes(T: number, S: number, D: number): number;
  sumSquaresChunks(n: number): number;
  sumF64(ptr: number, n: number): number;
}

/** Names of the exported integer constants (control-block layout and kernel ids). */
export const CONSTANT_NAMES = [
  'CTL_BYTES',
  'CTL_ARGS',
  'CTL_SCRATCH',
  'CTL_READY',
  'CTL_FAILED',
  'CTL_DONE',
  'MAX_ARGS',
  'MAX_THREADS',
  'K_MATMUL',
  'K_FILL',
  'K_SCALE',
  'K_ADD',
  'K_SUM_SQUARES',
  'K_ADD_BIAS',
  'K_BIAS_BACKWARD',
  'K_EMBEDDING_FORWARD',
  'K_EMBEDDING_BACKWARD',
  'K_POSITIONAL_FORWARD',
  'K_POSITIONAL_BACKWARD',
  'K_LAYERNORM_FORWARD',
  'K_LAYERNORM_BACKWARD_DX',
  'K_LAYERNORM_BACKWARD_DW',
  'K_RELU_FORWARD',
  'K_RELU_BACKWARD',
  'K_GELU_FORWARD',
  'K_GELU_BACKWARD',
  'K_GELU_TANH_FORWARD',
  'K_GELU_TANH_BACKWARD',
  'K_DROPOUT_FORWARD',
  'K_DROPOUT_BACKWARD',
  'K_DROPOUT_MASK',
  'K_SOFTMAX_FORWARD',
  'K_SOFTMAX_BACKWARD',
  'K_ATTENTION_FORWARD',
  'K_ATTENTION_BACKWARD',
  'K_CROSS_ENTROPY_FORWARD',
  'K_CROSS_ENTROPY_BACKWARD',
  'K_ADAM',
  'K_RMSNORM_FORWARD',
  'K_RMSNORM_BACKWARD_DX',
  'K_RMSNORM_BACKWARD_DW',
  'K_ROPE',
  'K_SILU_FORWARD',
  'K_SILU_BACKWARD',
  'K_RELU2_FORWARD',
  'K_RELU2_BACKWARD',
  'K_MUL',
  'K_SOFTCAP_FORWARD',
  'K_SOFTCAP_BACKWARD',
] as const;

/** The exported constants by name. */
export type KernelConstants = Record<(typeof CONSTANT_NAMES)[number], number>;

// (module (func (result v128) v128.const i32x4 0 0 0 0)): valid only where SIMD is supported.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 11,
]);

/**
 * True when this runtime has WebAssembly SIMD, shared WebAssembly memory and atomics (helper threads need more: see
 * parallel.ts).
 */
export function wasmSimdThreadsAvailable(): boolean {
  try {
    const wa = webAssembly();
    if (wa === null || typeof Atomics !== 'object') return false;
    if (!wa.validate(SIMD_PROBE)) return false;
    const probe = new wa.Memory({ initial: 1, maximum: 1, shared: true });
    return Object.prototype.toString.call(probe.buffer) === '[object SharedArrayBuffer]';
  } catch {
    return false;
  }
}

/** Decodes standard base64 (no Buffer/atob dependency, so the engine runs anywhere). */
export function decodeBase64(text: string): Uint8Array {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const lookup = new Int16Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) lookup[alphabet.charCodeAt(i)] = i;
  let len = text.length;
  while (len > 0 && text[len - 1] === '=') len--;
  const out = new Uint8Array(Math.floor((len * 3) / 4));
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (let i = 0; i < len; i++) {
    const v = lookup[text.charCodeAt(i)] ?? -1;
    if (v < 0) throw new Error(`invalid base64 character at ${i}`);
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

let fmaBytes: Uint8Array | null = null;
let fmaValid = false;

/**
 * True when this runtime accepts the relaxed-SIMD build, checked by validating it (a yes is
 * remembered; a no is checked again, since a host may turn the feature on later).
 */
export function wasmFmaAvailable(): boolean {
  if (!fmaValid) {
    const wa = webAssembly();
    fmaBytes ??= decodeBase64(KERNELS_FMA_WASM_BASE64);
    try {
      fmaValid = wa !== null && wa.validate(fmaBytes);
    } catch {
      fmaValid = false;
    }
  }
  return fmaValid;
}

/**
 * Compiles the kernel module, the fused multiply-add build if `fma` (synchronously: it is small, and Node allows it).
 */
export function compileKernels(fma: boolean): WasmModule {
  const bytes = fma ? (fmaBytes ??= decodeBase64(KERNELS_FMA_WASM_BASE64)) : decodeBase64(KERNELS_WASM_BASE64);
  return new (requireWasm().Module)(bytes);
}

function requireWasm(): NonNullable<ReturnType<typeof webAssembly>> {
  const wa = webAssembly();
  if (wa === null) throw new Error('WebAssembly is not available in this runtime');
  return wa;
}

/** Instantiates the module on `memory`; returns its functions and constants. */
export function instantiateKernels(
  module: WasmModule,
  memory: WasmMemory,
): { fns: KernelExports; consts: KernelConstants } {
  const wa = requireWasm();
  const instance = new wa.Instance(module, { env: { memory } });
  const ex = instance.exports as Record<string, unknown>;
  const consts = {} as Record<string, number>;
  for (const name of CONSTANT_NAMES) {
    const g = ex[name];
    if (!(g instanceof wa.Global))
      throw new Error(`kernel module lacks the constant ${name}; rebuild it with npm run build:wasm`);
    consts[name] = g.value as number;
  }
  if (typeof ex.run !== 'function') throw new Error('kernel module lacks run(); rebuild it with npm run build:wasm');
  return { fns: ex as unknown as KernelExports, consts: consts as KernelConstants };
}
