/**
 * The Patching tab's arithmetic and parsing, free of the DOM (panels/patching.ts and
 * patchingViews.ts draw with them): path patching's receivers as the person types them, Pearson's r
 * of the estimate against full patching, the accumulated residual's layer labels, and the estimate's
 * maps before full patching's arrive.
 *
 * Leaves out: drawing, and the lab's own checks (lab/inference/patch.ts refuses what slips past).
 */

import type { AttributionOutputData } from '../../src/protocol/attribution';
import type { PatchMapData, PatchWhat } from '../../src/protocol/patching';

/**
 * Receiver heads typed as "L2H1 L2H3" (or "2.1, 2.3"; 1-based) → 0-based, or the one line that says
 * what is wrong with them for a model of `layers` × `heads`.
 */
export function parseReceivers(
  text: string,
  layers: number,
  heads: number,
): { layer: number; head: number }[] | string {
  const parts = text.split(/[\s,]+/).filter((p) => p !== '');
  if (parts.length === 0) return 'Type the receiver heads of path patching, e.g. L2H1 L2H2.';
  const out: { layer: number; head: number }[] = [];
  for (const p of parts) {
    const m = /^(?:[lL](\d+)[hH](\d+)|(\d+)\.(\d+))$/.exec(p);
    if (!m) return `Receivers are heads such as L2H1 (layer 2, head 1); "${p}" is not one.`;
    const layer = Number(m[1] ?? m[3]);
    const head = Number(m[2] ?? m[4]);
    if (layer < 1 || layer > layers || head < 1 || head > heads)
      return `No head ${p}: this model has layers 1 to ${layers} and heads 1 to ${heads}.`;
    out.push({ layer: layer - 1, head: head - 1 });
  }
  if (out.every((r) => r.layer === 0))
    return 'Every receiver is in layer 1, so no head sends to them; choose a later layer.';
  return out;
}

/** Pearson's correlation of two equally long series (null: fewer than two points, or one is constant). */
export function pearson(x: readonly number[], y: readonly number[]): number | null {
  const n = Math.min(x.length, y.length);
  if (n < 2) return null;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i] as number;
    my += y[i] as number;
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (x[i] as number) - mx;
    const dy = (y[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0 || !Number.isFinite(sxy)) return null;
  return sxy / Math.sqrt(sxx * syy);
}

/** The label of resid_pre ℓ (of `count`: layers + 1) in the accumulated residual: embeddings, after L1, …, final. */
export function residLabel(layer: number, count: number): string {
  return layer === count - 1 ? 'final' : layer === 0 ? 'embeddings' : `after L${layer}`;
}

/**
 * A decoder-only attribution patching answer's estimates as the maps full patching will draw for
 * `what` (its rows and columns: layers × positions "0 <bos>", layers × heads, heads × positions), so
 * the estimate shows while the full sweep still runs; null for an encoder-decoder's answer (its
 * maps' layout comes with full patching's). Path patching has no estimate.
 */
export function estimateMaps(a: AttributionOutputData, what: readonly PatchWhat[]): PatchMapData[] | null {
  if (a.what !== 'attribution' || a.encoder || a.cross) return null;
  const L = a.resid.length;
  const H = a.head[0]?.length ?? 0;
  const layers = Array.from({ length: L }, (_, l) => `L${l + 1}`);
  const heads = Array.from({ length: H }, (_, h) => `H${h + 1}`);
  const positions = a.tokens.map((t, i) => `${i} ${t}`);
  const map = (w: PatchWhat, rows: string[], cols: string[], est: number[]): PatchMapData => ({
    what: w,
    rows,
    cols,
    values: [],
    normalised: est,
  });
  const maps: PatchMapData[] = [];
  for (const w of what) {
    if (w === 'resid') maps.push(map(w, layers, positions, a.resid.flat()));
    else if (w === 'attn') maps.push(map(w, layers, positions, a.attnOut.flat()));
    else if (w === 'mlp') maps.push(map(w, layers, positions, a.mlpOut.flat()));
    else if (w === 'heads') maps.push(map(w, layers, heads, a.head.flat()));
    else if (w === 'heads-pos')
      maps.push(map(w, layers.flatMap((l) => heads.map((h) => `${l}${h}`)), positions, a.headPos.flat(2)));
  }
  return maps;
}
