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

/** A receiver of path patching (protocol/patching.ts patchHead): 0-based, an encoder-decoder's with its attention. */
export interface Receiver {
  readonly layer: number;
  readonly head: number;
  readonly attention?: 'encoder' | 'self' | 'cross';
}

/**
 * Receiver heads typed as "L2H1 L2H3" (or "2.1, 2.3"; 1-based) → 0-based, or the one line that says
 * what is wrong with them for a model of `layers` × `heads`. An encoder-decoder (`encoderLayers`
 * given) also takes the attention as the CLI does: enc:L1H2, self:L2H1, cross:L2H1 (no prefix: self);
 * which receivers have senders before them is then the lab's to say.
 */
export function parseReceivers(
  text: string,
  layers: number,
  heads: number,
  encoderLayers: number | null = null,
): Receiver[] | string {
  const parts = text.split(/[\s,]+/).filter((p) => p !== '');
  const encdec = encoderLayers !== null;
  const example = encdec ? 'cross:L2H1 self:L2H2' : 'L2H1 L2H2';
  if (parts.length === 0) return `Type the receiver heads of path patching, e.g. ${example}.`;
  const out: Receiver[] = [];
  for (const p of parts) {
    const m = /^(?:(enc|self|cross):)?(?:[lL](\d+)[hH](\d+)|(\d+)\.(\d+))$/.exec(p);
    if (!m) return `Receivers are heads such as ${example.split(' ')[0]} (layer 2, head 1); "${p}" is not one.`;
    if (m[1] && !encdec) return `"${p}": enc:, self: and cross: name an encoder-decoder's attentions; type L2H1.`;
    const attention = m[1] === 'enc' ? 'encoder' : (m[1] as 'self' | 'cross' | undefined);
    const n = attention === 'encoder' ? (encoderLayers ?? 0) : layers;
    const layer = Number(m[2] ?? m[4]);
    const head = Number(m[3] ?? m[5]);
    const where = encdec ? `this model's ${attention === 'encoder' ? 'encoder' : 'decoder'}` : 'this model';
    if (layer < 1 || layer > n || head < 1 || head > heads)
      return `No head ${p}: ${where} has layers 1 to ${n} and heads 1 to ${heads}.`;
    out.push({ layer: layer - 1, head: head - 1, ...(attention ? { attention } : {}) });
  }
  if (!encdec && out.every((r) => r.layer === 0))
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
      maps.push(
        map(
          w,
          layers.flatMap((l) => heads.map((h) => `${l}${h}`)),
          positions,
          a.headPos.flat(2),
        ),
      );
  }
  return maps;
}
