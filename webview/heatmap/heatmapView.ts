/**
 * A heatmap people can read, at any size: the canvas with tokens on both axes (padding tokens
 * marked), axis titles with their sizes, and a read-out of the cell under the pointer or the
 * keyboard cursor (arrow keys, Home/End, PageUp/PageDown), announced politely to screen
 * readers. A map too large to read whole (GPT-2's 1024 tokens) zooms and pans: the wheel
 * zooms around the pointer, dragging pans, + / − zoom around the cursor, 0 fits the whole map
 * again, and the cursor keys pan to keep the cursor in view (heatmapWindow.ts has the rules).
 * Only the rows and columns in view are labelled: every token while a cell is at least 7 px
 * (the font shrinks with the cell, 7–12 px, the same on both axes), else every n-th, and a
 * note says so; hovering a cell always reads its tokens. `svg()` writes the view as vector
 * SVG (svg.ts) with every token labelled, for the export menu.
 *
 * Leaves out: painting (heatmap.ts) and what the values mean (the panels' `describe`).
 */

import { h, replaceChildren } from '../base/dom';
import { isPadToken, showToken, tokenTitle } from '../base/format';
import type { HeatmapData } from './heatmap';
import { HeatmapCanvas, cellWord } from './heatmap';
import { rampIndex } from '../base/colorRamp';
import { svgStyle } from '../base/svg';
import { heatmapSvg } from './svgHeatmap';
import type { SvgDoc } from '../base/svg';
import type { Theme } from '../base/theme';
import { MIN_LABEL_PX, labelEvery, labelFontPx } from './heatmapLabels';
import type { MapWindow } from './heatmapWindow';
import { ensureVisible, fitWindow, isFit, panBy, clampWindow, viewSize, visibleCells, zoomAt } from './heatmapWindow';

/** What a view shows. */
export interface HeatmapContent {
  readonly data: HeatmapData;
  readonly rowLabels: readonly string[];
  readonly colLabels: readonly string[];
  /** e.g. "queries t (T = 12)". */
  readonly rowTitle: string;
  readonly colTitle: string;
  /** Read-out text of a cell. */
  describe(t: number, s: number): string;
}

/** Zoom per step of + / − (and per wheel notch of about 100 px). */
const ZOOM_STEP = 2;

/** A labelled, focusable heatmap that zooms and pans. */
export class HeatmapView {
  readonly el: HTMLElement;
  readonly heat: HeatmapCanvas;
  private readonly colLabels = h('div', { className: 'hm-cols', attrs: { 'aria-hidden': 'true' } });
  private readonly rowLabels = h('div', { className: 'hm-rows', attrs: { 'aria-hidden': 'true' } });
  private readonly colTitle = h('div', { className: 'hm-col-title' });
  private readonly rowTitle = h('div', { className: 'hm-row-title' });
  private readonly readout = h('div', { className: 'hm-readout', attrs: { 'aria-live': 'polite' } });
  private readonly labelNote = h('p', { className: 'note hm-label-note', attrs: { hidden: true } });
  private readonly zoomBar: HTMLElement;
  private readonly zoomLabel = h('span', { className: 'hm-zoom-label' });
  private content: HeatmapContent | null = null;
  private theme: Theme | null = null;
  private cursor: { t: number; s: number } | null = null;
  private win: MapWindow | null = null;
  private shapeKey = '';
  private readonly labelKeys = { row: '', col: '' };
  private drag: { x: number; y: number; win: MapWindow } | null = null;
  /** Called when a cell is chosen with Enter or a click. */
  onPick: ((t: number, s: number) => void) | null = null;

