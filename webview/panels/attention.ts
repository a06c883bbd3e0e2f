/**
 * The attention tab: encoder self-, decoder self- and cross-attention, as a layer × head grid
 * plus a large, labelled view of the selected head, with a colour legend and each head's mean
 * entropy. It shows either the probe sample over training, with a timeline slider (with play)
 * over the snapshots — so one can watch a head learn; at the end it follows new snapshots as
 * they stream in — or the model now on a text typed in the bar (inspectBar.ts), for any run.
 * A long text's maps arrive as max-pooled overviews; the selected layer's whole map is asked
 * for when it is shown, and the overview stands in (and says so) until it comes.
 *
 * Leaves out: the heatmap drawing (heatmap.ts, heatmapView.ts), the grid (attentionGrid.ts) and
 * the math (attentionMath.ts).
 */

import { probAt } from '../../src/common/attentionCodec';
import type { AttentionMapData, AttentionSnapshot, AttentionStack } from '../../src/protocol/model';
import { ATTENTION_STACKS } from '../../src/protocol/model';
import { headLabel } from '../../src/common/architecture';
import type { FromWebview } from '../../src/protocol/webview';
import {
  STACK_LABELS,
  axisTokens,
  blockRange,
  headEntropies,
  keysAreSource,
  mapsOf,
  maskForMap,
  maskNamesFor,
  paddedRows,
} from '../heatmap/attentionMath';
import type { RampScale } from '../base/colorRamp';
import { h, replaceChildren } from '../base/dom';
import { formatNumber } from '../../src/common/format';
import { showToken } from '../base/format';
import { HeatmapView } from '../heatmap/heatmapView';
import { exportMenu, imageItems } from '../export/exportMenu';
import { exportFileName } from '../export/exportData';
import { drawLegend } from '../heatmap/legend';
import type { Inspection, RunEntry, StoreEvent } from '../store';
import { layerKey } from '../store';
import { InspectBar, inspectView } from './inspectBar';
import { AttentionGrid } from './attentionGrid';
import type { GridMap } from './attentionGrid';
import type { Panel, PanelContext } from './panel';

