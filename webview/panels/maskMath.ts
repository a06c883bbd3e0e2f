/**
 * The mask view's bookkeeping: names of a mask's dimensions, which score dimensions it is
 * broadcast over, and the [rows × cols] slice it contributes to the scores of one batch item.
 *
 * Shapes follow docs/ARCHITECTURE.md, "Masks": padding [B,1,1,L] (L = S for the source, T for the target),
 * causal [1,1,T,T], combined decoder self-attention mask [B,1,T,T]; every mask broadcasts to
 * scores [B,H,T,S] (NumPy/PyTorch broadcasting: a size-1 dimension repeats along the other
 * operand's size). 1 = may attend.
 *
 * A sliding window (slidingWindow W > 0) is a band of the causal square: key s is seen from
 * query t when t − W < s ≤ t. With globalEvery n > 0 (Gemma 3) decoder layer i (0-based) is global,
 * the whole causal square, when (i + 1) % n == 0; the others use the band (engine config.ts `layerWindow`).
 *
 * Leaves out: drawing (panels/masks.ts).
 */

import type { MaskData } from '../../src/protocol/model';

/** Symbolic dimension names of a mask, by its name. */
export function maskDimNames(name: string): readonly [string, string, string, string] {
  if (name === 'source.padding') return ['B', '1', '1', 'S'];
  if (name === 'target.padding') return ['B', '1', '1', 'T'];
  if (name === 'decoder.causal' || name === 'decoder.window') return ['1', '1', 'T', 'T'];
  return ['B', '1', 'T', name === 'decoder.self' ? 'T' : 'S'];
}

/** Labels of a mask's dimensions with their sizes: "B=4", "1", "S=12". */
export function maskDimLabels(m: Pick<MaskData, 'name' | 'shape'>): string[] {
  const names = maskDimNames(m.name);
  return m.shape.map((size, i) => {
    const n = names[i] ?? '?';
    return n === '1' || size === 1 ? (n === '1' ? '1' : `${n}=1`) : `${n}=${size}`;
  });
}

/** A scores tensor a mask is applied to. */
export interface ScoresUse {
  /** e.g. "encoder self-attention". */
  readonly label: string;
  /** Symbolic names and sizes of [B, H, T, S] for that attention. */
  readonly dims: readonly { readonly name: string; readonly size: number }[];
}

/** Sizes the views need: batch, heads, target and source lengths (0 when absent). */
export interface Sizes {
  readonly B: number;
  readonly H: number;
  readonly T: number;
  readonly S: number;
}

/** The scores tensors a mask is applied to in the engine. */
export function scoresUses(name: string, z: Sizes): ScoresUse[] {
  const dims = (q: [string, number], k: [string, number]): ScoresUse['dims'] => [
    { name: 'B', size: z.B },
    { name: 'H', size: z.H },
    { name: q[0], size: q[1] },
    { name: k[0], size: k[1] },
  ];
  if (name === 'source.padding') {
    const uses: ScoresUse[] = [{ label: 'encoder self-attention scores', dims: dims(['S', z.S], ['S', z.S]) }];
    if (z.T > 0) uses.push({ label: 'cross-attention scores', dims: dims(['T', z.T], ['S', z.S]) });
    return uses;
  }
  return [{ label: 'decoder self-attention scores', dims: dims(['T', z.T], ['T', z.T]) }];
}

/**
 * How a mask of `shape` lines up with scores of `dims`: for each of the 4 dimensions, the
 * mask's size, the scores' size, and whether the mask is repeated along it (size 1 vs > 1).
 */
export function broadcastPlan(
  shape: readonly number[],
  dims: ScoresUse['dims'],
): { mask: number; scores: number; repeated: boolean }[] {
  return dims.map((d, i) => {
    const mask = shape[i] ?? 1;
    return { mask, scores: d.size, repeated: mask === 1 && d.size !== 1 };
  });
}

/**
 * The [rows × cols] mask that applies to the scores of batch item b (any head), for a mask
 * shaped [B or 1, 1, R or 1, cols]: a size-1 query dimension repeats over `rows`.
 */
