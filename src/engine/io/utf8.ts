/**
 * Strict UTF-8 for the safetensors header, through the runtime's WHATWG Encoding API
 * (TextEncoder / TextDecoder, which Node, browsers and Deno all have). TypeScript declares
 * that API only in lib.dom and @types/node, neither of which the engine loads (see
 * src/engine/tsconfig.json), so the slice used here is typed locally and reached through
 * `globalThis`, as backends/wasm/webAssemblyApi.ts does for WebAssembly.
 *
 * Leaves out: the tokenizers' text, which is WTF-8 so that every JS string round-trips
 * (tokenizers/wtf8.ts), other encodings and streaming.
 */

/** The part of the Encoding API used here. */
interface EncodingApi {
  readonly TextEncoder: new () => { encode(text: string): Uint8Array };
  readonly TextDecoder: new (
    label: 'utf-8',
    options: { fatal: boolean; ignoreBOM: boolean },
  ) => { decode(bytes: Uint8Array): string };
}

/** The UTF-8 bytes of `text` (a lone surrogate becomes U+FFFD, as TextEncoder does). */
export function encodeUtf8(text: string): Uint8Array {
  return new (globalThis as unknown as EncodingApi).TextEncoder().encode(text);
}

/** `bytes` decoded as UTF-8; throws a TypeError on any ill-formed sequence, and keeps a BOM. */
export function decodeUtf8Strict(bytes: Uint8Array): string {
  return new (globalThis as unknown as EncodingApi).TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(
    bytes,
  );
}
