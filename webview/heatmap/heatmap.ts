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

import { SQRT8_PROBS } from '../../src/common/attentionCodec';
import type { RampScale } from '../base/colorRamp';
import type { MapWindow } from './heatmapWindow';
import { cellAtPoint } from './heatmapWindow';
import type { Theme } from '../base/theme';

/** What to paint. */
export interface HeatmapData {
  readonly rows: number;
  readonly cols: number;
  /**
   * Values; cell (t, s) is values[offset + t·cols + s]. In 'prob' mode a Uint8Array holds
   * 8-bit square-root codes of the probabilities (src/common/attentionCodec.ts).
   */
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
  if (values instanceof Uint8Array) {
    // 8-bit codes: one colour per code, looked up.
    const word = codeWords(lut, sqrt);
    for (let i = 0; i < n; i++)
      pixels[i] = mask !== null && mask[i] === 0 ? maskedWord : (word[values[offset + i] as number] as number);
    return;
  }
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

/** The colour word of each 8-bit code on the ramp `lut` (p = (q/255)²; on the √ scale the code is √p itself). */
function codeWords(lut: Uint32Array, sqrt: boolean): Uint32Array {
  const top = lut.length - 1;
  return Uint32Array.from(
    { length: 256 },
    (_, q) => lut[(top * (sqrt ? q / 255 : (SQRT8_PROBS[q] as number)) + 0.5) | 0] as number,
  );
}

/**
 * The packed colour word of cell i (= t·cols + s) under the same rules as {@link paintCells}
 * (which inlines them for speed): for the SVG export, which writes each cell's colour.
 */
export function cellWord(d: HeatmapData, i: number, theme: Theme): number {
  const lut = theme.ramp;
  const top = lut.length - 1;
  const raw = d.values[d.offset + i] as number;
  if (d.mode === 'mask') return raw > 0 ? (lut[Math.round(0.72 * top)] as number) : theme.maskedWord;
  const v = d.values instanceof Uint8Array ? (SQRT8_PROBS[raw] as number) : raw;
  if (d.mask !== null && d.mask[i] === 0) return theme.maskedWord;
  const c = !(v > 0) ? 0 : v > 1 ? 1 : v;
  return lut[(top * (d.scale === 'sqrt' ? Math.sqrt(c) : c) + 0.5) | 0] as number;
}

/** A canvas that shows one heatmap, or a window of it, at a given size, with an optional highlighted cell. */
export class HeatmapCanvas {
  readonly canvas: HTMLCanvasElement;
  private readonly source: HTMLCanvasElement;
  private data: HeatmapData | null = null;
  private img: ImageData | null = null;
  /** What the source canvas holds, so a pan or zoom only copies from it. */
  private painted: { readonly d: HeatmapData; readonly ramp: Uint32Array; readonly masked: number } | null = null;
  private cssW = 0;
  private cssH = 0;
  private win: MapWindow = { cell: 1, t0: 0, s0: 0 };

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

  /** The part of the map on screen (the whole map unless `draw` was given a window). */
  get window(): MapWindow {
    return this.win;
  }

  /**
   * Paints `d` at `cssW × cssH` CSS pixels (device pixels follow devicePixelRatio): the whole
   * map, or with `win` the part of it that window shows. The cells are painted at one pixel
   * each into an offscreen canvas once per map (and theme, and scale), so panning and zooming
   * only copy a rectangle of it. `cursor` outlines one cell. The canvas's data-rows /
   * data-cols / data-cell-w / data-cell-h / data-t0 / data-s0 attributes say where cells
   * are, in canvas pixels.
   */
  draw(
    d: HeatmapData,
    theme: Theme,
    cssW: number,
    cssH: number,
    cursor: { t: number; s: number } | null = null,
    win: MapWindow | null = null,
  ): void {
    this.data = d;
    this.cssW = cssW;
    this.cssH = cssH;
    this.win = win ?? { cell: cssW / Math.max(1, d.cols), t0: 0, s0: 0 };
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
    if (!this.paintSource(d, theme)) return;
    // Columns and rows of the map in view (the whole map without a window).
    const sw = win ? cssW / win.cell : d.cols;
    const sh = win ? cssH / win.cell : d.rows;
    const { t0, s0 } = this.win;
    // Nearest-neighbour when enlarging (exact cell colours); smoothing only when shrinking.
    ctx.imageSmoothingEnabled = W < sw || H < sh;
    ctx.clearRect(0, 0, W, H);
    ctx.drawImage(this.source, s0, t0, sw, sh, 0, 0, W, H);
    const cw = W / sw;
    const ch = H / sh;
    c.dataset.rows = String(d.rows);
    c.dataset.cols = String(d.cols);
    c.dataset.cellW = String(cw);
    c.dataset.cellH = String(ch);
    c.dataset.t0 = String(t0);
    c.dataset.s0 = String(s0);
    if (cursor) {
      ctx.strokeStyle = theme.text;
      ctx.lineWidth = Math.max(1, dpr);
      ctx.strokeRect((cursor.s - s0) * cw + 0.5, (cursor.t - t0) * ch + 0.5, Math.max(1, cw - 1), Math.max(1, ch - 1));
    }
  }

  /** Paints every cell of `d` into the offscreen canvas unless it already holds them. */
  private paintSource(d: HeatmapData, theme: Theme): boolean {
    const p = this.painted;
    if (p && p.ramp === theme.ramp && p.masked === theme.maskedWord && sameData(p.d, d)) return true;
    const src = this.source;
    if (src.width !== d.cols) src.width = d.cols;
    if (src.height !== d.rows) src.height = d.rows;
    const sctx = src.getContext('2d');
    if (!sctx) return false;
    if (!this.img || this.img.width !== d.cols || this.img.height !== d.rows)
      this.img = sctx.createImageData(d.cols, d.rows);
    const img = this.img;
    paintCells(new Uint32Array(img.data.buffer), d, theme);
    sctx.putImageData(img, 0, 0);
    this.painted = { d, ramp: theme.ramp, masked: theme.maskedWord };
    return true;
  }

  /** Repaints with a new cursor (same data, size and window). */
  redraw(theme: Theme, cursor: { t: number; s: number } | null): void {
    if (this.data) this.draw(this.data, theme, this.cssW, this.cssH, cursor, this.win);
  }

  /** The cell under a pointer event, or null. */
  cellAt(e: MouseEvent): { t: number; s: number } | null {
    const d = this.data;
    if (!d) return null;
    const r = this.canvas.getBoundingClientRect();
    return cellAtPoint(
      d.rows,
      d.cols,
      this.win,
      ((e.clientX - r.left) / r.width) * this.cssW,
      ((e.clientY - r.top) / r.height) * this.cssH,
    );
  }
}

/** Whether two maps paint the same cells (the same arrays, offsets, sizes, mask, mode and scale). */
function sameData(a: HeatmapData, b: HeatmapData): boolean {
  return (
    a.values === b.values &&
    a.offset === b.offset &&
    a.rows === b.rows &&
    a.cols === b.cols &&
    a.mask === b.mask &&
    a.mode === b.mode &&
    a.scale === b.scale
  );
}
