/**
 * The masks tab: for the probe batch, every mask exactly as the engine built it — padding
 * [B,1,1,S], causal [1,1,T,T], their combination [B,1,T,T] — with labelled dimensions, a
 * table showing how each broadcasts to the scores [B,H,T,S] (which size-1 dimensions repeat),
 * the tensor itself and the slice it masks in one batch item's scores. Masked cells and PAD
 * tokens are marked. This is where the broken `(src != 0).unsqueeze(...)` masks of the
 * tutorial notebooks (docs/ARCHITECTURE.md, "What the engine does not copy from the
 * tutorials") become visible. A run with a sliding window (slidingWindow W > 0) shows the
 * banded causal mask: the engine's own when its causal mask holds the band, else computed
 * from the config beside the causal one (and said so). With globalEvery, the intro names the global layers,
 * which see the whole context.
 *
 * Leaves out: the shape bookkeeping (maskMath.ts) and drawing (heatmapView.ts).
 */

import type { AttentionSnapshot, MaskData } from '../../src/protocol/model';
import { batchSize, findMask } from '../heatmap/attentionMath';
import { h, replaceChildren } from '../base/dom';
import { isPadToken, showToken } from '../base/format';
import { HeatmapView } from '../heatmap/heatmapView';
import { exportMenu, imageItems } from '../export/exportMenu';
import { exportFileName } from '../export/exportData';
import {
  broadcastPlan,
  broadcastSlice,
  combine,
  globalLayersText,
  hidesBeyondWindow,
  maskDimLabels,
  maskedCount,
  outsideWindow,
  scoresUses,
  windowMask,
} from './maskMath';
import type { Sizes } from './maskMath';
import type { StoreEvent } from '../store';
import type { Panel, PanelContext } from './panel';

const ABOUT: Record<string, string> = {
  'source.padding':
    'Source padding: 1 where the source token is real, 0 where it is <pad>. Used by encoder ' +
    'self-attention and by cross-attention (keys are source positions).',
  'target.padding': 'Target padding: 1 where the decoder input token is real, 0 where it is <pad>.',
  'decoder.causal':
    'Causal mask: query t may attend to keys s ≤ t only, so the decoder cannot look ahead. Shared by the whole batch.',
  'decoder.self': 'Decoder self-attention mask: target padding ∧ causal, one square per batch item.',
  'decoder.window': 'Sliding window: query t may attend to the last W keys only, itself included.',
};

/** What a mask that holds the sliding window W is, in place of its plain description. */
function windowAbout(name: string, W: number): string {
  const band = `query t may attend to keys t − ${W} < s ≤ t only: the last ${W} positions, itself included`;
  if (name === 'decoder.self') return `Decoder self-attention mask: target padding ∧ sliding-window causal (${band}).`;
  return `Sliding-window causal mask (slidingWindow ${W}): ${band}. Shared by the whole batch.`;
}

/** The masks tab. */
export class MasksPanel implements Panel {
  readonly id = 'masks' as const;
  readonly label = 'Masks';
  readonly el: HTMLElement;
  private readonly batchSel = h('select', { attrs: { id: 'mask-batch', 'aria-label': 'Batch item' } });
  private readonly cards = h('div', { className: 'mask-cards' });
  private readonly intro = h('p', { className: 'note' });
  /** The run's sliding window (0: none), for the cells' descriptions. */
  private window = 0;

  constructor(private readonly ctx: PanelContext) {
    this.batchSel.addEventListener('change', () => {
      ctx.ui.masks.batch = Number(this.batchSel.value);
      ctx.saveUi();
      this.render();
    });
    this.el = h(
      'section',
      { className: 'panel masks' },
      h(
        'div',
        { className: 'toolbar', attrs: { role: 'toolbar', 'aria-label': 'Mask options' } },
        h('label', { attrs: { for: 'mask-batch' } }, 'batch item b '),
        this.batchSel,
      ),
      this.intro,
      this.cards,
    );
  }

