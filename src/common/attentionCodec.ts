/**
 * How attention maps are kept small enough to compute, hold and send for a long text: the
 * attention of GPT-2 small on its full context is 12 layers × 12 heads × 1024² probabilities,
 * 600 MB as float32. Two reductions, both read back here so every side decodes them the same:
 *
 * - **8-bit square-root codes** (`sqrt8`): a probability p is stored as the byte
 *   q = round(255·√p), read back as p = (q/255)². A quarter of float32's size; the square root
 *   spends the codes where attention lives (small weights: 1/1024 is still q = 8, not 0) and
 *   the error is at most ~0.4 % of a weight near 1. Head scores are computed from the float32
 *   probabilities before coding, so they are exact.
 * - **Max-pooled overviews**: a map larger than {@link OVERVIEW_SIDE} on a side is also kept
 *   as blocks of `pool` × `pool` positions holding their largest weight, so a sharp pattern
 *   (a previous-token diagonal) stays visible in a thumbnail; the full map of a layer is
 *   fetched when it is looked at.
 *
 * A map's `data` is a Float32Array (probabilities: training snapshots) or a Uint8Array of
 * `sqrt8` codes; {@link probAt} reads either.
 *
 * Leaves out: where maps are computed (src/lab/inference/attend.ts) and drawn (webview/).
 */

/** Largest side of a map sent whole with a text's attention; longer maps go as overviews. */
export const OVERVIEW_SIDE = 256;

/** p of each 8-bit code: (q/255)². */
export const SQRT8_PROBS: Float32Array = Float32Array.from({ length: 256 }, (_, q) => (q / 255) ** 2);

/** The 8-bit code of a probability (clamped to [0, 1]). */
export function sqrt8(p: number): number {
  return p > 0 ? Math.round(255 * Math.sqrt(p < 1 ? p : 1)) : 0;
}

/**
 * Codes of float32 values by their bit pattern's top 17 bits (sign, exponent and 8 mantissa
 * bits: 0.4 % buckets), each bucket coded at its middle: a table look-up per value instead of a
 * square root, never more than one code from {@link sqrt8} and just as monotonic in p.
 */
const BUCKET_CODES: Uint8Array = (() => {
  const out = new Uint8Array(1 << 17);
  const bits = new Uint32Array(1);
  const f = new Float32Array(bits.buffer);
  for (let b = 0; b < out.length; b++) {
    bits[0] = ((b << 15) | 0x4000) >>> 0;
    const p = f[0] as number;
    out[b] = p === p ? sqrt8(p) : 0; // NaN: 0
  }
  return out;
})();

/** Codes of the probabilities `src` into `out` (same length). */
export function encodeSqrt8(src: Float32Array, out: Uint8Array): void {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < bits.length; i++) out[i] = BUCKET_CODES[(bits[i] as number) >>> 15] as number;
}

/** The probability at index i of map data: float32 as is, an 8-bit code decoded. */
export function probAt(data: Float32Array | Uint8Array, i: number): number {
  return data instanceof Uint8Array ? (SQRT8_PROBS[data[i] as number] as number) : (data[i] as number);
}

/** The whole of map data as probabilities (a copy for codes; float32 data itself). */
export function probsOf(data: Float32Array | Uint8Array): Float32Array {
  if (!(data instanceof Uint8Array)) return data;
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = SQRT8_PROBS[data[i] as number] as number;
  return out;
}

/** Block size that brings a rows × cols map within {@link OVERVIEW_SIDE} on each side (1: it fits). */
export function poolFactor(rows: number, cols: number): number {
  return Math.max(1, Math.ceil(Math.max(rows, cols) / OVERVIEW_SIDE));
}

/**
 * The max-pooled overview of `heads` maps [rows, cols] of 8-bit codes, as codes [heads,
 * ⌈rows/f⌉, ⌈cols/f⌉]: each cell the largest of its f × f block (the code is monotonic in p,
 * so that is the code of the block's largest weight).
 */
export function poolMax(codes: Uint8Array, heads: number, rows: number, cols: number, f: number): Uint8Array {
  const R = Math.ceil(rows / f);
  const C = Math.ceil(cols / f);
  const out = new Uint8Array(heads * R * C);
  for (let h = 0; h < heads; h++) {
    for (let t = 0; t < rows; t++) {
      const row = (h * rows + t) * cols;
      const o = (h * R + ((t / f) | 0)) * C;
      for (let s = 0; s < cols; s++) {
        const q = codes[row + s] as number;
        if (q > (out[o + ((s / f) | 0)] as number)) out[o + ((s / f) | 0)] = q;
      }
    }
  }
  return out;
}
