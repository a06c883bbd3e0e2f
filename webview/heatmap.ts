/**
 * Heatmaps on canvas: one cell per (query row, key column) of an attention map or a mask.
 * The cells are painted once at one pixel per cell into an ImageData through the theme's
 * 256-entry ramp (one table lookup per cell, so a 128×128 map costs ~16k lookups), then
 * scaled onto the visible canvas with nearest-neighbour sampling, so every screen pixel of a
 * cell has exactly the cell's colour (the browser tests read them back). Masked cells get the
 * theme's masked colour whatever their value: after the −∞ fill their probability is 0, and
 * the point of the view is to show *that they were masked*, not that they are small.
 *
 * Leaves out: axis labels, hover read-out and keyboard focus (heatmapView.ts).
 */

import type { RampScale } from './colorRamp';
import type { Theme } from './theme';

/** What to paint. */
export interface HeatmapData {
  readonly rows: number;
  readonly cols: number;
  /** Values; cell (t, s) is values[offset + t·cols + s]. */
  readonly values: ArrayLike<number>;
  readonly offset: number;
  /** [rows × cols], 1 = may attend; null = nothing masked. */
  readonly mask: Uint8Array | null;
  /** 'prob': values in [0, 1] on the ramp; 'mask': 1 = attend colour, 0 = masked colour. */
  readonly mode: 'prob' | 'mask';
  readonly scale: RampScale;
}

/** Paints the cells into `pixels` (rows × cols words, ImageData byte order). */
export function paintCells(pixels: Uint32Array, d: HeatmapData, theme: Theme): void {
  const { rows, cols, values, offset, mask } = d;
  const lut = theme.ramp;
  const maskedWord = theme.maskedWord;
  const n = rows * cols;
  if (d.mode === 'mask') {
    const on = lut[Math.round(0.72 * (lut.length - 1))] as number;
    for (let i = 0; i < n; i++) pixels[i] = (values[offset + i] as number) > 0 ? on : maskedWord;
    return;
  }
  // rampIndex inlined (this loop runs ~800k times for a 6 × 8 grid of 128 × 128 maps).
  const top = lut.length - 1;
  const sqrt = d.scale === 'sqrt';
  for (let i = 0; i < n; i++) {
    if (mask !== null && mask[i] === 0) {
      pixels[i] = maskedWord;
      continue;
    }
    let v = values[offset + i] as number;
    if (!(v > 0)) v = 0;
    else if (v > 1) v = 1;
    pixels[i] = lut[(top * (sqrt ? Math.sqrt(v) : v) + 0.5) | 0] as number;
  }
}

/**
 * The packed colour word of cell i (= t·cols + s) under the same rules as {@link paintCells}
 * (which inlines them for speed): for the SVG export, which writes each cell's colour.
 */
export function cellWord(d: HeatmapData, i: number, theme: Theme): number {
  const lut = theme.ramp;
  const top = lut.length - 1;
  const v = d.values[d.offset + i] as number;
  if (d.mode === 'mask') return v > 0 ? (lut[Math.round(0.72 * top)] as number) : theme.maskedWord;
  if (d.mask !== null && d.mask[i] === 0) return theme.maskedWord;
  const c = !(v > 0) ? 0 : v > 1 ? 1 : v;
  return lut[(top * (d.scale === 'sqrt' ? Math.sqrt(c) : c) + 0.5) | 0] as number;
}

/** A canvas that shows one heatmap at a given size, with an optional highlighted cell. */
export class HeatmapCanvas {
  readonly canvas: HTMLCanvasElement;
  private readonly source: HTMLCanvasElement;
  private data: HeatmapData | null = null;
  private img: ImageData | null = null;
  private cssW = 0;
  private cssH = 0;

  constructor(label: string) {
    this.canvas = document.createElement('canvas');
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', label);
    this.source = document.createElement('canvas');
  }

  /** Current data, if any. */
  get current(): HeatmapData | null {
    return this.data;
  }

  /**
   * Paints `d` at `cssW × cssH` CSS pixels (device pixels follow devicePixelRatio). `cursor`
   * outlines one cell. The canvas's data-rows / data-cols / data-cell-w / data-cell-h attributes
   * say where cells are, in canvas pixels.
   */
  draw(d: HeatmapData, theme: Theme, cssW: number, cssH: number, cursor: { t: number; s: number } | null = null): void {
    this.data = d;
    this.cssW = cssW;
    this.cssH = cssH;
    const dpr = Math.max(1, Math.round(window.devicePixelRatio || 1));
    const W = Math.max(1, Math.round(cssW * dpr));
    const H = Math.max(1, Math.round(cssH * dpr));
    const c = this.canvas;
    if (c.width !== W) c.width = W;
    if (c.height !== H) c.height = H;
    c.style.width = `${cssW}px`;
    c.style.height = `${cssH}px`;
    const ctx = c.getContext('2d');
    if (!ctx || d.rows === 0 || d.cols === 0) return;
    const src = this.source;
    if (src.width !== d.cols) src.width = d.cols;
    if (src.height !== d.rows) src.height = d.rows;
    const sctx = src.getContext('2d');
    if (!sctx) return;
    if (!this.img || this.img.width !== d.cols || this.img.height !== d.rows) this.img = sctx.createImageData(d.cols, d.rows);
    const img = this.img;
    paintCells(new Uint32Array(img.data.buffer), d, theme);
    sctx.putImageData(img, 0, 0);
    // Nearest-neighbour when enlarging (exact cell colours); smoothing only when shrinking.
    ctx.imageSmoothingEnabled = W < d.cols || H < d.rows;
    ctx.clearRect(0, 0, W, H);
    ctx.drawImage(src, 0, 0, W, H);
    c.dataset.rows = String(d.rows);
    c.dataset.cols = String(d.cols);
    c.dataset.cellW = String(W / d.cols);
    c.dataset.cellH = String(H / d.rows);
    if (cursor) {
      const cw = W / d.cols;
      const ch = H / d.rows;
      ctx.strokeStyle = theme.text;
      ctx.lineWidth = Math.max(1, dpr);
      ctx.strokeRect(cursor.s * cw + 0.5, cursor.t * ch + 0.5, Math.max(1, cw - 1), Math.max(1, ch - 1));
    }
  }

  /** Repaints with a new cursor (same data and size). */
  redraw(theme: Theme, cursor: { t: number; s: number } | null): void {
    if (this.data) this.draw(this.data, theme, this.cssW, this.cssH, cursor);
  }

  /** The cell under a pointer event, or null. */
  cellAt(e: MouseEvent): { t: number; s: number } | null {
    const d = this.data;
    if (!d) return null;
    const r = this.canvas.getBoundingClientRect();
    const s = Math.floor(((e.clientX - r.left) / r.width) * d.cols);
    const t = Math.floor(((e.clientY - r.top) / r.height) * d.rows);
    return t >= 0 && t < d.rows && s >= 0 && s < d.cols ? { t, s } : null;
  }
}
