/**
 * The layer × head grid of small attention heatmaps. Each grid cell holds a button with the
 * head's map and its mean entropy; one roving tab stop, arrow
 * keys move the selection, Home/End jump along a layer. The cells are kept between renders
 * when the grid's shape does not change, so scrubbing the timeline only repaints canvases, and
 * painting is spread over animation frames. `data-pending` on the grid counts cells not yet
 * repainted (0 when the grid is up to date).
 *
 * A head's name comes from the caller: under grouped-query attention it names the head's
 * key/value head too ("head 5 · kv 3", src/common/architecture.ts).
 *
 * Leaves out: the large view and the timeline (attention.ts).
 */

import type { AttentionMapData } from '../../src/protocol/model';
import type { RampScale } from '../base/colorRamp';
import { h, replaceChildren } from '../base/dom';
import { formatNumber } from '../../src/common/format';
import { HeatmapCanvas, cellWord } from '../heatmap/heatmap';
import { svgStyle } from '../base/svg';
import { heatmapGridSvg } from '../heatmap/svgHeatmap';
import type { SvgDoc } from '../base/svg';
import type { Theme } from '../base/theme';

/** One map of the grid with what the cell shows. */
export interface GridMap {
  readonly map: AttentionMapData;
  readonly mask: Uint8Array | null;
  /** Mean entropy per head; computed on first use (cached by the caller), so slices stay short. */
  entropies(): readonly number[];
}

interface Cell {
  /** The grid cell (carries aria-selected); the button inside takes focus and clicks. */
  readonly gridcell: HTMLElement;
  readonly button: HTMLButtonElement;
  readonly heat: HeatmapCanvas;
  readonly caption: HTMLElement;
}

/** The grid. */
export class AttentionGrid {
  readonly el = h('div', { className: 'attn-grid', attrs: { role: 'grid', 'aria-label': 'Attention heads by layer' } });
  private cells: Cell[][] = [];
  private shapeKey = '';
  private layers = 0;
  private heads = 0;
  private generation = 0;
  /** What the last render drew (for the export). */
  private last: {
    maps: readonly GridMap[];
    theme: Theme;
    scale: RampScale;
    stackLabel: string;
    names: readonly string[];
  } | null = null;
  /** Called when the user selects a cell. */
  onSelect: (layer: number, head: number) => void = () => undefined;

  /**
   * Draws `maps` (one per layer); `selected` is highlighted and is the tab stop. The selected
   * layer is painted at once; the others in slices of about 8 ms per animation frame, so a
   * large grid (6 × 8 maps of 128 × 128) never blocks input for long. A newer render cancels
   * the rest of an older one.
   */
  render(
    maps: readonly GridMap[],
    theme: Theme,
    scale: RampScale,
    selected: { layer: number; head: number },
    thumb: number,
    stackLabel: string,
    headName: (head: number) => string = (j) => `head ${j + 1}`,
  ): void {
    const heads = maps[0]?.map.shape[0] ?? 0;
    const names = Array.from({ length: heads }, (_, j) => headName(j));
    this.last = { maps, theme, scale, stackLabel, names };
    const key = `${maps.length}x${heads}|${stackLabel}|${names.join('|')}`;
    if (key !== this.shapeKey) this.build(maps.length, heads, stackLabel, names);
    const generation = ++this.generation;
    const jobs: [number, number][] = [];
    const order = [selected.layer, ...maps.map((_, l) => l).filter((l) => l !== selected.layer)];
    for (const layer of order)
      for (let head = 0; head < (maps[layer]?.map.shape[0] ?? 0); head++) jobs.push([layer, head]);
    const sizeOf = (g: GridMap): [number, number] => {
      const [, R, C] = g.map.shape;
      const aspect = C / Math.max(1, R);
      return [
        aspect >= 1 ? thumb : Math.max(8, Math.round(thumb * aspect)),
        aspect >= 1 ? Math.max(8, Math.round(thumb / aspect)) : thumb,
      ];
    };
    // Every cell takes its size at once: one not painted yet must not lay out as a default 300 × 150 canvas.
    maps.forEach((g, layer) =>
      this.cells[layer]?.forEach((cell) => {
        const [w, hgt] = sizeOf(g);
        cell.heat.canvas.style.width = `${w}px`;
        cell.heat.canvas.style.height = `${hgt}px`;
      }),
    );
    const paint = (layer: number, head: number): void => {
      const g = maps[layer];
      const cell = this.cells[layer]?.[head];
      if (!g || !cell) return;
      const [, R, C] = g.map.shape;
      const [w, hgt] = sizeOf(g);
      cell.heat.draw(
        { rows: R, cols: C, values: g.map.data, offset: head * R * C, mask: g.mask, mode: 'prob', scale },
        theme,
        w,
        hgt,
      );
      const ent = g.entropies()[head] ?? 0;
      cell.caption.textContent = `${ent.toFixed(2)} nats`;
      const isSel = layer === selected.layer && head === selected.head;
      cell.gridcell.setAttribute('aria-selected', String(isSel));
      cell.button.classList.toggle('selected', isSel);
      cell.button.tabIndex = isSel ? 0 : -1;
      cell.button.setAttribute(
        'aria-label',
        `${stackLabel}, layer ${layer + 1}, ${names[head] ?? ''}: mean entropy ${formatNumber(ent, 3)} ` +
          `nats${isSel ? ' (selected)' : ''}`,
      );
    };
    const firstLayer = jobs.filter(([l]) => l === selected.layer);
    for (const [l, hd] of firstLayer) paint(l, hd);
    let next = firstLayer.length;
    this.el.dataset.pending = String(jobs.length - next);
    const slice = (): void => {
      if (generation !== this.generation) return;
      const t0 = performance.now();
      while (next < jobs.length && performance.now() - t0 < 8) {
        const [l, hd] = jobs[next++] as [number, number];
        paint(l, hd);
      }
      this.el.dataset.pending = String(jobs.length - next);
      if (next < jobs.length) requestAnimationFrame(slice);
    };
    if (next < jobs.length) requestAnimationFrame(slice);
  }

