/**
 * The attention tab: encoder self-, decoder self- and cross-attention of the probe sample, as
 * a layer × head grid plus a large, labelled view of the selected head, with a colour legend,
 * each head's mean entropy, and a timeline slider (with play) over the snapshots taken during
 * training — so one can watch a head learn. When the slider sits at the end it follows new
 * snapshots as they stream in.
 *
 * Leaves out: the heatmap drawing (heatmap.ts, heatmapView.ts), the grid (attentionGrid.ts) and
 * the math (attentionMath.ts).
 */

import type { AttentionMapData, AttentionSnapshot, AttentionStack } from '../../src/protocol/model';
import { ATTENTION_STACKS } from '../../src/protocol/model';
import { STACK_LABELS, axisTokens, headEntropies, keysAreSource, mapsOf, maskForMap, maskNamesFor, paddedRows } from '../attentionMath';
import type { RampScale } from '../colorRamp';
import { h, replaceChildren } from '../dom';
import { formatNumber } from '../../src/common/format';
import { showToken } from '../format';
import { HeatmapView } from '../heatmapView';
import { exportMenu, imageItems } from '../exportMenu';
import { exportFileName } from '../exportData';
import { drawLegend } from '../legend';
import type { StoreEvent } from '../store';
import { AttentionGrid } from './attentionGrid';
import type { GridMap } from './attentionGrid';
import type { Panel, PanelContext } from './panel';

/** The attention tab. */
export class AttentionPanel implements Panel {
  readonly id = 'attention' as const;
  readonly label = 'Attention';
  readonly el: HTMLElement;
  private readonly stacks = h('div', { className: 'segmented', attrs: { role: 'radiogroup', 'aria-label': 'Attention kind' } });
  private readonly slider = h('input', { attrs: { type: 'range', id: 'attn-timeline', min: 0, max: 0, step: 1, value: 0, 'aria-label': 'Snapshot (training step)' } });
  private readonly stepLabel = h('output', { className: 'timeline-label', attrs: { for: 'attn-timeline' } });
  private readonly play = h('button', { attrs: { type: 'button', 'aria-label': 'Play the snapshots in order' } }, '▶ Play');
  private readonly scaleSel = h('select', { attrs: { id: 'attn-scale', 'aria-label': 'Colour scale' } }, h('option', { attrs: { value: 'linear' } }, 'linear'), h('option', { attrs: { value: 'sqrt' } }, '√ (shows small values)'));
  private readonly grid = new AttentionGrid();
  private readonly large = new HeatmapView('Selected attention head', 520);
  private readonly caption = h('h3', { className: 'attn-caption' });
  private readonly legend = h('div', { className: 'legend' });
  private readonly empty = h('p', { className: 'empty' });
  /** Says when the text was cut to the model's context (Show Attention for a long selection). */
  private readonly truncation = h('p', { className: 'note attn-truncation', attrs: { role: 'note' } });
  private readonly body: HTMLElement;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly entropyCache = new WeakMap<Float32Array, number[]>();

  constructor(private readonly ctx: PanelContext) {
    this.slider.addEventListener('input', () => {
      const run = ctx.run();
      const n = run?.snapshots.length ?? 0;
      const i = Number(this.slider.value);
      ctx.ui.attention.snapshot = i >= n - 1 ? -1 : i;
      ctx.saveUi();
      ctx.invalidate('attention');
    });
    this.play.addEventListener('click', () => this.togglePlay());
    this.scaleSel.addEventListener('change', () => {
      ctx.ui.attention.scale = this.scaleSel.value as RampScale;
      ctx.saveUi();
      ctx.invalidate('attention', true);
    });
    this.grid.onSelect = (layer, head) => {
      ctx.ui.attention.layer = layer;
      ctx.ui.attention.head = head;
      ctx.saveUi();
      this.render(false);
    };
    this.body = h(
      'div',
      { className: 'attn-body' },
      h('div', { className: 'attn-grid-box' }, h('div', { className: 'caption-row grid-export' }, h('span', { className: 'note' }, 'all heads'), exportMenu(ctx.host, 'Export the grid of all heads', () => this.gridItems(), (t) => ctx.problem(t))), this.grid.el),
      h(
        'div',
        { className: 'attn-large' },
        h('div', { className: 'caption-row' }, this.caption, exportMenu(ctx.host, 'Export the selected head’s heatmap', () => this.largeItems(), (t) => ctx.problem(t))),
        this.large.el,
        this.legend,
      ),
    );
    this.el = h(
      'section',
      { className: 'panel attention' },
      h('div', { className: 'toolbar', attrs: { role: 'toolbar', 'aria-label': 'Attention options' } }, this.stacks, h('label', { attrs: { for: 'attn-scale' } }, 'scale '), this.scaleSel),
      h('div', { className: 'timeline' }, this.play, this.slider, this.stepLabel),
      this.empty,
      this.truncation,
      this.body,
    );
  }

