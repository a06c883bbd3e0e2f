/**
 * The Node side of webview/wireCodec.ts: every Float32Array / Uint8Array in a message
 * replaced by {"$f32"|"$u8": base64 of its little-endian bytes}, which the dashboard's
 * `decodeArrays` revives before validating.
 *
 * Two users: the standalone report (JSON embedded in HTML) and the extension's posts to the
 * dashboard. VS Code hands a webview message's ArrayBuffers to the page as transferables;
 * when the workbench delivers a message more than once (a page that was reloading or not yet
 * ready), the later copy arrives with detached, empty arrays — seen as "0 values do not
 * fill shape" in the e2e run. Strings cannot be detached.
 *
 * Leaves out: decoding (the webview's job) and other typed arrays (the protocol has none).
 */

/** A copy of `value` with every Float32Array / Uint8Array in its tagged base64 form. */
export function encodeArraysForJson(value: unknown): unknown {
  if (value instanceof Float32Array || value instanceof Uint8Array) {
    const b64 = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
    return value instanceof Float32Array ? { $f32: b64 } : { $u8: b64 };
  }
  if (Array.isArray(value)) return value.map(encodeArraysForJson);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encodeArraysForJson(v)]));
  }
  return value;
}