/** The attention tab. */
export class AttentionPanel implements Panel {
  readonly id = 'attention' as const;
  readonly label = 'Attention';
  readonly el: HTMLElement;
  private readonly stacks = h('div', {
    className: 'segmented',
    attrs: { role: 'radiogroup', 'aria-label': 'Attention kind' },
  });
  private readonly slider = h('input', {
    attrs: {
      type: 'range',
      id: 'attn-timeline',
      min: 0,
      max: 0,
      step: 1,
      value: 0,
      'aria-label': 'Snapshot (training step)',
    },
  });
  private readonly stepLabel = h('output', { className: 'timeline-label', attrs: { for: 'attn-timeline' } });
  private readonly play = h(
    'button',
    { attrs: { type: 'button', 'aria-label': 'Play the snapshots in order' } },
    '▶ Play',
  );
  private readonly scaleSel = h(
    'select',
    { attrs: { id: 'attn-scale', 'aria-label': 'Colour scale' } },
    h('option', { attrs: { value: 'linear' } }, 'linear'),
    h('option', { attrs: { value: 'sqrt' } }, '√ (shows small values)'),
  );
  private readonly grid = new AttentionGrid();
  private readonly large = new HeatmapView('Selected attention head', 520);
  private readonly caption = h('h3', { className: 'attn-caption' });
  private readonly legend = h('div', { className: 'legend' });
  private readonly empty = h('p', { className: 'empty' });
  /** Says when the text was cut to the model's context (Show Attention for a long selection). */
  private readonly truncation = h('p', { className: 'note attn-truncation', attrs: { role: 'note' } });
  /** Says when the large view shows an overview while the layer's whole map is on its way. */
  private readonly overviewNote = h('p', { className: 'note attn-overview', attrs: { role: 'note' } });
  private readonly bar: InspectBar;
  private readonly timelineBox: HTMLElement;
  private readonly body: HTMLElement;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly entropyCache = new WeakMap<AttentionMapData['data'], number[]>();

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
      h(
        'div',
        { className: 'attn-grid-box' },
        h(
          'div',
          { className: 'caption-row grid-export' },
          h('span', { className: 'note' }, 'all heads'),
          exportMenu(
            ctx.host,
            'Export the grid of all heads',
            () => this.gridItems(),
            (t) => ctx.problem(t),
          ),
        ),
        this.grid.el,
      ),
      h(
        'div',
        { className: 'attn-large' },
        h(
          'div',
          { className: 'caption-row' },
          this.caption,
          exportMenu(
            ctx.host,
            'Export the selected head’s heatmap',
            () => this.largeItems(),
            (t) => ctx.problem(t),
          ),
        ),
        this.overviewNote,
        this.large.el,
        this.legend,
      ),
    );
    this.bar = new InspectBar(ctx, 'attn');
    this.timelineBox = h('div', { className: 'timeline' }, this.play, this.slider, this.stepLabel);
    this.el = h(
      'section',
      { className: 'panel attention' },
      this.bar.el,
      h(
        'div',
        { className: 'toolbar', attrs: { role: 'toolbar', 'aria-label': 'Attention options' } },
        this.stacks,
        h('label', { attrs: { for: 'attn-scale' } }, 'scale '),
        this.scaleSel,
      ),
      this.timelineBox,
      this.empty,
      this.truncation,
      this.body,
    );
  }

  /** PNG and SVG of the whole grid of the shown kind of attention. */
  private gridItems(): ReturnType<typeof imageItems> {
    const run = this.ctx.run();
    const snap = this.shown(run).snap;
    if (!run || !snap) return [];
    const { stack } = this.ctx.ui.attention;
    return imageItems(
      () => this.grid.svg(`${run.summary.name} · ${STACK_LABELS[stack]} · every layer and head · step ${snap.step}`),
      (kind) => exportFileName(run.summary.name, `${stack}-grid`, snap.step, kind),
    );
  }

  /** PNG and SVG of the large view, named after the run, the head and the step. */
  private largeItems(): ReturnType<typeof imageItems> {
    const run = this.ctx.run();
    const snap = this.shown(run).snap;
    if (!run || !snap) return [];
    const ui = this.ctx.ui.attention;
    const what = `${ui.stack}-layer${ui.layer + 1}-head${ui.head + 1}`;
    return imageItems(
      () => this.large.svg(`${run.summary.name} · ${this.caption.textContent ?? ''}`),
      (kind) => exportFileName(run.summary.name, what, snap.step, kind),
    );
  }

  wants(ev: StoreEvent): boolean {
    return (
      ev.kind === 'runs' || (ev.kind === 'run' && (ev.parts.includes('snapshots') || ev.parts.includes('inspection')))
    );
  }

  /** The snapshots this tab steps through for `run` (the text's one in the text view) and the one shown. */
  private shown(run: RunEntry | undefined): {
    snaps: readonly AttentionSnapshot[];
    snap: AttentionSnapshot | undefined;
    insp: Inspection | null;
  } {
    if (inspectView(this.ctx, run) === 'text') {
      const insp = run?.inspection ?? null;
      const snaps = insp?.snapshot ? [insp.snapshot] : [];
      return { snaps, snap: snaps[0], insp };
    }
    const snaps = run?.snapshots ?? [];
    return { snaps, snap: snaps[this.snapshotIndex(snaps.length)], insp: null };
  }

  private snapshotIndex(n: number): number {
    const i = this.ctx.ui.attention.snapshot;
    return i < 0 || i >= n ? n - 1 : i;
  }

  render(full: boolean): void {
    const run = this.ctx.run();
    this.bar.render(run);
    const text = inspectView(this.ctx, run) === 'text';
    const { snaps, snap, insp } = this.shown(run);
    const ui = this.ctx.ui.attention;
    this.timelineBox.hidden = text;
    if (text) this.stopPlay();
    this.body.hidden = !snap;
    this.empty.hidden = !!snap;
    this.truncation.hidden = true;
    if (!snap) {
      this.empty.textContent = !run
        ? 'No run selected.'
        : text
          ? insp
            ? ''
            : 'Type a text above and press Show: the model runs on it and every layer and head is drawn here.'
          : 'No attention snapshots yet: they are taken every --snapshot-every steps during ' +
            'training. Choose "Your text" to see the model on a text now.';
      this.empty.hidden = this.empty.textContent === '';
      replaceChildren(this.stacks);
      this.grid.render([], this.ctx.theme, ui.scale, { layer: 0, head: 0 }, 36, '');
      return;
    }
    const idx = text ? 0 : this.snapshotIndex(snaps.length);
    this.truncation.hidden = text || snap.truncation === undefined; // the text's note is in the bar
    this.truncation.textContent = snap.truncation ?? '';
    this.slider.max = String(snaps.length - 1);
    this.slider.value = String(idx);
    this.slider.setAttribute('aria-valuetext', `step ${snap.step}`);
    this.stepLabel.textContent =
      `step ${snap.step} · snapshot ${idx + 1} of ` + `${snaps.length}${ui.snapshot < 0 ? ' (latest)' : ''}`;
    this.scaleSel.value = ui.scale;
    const present = ATTENTION_STACKS.filter((s) => mapsOf(snap, s).length > 0);
    if (!present.includes(ui.stack)) ui.stack = present[0] as AttentionStack;
    if (full || this.stacks.childElementCount !== present.length) this.buildStacks(present);
    for (const b of this.stacks.querySelectorAll('button'))
      b.setAttribute('aria-checked', String(b.dataset.stack === ui.stack));
    const maps = mapsOf(snap, ui.stack);
    const heads = maps[0]?.shape[0] ?? 1;
    ui.layer = Math.min(ui.layer, maps.length - 1);
    ui.head = Math.min(ui.head, heads - 1);
    const grid: GridMap[] = maps.map((m) => ({
      map: m,
      mask: m.pool ? null : maskForMap(snap, m),
      entropies: () => this.entropies(snap, m),
    }));
    const width = this.el.clientWidth || 900;
    // Thumbnails share ~45 % of the width beside the large view, or all of it in a narrow panel, where the large view
    // wraps below.
    const share = width < 700 ? width - 70 : Math.min(width, 1000) * 0.45;
    const thumb = Math.max(16, Math.min(110, Math.floor(share / heads) - 10));
    const stackLabel = STACK_LABELS[ui.stack];
    const config = run?.summary.model?.config;
    this.grid.render(grid, this.ctx.theme, ui.scale, { layer: ui.layer, head: ui.head }, thumb, stackLabel, (j) =>
      headLabel(j, config),
    );
    // The large view takes the room beside the grid, or the full width when it wraps below
    // (~110 px go to its row labels and title), as tall as the window allows.
    const beside = width - (heads * (thumb + 10) + 70) - 24;
    const tall = Math.max(320, (window.innerHeight || 900) - 160);
    const largePx = Math.max(160, Math.min(tall, (beside >= 320 ? beside : width) - 110));
    const selected = grid[ui.layer] as GridMap;
    this.drawLarge(snap, this.wholeLayer(insp, selected), ui.head, stackLabel, largePx);
    drawLegend(this.legend, this.ctx.theme, ui.scale);
  }

  /**
   * The selected layer at full resolution: the map itself, or for an overview the whole map
   * when it has come (else it is asked for, and the overview stands in with a note).
   */
  private wholeLayer(insp: Inspection | null, g: GridMap): GridMap {
    const m = g.map;
    this.overviewNote.hidden = !m.pool;
    if (!m.pool || !insp?.snapshot) return g;
    const key = layerKey(m.stack, m.layer);
    const whole = insp.layers.get(key);
    if (whole) {
      this.overviewNote.hidden = true;
      return { map: whole, mask: maskForMap(insp.snapshot, whole), entropies: g.entropies };
    }
    const failed = insp.failedLayers.get(key);
    const id = failed === undefined ? this.ctx.store.beginLayer(insp, m.stack, m.layer) : null;
    const run = this.ctx.run();
    if (id !== null && run)
      this.ctx.host.post({
        type: 'model/attendLayer',
        id,
        runDir: run.summary.runDir,
        text: insp.text,
        stack: m.stack,
        layer: m.layer,
      } satisfies FromWebview);
    this.overviewNote.textContent =
      failed !== undefined
        ? `Showing the overview (each cell the largest weight of ${m.pool} × ${m.pool} positions): ` +
          `the whole layer could not be loaded (${failed}).`
        : `Showing the overview (each cell the largest weight of ${m.pool} × ${m.pool} positions) ` +
          `while the whole layer loads…`;
    return g;
  }

  private buildStacks(present: readonly AttentionStack[]): void {
    const buttons = present.map((stack) =>
      h(
        'button',
        {
          attrs: { type: 'button', role: 'radio', 'data-stack': stack },
          on: {
            click: () => {
              this.ctx.ui.attention.stack = stack;
              this.ctx.saveUi();
              this.render(false);
            },
          },
        },
        STACK_LABELS[stack],
      ),
    );
    replaceChildren(this.stacks, ...buttons);
  }

  private entropies(snap: AttentionSnapshot, m: AttentionMapData): number[] {
    const hit = this.entropyCache.get(m.data);
    if (hit) return hit;
    // A text's maps come as 8-bit codes (or overviews): its head scores hold the exact entropies.
    const scored = snap.headScores
      ?.filter((x) => x.stack === m.stack && x.layer === m.layer)
      .sort((a, b) => a.head - b.head);
    const e =
      m.data instanceof Uint8Array && scored?.length === m.shape[0]
        ? scored.map((x) => x.scores.entropy)
        : headEntropies(m, paddedRows(snap, m));
    this.entropyCache.set(m.data, e);
    return e;
  }

  private drawLarge(snap: AttentionSnapshot, g: GridMap, head: number, stackLabel: string, maxPx: number): void {
    const m = g.map;
    const [, R, C] = m.shape;
    const { rows, cols } = axisTokens(snap, m);
    const ent = g.entropies()[head] ?? 0;
    const names = maskNamesFor(m, snap);
    const f = m.pool ?? 1;
    const keys = f === 1 ? C : (keysAreSource(m.stack) ? snap.srcTokens : snap.tgtTokens).length;
    const at = snap.source === 'selection' ? `step ${snap.step}'s model on your text` : `step ${snap.step}`;
    this.caption.textContent =
      `${stackLabel} · layer ${m.layer + 1} · ${headLabel(head, this.ctx.run()?.summary.model?.config)} · ${at} · ` +
      `mean entropy ${formatNumber(ent, 3)} nats (uniform over ${keys} keys: ` +
      `${formatNumber(Math.log(keys), 3)})` +
      `${names.length ? ` · mask: ${names.join(', ')}` : ''}`;
    const offset = head * R * C;
    const rowName = m.stack === 'encoder.self' ? 'S' : 'T';
    const colName = keysAreSource(m.stack) ? 'S' : 'T';
    this.large.set(
      {
        data: {
          rows: R,
          cols: C,
          values: m.data,
          offset,
          mask: g.mask,
          mode: 'prob',
          scale: this.ctx.ui.attention.scale,
        },
        rowLabels: rows,
        colLabels: cols,
        rowTitle: `queries t (${rowName} = ${R})`,
        colTitle: `keys s (${colName} = ${C})`,
        describe: (t, s) => {
          const p = probAt(m.data, offset + t * C + s);
          if (f > 1) {
            const [t0, t1] = blockRange(t, f, (m.stack === 'encoder.self' ? snap.srcTokens : snap.tgtTokens).length);
            const [s0, s1] = blockRange(s, f, keys);
            return (
              `queries ${t0}–${t1} → keys ${s0}–${s1} (from “${showToken(rows[t] ?? '')}” and ` +
              `“${showToken(cols[s] ?? '')}”): largest p = ${formatNumber(p, 4)}`
            );
          }
          const masked = g.mask !== null && g.mask[t * C + s] === 0;
          return (
            `query ${t} “${showToken(rows[t] ?? '')}” → key ${s} ` +
            `“${showToken(cols[s] ?? '')}”: p = ${formatNumber(p, 4)}${masked ? ' — masked' : ''}`
          );
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
