/**
 * The heads of one stack as a grid of cells, one per (layer, head): each cell is a button
 * with the head's name, one sparkline band per score (sparkline.ts) and each score's value at
 * the selected step. Laid out layer × head, or ranked by the chosen score (highest first);
 * heads below the threshold can be hidden. One roving tab stop per grid: arrow keys move
 * between visible cells, Enter or a click opens the head (on a sparkline, at the step under
 * the pointer). Cells are kept while the grid's shape holds, so a live snapshot only repaints
 * canvases and rewrites text.
 *
 * Leaves out: the controls, the timeline and the hover tip (heads.ts).
 */

import { formatNumber } from '../../src/common/format';
import { h, replaceChildren } from '../base/dom';
import type { AttentionStack } from '../../src/protocol/model';
import { STACK_LABELS } from '../heatmap/attentionMath';
import type { ScoreName, StackSeries } from '../charts/headHistory';
import { SCORE_LABELS, STACK_SCORES } from '../charts/headHistory';
import type { SparkBand } from '../charts/sparkline';
import { drawSparklines, sparkRowAt } from '../charts/sparkline';
import type { Theme } from '../base/theme';

/** The gap between cells, in CSS pixels (dashboard.css's .heads-grid). */
const GAP_PX = 4;

/** Width of a cell's sparklines and height of one band, in CSS pixels. */
export const SPARK_W = 56;
export const BAND_H = 16;

/** What a grid draws. */
export interface GridView {
  readonly series: StackSeries;
  /** The selected row (step) of the history; −1 when none. */
  readonly row: number;
  readonly steps: readonly number[];
  /** y range of each score's bands. */
  readonly ranges: ReadonlyMap<ScoreName, { min: number; max: number }>;
  readonly colors: ReadonlyMap<ScoreName, string>;
  /** The score that ranks and filters, when it belongs to this stack. */
  readonly chosen: ScoreName | null;
  readonly threshold: number;
  readonly only: boolean;
  readonly ranked: boolean;
  /** A head for people: "head 5", or "head 5 · kv 3" under grouped-query attention (src/common/architecture.ts). */
  readonly headName: (head: number) => string;
}

interface Cell {
  readonly layer: number;
  readonly head: number;
  readonly button: HTMLButtonElement;
  readonly canvas: HTMLCanvasElement;
  readonly values: HTMLElement[];
  visible: boolean;
}

/** One stack's grid. */
export class HeadsGrid {
  readonly el: HTMLElement;
  private readonly title = h('h3', { className: 'heads-title' });
  private readonly grid = h('div', { className: 'heads-grid', attrs: { role: 'grid' } });
  /** Says so when the filter leaves no head. */
  private readonly none = h('p', { className: 'note heads-none' });
  private cells: Cell[] = [];
  /** Heads per layer of the last render. */
  private heads = 0;
  /** Visible cells in visual order (for the arrow keys). */
  private order: Cell[] = [];
  private shape = '';
  private focusIndex = 0;
  /** A head was opened: at `row` when the click was on a sparkline, else at the selected row. */
  onOpen: (layer: number, head: number, row: number | null) => void = () => undefined;
  /** The pointer is over a head's score at a row (null: left). */
  onHover: (hit: { layer: number; head: number; score: ScoreName; row: number; x: number; y: number } | null) => void =
    () => undefined;

  constructor(readonly stack: AttentionStack) {
    this.el = h(
      'section',
      { className: 'heads-stack', attrs: { 'data-stack': stack } },
      this.title,
      this.none,
      this.grid,
    );
    this.grid.setAttribute('aria-label', `${STACK_LABELS[stack]} heads`);
  }

  /** Draws `v`; returns how many heads are visible. */
  render(v: GridView, theme: Theme): number {
    const s = v.series;
    const scores = STACK_SCORES[this.stack];
    const names = Array.from({ length: s.heads }, (_, j) => v.headName(j));
    const key = `${s.layers}x${s.heads}|${names.join('|')}`;
    if (key !== this.shape) this.build(s.layers, s.heads, scores, names);
    this.title.textContent =
      `${STACK_LABELS[this.stack]} · ${s.layers} ` +
      `layer${s.layers === 1 ? '' : 's'} × ${s.heads} head${s.heads === 1 ? '' : 's'}`;
    this.grid.classList.toggle('ranked', v.ranked);
    this.grid.style.setProperty('--heads', String(s.heads));
    const step = v.steps[v.row];
    const ranked: { cell: Cell; value: number }[] = [];
    for (const cell of this.cells) {
      const bands: SparkBand[] = scores.map((score) => {
        const range = v.ranges.get(score) ?? { min: 0, max: 1 };
        return {
          values: s.column(score, cell.layer, cell.head),
          min: range.min,
          max: range.max,
          color: v.colors.get(score) ?? theme.text,
          threshold: score === v.chosen ? v.threshold : null,
        };
      });
      drawSparklines(cell.canvas, bands, v.row, theme, SPARK_W, BAND_H);
      cell.canvas.dataset.rows = String(v.steps.length);
      const parts: string[] = [];
      scores.forEach((score, k) => {
        const x = bands[k]?.values[v.row];
        const text = x === undefined || !Number.isFinite(x) ? '—' : formatNumber(x, 2);
        (cell.values[k] as HTMLElement).textContent = text;
        parts.push(
          `${SCORE_LABELS[score].full} ${x === undefined || !Number.isFinite(x) ? 'not measured' : formatNumber(x, 3)}`,
        );
      });
      const value = v.chosen ? (s.column(v.chosen, cell.layer, cell.head)[v.row] ?? NaN) : NaN;
      cell.visible = !(v.only && v.chosen !== null && !(value >= v.threshold));
      cell.button.classList.toggle('below', !cell.visible);
      cell.button.classList.toggle('above', v.chosen !== null && value >= v.threshold);
      cell.button.setAttribute(
        'aria-label',
        `${STACK_LABELS[this.stack]}, layer ${cell.layer + 1}, head ` +
          `${cell.head + 1}${step === undefined ? '' : `, step ${step}`}: ` +
          `${parts.join(', ')}. Enter opens its attention map.`,
      );
      ranked.push({ cell, value: Number.isFinite(value) ? value : -Infinity });
    }
    if (v.ranked && v.chosen !== null)
      ranked.sort((a, b) => b.value - a.value || a.cell.layer - b.cell.layer || a.cell.head - b.cell.head);
    ranked.forEach((r, i) => ((r.cell.button.parentElement as HTMLElement).style.order = String(i)));
    this.order = ranked.map((r) => r.cell).filter((c) => c.visible);
    this.none.hidden = this.order.length > 0;
    if (v.chosen !== null)
      this.none.textContent =
        `No head has ${SCORE_LABELS[v.chosen].full} ≥ ` +
        `${formatNumber(v.threshold)}` +
        `${step === undefined ? '' : ` at step ${step}`}; lower the threshold ` +
        `or show every head.`;
    this.focusIndex = Math.min(this.focusIndex, Math.max(0, this.order.length - 1));
    this.cells.forEach((c) => (c.button.tabIndex = -1));
    this.heads = s.heads;
    this.wrap();
    const stop = this.order[this.focusIndex];
    if (stop) stop.button.tabIndex = 0;
    return this.order.length;
  }

