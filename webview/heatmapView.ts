/**
 * A heatmap people can read: the canvas with tokens on both axes (padding tokens marked),
 * axis titles with their sizes, and a read-out of the cell under the pointer or the keyboard
 * cursor (arrow keys, Home/End, PageUp/PageDown), announced politely to screen readers.
 * Every token is labelled while a cell is at least 7 px (the label's font shrinks with the cell,
 * 7–12 px, the same on both axes); below that every n-th is, and a note under the map says so
 * and that hovering a label or a cell reads any token. `svg()` writes the view as vector SVG
 * (svg.ts) with every token labelled, for the export menu.
 *
 * Leaves out: painting (heatmap.ts) and what the values mean (the panels' `describe`).
 */

import { h, replaceChildren } from './dom';
import { isPadToken, showToken } from './format';
import type { HeatmapData } from './heatmap';
import { HeatmapCanvas, cellWord } from './heatmap';
import { rampIndex } from './colorRamp';
import { svgStyle } from './svg';
import { heatmapSvg } from './svgHeatmap';
import type { SvgDoc } from './svg';
import type { Theme } from './theme';
import { labelEvery, labelFontPx } from './heatmapLabels';

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


/** A labelled, focusable heatmap. */
export class HeatmapView {
  readonly el: HTMLElement;
  readonly heat: HeatmapCanvas;
  private readonly colLabels = h('div', { className: 'hm-cols', attrs: { 'aria-hidden': 'true' } });
  private readonly rowLabels = h('div', { className: 'hm-rows', attrs: { 'aria-hidden': 'true' } });
  private readonly colTitle = h('div', { className: 'hm-col-title' });
  private readonly rowTitle = h('div', { className: 'hm-row-title' });
  private readonly readout = h('div', { className: 'hm-readout', attrs: { 'aria-live': 'polite' } });
  private readonly labelNote = h('p', { className: 'note hm-label-note', attrs: { hidden: true } });
  private content: HeatmapContent | null = null;
  private theme: Theme | null = null;
  private cursor: { t: number; s: number } | null = null;
  private readonly labelKeys = { row: '', col: '' };
  /** Called when a cell is chosen with Enter or a click. */
  onPick: ((t: number, s: number) => void) | null = null;

  constructor(label: string, private maxPx = 480) {
    this.heat = new HeatmapCanvas(label);
    const c = this.heat.canvas;
    c.tabIndex = 0;
    c.addEventListener('mousemove', (e) => this.hover(this.heat.cellAt(e)));
    c.addEventListener('mouseleave', () => this.hover(null));
    c.addEventListener('click', (e) => {
      const cell = this.heat.cellAt(e);
      if (cell) {
        this.moveTo(cell);
        this.onPick?.(cell.t, cell.s);
      }
    });
    c.addEventListener('keydown', (e) => this.key(e));
    c.addEventListener('focus', () => {
      if (!this.cursor) this.moveTo({ t: 0, s: 0 });
    });
    this.el = h(
      'div',
      { className: 'hm-view' },
      // A 3 × 3 grid: [·, ·, column title] / [·, ·, column labels] / [row title, row labels, canvas].
      h('div', { className: 'hm-grid' }, h('div', {}), h('div', {}), this.colTitle, h('div', {}), h('div', {}), this.colLabels, this.rowTitle, this.rowLabels, c),
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
        ? [['1 — may attend', cellWord({ ...d, values: [1], offset: 0 }, 0, theme)], ['0 — masked', theme.maskedWord]]
        : [['p = 0', ramp(0)], ['0.25', ramp(0.25)], ['0.5', ramp(0.5)], ['0.75', ramp(0.75)], ['1', ramp(1)], ...(d.mask ? [['masked', theme.maskedWord] as [string, number]] : [])];
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

  /** Shows new content (keeps the cursor when it still fits); `maxPx` bounds the map's longer side. */
  set(content: HeatmapContent, theme: Theme, maxPx: number = this.maxPx): void {
    this.maxPx = maxPx;
    this.content = content;
    this.theme = theme;
    const { rows, cols } = content.data;
    if (this.cursor && (this.cursor.t >= rows || this.cursor.s >= cols)) this.cursor = null;
    const cell = Math.max(2, Math.min(40, Math.floor(this.maxPx / Math.max(rows, cols, 1))));
    const w = cell * cols;
    const hgt = cell * rows;
    this.heat.draw(content.data, theme, w, hgt, this.cursor);
    this.colTitle.textContent = content.colTitle;
    this.rowTitle.textContent = content.rowTitle;
    this.labels(this.colLabels, content.colLabels, cell, 'col');
    this.labels(this.rowLabels, content.rowLabels, cell, 'row');
    this.colLabels.style.width = `${w}px`;
    this.rowLabels.style.height = `${hgt}px`;
    if (this.cursor) this.readout.textContent = content.describe(this.cursor.t, this.cursor.s);
    else this.readout.textContent = 'Hover a cell, or focus the map and use the arrow keys, to read its value.';
  }

  private labels(box: HTMLElement, labels: readonly string[], cell: number, axis: 'row' | 'col'): void {
    // Rebuilding 2 × 128 spans costs a layout; skip it when nothing changed (timeline scrubbing).
    const key = `${cell}\u0001${labels.join('\u0000')}`;
    if (this.labelKeys[axis] === key) return;
    this.labelKeys[axis] = key;
    const every = labelEvery(cell);
    const font = labelFontPx(cell);
    box.dataset.labelEvery = String(every);
    // Rows and columns share the cell size, so both axes agree on this note.
    this.labelNote.hidden = every === 1;
    this.labelNote.textContent = every === 1 ? '' : `Every ${every === 2 ? 'other' : `${every}th`} token is labelled: the cells are too small for all. Hover a label or a cell, or use the arrow keys, to read any token.`;
    const spans = labels.map((tok, i) => {
      const text = i % every === 0 ? showToken(tok) : '';
      const span = h('span', { className: `hm-label${isPadToken(tok) ? ' pad' : ''}`, attrs: { title: `${i}: ${showToken(tok)}` } }, text);
      if (axis === 'col') {
        span.style.width = `${cell}px`;
        span.style.lineHeight = `${cell}px`;
      } else span.style.height = `${cell}px`;
      span.style.fontSize = `${font}px`;
      return span;
    });
    replaceChildren(box, ...spans);
  }

  private hover(cell: { t: number; s: number } | null): void {
    if (!this.content) return;
    if (cell) this.readout.textContent = this.content.describe(cell.t, cell.s);
    else if (this.cursor) this.readout.textContent = this.content.describe(this.cursor.t, this.cursor.s);
  }

  private moveTo(cell: { t: number; s: number }): void {
    if (!this.content || !this.theme) return;
    this.cursor = cell;
    this.heat.redraw(this.theme, cell);
    this.readout.textContent = this.content.describe(cell.t, cell.s);
  }

  private key(e: KeyboardEvent): void {
    if (!this.content) return;
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