export function broadcastSlice(m: MaskData, b: number, rows: number): Uint8Array {
  const [B = 1, , R = 1, C = 1] = m.shape;
  const bb = B === 1 ? 0 : Math.min(b, B - 1);
  const out = new Uint8Array(rows * C);
  for (let t = 0; t < rows; t++) {
    const src = (bb * R + (R === 1 ? 0 : Math.min(t, R - 1))) * C;
    out.set(m.data.subarray(src, src + C), t * C);
  }
  return out;
}

/** The padding ∧ causal combination [T × T] for batch item b (what decoder.self holds). */
export function combine(pad: MaskData, causal: MaskData, b: number): Uint8Array {
  const T = causal.shape[3] ?? 0;
  const p = broadcastSlice(pad, b, T);
  const c = broadcastSlice(causal, 0, T);
  const out = new Uint8Array(T * T);
  for (let i = 0; i < out.length; i++) out[i] = p[i] === 1 && c[i] === 1 ? 1 : 0;
  return out;
}

/** How many cells of a [rows × cols] mask are masked (0). */
export function maskedCount(mask: Uint8Array): number {
  let n = 0;
  for (const v of mask) if (v === 0) n++;
  return n;
}

/**
 * The sliding-window causal mask [T × T] (Mistral's window): query t may attend to key s when
 * s ≤ t and t − s < W, the last W positions with itself (src/engine's window rule). W 0 = causal.
 */
export function windowMask(T: number, W: number): Uint8Array {
  const out = new Uint8Array(T * T);
  for (let t = 0; t < T; t++) for (let s = 0; s <= t; s++) out[t * T + s] = W <= 0 || t - s < W ? 1 : 0;
  return out;
}

/**
 * Whether a square mask [B or 1, 1, T, T] already hides every key W or more positions back
 * (item 0): the engine then built the window into it, and the view shows it as a window.
 */
export function hidesBeyondWindow(m: Pick<MaskData, 'shape' | 'data'>, W: number): boolean {
  const T = m.shape[3] ?? 0;
  if (W <= 0 || m.shape[2] !== T || T <= W) return false;
  for (let t = W; t < T; t++) for (let s = 0; s <= t - W; s++) if (m.data[t * T + s] !== 0) return false;
  return true;
}

/** Whether cell (t, s) of a causal square is masked by the window W alone: behind the window, not ahead. */
export function outsideWindow(t: number, s: number, W: number): boolean {
  return W > 0 && s <= t && t - s >= W;
}

/**
 * The global decoder layers of a model whose window skips every globalEvery-th layer, numbered from 1 as people
 * count them ([6, 12, 18] for Gemma 3's 18 layers); empty without a window or without global layers.
 */
export function globalLayers(c: {
  readonly nDecoderLayers?: number;
  readonly slidingWindow?: number;
  readonly globalEvery?: number;
}): number[] {
  const n = c.globalEvery ?? 0;
  if (!c.slidingWindow || n <= 0) return [];
  const out: number[] = [];
  for (let i = n; i <= (c.nDecoderLayers ?? 0); i += n) out.push(i);
  return out;
}

/** What the Masks view says of the global layers: "Layers 6, 12 and 18 (every 6th) are global: …"; '' when none. */
export function globalLayersText(c: Parameters<typeof globalLayers>[0]): string {
  const g = globalLayers(c);
  if (g.length === 0) return '';
  const list = g.length === 1 ? `Layer ${g[0]}` : `Layers ${g.slice(0, -1).join(', ')} and ${g[g.length - 1]}`;
  const verb = g.length === 1 ? 'is' : 'are';
  return (
    `${list} (every ${c.globalEvery}${ordinalSuffix(c.globalEvery ?? 0)} of ${c.nDecoderLayers}) ${verb} global: ` +
    `${g.length === 1 ? 'it sees' : 'they see'} the whole causal context, without the window; the window's mask ` +
    "is the other layers'."
  );
}

function ordinalSuffix(n: number): string {
  const tens = n % 100;
  return tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
}