  wants(ev: StoreEvent): boolean {
    return ev.kind === 'runs' || (ev.kind === 'run' && ev.parts.includes('snapshots'));
  }

  render(): void {
    const run = this.ctx.run();
    const snap = run?.snapshots[run.snapshots.length - 1];
    if (!run || !snap) {
      this.intro.textContent = run
        ? 'No snapshot yet: masks are recorded with the attention snapshots of the probe batch.'
        : 'No run selected.';
      replaceChildren(this.cards);
      return;
    }
    const B = batchSize(snap);
    const b = Math.min(this.ctx.ui.masks.batch, B - 1);
    replaceChildren(
      this.batchSel,
      ...Array.from({ length: B }, (_, i) => h('option', { attrs: { value: i, selected: i === b } }, String(i))),
    );
    const src = findMask(snap, 'source.padding');
    const tgt = findMask(snap, 'target.padding');
    const z: Sizes = {
      B,
      H: snap.maps[0]?.shape[0] ?? 1,
      T: tgt?.shape[3] ?? findMask(snap, 'decoder.causal')?.shape[3] ?? 0,
      S: src?.shape[3] ?? 0,
    };
    this.intro.textContent =
      `Probe batch of step ${snap.step}: B = ${z.B}, H = ${z.H} heads` +
      `${z.S ? `, S = ${z.S} source positions` : ''}` +
      `${z.T ? `, T = ${z.T} target positions` : ''}. Convention: 1 = may ` +
      `attend, 0 = masked (left out of the softmax: probability 0, as if its ` +
      `score were −∞). Each mask is stored in its own shape and broadcast to ` +
      `the scores [B, H, T, S]: a dimension of size 1 repeats.`;
    this.window = run.summary.model?.config.slidingWindow ?? 0;
    const W = this.window;
    const windowed = W > 0 && snap.masks.some((m) => hidesBeyondWindow(m, W));
    if (W > 0)
      this.intro.textContent +=
        ` This model attends through a sliding window of ${W} positions: every key more than ${W - 1} ` +
        `back is masked too.`;
    const global = run.summary.model ? globalLayersText(run.summary.model.config) : '';
    if (global) this.intro.textContent += ` ${global}`;
    const cards = snap.masks.map((m) => this.card(snap, m, z, b, windowed && hidesBeyondWindow(m, W)));
    const causal = findMask(snap, 'decoder.causal');
    if (!findMask(snap, 'decoder.self') && tgt && causal) cards.push(this.computedCombination(snap, tgt, causal, b));
    if (W > 0 && !windowed && causal) cards.push(this.computedWindow(snap, causal, b, W));
    replaceChildren(this.cards, ...cards);
  }

  private labelsFor(
    snap: AttentionSnapshot,
    which: 'S' | 'T',
    b: number,
    n: number,
    pad: MaskData | undefined,
  ): string[] {
    const tokens = which === 'S' ? snap.srcTokens : snap.tgtTokens;
    const padRow = pad ? broadcastSlice(pad, b, 1) : null;
    return Array.from({ length: n }, (_, i) => {
      if (b === 0 && tokens[i] !== undefined) return tokens[i] as string;
      return padRow && padRow[i] === 0 ? '<pad>' : `${i}`;
    });
  }

