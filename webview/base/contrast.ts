/**
 * Contrast of colours on the page, as WCAG 2 defines it: relative luminance of linear-light
 * sRGB (0.2126 R + 0.7152 G + 0.0722 B) and the ratio (L1 + 0.05) / (L2 + 0.05), from 1 to 21.
 * Graphical objects such as a chart's lines need at least 3:1 against their background
 * (WCAG 2.1, 1.4.11 Non-text Contrast). {@link readable} makes a theme's chart colour one
 * that passes: opaque, and moved toward the foreground when the theme's own does not reach 3:1.
 *
 * Leaves out: reading the theme (theme.ts).
 */

import type { Rgba } from './colorRamp';
import { mix } from './colorRamp';

/** The smallest contrast a chart line gets against the background. */
export const MIN_CHART_CONTRAST = 3;

function channel(c: number): number {
  const x = c / 255;
  return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
}

/** WCAG relative luminance of an opaque colour, 0 (black) to 1 (white). */
export function luminance(c: Rgba): number {
  return 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
}

/** WCAG contrast ratio of two opaque colours, 1 to 21. */
export function contrastRatio(a: Rgba, b: Rgba): number {
  const la = luminance(a);
  const lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/**
 * `c` (opaque, readable) moved toward the background as far as it goes while keeping a
 * contrast of at least {@link MIN_CHART_CONTRAST} + `margin`: a quieter line of the same hue
 * (the raw training loss under its smoothed curve) that is still readable.
 */
export function quieter(c: Rgba, bg: Rgba, margin = 0.25): Rgba {
  const opaque = (x: Rgba): Rgba => [x[0], x[1], x[2], 255];
  let best = opaque(c);
  for (let t = 0.05; t < 1; t += 0.05) {
    const m = opaque(mix(opaque(c), opaque(bg), t));
    if (contrastRatio(m, bg) < MIN_CHART_CONTRAST + margin) break;
    best = m;
  }
  return best;
}

/**
 * A chart colour for `wanted` (a theme's, maybe translucent; null when the theme has none)
 * that is opaque and reaches {@link MIN_CHART_CONTRAST} against `bg`: the theme's hue at full
 * opacity when that passes, else `fallback` when that passes, else the theme's hue (or the
 * fallback) mixed toward `fg` in steps until it passes (`fg` itself always does in a usable theme).
 */
export function readable(wanted: Rgba | null, fallback: Rgba, bg: Rgba, fg: Rgba): Rgba {
  const opaque = (c: Rgba): Rgba => [c[0], c[1], c[2], 255];
  const candidates = [...(wanted ? [opaque(wanted)] : []), opaque(fallback)];
  for (const c of candidates) if (contrastRatio(c, bg) >= MIN_CHART_CONTRAST) return c;
  const base = candidates[0] as Rgba;
  for (let t = 0.1; t < 1; t += 0.1) {
    const c = opaque(mix(base, opaque(fg), t));
    if (contrastRatio(c, bg) >= MIN_CHART_CONTRAST) return c;
  }
  return opaque(fg);
}
