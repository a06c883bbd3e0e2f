/**
 * The playground's head ablation, drawn: a compact layer × head grid of toggles per
 * attention stack (decoder self-attention, and for an encoder-decoder the encoder's
 * self-attention and the decoder's cross-attention) where a pressed toggle is a head
 * switched off, and the result side by side — the next-token probabilities with every head
 * on and with the chosen heads off, each with its Δ, and the loss on the text both ways.
 *
 * Leaves out: asking for the numbers (playgroundInside.ts) and computing them
 * (src/lab/inference/ablate.ts).
 */

import type { AblationOutputData, HeadRefData } from '../../src/protocol/analysis';
import type { AttentionStack, ModelConfigData } from '../../src/protocol/model';
import { formatLoss, formatLossDelta, formatPercent, formatProbDelta } from '../../src/common/format';
import { STACK_LABELS } from '../heatmap/attentionMath';
import { h } from '../base/dom';
import { showToken } from '../base/format';

/** A head as the UI state keeps it: `stack:layer:head` (0-based). */
export function headKey(h: HeadRefData): string {
  return `${h.stack}:${h.layer}:${h.head}`;
}

/** The head a key names (keys come from the sanitized UI state, so they parse). */
export function headOfKey(key: string): HeadRefData {
  const [stack, layer, head] = key.split(':');
  return { stack: stack as AttentionStack, layer: Number(layer), head: Number(head) };
}

/** The attention stacks of a model, with their layer counts; null when its sizes are unknown. */
export function stacksOf(
  cfg: ModelConfigData | undefined,
): { stack: AttentionStack; layers: number; heads: number }[] | null {
  if (!cfg || cfg.nHeads === undefined || cfg.nDecoderLayers === undefined) return null;
  const heads = cfg.nHeads;
  if (cfg.kind === 'decoder-only') return [{ stack: 'decoder.self', layers: cfg.nDecoderLayers, heads }];
  if (cfg.nEncoderLayers === undefined) return null;
  return [
    { stack: 'encoder.self', layers: cfg.nEncoderLayers, heads },
    { stack: 'decoder.self', layers: cfg.nDecoderLayers, heads },
    { stack: 'decoder.cross', layers: cfg.nDecoderLayers, heads },
  ];
}

/** The toggle grids; `onToggle(key)` flips one head. Layers and heads are labelled from 1. */
export function headToggles(
  stacks: NonNullable<ReturnType<typeof stacksOf>>,
  off: ReadonlySet<string>,
  enabled: boolean,
  onToggle: (key: string) => void,
): HTMLElement {
  const grids = stacks.map(({ stack, layers, heads }) => {
    const rows = Array.from({ length: layers }, (_, l) =>
      h(
        'tr',
        {},
        h('th', { attrs: { scope: 'row' } }, `L${l + 1}`),
        ...Array.from({ length: heads }, (__, hd) => {
          const key = headKey({ stack, layer: l, head: hd });
          const isOff = off.has(key);
          return h(
            'td',
            {},
            h(
              'button',
              {
                className: 'ab-head',
                attrs: {
                  type: 'button',
                  'data-head': key,
                  'aria-pressed': String(isOff),
                  disabled: !enabled,
                  'aria-label': `${STACK_LABELS[stack]} layer ${l + 1} head ${hd + 1}: ${isOff ? 'off' : 'on'}`,
                  title:
                    `${STACK_LABELS[stack]}, layer ${l + 1}, head ${hd + 1} — ` +
                    `${isOff ? 'off (click to switch on)' : 'on (click to switch off)'}`,
                },
                on: { click: () => onToggle(key) },
              },
              String(hd + 1),
            ),
          );
        }),
      ),
    );
    const headRow = h(
      'tr',
      {},
      h('th', {}, ''),
      ...Array.from({ length: heads }, (_, hd) => h('th', { attrs: { scope: 'col' } }, `H${hd + 1}`)),
    );
    const nOff = [...off].filter((k) => k.startsWith(`${stack}:`)).length;
    return h(
      'figure',
      { className: 'ab-stack', attrs: { 'data-stack': stack } },
      h('figcaption', {}, STACK_LABELS[stack], h('span', { className: 'hint' }, ` ${nOff} of ${layers * heads} off`)),
      h('table', { className: 'ab-grid' }, h('thead', {}, headRow), h('tbody', {}, ...rows)),
    );
  });
  return h('div', { className: 'ab-stacks' }, ...grids);
}

/** The comparison: loss both ways and the next-token table with Δ. */
export function ablationResult(out: AblationOutputData): HTMLElement {
  const nOff = out.off.length;
  const offLabel = nOff === 0 ? 'no heads off' : `${nOff} head${nOff === 1 ? '' : 's'} off`;
  const lossRow =
    out.base.scored === 0
      ? h('p', { className: 'ab-loss' }, 'No loss: the text has no token after BOS to predict.')
      : h(
          'p',
          { className: 'ab-loss' },
          `Loss on this text (${out.base.scored} token${out.base.scored === 1 ? '' : 's'}, nats): `,
          h('strong', { attrs: { 'data-loss': 'base' } }, formatLoss(out.base.loss)),
          ' with every head on, ',
          h('strong', { attrs: { 'data-loss': 'ablated' } }, formatLoss(out.ablated.loss)),
          ` with ${offLabel} — Δloss `,
          h(
            'strong',
            {
              className: 'ab-delta',
              attrs: { 'data-loss': 'delta', 'data-sign': Math.sign(out.ablated.loss - out.base.loss) },
            },
            formatLossDelta(out.ablated.loss - out.base.loss),
          ),
        );
  const last = out.tokens[out.tokens.length - 1] ?? '';
  const rows = out.compare.map((c) => {
    const d = c.ablated - c.base;
    const bar = (p: number): HTMLElement => {
      const b = h('span', { className: 'ab-bar' });
      b.style.setProperty('--p', p.toFixed(3));
      return b;
    };
    return h(
      'tr',
      {},
      h('td', {}, h('code', {}, showToken(c.token))),
      h('td', { className: 'num', attrs: { 'data-col': 'base' } }, bar(c.base), formatPercent(c.base)),
      h('td', { className: 'num', attrs: { 'data-col': 'ablated' } }, bar(c.ablated), formatPercent(c.ablated)),
      h(
        'td',
        { className: 'num ab-delta', attrs: { 'data-col': 'delta', 'data-sign': Math.sign(d) } },
        formatProbDelta(d),
      ),
    );
  });
  const table = h(
    'table',
    {
      className: 'ab-table',
      attrs: { 'aria-label': 'Next-token probabilities with every head on and with the chosen heads off' },
    },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { attrs: { scope: 'col' } }, `next token after “${showToken(last)}”`),
        h('th', { attrs: { scope: 'col' } }, 'all heads on'),
        h('th', { attrs: { scope: 'col' } }, offLabel),
        h('th', { attrs: { scope: 'col' } }, 'Δ'),
      ),
    ),
    h('tbody', {}, ...rows),
  );
  return h(
    'div',
    { className: 'ab-result' },
    lossRow,
    table,
    h('p', { className: 'hint' }, 'Rows: every token in either top-k, with its probability both ways.'),
  );
}