  private build(layers: number, heads: number, scores: readonly ScoreName[], names: readonly string[]): void {
    this.shape = `${layers}x${heads}|${names.join('|')}`;
    this.cells = [];
    this.focusIndex = 0;
    const gridcells: HTMLElement[] = [];
    for (let layer = 0; layer < layers; layer++) {
      for (let head = 0; head < heads; head++) {
        const canvas = h('canvas', { className: 'heads-spark', attrs: { 'aria-hidden': 'true' } });
        const values = scores.map(() => h('span', { className: 'heads-value' }));
        const rows = scores.flatMap((score, k) => [
          h(
            'span',
            { className: 'heads-score', attrs: { title: SCORE_LABELS[score].full } },
            SCORE_LABELS[score].short,
          ),
          values[k] as HTMLElement,
        ]);
        const body = h('span', { className: 'heads-body' }, canvas, ...rows);
        body.style.setProperty('--bands', String(scores.length));
        const button = h(
          'button',
          { className: 'heads-cell', attrs: { type: 'button', 'data-layer': layer, 'data-head': head } },
          h('span', { className: 'heads-name' }, `layer ${layer + 1} · ${names[head] ?? `head ${head + 1}`}`),
          body,
        );
        const cell: Cell = { layer, head, button, canvas, values, visible: true };
        button.addEventListener('click', (e) =>
          this.onOpen(layer, head, e.target === canvas ? this.rowAt(canvas, e) : null),
        );
        button.addEventListener('keydown', (e) => this.key(e, cell));
        button.addEventListener('focus', () => {
          const i = this.order.indexOf(cell);
          if (i >= 0) this.focusIndex = i;
        });
        canvas.addEventListener('pointermove', (e) => {
          const r = canvas.getBoundingClientRect();
          const band = Math.max(0, Math.min(scores.length - 1, Math.floor((e.clientY - r.top) / BAND_H)));
          this.onHover({
            layer,
            head,
            score: scores[band] as ScoreName,
            row: this.rowAt(canvas, e),
            x: e.clientX,
            y: e.clientY,
          });
        });
        canvas.addEventListener('pointerleave', () => this.onHover(null));
        this.cells.push(cell);
        gridcells.push(h('div', { className: 'heads-gridcell', attrs: { role: 'gridcell' } }, button));
      }
    }
    replaceChildren(this.grid, ...gridcells);
  }

  /** The history row under a pointer on a sparkline canvas. */
  /**
   * Wraps a layer's heads onto more rows when they do not fit the panel's width (each cell
   * names its layer and head), so a narrow panel never cuts the grid off: as many columns as
   * fit, at most one per head. Measures the cells: call it again once the grid is in the page.
   */
  wrap(): void {
    const heads = this.heads;
    const first = this.cells[0]?.button.parentElement;
    const avail = this.el.clientWidth;
    const cellW = first?.offsetWidth ?? 0;
    const cols =
      avail > 0 && cellW > 0 ? Math.max(1, Math.min(heads, Math.floor((avail + GAP_PX) / (cellW + GAP_PX)))) : heads;
    this.grid.style.setProperty('--cols', String(cols));
  }

  private rowAt(canvas: HTMLCanvasElement, e: MouseEvent): number {
    const r = canvas.getBoundingClientRect();
    return sparkRowAt(e.clientX - r.left, Number(canvas.dataset.rows ?? 0), r.width);
  }

  private key(e: KeyboardEvent, cell: Cell): void {
    const i = this.order.indexOf(cell);
    if (i < 0) return;
    const cols = Math.max(
      1,
      Number(this.grid.style.getPropertyValue('--cols')) || Number(this.grid.style.getPropertyValue('--heads')) || 1,
    );
    const to: Record<string, number> = {
      ArrowLeft: i - 1,
      ArrowRight: i + 1,
      ArrowUp: i - cols,
      ArrowDown: i + cols,
      Home: 0,
      End: this.order.length - 1,
    };
    const j = to[e.key];
    if (j === undefined) return;
    e.preventDefault();
    const next = this.order[Math.max(0, Math.min(this.order.length - 1, j))];
    if (!next) return;
    cell.button.tabIndex = -1;
    next.button.tabIndex = 0;
    next.button.focus();
  }
}
