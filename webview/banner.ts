/**
 * The error banner: a visible, dismissible list of what went wrong with the messages the
 * page received (malformed, out of order, for an unknown run or decode). The page keeps
 * drawing what it has; the banner says what it ignored and why. Repeats of one problem are
 * counted instead of listed again, and only the latest few are kept.
 *
 * Leaves out: deciding what is a problem (app.ts, store.ts).
 */

import { h, replaceChildren } from './base/dom';

const MAX_SHOWN = 5;

/** The banner at the top of the dashboard. */
export class ErrorBanner {
  readonly el: HTMLElement;
  private readonly list = h('ul', { className: 'banner-list' });
  private readonly items: { text: string; count: number }[] = [];

  constructor() {
    const dismiss = h(
      'button',
      {
        className: 'banner-dismiss',
        attrs: { type: 'button', 'aria-label': 'Dismiss these errors' },
        on: { click: () => this.clear() },
      },
      'Dismiss',
    );
    this.el = h(
      'div',
      { className: 'banner', attrs: { role: 'alert', hidden: true } },
      h('div', { className: 'banner-head' }, h('strong', {}, 'Problems with what the dashboard received'), dismiss),
      this.list,
    );
  }

  /** Number of distinct problems shown. */
  get size(): number {
    return this.items.length;
  }

  /** Adds a problem. */
  show(text: string): void {
    const same = this.items.find((i) => i.text === text);
    if (same) same.count++;
    else {
      this.items.push({ text, count: 1 });
      if (this.items.length > MAX_SHOWN) this.items.shift();
    }
    replaceChildren(
      this.list,
      ...this.items.map((i) =>
        h('li', {}, i.text, i.count > 1 ? h('span', { className: 'banner-count' }, ` (×${i.count})`) : null),
      ),
    );
    this.el.hidden = false;
  }

  /** Hides and forgets every problem. */
  clear(): void {
    this.items.length = 0;
    replaceChildren(this.list);
    this.el.hidden = true;
  }
}