  /** PNG and SVG of the whole grid of the shown kind of attention. */
  private gridItems(): ReturnType<typeof imageItems> {
    const run = this.ctx.run();
    const snap = run?.snapshots[this.snapshotIndex(run.snapshots.length)];
    if (!run || !snap) return [];
    const { stack } = this.ctx.ui.attention;
    return imageItems(() => this.grid.svg(`${run.summary.name} · ${STACK_LABELS[stack]} · every layer and head · step ${snap.step}`), (kind) => exportFileName(run.summary.name, `${stack}-grid`, snap.step, kind));
  }

  /** PNG and SVG of the large view, named after the run, the head and the step. */
  private largeItems(): ReturnType<typeof imageItems> {
    const run = this.ctx.run();
    const snap = run?.snapshots[this.snapshotIndex(run.snapshots.length)];
    if (!run || !snap) return [];
    const ui = this.ctx.ui.attention;
    const what = `${ui.stack}-layer${ui.layer + 1}-head${ui.head + 1}`;
    return imageItems(() => this.large.svg(`${run.summary.name} · ${this.caption.textContent ?? ''}`), (kind) => exportFileName(run.summary.name, what, snap.step, kind));
  }

  wants(ev: StoreEvent): boolean {
    return ev.kind === 'runs' || (ev.kind === 'run' && ev.parts.includes('snapshots'));
  }

  private snapshotIndex(n: number): number {
    const i = this.ctx.ui.attention.snapshot;
    return i < 0 || i >= n ? n - 1 : i;
  }

  render(full: boolean): void {
    const run = this.ctx.run();
    const snaps = run?.snapshots ?? [];
    const ui = this.ctx.ui.attention;
    this.body.hidden = snaps.length === 0;
    this.empty.hidden = snaps.length > 0;
    this.truncation.hidden = true;
    if (snaps.length === 0) {
      this.empty.textContent = run ? 'No attention snapshots yet: they are taken every --snapshot-every steps during training.' : 'No run selected.';
      replaceChildren(this.stacks);
      return;
    }
    const idx = this.snapshotIndex(snaps.length);
    const snap = snaps[idx] as AttentionSnapshot;
    this.truncation.hidden = snap.truncation === undefined;
    this.truncation.textContent = snap.truncation ?? '';
    this.slider.max = String(snaps.length - 1);
    this.slider.value = String(idx);
    this.slider.setAttribute('aria-valuetext', `step ${snap.step}`);
    this.stepLabel.textContent = `step ${snap.step} · snapshot ${idx + 1} of ${snaps.length}${ui.snapshot < 0 ? ' (latest)' : ''}`;
    this.scaleSel.value = ui.scale;
    const present = ATTENTION_STACKS.filter((s) => mapsOf(snap, s).length > 0);
    if (!present.includes(ui.stack)) ui.stack = present[0] as AttentionStack;
    if (full || this.stacks.childElementCount !== present.length) this.buildStacks(present);
    for (const b of this.stacks.querySelectorAll('button')) b.setAttribute('aria-checked', String(b.dataset.stack === ui.stack));
    const maps = mapsOf(snap, ui.stack);
    const heads = maps[0]?.shape[0] ?? 1;
    ui.layer = Math.min(ui.layer, maps.length - 1);
    ui.head = Math.min(ui.head, heads - 1);
    const grid: GridMap[] = maps.map((m) => ({ map: m, mask: maskForMap(snap, m), entropies: () => this.entropies(snap, m) }));
    const width = this.el.clientWidth || 900;
    const thumb = Math.max(36, Math.min(110, Math.floor((Math.min(width, 1000) * 0.45) / heads) - 10));
    const stackLabel = STACK_LABELS[ui.stack];
    this.grid.render(grid, this.ctx.theme, ui.scale, { layer: ui.layer, head: ui.head }, thumb, stackLabel);
    // The large view takes the room beside the grid, or the full width when it wraps below;
    // ~110 px go to its row labels and title.
    const beside = width - (heads * (thumb + 10) + 70) - 24;
    const largePx = Math.max(160, Math.min(640, (beside >= 320 ? beside : width) - 110));
    this.drawLarge(snap, grid[ui.layer] as GridMap, ui.head, stackLabel, largePx);
    drawLegend(this.legend, this.ctx.theme, ui.scale);
  }

