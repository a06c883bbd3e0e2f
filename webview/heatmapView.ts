/**
 * A heatmap people can read: the canvas with tokens on both axes (padding tokens marked),
 * axis titles with their sizes, and a read-out of the cell under the pointer or the keyboard
 * cursor (arrow keys, Home/End, PageUp/PageDown), announced politely to screen readers.
 * Labels thin out when cells get too small to hold them.
 *
 * Leaves out: painting (heatmap.ts) and what the values mean (the panels' `describe`).
 */

import { h, replaceChildren } from './dom';
import { isPadToken, showToken } from './format';
import type { HeatmapData } from './heatmap';
import { HeatmapCanvas } from './heatmap';
import type { Theme } from './theme';

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

const MIN_LABEL_PX = 10;

/** A labelled, focusable heatmap. */
export class HeatmapView {
  readonly el: HTMLElement;
  readonly heat: HeatmapCanvas;
  private readonly colLabels = h('div', { className: 'hm-cols', attrs: { 'aria-hidden': 'true' } });
  private readonly rowLabels = h('div', { className: 'hm-rows', attrs: { 'aria-hidden': 'true' } });
  private readonly colTitle = h('div', { className: 'hm-col-title' });
  private readonly rowTitle = h('div', { className: 'hm-row-title' });
  private readonly readout = h('div', { className: 'hm-readout', attrs: { 'aria-live': 'polite' } });
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
      this.readout,
    );
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
    const every = Math.max(1, Math.ceil(MIN_LABEL_PX / cell));
    const spans = labels.map((tok, i) => {
      const text = i % every === 0 ? showToken(tok) : '';
      const span = h('span', { className: `hm-label${isPadToken(tok) ? ' pad' : ''}`, attrs: { title: `${i}: ${showToken(tok)}` } }, text);
      if (axis === 'col') {
        span.style.width = `${cell}px`;
        span.style.lineHeight = `${cell}px`;
      } else span.style.height = `${cell}px`;
      span.style.fontSize = `${Math.min(12, Math.max(8, cell - 2))}px`;
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
