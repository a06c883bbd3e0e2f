/**
 * The slice of the WebAssembly JavaScript API this backend uses, typed here because
 * TypeScript declares `WebAssembly` only in lib.dom, which the engine does not load (it must
 * not use DOM APIs). Reached through `globalThis`, so nothing is declared globally and no
 * other lib's declarations can clash.
 *
 * Leaves out: streaming compilation and tables (unused).
 */

/** A compiled module (WebAssembly.Module); structured-cloneable to worker threads. */
export interface WasmModule {
  readonly [Symbol.toStringTag]: string;
}

/** A linear memory (WebAssembly.Memory). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  /** Grows by `deltaPages` 64 KiB pages; returns the previous size in pages. */
  grow(deltaPages: number): number;
}

/** An instantiated module. */
export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}

/** An exported global (WebAssembly.Global). */
export interface WasmGlobal {
  readonly value: unknown;
}

/** The WebAssembly namespace object. */
export interface WebAssemblyApi {
  readonly Module: new (bytes: Uint8Array) => WasmModule;
  readonly Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => WasmInstance;
  readonly Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
  readonly Global: abstract new (...args: never[]) => WasmGlobal;
  validate(bytes: Uint8Array): boolean;
}

/** The runtime's WebAssembly object, or null where there is none. */
export function webAssembly(): WebAssemblyApi | null {
  const wa = (globalThis as { WebAssembly?: unknown }).WebAssembly;
  return typeof wa === 'object' && wa !== null ? (wa as WebAssemblyApi) : null;
}
