/** The part of a heatmap in view (webview/heatmap/heatmapWindow.ts): fit, zoom around a point, pan, follow the cursor. */
import { describe, expect, it } from 'vitest';
import {
  MAX_CELL_PX,
  cellAtPoint,
  clampWindow,
  ensureVisible,
  fitWindow,
  isFit,
  panBy,
  viewSize,
  visibleCells,
  zoomAt,
} from '../../../../webview/heatmap/heatmapWindow';

const N = 1024;
const PX = 640;

describe('heatmap window', () => {
  it('fits the whole map in the room given, cells below a pixel if need be, never above MAX_CELL_PX', () => {
    const w = fitWindow(N, N, PX);
    expect(w).toEqual({ cell: PX / N, t0: 0, s0: 0 });
    expect(viewSize(N, N, w, PX)).toEqual({ width: PX, height: PX });
    expect(fitWindow(5, 5, PX).cell).toBe(MAX_CELL_PX);
    expect(viewSize(5, 3, fitWindow(5, 3, PX), PX)).toEqual({ width: 3 * MAX_CELL_PX, height: 5 * MAX_CELL_PX });
    expect(isFit(N, N, w, PX)).toBe(true);
  });

  it('zooms around a point that stays under the same screen pixel, between fit and MAX_CELL_PX', () => {
    const fit = fitWindow(N, N, PX);
    const z = zoomAt(N, N, fit, 8, 300, 700, PX);
    expect(z.cell).toBeCloseTo(8 * fit.cell, 9);
    // The anchor (300, 700) was at screen (700·0.625, 300·0.625) and is still there.
    expect((300 - z.t0) * z.cell).toBeCloseTo(300 * fit.cell, 6);
    expect((700 - z.s0) * z.cell).toBeCloseTo(700 * fit.cell, 6);
    expect(zoomAt(N, N, fit, 0.5, 10, 10, PX)).toEqual(fit);
    expect(zoomAt(N, N, fit, 1e6, 10, 10, PX).cell).toBe(MAX_CELL_PX);
    expect(isFit(N, N, z, PX)).toBe(false);
  });

  it('pans within the map, and follows a cursor out of view with the smallest move', () => {
    const z = zoomAt(N, N, fitWindow(N, N, PX), 16, 0, 0, PX); // 10 px cells: 64 × 64 in view
    expect(visibleCells(N, N, z, PX)).toEqual({ rows: 64, cols: 64 });
    expect(panBy(N, N, z, -5, -5, PX)).toMatchObject({ t0: 0, s0: 0 });
    expect(panBy(N, N, z, 5000, 100, PX)).toMatchObject({ t0: N - 64, s0: 100 });
    const moved = ensureVisible(N, N, z, 70, 3, PX);
    expect(moved).toMatchObject({ t0: 7, s0: 0 }); // row 70 just in view at the bottom
    expect(ensureVisible(N, N, moved, 10, 3, PX)).toEqual(moved); // already in view: no move
    expect(clampWindow(N, N, { cell: 0.01, t0: -3, s0: 2000 }, PX)).toEqual(fitWindow(N, N, PX));
  });

  it('reads the cell under a point of the view', () => {
    const z = { cell: 10, t0: 100.5, s0: 20 };
    expect(cellAtPoint(N, N, z, 0, 0)).toEqual({ t: 100, s: 20 });
    expect(cellAtPoint(N, N, z, 15, 6)).toEqual({ t: 101, s: 21 });
    expect(cellAtPoint(N, N, fitWindow(N, N, PX), PX - 0.1, PX - 0.1)).toEqual({ t: N - 1, s: N - 1 });
    expect(cellAtPoint(N, N, z, -1, 0)).toBeNull();
  });
});
