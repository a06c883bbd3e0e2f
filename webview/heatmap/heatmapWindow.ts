/**
 * Which part of a heatmap is on screen: a zoom (CSS pixels per cell, the same on both axes)
 * and the map position at the top-left corner, in cells (fractional while panning). At "fit"
 * the whole map takes the room it is given — 1024 tokens in 640 px is 0.625 px a cell — and
 * zooming in shows fewer cells, larger, around a point that stays where it was. Pure, so the
 * unit tests pin every rule.
 *
 * Leaves out: drawing (heatmap.ts) and input handling (heatmapView.ts).
 */

/** The part of a rows × cols map on screen. */
export interface MapWindow {
  /** CSS pixels per cell. */
  readonly cell: number;
  /** Map row and column at the top-left corner of the view (fractional). */
  readonly t0: number;
  readonly s0: number;
}

/** The largest cell, in CSS pixels (zooming stops there). */
export const MAX_CELL_PX = 40;

/** The whole map in `maxPx` (its longer side), cells at most MAX_CELL_PX. */
export function fitWindow(rows: number, cols: number, maxPx: number): MapWindow {
  return { cell: Math.min(MAX_CELL_PX, maxPx / Math.max(rows, cols, 1)), t0: 0, s0: 0 };
}

/** The view's size in CSS pixels: the map at this zoom, clipped to `maxPx` a side. */
export function viewSize(rows: number, cols: number, w: MapWindow, maxPx: number): { width: number; height: number } {
  return { width: Math.min(maxPx, cols * w.cell), height: Math.min(maxPx, rows * w.cell) };
}

/** How many rows and columns the view holds (fractional). */
export function visibleCells(rows: number, cols: number, w: MapWindow, maxPx: number): { rows: number; cols: number } {
  const { width, height } = viewSize(rows, cols, w, maxPx);
  return { rows: height / w.cell, cols: width / w.cell };
}

/** `w` with its corner moved back inside the map (never past its last row or column). */
export function clampWindow(rows: number, cols: number, w: MapWindow, maxPx: number): MapWindow {
  const fit = fitWindow(rows, cols, maxPx);
  const cell = Math.min(MAX_CELL_PX, Math.max(fit.cell, w.cell));
  const v = visibleCells(rows, cols, { ...w, cell }, maxPx);
  const clamp = (x: number, hi: number): number => Math.min(Math.max(0, hi), Math.max(0, x));
  return { cell, t0: clamp(w.t0, rows - v.rows), s0: clamp(w.s0, cols - v.cols) };
}

/**
 * Zoomed by `factor` (> 1 in) around the map point (t, s), which stays under the same screen
 * point; never out past fit nor in past MAX_CELL_PX.
 */
export function zoomAt(
  rows: number,
  cols: number,
  w: MapWindow,
  factor: number,
  t: number,
  s: number,
  maxPx: number,
): MapWindow {
  const fit = fitWindow(rows, cols, maxPx);
  const cell = Math.min(MAX_CELL_PX, Math.max(fit.cell, w.cell * factor));
  // Screen offset of the anchor stays: (t − t0) · cell = (t − t0′) · cell′.
  return clampWindow(
    rows,
    cols,
    { cell, t0: t - ((t - w.t0) * w.cell) / cell, s0: s - ((s - w.s0) * w.cell) / cell },
    maxPx,
  );
}

/** Moved by (dt, ds) cells. */
export function panBy(rows: number, cols: number, w: MapWindow, dt: number, ds: number, maxPx: number): MapWindow {
  return clampWindow(rows, cols, { ...w, t0: w.t0 + dt, s0: w.s0 + ds }, maxPx);
}

/** The smallest move that brings cell (t, s) wholly into view. */
export function ensureVisible(
  rows: number,
  cols: number,
  w: MapWindow,
  t: number,
  s: number,
  maxPx: number,
): MapWindow {
  const v = visibleCells(rows, cols, w, maxPx);
  const into = (x: number, x0: number, n: number): number => (x < x0 ? x : x + 1 > x0 + n ? x + 1 - n : x0);
  return clampWindow(rows, cols, { ...w, t0: into(t, w.t0, v.rows), s0: into(s, w.s0, v.cols) }, maxPx);
}

/** The cell under view point (x, y) in CSS pixels, or null outside the map. */
export function cellAtPoint(
  rows: number,
  cols: number,
  w: MapWindow,
  x: number,
  y: number,
): { t: number; s: number } | null {
  const t = Math.floor(w.t0 + y / w.cell);
  const s = Math.floor(w.s0 + x / w.cell);
  return t >= 0 && t < rows && s >= 0 && s < cols && x >= 0 && y >= 0 ? { t, s } : null;
}

/** Whether the window shows the whole map. */
export function isFit(rows: number, cols: number, w: MapWindow, maxPx: number): boolean {
  return w.cell <= fitWindow(rows, cols, maxPx).cell + 1e-9;
}
