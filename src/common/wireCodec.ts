/**
 * JSON transport of the protocol's typed arrays, both directions, for every side of the wire.
 * Messages carry `Float32Array` (attention maps) and `Uint8Array` (masks); structured clone
 * (VS Code ≥ 1.57 webviews, `postMessage`) keeps them, but JSON (the standalone report's
 * embedded data, test fixtures) does not. So an array travels as a tagged object holding the
 * base64 of its bytes:
 *
 *   Float32Array → { "$f32": "<base64 of the little-endian float32 bytes>" }
 *   Uint8Array   → { "$u8":  "<base64>" }
 *
 * Encoders: the standalone report (JSON embedded in HTML) and the extension's posts to the
 * dashboard. VS Code hands a webview message's ArrayBuffers to the page as transferables;
 * when the workbench delivers a message more than once (a page that was reloading or not yet
 * ready), the later copy arrives with detached, empty arrays — seen as "0 values do not fill
 * shape" in the e2e run. Strings cannot be detached, so the host posts the tagged form.
 *
 * `decodeArrays` (the dashboard) revives them (and leaves everything else, including arrays
 * that arrive already typed, untouched) before the protocol validators run. Little-endian is
 * assumed on both ends, as on every platform VS Code and Chromium run on.
 *
 * Part of the common layer (src/common/, test/unit/layers.test.ts), so the dashboard and the Node side
 * share this one codec: it uses only what a browser has, plus Node's `Buffer` when present.
 *
 * Leaves out: other typed arrays (the protocol has none) and validation of the decoded
 * message (src/protocol/ does that).
 */

/** Tagged form of a Float32Array. */
export interface EncodedF32 {
  readonly $f32: string;
}

/** Tagged form of a Uint8Array. */
export interface EncodedU8 {
  readonly $u8: string;
}

/** A decoding failure: a tag whose payload is not valid base64 of the right length. */
export class WireCodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireCodecError';
  }
}

const CHUNK = 0x8000;

/** The part of Node's `Buffer` the encoder uses; the webview has no `Buffer`. */
interface NodeBufferLike {
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): { toString(encoding: 'base64'): string };
}

/** Node's `Buffer` where there is one: on Node 20 it encodes a 32 MB report ~70× faster than `btoa`. */
const nodeBuffer = (globalThis as unknown as { readonly Buffer?: NodeBufferLike }).Buffer;

/** Base64 of raw bytes: Node's `Buffer` where there is one, else {@link bytesToBase64Btoa}. */
export function bytesToBase64(bytes: Uint8Array): string {
  return nodeBuffer
    ? nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
    : bytesToBase64Btoa(bytes);
}

/** Base64 of raw bytes with `btoa` (the browser's way; chunked so large arrays do not overflow the argument stack). */
export function bytesToBase64Btoa(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += CHUNK) bin += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(bin);
}

/** Raw bytes of a base64 string; throws WireCodecError when it is not base64. */
export function base64ToBytes(b64: string, where = 'value'): Uint8Array {
  let bin: string;
  try {
    bin = atob(b64);
  } catch {
    throw new WireCodecError(`${where}: expected base64 bytes, got ${JSON.stringify(b64.slice(0, 24))}`);
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A copy of `value` in which every Float32Array / Uint8Array is replaced by its tagged form. */
export function encodeArrays(value: unknown): unknown {
  if (value instanceof Float32Array)
    return { $f32: bytesToBase64(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)) };
  if (value instanceof Uint8Array) return { $u8: bytesToBase64(value) };
  if (Array.isArray(value)) return value.map(encodeArrays);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = encodeArrays(v);
    return out;
  }
  return value;
}

function isTag(o: object, key: '$f32' | '$u8'): boolean {
  const keys = Object.keys(o);
  return keys.length === 1 && keys[0] === key;
}

/**
 * Inverse of {@link encodeArrays}: revives tagged arrays anywhere in `value`. Containers are
 * copied only on the path to a tag; everything else (and arrays that arrive already typed) is
 * returned as is, so a 100k-step message with no tags costs a walk, not a copy.
 */
export function decodeArrays(value: unknown, where = 'message'): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      // Only objects can hold tags; the path string is built only for those.
      const d = typeof v === 'object' && v !== null ? decodeArrays(v, `${where}[${i}]`) : v;
      if (d !== v && out === null) out = value.slice(0, i);
      if (out !== null) out.push(d);
    }
    return out ?? value;
  }
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  const o = value as Record<string, unknown>;
  if (isTag(o, '$f32')) {
    if (typeof o.$f32 !== 'string') throw new WireCodecError(`${where}.$f32: expected a base64 string`);
    const bytes = base64ToBytes(o.$f32, `${where}.$f32`);
    if (bytes.length % 4 !== 0)
      throw new WireCodecError(`${where}.$f32: ${bytes.length} bytes is not a whole number of float32 values`);
    return new Float32Array(bytes.buffer, 0, bytes.length / 4);
  }
  if (isTag(o, '$u8')) {
    if (typeof o.$u8 !== 'string') throw new WireCodecError(`${where}.$u8: expected a base64 string`);
    return base64ToBytes(o.$u8, `${where}.$u8`);
  }
  let out: Record<string, unknown> | null = null;
  for (const k of Object.keys(o)) {
    const v = o[k];
    const d = typeof v === 'object' && v !== null ? decodeArrays(v, `${where}.${k}`) : v;
    if (d !== v) out ??= { ...o };
    if (out !== null) out[k] = d;
  }
  return out ?? o;
}
