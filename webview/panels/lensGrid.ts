/**
 * The logit-lens grid of the playground: layers as rows (the embeddings, after block 1 …
 * after block N = the model's output), decoder positions as columns labelled with their
 * input tokens, and in each cell the token the model would predict next if it stopped after
 * that row's layer, with its probability; the cell's shade is that probability (the theme's
 * heat colour over the background, on a square-root scale). Hovering or focusing a cell (arrow keys move between
 * cells) shows its top-k with probabilities. The grid scrolls sideways for long inputs while
 * the layer names stay put.
 *
 * Leaves out: asking for the lens (playgroundInside.ts) and computing it (src/lab/inference/lens.ts).
 */

import type { LensOutputData } from '../../src/protocol/analysis';
import { formatPercent } from '../../src/common/format';
import { h } from '../base/dom';
import { showToken, tokenTitle } from '../base/format';

/** The name of lens layer `layer` of a decoder with `n` blocks. */
export function layerName(layer: number, n: number): string {
  if (layer === 0) return 'embeddings';
  return layer === n ? `after block ${layer} = output` : `after block ${layer}`;
}

/** One line per candidate: "1. “b” 43.2%". */
function topLines(top: LensOutputData['layers'][number]['positions'][number]['top']): string[] {
  return top.map((t, i) => `${i + 1}. “${showToken(t.token)}” ${formatPercent(t.prob)}`);
}

/** The grid element for `lens`; `tip` is the page's one floating top-k box (position: fixed). */
export function lensGrid(lens: LensOutputData, tip: HTMLElement): HTMLElement {
  const n = lens.layers.length - 1;
  const T = lens.tokens.length;
  const head = h(
    'tr',
    {},
    h('th', { className: 'lens-corner', attrs: { scope: 'col' } }, 'layer ↓  position →'),
    ...lens.tokens.map((t, i) =>
      h(
        'th',
        {
          className: 'lens-col',
          attrs: { scope: 'col', title: `position ${i}: “${tokenTitle(t)}” — its column predicts the token after it` },
        },
        h('span', { className: 'lens-tok' }, showToken(t)),
        h('span', { className: 'lens-pos' }, String(i)),
      ),
    ),
  );
  const cells: HTMLElement[][] = [];
  const rows = lens.layers.map((l, r) => {
    const name = layerName(l.layer, n);
    const row = l.positions.map((p, t) => {
      const best = p.top[0];
      const prob = best?.prob ?? 0;
      const next = lens.tokens[t + 1];
      const hit = best !== undefined && next !== undefined && best.token === next;
      const label = `${name}, position ${t} (“${showToken(lens.tokens[t] ?? '')}”): ${topLines(p.top).join(', ')}`;
      const cell = h(
        'td',
        {
          className: `lens-cell${hit ? ' hit' : ''}`,
          attrs: {
            tabindex: r === 0 && t === 0 ? 0 : -1,
            'data-layer': l.layer,
            'data-pos': t,
            'data-prob': prob,
            'aria-label': label,
          },
        },
        h('span', { className: 'lens-tok' }, best ? showToken(best.token) : '∅'),
        h('span', { className: 'lens-p' }, formatPercent(best?.prob ?? null)),
      );
      // Square-root scale: lens probabilities are mostly small, and √ keeps 5% and 20% apart.
      cell.style.setProperty('--shade', Math.sqrt(prob).toFixed(3));
      const show = (): void =>
        showTip(tip, cell, `${name} · position ${t} (“${showToken(lens.tokens[t] ?? '')}”) predicts`, p.top);
      cell.addEventListener('mouseenter', show);
      cell.addEventListener('focus', show);
      cell.addEventListener('mouseleave', () => hideTip(tip, cell));
      cell.addEventListener('blur', () => hideTip(tip, cell));
      cell.addEventListener('keydown', (e) => moveFocus(e, cells, r, t));
      return cell;
    });
    cells.push(row);
    return h(
      'tr',
      { className: l.layer === n ? 'lens-output' : '' },
      h('th', { className: 'lens-layer', attrs: { scope: 'row' } }, name),
      ...row,
    );
  });
  const table = h(
    'table',
    {
      className: 'lens-grid',
      attrs: {
        'aria-label': `Logit lens: ${n + 1} layers × ${T} positions; each cell is the most probable next token`,
      },
    },
    h('thead', {}, head),
    h('tbody', {}, ...rows),
  );
  return h(
    'div',
    {},
    h(
      'div',
      {
        className: 'lens-scroll',
        attrs: { role: 'region', 'aria-label': 'Logit lens grid (scrolls sideways)', tabindex: -1 },
      },
      table,
    ),
    h(
      'p',
      { className: 'hint lens-legend' },
      'Shade: the probability of the cell’s token (square-root scale). Underlined: it is the next input token.',
    ),
  );
}

/** Arrow keys move the focus between cells (Home / End: first / last position of the row). */
function moveFocus(e: KeyboardEvent, cells: readonly HTMLElement[][], r: number, t: number): void {
  const row = cells[r] ?? [];
  const to: [number, number] | null =
    e.key === 'ArrowRight'
      ? [r, t + 1]
      : e.key === 'ArrowLeft'
        ? [r, t - 1]
        : e.key === 'ArrowDown'
          ? [r + 1, t]
          : e.key === 'ArrowUp'
            ? [r - 1, t]
            : e.key === 'Home'
              ? [r, 0]
              : e.key === 'End'
                ? [r, row.length - 1]
                : null;
  if (!to) return;
  const target = cells[to[0]]?.[to[1]];
  if (!target) return;
  e.preventDefault();
  const current = cells[r]?.[t];
  if (current) current.tabIndex = -1;
  target.tabIndex = 0;
  target.focus();
}

/** Fills the floating box with `top` and puts it below `cell` (above when there is no room). */
function showTip(
  tip: HTMLElement,
  cell: HTMLElement,
  title: string,
  top: LensOutputData['layers'][number]['positions'][number]['top'],
): void {
  tip.replaceChildren(
    h('div', { className: 'lens-tip-title' }, title),
    h(
      'ol',
      {},
      ...top.map((c) => {
        const bar = h('span', { className: 'lens-tip-bar' });
        bar.style.setProperty('--p', c.prob.toFixed(3));
        return h(
          'li',
          {},
          h('code', { attrs: { title: tokenTitle(c.token) } }, showToken(c.token)),
          h('span', { className: 'lens-tip-p' }, formatPercent(c.prob)),
          bar,
        );
      }),
    ),
  );
  tip.hidden = false;
  tip.dataset.for = `${cell.dataset.layer}/${cell.dataset.pos}`;
  const box = cell.getBoundingClientRect();
  const w = tip.offsetWidth;
  const ht = tip.offsetHeight;
  const left = Math.max(4, Math.min(window.innerWidth - w - 4, box.left));
  const below = box.bottom + 4;
  tip.style.left = `${Math.round(left)}px`;
  tip.style.top = `${Math.round(below + ht > window.innerHeight - 4 ? Math.max(4, box.top - ht - 4) : below)}px`;
}

function hideTip(tip: HTMLElement, cell: HTMLElement): void {
  if (tip.dataset.for === `${cell.dataset.layer}/${cell.dataset.pos}` && document.activeElement !== cell)
    tip.hidden = true;
}