  private card(snap: AttentionSnapshot, m: MaskData, z: Sizes, b: number, windowed: boolean): HTMLElement {
    const dims = maskDimLabels(m);
    const which: 'S' | 'T' = m.name === 'source.padding' ? 'S' : 'T';
    const pad = findMask(snap, which === 'S' ? 'source.padding' : 'target.padding');
    const cols = m.shape[3] ?? 0;
    const colLabels = this.labelsFor(snap, which, b, cols, pad);
    const views: HTMLElement[] = [];
    const isPadding = m.name.endsWith('.padding');
    // The tensor itself: all B rows of a padding mask, or item b's square.
    const tensorRows = isPadding ? (m.shape[0] ?? 1) : (m.shape[2] ?? 1);
    const tensor = isPadding ? m.data : broadcastSlice(m, b, tensorRows);
    const rowLabels = isPadding
      ? Array.from({ length: tensorRows }, (_, i) => `b=${i}`)
      : this.labelsFor(snap, 'T', b, tensorRows, findMask(snap, 'target.padding'));
    views.push(
      this.view(
        `${m.name} values`,
        isPadding ? `the tensor: batch items × ${which} (the two size-1 dims dropped)` : `the tensor for item b = ${b}`,
        tensor,
        tensorRows,
        cols,
        rowLabels,
        colLabels,
        isPadding ? 'batch item b' : `queries t (T = ${tensorRows})`,
        `keys s (${which} = ${cols})`,
      ),
    );
    const uses = scoresUses(m.name, z);
    for (const u of uses) {
      const q = u.dims[2] as { name: string; size: number };
      if (!isPadding || q.size === 0) continue;
      const slice = broadcastSlice(m, b, q.size);
      const qLabels = this.labelsFor(
        snap,
        q.name as 'S' | 'T',
        b,
        q.size,
        findMask(snap, q.name === 'S' ? 'source.padding' : 'target.padding'),
      );
      views.push(
        this.view(
          `${m.name} broadcast`,
          `as applied to the ${u.label} of item b = ${b}, every head`,
          slice,
          q.size,
          cols,
          qLabels,
          colLabels,
          `queries t (${q.name} = ${q.size})`,
          `keys s (${which} = ${cols})`,
        ),
      );
    }
    const masked = maskedCount(isPadding ? broadcastSlice(m, b, 1) : tensor);
    return h(
      'article',
      { className: 'mask-card', attrs: { 'data-mask': m.name, 'aria-label': `${m.name} mask` } },
      h(
        'h3',
        {},
        m.name,
        ' ',
        h(
          'code',
          { className: 'shape', attrs: { 'aria-label': `shape ${dims.join(' by ')}` } },
          '[',
          ...dims.flatMap((d, i) => [
            i > 0 ? ', ' : '',
            h('span', { className: `dim${d === '1' ? ' dim-one' : ''}`, attrs: { 'data-dim': i } }, d),
          ]),
          ']',
        ),
      ),
      h(
        'p',
        {},
        windowed ? windowAbout(m.name, this.window) : (ABOUT[m.name] ?? 'A mask the engine used.'),
        ` Item b = ${b}: ${masked} masked ${isPadding ? 'key position(s)' : 'cell(s)'}.`,
      ),
      ...uses.map((u) => this.broadcastTable(m, u)),
      h('div', { className: 'mask-views' }, ...views),
    );
  }

  private broadcastTable(m: MaskData, u: ReturnType<typeof scoresUses>[number]): HTMLElement {
    const plan = broadcastPlan(m.shape, u.dims);
    const dims = maskDimLabels(m);
    return h(
      'table',
      { className: 'broadcast', attrs: { 'aria-label': `${m.name} broadcast to ${u.label}` } },
      h('caption', {}, `broadcast to the ${u.label} [${u.dims.map((d) => d.name).join(', ')}]`),
      h(
        'tr',
        {},
        h('th', { attrs: { scope: 'row' } }, 'mask'),
        ...dims.map((d, i) => h('td', { className: plan[i]?.repeated ? 'repeated' : '' }, d)),
      ),
      h(
        'tr',
        {},
        h('th', { attrs: { scope: 'row' } }, 'scores'),
        ...u.dims.map((d) => h('td', {}, `${d.name}=${d.size}`)),
      ),
      h(
        'tr',
        {},
        h('th', { attrs: { scope: 'row' } }, ''),
        ...plan.map((p) =>
          h(
            'td',
            { className: 'plan' },
            p.repeated ? `repeated ×${p.scores}` : p.mask === p.scores ? 'matches' : `${p.mask} ≠ ${p.scores}!`,
          ),
        ),
      ),
    );
  }

