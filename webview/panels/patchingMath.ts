/**
 * The Patching tab's arithmetic and parsing, free of the DOM (panels/patching.ts and
 * patchingViews.ts draw with them): path patching's receivers as the person types them, Pearson's r
 * of the estimate against full patching, and the accumulated residual's layer labels.
 *
 * Leaves out: drawing, and the lab's own checks (lab/inference/patch.ts refuses what slips past).
 */

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
