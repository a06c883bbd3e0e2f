/**
 * What the attention views compute from a snapshot: for a map ([heads, rows, cols] of one
 * layer), the mask the engine applied to it (for batch item b), which query rows are padding,
 * and each head's mean entropy.
 *
 * Masks follow docs/ARCHITECTURE.md, "Masks" (1 = may attend): encoder self- and cross-attention use the source
 * padding mask [B,1,1,S]; decoder self-attention uses the combined mask [B,1,T,T] when the
 * engine built one, else the causal mask [1,1,T,T] alone (the engine skips the combination
 * when the batch has no padding, so that is exactly what it used).
 *
 * Entropy of a row p (Shannon, in nats): H = −Σ_s p_s ln p_s; 0 for a head that looks at one
 * key, ln(n) for one spread evenly over n keys. Padding query rows are left out of the mean:
 * their outputs are never used.
 *
 * Leaves out: drawing (heatmap.ts) and the DOM.
 */

import { probsOf } from '../../src/common/attentionCodec';
import type { AttentionMapData, AttentionSnapshot, AttentionStack, MaskData } from '../../src/protocol/model';

/** How people read a stack's name (the attention tabs, the Heads view). */
export const STACK_LABELS: { readonly [S in AttentionStack]: string } = {
  'encoder.self': 'Encoder self-attention',
  'decoder.self': 'Decoder self-attention',
  'decoder.cross': 'Cross-attention',
};

/** Whether a stack's keys (columns) are source positions: encoder self- and cross-attention. */
export function keysAreSource(stack: AttentionStack): boolean {
  return stack !== 'decoder.self';
}

/** A mask by name, if the snapshot has it. */
export function findMask(s: AttentionSnapshot, name: string): MaskData | undefined {
  return s.masks.find((m) => m.name === name);
}

/** Batch size of the probe batch (from any mask's first dimension that is not broadcast). */
export function batchSize(s: AttentionSnapshot): number {
  let B = 1;
  for (const m of s.masks) if (m.shape.length === 4) B = Math.max(B, m.shape[0] as number);
  return B;
}

/** Row b of a padding mask [B,1,1,L] when it has `len` columns; null when absent or mismatched. */
function paddingRow(m: MaskData | undefined, b: number, len: number): Uint8Array | null {
  if (!m || m.shape.length !== 4 || m.shape[3] !== len || m.shape[2] !== 1) return null;
  const B = m.shape[0] as number;
  const bb = B === 1 ? 0 : b;
  if (bb >= B) return null;
  return m.data.subarray(bb * len, (bb + 1) * len);
}

/** The [T, T] square of batch item b of a mask shaped [B or 1, 1, T, T]; null when mismatched. */
function squareOf(m: MaskData | undefined, b: number, rows: number, cols: number): Uint8Array | null {
  if (!m || m.shape.length !== 4 || m.shape[2] !== rows || m.shape[3] !== cols) return null;
  const B = m.shape[0] as number;
  const bb = B === 1 ? 0 : b;
  if (bb >= B) return null;
  return m.data.subarray(bb * rows * cols, (bb + 1) * rows * cols);
}

/** Which mask names a map's scores were masked with (for labels). */
export function maskNamesFor(map: Pick<AttentionMapData, 'stack'>, s: AttentionSnapshot): string[] {
  if (keysAreSource(map.stack)) return findMask(s, 'source.padding') ? ['source.padding'] : [];
  return findMask(s, 'decoder.self') ? ['decoder.self'] : findMask(s, 'decoder.causal') ? ['decoder.causal'] : [];
}

/**
 * The mask applied to `map` for batch item b, as [rows × cols] with 1 = may attend, or null
 * when the snapshot has no matching mask (then nothing is marked).
 */
export function maskForMap(
  s: AttentionSnapshot,
  map: Pick<AttentionMapData, 'stack' | 'shape'>,
  b = 0,
): Uint8Array | null {
  const rows = map.shape[1];
  const cols = map.shape[2];
  const out = new Uint8Array(rows * cols);
  if (keysAreSource(map.stack)) {
    const pad = paddingRow(findMask(s, 'source.padding'), b, cols);
    if (!pad) return null;
    for (let t = 0; t < rows; t++) out.set(pad, t * cols);
    return out;
  }
  const sq =
    squareOf(findMask(s, 'decoder.self'), b, rows, cols) ?? squareOf(findMask(s, 'decoder.causal'), b, rows, cols);
  if (!sq) return null;
  out.set(sq);
  return out;
}

/** For each query row of `map`: true when that query is a padding token (batch item b). */
export function paddedRows(s: AttentionSnapshot, map: Pick<AttentionMapData, 'stack' | 'shape'>, b = 0): boolean[] {
  const rows = map.shape[1];
  const pad =
    map.stack === 'encoder.self'
      ? paddingRow(findMask(s, 'source.padding'), b, rows)
      : paddingRow(findMask(s, 'target.padding'), b, rows);
  return Array.from({ length: rows }, (_, t) => (pad ? pad[t] === 0 : false));
}

/** Shannon entropy (nats) of one row of probabilities. */
export function rowEntropy(p: ArrayLike<number>, start: number, n: number): number {
  let h = 0;
  for (let i = 0; i < n; i++) {
    const v = p[start + i] as number;
    if (v > 0) h -= v * Math.log(v);
  }
  return h;
}

/**
 * Mean row entropy of each head of `map`, skipping the rows flagged in `skipRows` (8-bit
 * codes are read back as probabilities; the exact values are the head scores').
 */
export function headEntropies(
  map: Pick<AttentionMapData, 'shape' | 'data'>,
  skipRows: readonly boolean[] = [],
): number[] {
  const [H, R, C] = map.shape;
  const p = probsOf(map.data);
  const out: number[] = [];
  for (let h = 0; h < H; h++) {
    let sum = 0;
    let n = 0;
    for (let t = 0; t < R; t++) {
      if (skipRows[t] === true) continue;
      sum += rowEntropy(p, (h * R + t) * C, C);
      n++;
    }
    out.push(n > 0 ? sum / n : 0);
  }
  return out;
}

/**
 * The token strings of a map's query rows and key columns; for an overview (`pool` > 1), each
 * block's first token followed by "…" (its positions are `blockRange`).
 */
export function axisTokens(
  s: AttentionSnapshot,
  map: Pick<AttentionMapData, 'stack' | 'shape' | 'pool'>,
): { rows: string[]; cols: string[] } {
  const f = map.pool ?? 1;
  const pick = (tokens: readonly string[], n: number): string[] =>
    Array.from({ length: n }, (_, i) => (f === 1 ? (tokens[i] ?? `#${i}`) : `${tokens[i * f] ?? `#${i * f}`}…`));
  const rowsFrom = map.stack === 'encoder.self' ? s.srcTokens : s.tgtTokens;
  const colsFrom = keysAreSource(map.stack) ? s.srcTokens : s.tgtTokens;
  return { rows: pick(rowsFrom, map.shape[1]), cols: pick(colsFrom, map.shape[2]) };
}

/** The maps of one stack (the attention view tabs over them), ordered by layer. */
export function mapsOf(s: AttentionSnapshot, stack: AttentionStack): AttentionMapData[] {
  return s.maps.filter((m) => m.stack === stack).sort((a, b) => a.layer - b.layer);
}

/** Positions [first, last] of block i of an overview pooled by `pool` over `n` positions. */
export function blockRange(i: number, pool: number, n: number): [number, number] {
  return [i * pool, Math.min(n, (i + 1) * pool) - 1];
}