  private computedCombination(snap: AttentionSnapshot, tgt: MaskData, causal: MaskData, b: number): HTMLElement {
    const T = causal.shape[3] ?? 0;
    const labels = this.labelsFor(snap, 'T', b, T, tgt);
    return h(
      'article',
      { className: 'mask-card computed', attrs: { 'data-mask': 'combined (computed)' } },
      h(
        'h3',
        {},
        'target.padding ∧ decoder.causal ',
        h('code', { className: 'shape' }, `[B=${tgt.shape[0]}, 1, T=${T}, T=${T}]`),
      ),
      h(
        'p',
        {},
        'Computed here for illustration: this probe batch has no target padding, so the engine ' +
          'applied decoder.causal alone and built no [B,1,T,T] mask.',
      ),
      h(
        'div',
        { className: 'mask-views' },
        this.view(
          'combined',
          `item b = ${b}`,
          combine(tgt, causal, b),
          T,
          T,
          labels,
          labels,
          `queries t (T = ${T})`,
          `keys s (T = ${T})`,
        ),
      ),
    );
  }

  /**
   * The sliding window's band [1,1,T,T], computed from the run's config when no mask of the
   * snapshot holds it (a snapshot taken before the engine recorded the window in its masks).
   */
  private computedWindow(snap: AttentionSnapshot, causal: MaskData, b: number, W: number): HTMLElement {
    const T = causal.shape[3] ?? 0;
    const labels = this.labelsFor(snap, 'T', b, T, findMask(snap, 'target.padding'));
    const band = windowMask(T, W);
    return h(
      'article',
      { className: 'mask-card computed', attrs: { 'data-mask': 'decoder.window (computed)' } },
      h('h3', {}, `decoder.causal ∧ window ${W} `, h('code', { className: 'shape' }, `[1, 1, T=${T}, T=${T}]`)),
      h(
        'p',
        {},
        `${windowAbout('decoder.causal', W)} Computed here from the run's config: this snapshot's masks do not ` +
          `hold the window. ${maskedCount(band)} masked cell(s).`,
      ),
      h(
        'div',
        { className: 'mask-views' },
        this.view(
          `window ${W}`,
          `every item, every head`,
          band,
          T,
          T,
          labels,
          labels,
          `queries t (T = ${T})`,
          `keys s (T = ${T})`,
        ),
      ),
    );
  }

  private view(
    label: string,
    caption: string,
    mask: Uint8Array,
    rows: number,
    cols: number,
    rowLabels: string[],
    colLabels: string[],
    rowTitle: string,
    colTitle: string,
  ): HTMLElement {
    const v = new HeatmapView(label, 320);
    v.set(
      {
        data: { rows, cols, values: mask, offset: 0, mask: null, mode: 'mask', scale: 'linear' },
        rowLabels,
        colLabels,
        rowTitle,
        colTitle,
        describe: (t, s) => {
          const on = mask[t * cols + s] === 1;
          const key = colLabels[s] ?? '';
          const behind =
            !label.includes('padding') && rows === cols && outsideWindow(t, s, this.window)
              ? ` (outside the window of ${this.window})`
              : '';
          return (
            `${rowTitle.split(' ')[0]} ${t} “${showToken(rowLabels[t] ?? '')}”, key ${s} ` +
            `“${showToken(key)}”: ${on ? '1 — may attend' : `0 — masked${behind}`}` +
            `${isPadToken(key) ? ' (PAD key)' : ''}`
          );
        },
      },
      this.ctx.theme,
    );
    const run = this.ctx.run();
    const step = run?.snapshots[run.snapshots.length - 1]?.step ?? null;
    const menu = exportMenu(
      this.ctx.host,
      `Export ${label}`,
      () =>
        imageItems(
          () => v.svg(`${run?.summary.name ?? ''} · ${label} · ${caption}`),
          (kind) => exportFileName(run?.summary.name ?? 'run', label, step, kind),
        ),
      (t) => this.ctx.problem(t),
    );
    return h(
      'figure',
      { className: 'mask-view' },
      h('div', { className: 'caption-row' }, h('figcaption', {}, caption), menu),
      v.el,
    );
  }
}