  constructor(
    label: string,
    private maxPx = 480,
  ) {
    this.heat = new HeatmapCanvas(label);
    const c = this.heat.canvas;
    c.tabIndex = 0;
    c.addEventListener('mousemove', (e) => {
      if (this.drag) this.dragTo(e);
      else this.hover(this.heat.cellAt(e));
    });
    c.addEventListener('mouseleave', () => this.hover(null));
    c.addEventListener('mousedown', (e) => {
      if (this.win && !this.fits()) this.drag = { x: e.clientX, y: e.clientY, win: this.win };
    });
    window.addEventListener('mouseup', () => (this.drag = null));
    c.addEventListener('click', (e) => {
      const cell = this.heat.cellAt(e);
      if (cell) {
        this.moveTo(cell);
        this.onPick?.(cell.t, cell.s);
      }
    });
    c.addEventListener('wheel', (e) => this.wheel(e), { passive: false });
    c.addEventListener('keydown', (e) => this.key(e));
    c.addEventListener('focus', () => {
      if (!this.cursor) this.moveTo({ t: 0, s: 0 });
    });
    const zoomButton = (text: string, title: string, act: () => void): HTMLElement =>
      h('button', { attrs: { type: 'button', title, 'aria-label': title }, on: { click: act } }, text);
    this.zoomBar = h(
      'div',
      { className: 'hm-zoom', attrs: { role: 'group', 'aria-label': 'Zoom' } },
      zoomButton('−', 'Zoom out (−)', () => this.zoomBy(1 / ZOOM_STEP)),
      zoomButton('+', 'Zoom in (+)', () => this.zoomBy(ZOOM_STEP)),
      zoomButton('Fit', 'Show the whole map (0)', () => this.fit()),
      this.zoomLabel,
    );
    this.el = h(
      'div',
      { className: 'hm-view' },
      this.zoomBar,
      // A 3 × 3 grid: [·, ·, column title] / [·, ·, column labels] / [row title, row labels, canvas].
      h(
        'div',
        { className: 'hm-grid' },
        h('div', {}),
        h('div', {}),
        this.colTitle,
        h('div', {}),
        h('div', {}),
        this.colLabels,
        this.rowTitle,
        this.rowLabels,
        c,
      ),
      this.labelNote,
      this.readout,
    );
  }

  /** The view as vector SVG: every cell a `<rect>`, every token labelled, a colour key. */
  svg(title: string): SvgDoc {
    const content = this.content;
    const theme = this.theme;
    if (!content || !theme) throw new Error('the heatmap has nothing to export yet');
    const d = content.data;
    const rgb = (c: readonly number[]): string => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
    const ramp = (v: number): number => theme.ramp[rampIndex(v, d.scale)] as number;
    const legend: [string, number][] =
      d.mode === 'mask'
        ? [
            ['1 — may attend', cellWord({ ...d, values: [1], offset: 0 }, 0, theme)],
            ['0 — masked', theme.maskedWord],
          ]
        : [
            ['p = 0', ramp(0)],
            ['0.25', ramp(0.25)],
            ['0.5', ramp(0.5)],
            ['0.75', ramp(0.75)],
            ['1', ramp(1)],
            ...(d.mask ? [['masked', theme.maskedWord] as [string, number]] : []),
          ];
    return heatmapSvg({
      title,
      rows: d.rows,
      cols: d.cols,
      cellWord: (i) => cellWord(d, i, theme),
      rowLabels: content.rowLabels.map(showToken),
      colLabels: content.colLabels.map(showToken),
      rowTitle: content.rowTitle,
      colTitle: content.colTitle,
      isPad: isPadToken,
      padColor: rgb(theme.masked),
      legend,
      style: svgStyle(theme),
    });
  }

  /**
   * Shows new content (keeps the cursor when it still fits, and the zoom and position when the
   * map has the same shape — another head of the same layer); `maxPx` bounds the view's longer side.
   */
  set(content: HeatmapContent, theme: Theme, maxPx: number = this.maxPx): void {
    this.maxPx = maxPx;
    this.content = content;
    this.theme = theme;
    const { rows, cols } = content.data;
    if (this.cursor && (this.cursor.t >= rows || this.cursor.s >= cols)) this.cursor = null;
    const key = `${rows}x${cols}`;
    this.win =
      this.win && key === this.shapeKey ? clampWindow(rows, cols, this.win, maxPx) : fitWindow(rows, cols, maxPx);
    this.shapeKey = key;
    this.colTitle.textContent = content.colTitle;
    this.rowTitle.textContent = content.rowTitle;
    this.paint();
    if (this.cursor) this.readout.textContent = content.describe(this.cursor.t, this.cursor.s);
    else
      this.readout.textContent =
        `Hover a cell, or focus the map and use the arrow keys, to read ` +
        `its value.${rows > 64 || cols > 64 ? ' Scroll or + / − to zoom, drag to pan, 0 to fit.' : ''}`;
  }

