/**
 * The Patching tab's smaller views (panels/patching.ts draws the maps and asks for the data):
 * the detail of one clicked cell — its patched run's top tokens beside the clean and corrupted
 * runs', its metric, recovery and estimate; the agreement of attribution patching with full
 * patching over a sweep, as Pearson's r and a scatter of estimate against recovery around the
 * diagonal; the accumulated residual stream as bars per layer; and the progress of a long sweep
 * with its Cancel button. Colours are the theme's (dashboard.css, `ptc-` classes).
 *
 * Leaves out: computing any of it (lab/inference/patch.ts, attribute.ts) and the requests.
 */

import type { AttributionOutputData } from '../../src/protocol/attribution';
import type { PatchMapData, PatchOutputData, PatchTopTokenData } from '../../src/protocol/patching';
import { MAX_TOP_CELLS } from '../../src/protocol/patching';
import { formatCount, formatNumber, formatPercent } from '../../src/common/format';
import { h } from '../base/dom';
import { pearson, residLabel } from './patchingMath';

const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  ...children: (SVGElement | string)[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

/** Side of the scatter's plot area, in CSS pixels. */
const SIDE = 110;
const PAD = 28;
/** Room under the plot area for the ticks and the axis's name. */
const BELOW = 30;

/**
 * Estimate (y) against full patching's recovery (x) of each cell, one dot per cell, with the
 * diagonal where the estimate holds; `r` in its title. Both axes span the same range, so a dot
 * off the diagonal is off by what it looks.
 */
export function agreement(
  full: readonly number[],
  est: readonly number[],
  rows: readonly string[],
  cols: readonly string[],
): HTMLElement {
  const r = pearson(full, est);
  const finite = [...full, ...est].filter((v) => Number.isFinite(v));
  const lo = Math.min(0, ...finite);
  const hi = Math.max(1, ...finite);
  const at = (v: number): number => PAD + ((v - lo) / (hi - lo)) * SIDE;
  const ay = (v: number): number => PAD + SIDE - ((v - lo) / (hi - lo)) * SIDE;
  const plot = svg('svg', {
    class: 'ptc-scatter',
    width: SIDE + PAD + 8,
    height: SIDE + PAD + BELOW,
    viewBox: `0 0 ${SIDE + PAD + 8} ${SIDE + PAD + BELOW}`,
    role: 'img',
    'aria-label': `Estimate against full patching, ${full.length} cells`,
  });
  plot.append(
    svg('rect', { class: 'ptc-scatter-frame', x: PAD, y: PAD, width: SIDE, height: SIDE }),
    svg('line', { class: 'ptc-scatter-diag', x1: at(lo), y1: ay(lo), x2: at(hi), y2: ay(hi) }),
  );
  for (const v of [0, 1]) {
    plot.append(
      svg('text', { class: 'ptc-scatter-tick', x: at(v), y: PAD + SIDE + 12, 'text-anchor': 'middle' }, String(v)),
      svg('text', { class: 'ptc-scatter-tick', x: PAD - 4, y: ay(v) + 4, 'text-anchor': 'end' }, String(v)),
    );
  }
  plot.append(
    svg('text', { class: 'ptc-scatter-axis', x: PAD + SIDE / 2, y: PAD + SIDE + 24, 'text-anchor': 'middle' }, 'full'),
    svg('text', { class: 'ptc-scatter-axis', x: PAD, y: PAD - 6, 'text-anchor': 'start' }, 'estimate'),
  );
  const n = Math.min(full.length, est.length);
  for (let i = 0; i < n; i++) {
    const x = full[i] as number;
    const y = est[i] as number;
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    const label = `${rows[Math.floor(i / cols.length)] ?? ''}, ${cols[i % cols.length] ?? ''}`;
    plot.append(
      svg(
        'circle',
        { class: 'ptc-dot', cx: at(x), cy: ay(y), r: 2.5, 'data-i': i },
        svg('title', {}, `${label}: full ${formatNumber(x)}, estimate ${formatNumber(y)}`),
      ),
    );
  }
  return h(
    'div',
    { className: 'ptc-agree' },
    h('h4', {}, 'Agreement'),
    plot,
    h(
      'p',
      { className: 'ptc-r', attrs: { 'data-r': r ?? '' } },
      r === null ? 'r: n/a (a constant sweep)' : `r = ${r.toFixed(3)} over ${formatCount(n)} cells`,
    ),
  );
}

/** One run's top tokens as a small table under its caption. */
function topTable(caption: string, cls: string, top: readonly PatchTopTokenData[]): HTMLElement {
  return h(
    'table',
    { className: `ptc-top ${cls}` },
    h('caption', {}, caption),
    h(
      'tbody',
      {},
      ...top.map((t) => {
        const bar = h('span', { className: 'ptc-p-bar' });
        bar.style.setProperty('--w', String(Math.max(0, Math.min(1, t.p))));
        return h(
          'tr',
          {},
          h('td', { className: 'ptc-token', attrs: { title: JSON.stringify(t.token) } }, t.token),
          h('td', { className: 'ptc-p' }, formatPercent(t.p)),
          h('td', { className: 'ptc-p-track' }, bar),
        );
      }),
    ),
  );
}

/**
 * The detail of cell `i` of map `m` (id ptc-cell): where it is, the patched metric and its
 * recovery (and the estimate, where given), then the clean, corrupted and patched runs' top
 * tokens side by side — or one line saying why the patched run's are not there.
 */
export function cellDetail(out: PatchOutputData, m: PatchMapData, i: number, estimate: number | null): HTMLElement {
  const cols = m.cols.length;
  const row = m.rows[Math.floor(i / cols)] ?? '';
  const col = m.cols[i % cols] ?? '';
  const value = m.values[i] ?? NaN;
  const n = m.normalised[i] ?? NaN;
  const patched = m.top?.[i];
  const preds = out.top
    ? h(
        'div',
        { className: 'ptc-preds' },
        topTable('clean', 'ptc-top-clean', out.top.clean),
        topTable('corrupted', 'ptc-top-corrupted', out.top.corrupted),
        patched ? topTable('patched', 'ptc-top-patched', patched) : null,
      )
    : null;
  const why =
    out.top && !patched
      ? `This sweep has ${formatCount(m.values.length)} cells; the patched run's top tokens are kept for sweeps ` +
        `of up to ${formatCount(MAX_TOP_CELLS)}. Tick fewer sweeps or shorten the prompts to see them.`
      : null;
  return h(
    'div',
    { id: 'ptc-cell', className: 'ptc-cell-detail', attrs: { role: 'region', 'aria-label': `Cell ${row}, ${col}` } },
    h(
      'p',
      { className: 'ptc-cell-head' },
      h('strong', {}, `${row}, ${col}`),
      `: patched metric ${formatNumber(value)}, recovery ${formatNumber(n)}`,
      estimate === null ? '' : `, estimate ${formatNumber(estimate)}`,
      ` (clean ${formatNumber(out.clean)}, corrupted ${formatNumber(out.corrupted)})`,
    ),
    preds,
    why ? h('p', { className: 'note ptc-cell-why' }, why) : null,
  );
}

/**
 * Labelled values as a list of bars diverging around 0 (blue above, red below), each as long as
 * its share of the largest magnitude: direct logit attribution and the accumulated residual.
 */
export function signedBars(ariaLabel: string, rows: readonly { label: string; value: number }[]): HTMLElement {
  const top = Math.max(1e-9, ...rows.map((r) => Math.abs(r.value)));
  const bars = h('div', { className: 'ptc-bars', attrs: { role: 'list', 'aria-label': ariaLabel } });
  for (const { label, value } of rows) {
    const bar = h('span', { className: `ptc-bar${value < 0 ? ' neg' : ''}` });
    bar.style.setProperty('--w', String(Math.abs(value) / top));
    bars.append(
      h(
        'div',
        { className: 'ptc-bar-row', attrs: { role: 'listitem', 'data-v': value } },
        h('span', { className: 'ptc-bar-label' }, label),
        h('span', { className: 'ptc-bar-track' }, bar),
        h('span', { className: 'ptc-bar-value' }, formatNumber(value)),
      ),
    );
  }
  return bars;
}

/**
 * The accumulated residual stream at the last position as bars: the stream entering each layer
 * (the embeddings first, the final stream last) read through the final norm onto logit[answer] −
 * logit[wrong], so the bar where it grows is the layer that writes the answer.
 */
export function residBars(d: Extract<AttributionOutputData, { what: 'resid-accum' }>): HTMLElement {
  const last = d.tokens.length - 1;
  const bars = signedBars(
    'Accumulated residual stream',
    d.layers.map((l) => ({ label: residLabel(l.layer, d.layers.length), value: l.values[last] ?? 0 })),
  );
  return h(
    'figure',
    { className: 'ptc-sweep ptc-accum', attrs: { 'data-what': 'resid-accum' } },
    h('h3', {}, `Accumulated residual stream (clean prompt, last token ${JSON.stringify(d.tokens[last] ?? '')})`),
    bars,
    h(
      'figcaption',
      { className: 'ptc-meaning' },
      `A bar: the residual stream entering that layer, read through the final norm (the clean run's scale) onto ` +
        `logit[${d.answer}] − logit[${d.wrong}]; the final one plus the excluded biases ` +
        `(${formatNumber(d.excluded[last] ?? 0)}) is the model's ${formatNumber(d.logitDiff[last] ?? 0)}.`,
    ),
  );
}

/** A long request's progress bar (id ptc-progress) with "n of N patches" and its Cancel button (id ptc-cancel). */
export function progressBar(onCancel: () => void): {
  readonly el: HTMLElement;
  update(p: { readonly done: number; readonly total: number } | null, what: string): void;
} {
  const fill = h('span', { className: 'ptc-progress-fill' });
  const track = h(
    'span',
    {
      className: 'ptc-progress-track',
      attrs: { role: 'progressbar', 'aria-valuemin': 0, 'aria-label': 'Patching progress' },
    },
    fill,
  );
  const text = h('span', { className: 'ptc-progress-text' });
  const cancel = h('button', { attrs: { type: 'button', id: 'ptc-cancel' } }, 'Cancel');
  cancel.addEventListener('click', () => {
    cancel.disabled = true;
    onCancel();
  });
  const el = h('div', { id: 'ptc-progress', className: 'ptc-progress' }, track, text, cancel);
  return {
    el,
    update(p, what) {
      if (p && p.total > 0) {
        fill.style.setProperty('--w', String(Math.min(1, p.done / p.total)));
        track.setAttribute('aria-valuemax', String(p.total));
        track.setAttribute('aria-valuenow', String(p.done));
        track.classList.remove('busy');
        text.textContent = `${formatCount(p.done)} of ${formatCount(p.total)} ${what}`;
      } else {
        fill.style.setProperty('--w', '0');
        track.removeAttribute('aria-valuenow');
        track.classList.add('busy');
        text.textContent = 'Starting…';
      }
    },
  };
}
