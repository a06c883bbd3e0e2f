/**
 * Colour for heatmaps, built from the theme: a sequential ramp from the editor background
 * through the theme's chart accent to the foreground, so "more attention" always means "more
 * ink" against the page in light, dark and high-contrast themes alike. Colours are mixed in
 * linear light (sRGB decoded with the IEC 61966-2-1 transfer function), which keeps the ramp
 * from going muddy in the middle. The ramp is a 256-entry lookup table of packed RGBA words
 * in ImageData byte order, so drawing a 128×128 map is one table lookup per cell.
 *
 * Leaves out: reading the CSS variables (theme.ts) and the canvas (heatmap.ts).
 */

/** An sRGB colour with alpha, each in [0, 255]. */
export type Rgba = readonly [number, number, number, number];

/** Parses #rgb, #rgba, #rrggbb, #rrggbbaa, rgb() and rgba(); null for anything else. */
export function parseColor(text: string): Rgba | null {
  const s = text.trim().toLowerCase();
  const hex = /^#([0-9a-f]{3,8})$/.exec(s);
  if (hex) {
    const h = hex[1] as string;
    if (h.length === 3 || h.length === 4) {
      const v = [...h].map((c) => parseInt(c + c, 16));
      return [v[0] as number, v[1] as number, v[2] as number, h.length === 4 ? (v[3] as number) : 255];
    }
    if (h.length === 6 || h.length === 8) {
      const v = [0, 2, 4, 6].map((i) => parseInt(h.slice(i, i + 2) || 'ff', 16));
      return [v[0] as number, v[1] as number, v[2] as number, v[3] as number];
    }
    return null;
  }
  const fn = /^rgba?\(([^)]*)\)$/.exec(s);
  if (fn) {
    const parts = (fn[1] as string).split(/[\s,/]+/).filter((p) => p.length > 0);
    if (parts.length < 3) return null;
    const ch = parts.slice(0, 3).map((p) => (p.endsWith('%') ? (parseFloat(p) * 255) / 100 : parseFloat(p)));
    const a = parts[3] === undefined ? 1 : parts[3].endsWith('%') ? parseFloat(parts[3]) / 100 : parseFloat(parts[3]);
    if ([...ch, a].some((x) => !Number.isFinite(x))) return null;
    return [clamp255(ch[0] as number), clamp255(ch[1] as number), clamp255(ch[2] as number), clamp255(a * 255)];
  }
  return null;
}

function clamp255(x: number): number {
  return Math.min(255, Math.max(0, Math.round(x)));
}

function toLinear(c: number): number {
  const x = c / 255;
  return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
}

function toSrgb(x: number): number {
  const c = x <= 0.0031308 ? 12.92 * x : 1.055 * x ** (1 / 2.4) - 0.055;
  return clamp255(c * 255);
}

/** Mixes two colours at t ∈ [0, 1] in linear light (alpha mixed linearly). */
export function mix(a: Rgba, b: Rgba, t: number): Rgba {
  const m = (i: 0 | 1 | 2): number => toSrgb(toLinear(a[i]) * (1 - t) + toLinear(b[i]) * t);
  return [m(0), m(1), m(2), clamp255(a[3] * (1 - t) + b[3] * t)];
}

/** Composites `top` over an opaque `bottom` (premultiplied "over"), returning an opaque colour. */
export function over(top: Rgba, bottom: Rgba): Rgba {
  const a = top[3] / 255;
  return [
    clamp255(top[0] * a + bottom[0] * (1 - a)),
    clamp255(top[1] * a + bottom[1] * (1 - a)),
    clamp255(top[2] * a + bottom[2] * (1 - a)),
    255,
  ];
}

/** Packs a colour into one 32-bit word in ImageData byte order (R, G, B, A in memory, little-endian). */
export function pack(c: Rgba): number {
  return ((c[3] << 24) | (c[2] << 16) | (c[1] << 8) | c[0]) >>> 0;
}

/** Unpacks a word made by {@link pack}. */
export function unpack(w: number): Rgba {
  return [w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, (w >>> 24) & 0xff];
}

/** Number of entries of a ramp. */
export const RAMP_SIZE = 256;

/** How values map onto the ramp. */
export type RampScale = 'linear' | 'sqrt';

/**
 * A ramp through `stops` (evenly spaced), opaque, as packed words; entry i is the colour of
 * the value i / (RAMP_SIZE − 1).
 */
export function buildRamp(stops: readonly Rgba[]): Uint32Array {
  const lut = new Uint32Array(RAMP_SIZE);
  const segs = Math.max(1, stops.length - 1);
  for (let i = 0; i < RAMP_SIZE; i++) {
    const x = (i / (RAMP_SIZE - 1)) * segs;
    const k = Math.min(segs - 1, Math.floor(x));
    const a = stops[k] ?? stops[0] ?? [0, 0, 0, 255];
    const b = stops[k + 1] ?? a;
    const c = mix(a, b, x - k);
    lut[i] = pack([c[0], c[1], c[2], 255]);
  }
  return lut;
}

/** Index into a ramp of a value in [0, 1] (clamped; NaN → 0) under a scale. */
export function rampIndex(value: number, scale: RampScale = 'linear'): number {
  if (!(value > 0)) return 0;
  const v = scale === 'sqrt' ? Math.sqrt(Math.min(value, 1)) : Math.min(value, 1);
  return Math.round(v * (RAMP_SIZE - 1));
}