  /** The whole grid as drawn, as vector SVG (every head's map, its entropy, the headers). */
  svg(title: string): SvgDoc {
    const last = this.last;
    if (!last) throw new Error('the grid has nothing to export yet');
    const heads = last.maps[0]?.map.shape[0] ?? 0;
    return heatmapGridSvg({
      title,
      rowHeads: last.maps.map((_, l) => `layer ${l + 1}`),
      colHeads: Array.from({ length: heads }, (_, j) => last.names[j] ?? `head ${j + 1}`),
      maps: last.maps.map((g) => {
        const [H, R, C] = g.map.shape;
        return Array.from({ length: H }, (_, head) => {
          const d = {
            rows: R,
            cols: C,
            values: g.map.data,
            offset: head * R * C,
            mask: g.mask,
            mode: 'prob' as const,
            scale: last.scale,
          };
          return {
            rows: R,
            cols: C,
            cellWord: (i: number) => cellWord(d, i, last.theme),
            caption: `${(g.entropies()[head] ?? 0).toFixed(2)} nats`,
          };
        });
      }),
      style: svgStyle(last.theme),
    });
  }

  /** Moves keyboard focus to the selected cell. */
  focusSelected(layer: number, head: number): void {
    this.cells[layer]?.[head]?.button.focus();
  }

  private build(layers: number, heads: number, stackLabel: string, names: readonly string[]): void {
    this.layers = layers;
    this.heads = heads;
    this.shapeKey = `${layers}x${heads}|${stackLabel}|${names.join('|')}`;
    this.cells = [];
    this.el.style.setProperty('--heads', String(heads));
    const header = h(
      'div',
      { className: 'attn-grid-row', attrs: { role: 'row' } },
      h('span', { className: 'attn-grid-corner', attrs: { role: 'columnheader' } }, ''),
    );
    for (let j = 0; j < heads; j++)
      header.appendChild(
        h('span', { className: 'attn-grid-colhead', attrs: { role: 'columnheader' } }, names[j] ?? `head ${j + 1}`),
      );
    const rows: HTMLElement[] = [header];
    for (let layer = 0; layer < layers; layer++) {
      const row = h(
        'div',
        { className: 'attn-grid-row', attrs: { role: 'row' } },
        h('span', { className: 'attn-grid-rowhead', attrs: { role: 'rowheader' } }, `layer ${layer + 1}`),
      );
      const cells: Cell[] = [];
      for (let head = 0; head < heads; head++) {
        const heat = new HeatmapCanvas(`layer ${layer + 1} ${names[head] ?? `head ${head + 1}`}`);
        heat.canvas.setAttribute('aria-hidden', 'true');
        const caption = h('span', { className: 'attn-cell-caption' });
        const button = h(
          'button',
          { className: 'attn-cell', attrs: { type: 'button', 'data-layer': layer, 'data-head': head } },
          heat.canvas,
          caption,
        );
        const gridcell = h(
          'div',
          { className: 'attn-gridcell', attrs: { role: 'gridcell', 'aria-selected': 'false' } },
          button,
        );
        button.addEventListener('click', () => this.onSelect(layer, head));
        button.addEventListener('keydown', (e) => this.key(e, layer, head));
        row.appendChild(gridcell);
        cells.push({ gridcell, button, heat, caption });
      }
      this.cells.push(cells);
      rows.push(row);
    }
    replaceChildren(this.el, ...rows);
  }

  private key(e: KeyboardEvent, layer: number, head: number): void {
    const moves: Record<string, [number, number]> = {
      ArrowUp: [layer - 1, head],
      ArrowDown: [layer + 1, head],
      ArrowLeft: [layer, head - 1],
      ArrowRight: [layer, head + 1],
      Home: [layer, 0],
      End: [layer, this.heads - 1],
    };
    const m = moves[e.key];
    if (!m) return;
    e.preventDefault();
    const l = Math.min(this.layers - 1, Math.max(0, m[0]));
    const hd = Math.min(this.heads - 1, Math.max(0, m[1]));
    this.onSelect(l, hd);
    this.focusSelected(l, hd);
  }
}