  private buildStacks(present: readonly AttentionStack[]): void {
    const buttons = present.map((stack) =>
      h('button', {
        attrs: { type: 'button', role: 'radio', 'data-stack': stack },
        on: {
          click: () => {
            this.ctx.ui.attention.stack = stack;
            this.ctx.saveUi();
            this.render(false);
          },
        },
      }, STACK_LABELS[stack]),
    );
    replaceChildren(this.stacks, ...buttons);
  }

  private entropies(snap: AttentionSnapshot, m: AttentionMapData): number[] {
    const hit = this.entropyCache.get(m.data);
    if (hit) return hit;
    const e = headEntropies(m, paddedRows(snap, m));
    this.entropyCache.set(m.data, e);
    return e;
  }

  private drawLarge(snap: AttentionSnapshot, g: GridMap, head: number, stackLabel: string, maxPx: number): void {
    const m = g.map;
    const [, R, C] = m.shape;
    const { rows, cols } = axisTokens(snap, m);
    const ent = g.entropies()[head] ?? 0;
    const names = maskNamesFor(m, snap);
    this.caption.textContent = `${stackLabel} · layer ${m.layer + 1} · head ${head + 1} · step ${snap.step} · mean entropy ${formatNumber(ent, 3)} nats (uniform over ${C} keys: ${formatNumber(Math.log(C), 3)})${names.length ? ` · mask: ${names.join(', ')}` : ''}`;
    const offset = head * R * C;
    const rowName = m.stack === 'encoder.self' ? 'S' : 'T';
    const colName = keysAreSource(m.stack) ? 'S' : 'T';
    this.large.set(
      {
        data: { rows: R, cols: C, values: m.data, offset, mask: g.mask, mode: 'prob', scale: this.ctx.ui.attention.scale },
        rowLabels: rows,
        colLabels: cols,
        rowTitle: `queries t (${rowName} = ${R})`,
        colTitle: `keys s (${colName} = ${C})`,
        describe: (t, s) => {
          const p = m.data[offset + t * C + s] as number;
          const masked = g.mask !== null && g.mask[t * C + s] === 0;
          return `query ${t} “${showToken(rows[t] ?? '')}” → key ${s} “${showToken(cols[s] ?? '')}”: p = ${formatNumber(p, 4)}${masked ? ' — masked' : ''}`;
        },
      },
      this.ctx.theme,
      maxPx,
    );
  }

  private togglePlay(): void {
    if (this.timer !== null) {
      this.stopPlay();
      return;
    }
    const run = this.ctx.run();
    const n = run?.snapshots.length ?? 0;
    if (n < 2) return;
    if (this.snapshotIndex(n) >= n - 1) this.ctx.ui.attention.snapshot = 0;
    this.play.textContent = '⏸ Pause';
    this.play.setAttribute('aria-label', 'Pause');
    this.timer = setInterval(() => {
      const count = this.ctx.run()?.snapshots.length ?? 0;
      const next = this.snapshotIndex(count) + 1;
      this.ctx.ui.attention.snapshot = next >= count - 1 ? -1 : next;
      this.ctx.invalidate('attention');
      if (next >= count - 1) this.stopPlay();
    }, 700);
  }

  private stopPlay(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.play.textContent = '▶ Play';
    this.play.setAttribute('aria-label', 'Play the snapshots in order');
    this.ctx.saveUi();
  }

  hide(): void {
    this.stopPlay();
  }
}
