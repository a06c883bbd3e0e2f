/**
 * The controls of the training-curves tab: x-axis (step / tokens / wall time), the loss's
 * unit (nats per token, or bits per byte to compare runs of different tokenizers), log scale,
 * smoothing weight, and which other runs to overlay. Each control writes the persisted UI
 * state and asks for a redraw.
 *
 * Leaves out: the charts (curves.ts).
 */

import { h } from '../base/dom';
import type { LossUnit, XMode } from '../charts/series';
import type { PanelContext } from './panel';

/** Builds the toolbar's controls. */
export function curvesToolbar(ctx: PanelContext, changed: () => void): HTMLElement[] {
  const ui = ctx.ui.curves;
  const commit = (): void => {
    ctx.saveUi();
    changed();
  };
  const xSelect = h(
    'select',
    {
      attrs: { 'aria-label': 'x-axis', id: 'curves-x' },
      on: {
        change: (e) => {
          ui.x = (e.target as HTMLSelectElement).value as XMode;
          commit();
        },
      },
    },
    ...(['step', 'tokens', 'time'] as const).map((m) =>
      h(
        'option',
        { attrs: { value: m, selected: ui.x === m } },
        m === 'step' ? 'step' : m === 'tokens' ? 'tokens seen' : 'wall time',
      ),
    ),
  );
  const perSelect = h(
    'select',
    {
      attrs: { 'aria-label': 'loss unit', id: 'curves-per' },
      on: {
        change: (e) => {
          ui.per = (e.target as HTMLSelectElement).value as LossUnit;
          commit();
        },
      },
    },
    h('option', { attrs: { value: 'token', selected: ui.per === 'token' } }, 'nats per token'),
    h('option', { attrs: { value: 'byte', selected: ui.per === 'byte' } }, 'bits per byte'),
  );
  const log = h('input', {
    attrs: { type: 'checkbox', id: 'curves-log', checked: ui.log },
    on: {
      change: (e) => {
        ui.log = (e.target as HTMLInputElement).checked;
        commit();
      },
    },
  });
  const smoothValue = h('output', { attrs: { for: 'curves-smooth' } }, ui.smoothing.toFixed(2));
  const smooth = h('input', {
    attrs: {
      type: 'range',
      id: 'curves-smooth',
      min: 0,
      max: 0.99,
      step: 0.01,
      value: ui.smoothing,
      'aria-label': 'Smoothing (exponential moving average weight)',
    },
    on: {
      input: (e) => {
        ui.smoothing = Number((e.target as HTMLInputElement).value);
        smoothValue.textContent = ui.smoothing.toFixed(2);
        commit();
      },
    },
  });
  const items: HTMLElement[] = [
    h('label', { attrs: { for: 'curves-x' } }, 'x-axis '),
    xSelect,
    h(
      'span',
      {
        className: 'toolbar-item',
        attrs: { title: 'Bits per UTF-8 byte of the text scored: runs with different tokenizers compare on this axis' },
      },
      h('label', { attrs: { for: 'curves-per' } }, 'loss in '),
      perSelect,
    ),
    h('span', { className: 'toolbar-item' }, log, h('label', { attrs: { for: 'curves-log' } }, ' log scale')),
    h(
      'span',
      { className: 'toolbar-item' },
      h('label', { attrs: { for: 'curves-smooth' } }, 'smoothing '),
      smooth,
      ' ',
      smoothValue,
    ),
  ];
  const current = ctx.run();
  const others = ctx.store.runs.filter((r) => r.id !== current?.id);
  if (others.length > 0) {
    const boxes = others.map((r, i) => {
      const id = `curves-compare-${i}`;
      const box = h('input', {
        attrs: { type: 'checkbox', id, checked: ui.compare.includes(r.id) },
        on: {
          change: (e) => {
            const on = (e.target as HTMLInputElement).checked;
            ui.compare = on ? [...ui.compare.filter((x) => x !== r.id), r.id] : ui.compare.filter((x) => x !== r.id);
            commit();
          },
        },
      });
      return h('span', { className: 'toolbar-item' }, box, h('label', { attrs: { for: id } }, ` ${r.summary.name}`));
    });
    items.push(
      h(
        'span',
        { className: 'toolbar-group', attrs: { role: 'group', 'aria-label': 'Overlay other runs' } },
        'compare with ',
        ...boxes,
      ),
    );
  }
  return items;
}