  /** Draws the window in view and labels its rows and columns. */
  private paint(): void {
    const content = this.content;
    const theme = this.theme;
    const win = this.win;
    if (!content || !theme || !win) return;
    const { rows, cols } = content.data;
    const { width, height } = viewSize(rows, cols, win, this.maxPx);
    this.heat.draw(content.data, theme, width, height, this.cursor, win);
    const fit = isFit(rows, cols, win, this.maxPx);
    this.zoomBar.hidden = fit && win.cell >= 7; // a map readable whole needs no zoom
    this.zoomLabel.textContent = fit
      ? 'whole map'
      : `${Math.round(visibleCells(rows, cols, win, this.maxPx).rows)} × ` +
        `${Math.round(visibleCells(rows, cols, win, this.maxPx).cols)} of ${rows} × ${cols}`;
    this.labels(this.colLabels, content.colLabels, win.cell, win.s0, width, 'col');
    this.labels(this.rowLabels, content.rowLabels, win.cell, win.t0, height, 'row');
    this.colLabels.style.width = `${width}px`;
    this.rowLabels.style.height = `${height}px`;
  }

  private fits(): boolean {
    const d = this.content?.data;
    return !d || !this.win || isFit(d.rows, d.cols, this.win, this.maxPx);
  }

  /** Labels the tokens in view along one axis: those from index `first` over `px` pixels. */
  private labels(
    box: HTMLElement,
    labels: readonly string[],
    cell: number,
    first: number,
    px: number,
    axis: 'row' | 'col',
  ): void {
    const every = labelEvery(cell);
    const from = Math.max(0, Math.floor(first / every) * every);
    const to = Math.min(labels.length, Math.ceil(first + px / cell));
    // Rebuilding the spans costs a layout; skip it when nothing in view changed (timeline scrubbing).
    const key = `${cell}\u0001${first}\u0001${px}\u0001${labels.slice(from, to).join('\u0000')}`;
    if (this.labelKeys[axis] === key) return;
    this.labelKeys[axis] = key;
    const font = labelFontPx(Math.max(cell * every, MIN_LABEL_PX));
    box.dataset.labelEvery = String(every);
    // Rows and columns share the cell size, so both axes agree on this note.
    this.labelNote.hidden = every === 1;
    this.labelNote.textContent =
      every === 1
        ? ''
        : `Every ${every === 2 ? 'other' : `${every}th`} token is labelled: the ` +
          `cells are too small for all. Zoom in to read them all, or hover a ` +
          `cell to read its tokens.`;
    const spans: HTMLElement[] = [];
    for (let i = from; i < to; i += every) {
      const tok = labels[i] ?? '';
      const span = h(
        'span',
        {
          className: `hm-label${isPadToken(tok) ? ' pad' : ''}`,
          attrs: { title: `${i}: ${tokenTitle(tok)}`, 'data-index': i },
        },
        showToken(tok),
      );
      // In flow, each over its `every` cells; the first one shifted by how far the view starts into it.
      const size = cell * every;
      const shift = i === from ? `${(from - first) * cell}px` : '';
      if (axis === 'col') {
        span.style.width = `${size}px`;
        span.style.lineHeight = `${size}px`;
        span.style.marginLeft = shift;
      } else {
        span.style.height = `${size}px`;
        span.style.marginTop = shift;
      }
      span.style.fontSize = `${font}px`;
      spans.push(span);
    }
    replaceChildren(box, ...spans);
  }

  private hover(cell: { t: number; s: number } | null): void {
    if (!this.content) return;
    if (cell) this.readout.textContent = this.content.describe(cell.t, cell.s);
    else if (this.cursor) this.readout.textContent = this.content.describe(this.cursor.t, this.cursor.s);
  }

  private moveTo(cell: { t: number; s: number }): void {
    if (!this.content || !this.theme || !this.win) return;
    this.cursor = cell;
    const { rows, cols } = this.content.data;
    const next = ensureVisible(rows, cols, this.win, cell.t, cell.s, this.maxPx);
    if (next.t0 !== this.win.t0 || next.s0 !== this.win.s0) {
      this.win = next;
      this.paint();
    } else this.heat.redraw(this.theme, cell);
    this.readout.textContent = this.content.describe(cell.t, cell.s);
  }

  /** Zooms by `factor` around map point (t, s) (default: the cursor, else the view's centre). */
  zoomBy(factor: number, at?: { t: number; s: number }): void {
    const d = this.content?.data;
    if (!d || !this.win) return;
    const v = visibleCells(d.rows, d.cols, this.win, this.maxPx);
    const anchor =
      at ??
      (this.cursor
        ? { t: this.cursor.t + 0.5, s: this.cursor.s + 0.5 }
        : { t: this.win.t0 + v.rows / 2, s: this.win.s0 + v.cols / 2 });
    this.win = zoomAt(d.rows, d.cols, this.win, factor, anchor.t, anchor.s, this.maxPx);
    this.paint();
  }

  /** Shows the whole map. */
  fit(): void {
    const d = this.content?.data;
    if (!d) return;
    this.win = fitWindow(d.rows, d.cols, this.maxPx);
    this.paint();
  }

  /** Moves the view by (dt, ds) cells. */
  panBy(dt: number, ds: number): void {
    const d = this.content?.data;
    if (!d || !this.win) return;
    this.win = panBy(d.rows, d.cols, this.win, dt, ds, this.maxPx);
    this.paint();
  }

  private wheel(e: WheelEvent): void {
    const d = this.content?.data;
    if (!d || !this.win) return;
    const factor = Math.exp(-e.deltaY * 0.0069); // ~2× per 100 px notch
    // At fit, zooming out has nothing to do: let the page scroll.
    if (factor < 1 && this.fits()) return;
    e.preventDefault();
    const r = this.heat.canvas.getBoundingClientRect();
    const x = ((e.clientX - r.left) / r.width) * r.width;
    const y = ((e.clientY - r.top) / r.height) * r.height;
    this.zoomBy(factor, { t: this.win.t0 + y / this.win.cell, s: this.win.s0 + x / this.win.cell });
  }

  private dragTo(e: MouseEvent): void {
    const d = this.content?.data;
    const start = this.drag;
    if (!d || !start) return;
    this.win = panBy(
      d.rows,
      d.cols,
      start.win,
      -(e.clientY - start.y) / start.win.cell,
      -(e.clientX - start.x) / start.win.cell,
      this.maxPx,
    );
    this.paint();
  }

  private key(e: KeyboardEvent): void {
    if (!this.content) return;
    if (e.key === '+' || e.key === '=' || e.key === '-' || e.key === '_' || e.key === '0') {
      e.preventDefault();
      if (e.key === '0') this.fit();
      else this.zoomBy(e.key === '+' || e.key === '=' ? ZOOM_STEP : 1 / ZOOM_STEP);
      return;
    }
    const { rows, cols } = this.content.data;
    const c = this.cursor ?? { t: 0, s: 0 };
    const moves: Record<string, { t: number; s: number }> = {
      ArrowUp: { t: c.t - 1, s: c.s },
      ArrowDown: { t: c.t + 1, s: c.s },
      ArrowLeft: { t: c.t, s: c.s - 1 },
      ArrowRight: { t: c.t, s: c.s + 1 },
      Home: { t: c.t, s: 0 },
      End: { t: c.t, s: cols - 1 },
      PageUp: { t: 0, s: c.s },
      PageDown: { t: rows - 1, s: c.s },
    };
    const next = moves[e.key];
    if (next) {
      e.preventDefault();
      this.moveTo({ t: Math.min(rows - 1, Math.max(0, next.t)), s: Math.min(cols - 1, Math.max(0, next.s)) });
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.onPick?.(c.t, c.s);
    }
  }
}
