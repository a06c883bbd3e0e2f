/**
 * The dashboard application: the header (run picker, run status, training controls, theme
 * picker on the standalone page), the error banner, the tabs and their panels. Every message
 * from the host is validated (src/protocol/webview.ts) before it touches the store; an invalid or
 * out-of-order one is reported in the banner (and to the host as webview/didError) and the
 * panels keep showing what they had. Repaints are coalesced to one per animation frame and
 * only the visible panel draws; hidden ones catch up when shown.
 *
 * Leaves out: the host detection (host.ts) and each panel's drawing (panels/).
 */

import { validateToWebview } from '../src/protocol/webview';
import type { ToWebview } from '../src/protocol/webview';
import { ErrorBanner } from './banner';
import { h, replaceChildren } from './base/dom';
import type { Host } from './host';
import { AttentionPanel } from './panels/attention';
import { CurvesPanel } from './panels/curves';
import { HeadsPanel } from './panels/heads';
import { MasksPanel } from './panels/masks';
import { ModelPanel } from './panels/model';
import type { Panel, PanelContext } from './panels/panel';
import { PlaygroundPanel } from './panels/playground';
import { PatchingPanel } from './panels/patching';
import { RunHeader } from './runHeader';
import { DashboardStore } from './store';
import type { StoreEvent } from './store';
import type { Theme } from './base/theme';
import { readTheme, watchTheme } from './base/theme';
import type { TabId, UiState } from './uiState';
import { sanitizeUiState } from './uiState';

/** The running dashboard. */
export class App {
  readonly store = new DashboardStore();
  readonly ui: UiState;
  private theme: Theme;
  private readonly banner = new ErrorBanner();
  private readonly panels: Panel[];
  private readonly tabs: HTMLButtonElement[] = [];
  private headerTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly header: RunHeader;
  private readonly dirty = new Map<TabId, boolean>();
  private frame = 0;
  private saveTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: Host,
  ) {
    this.ui = sanitizeUiState(host.getState());
    this.theme = readTheme();
    // oxlint-disable-next-line no-this-alias -- the context's getters read the app's current theme
    const app = this;
    const ctx: PanelContext = {
      store: this.store,
      ui: this.ui,
      host,
      get theme(): Theme {
        return app.theme;
      },
      run: () => this.store.run(this.ui.runId),
      saveUi: () => this.saveUi(),
      problem: (text) => this.problem(text),
      invalidate: (panel, full = false) => this.invalidate(panel, full),
      show: (tab) => {
        this.showTab(tab);
        this.panels.find((p) => p.id === tab)?.el.focus();
      },
      lookInside: (text) => {
        const playground = this.panels.find((p): p is PlaygroundPanel => p instanceof PlaygroundPanel);
        playground?.lookInside(text);
        ctx.show('playground');
      },
    };
    this.panels = [
      new CurvesPanel(ctx),
      new AttentionPanel(ctx),
      new HeadsPanel(ctx),
      new MasksPanel(ctx),
      new ModelPanel(ctx),
      new PlaygroundPanel(ctx),
      new PatchingPanel(ctx),
    ];
    this.header = new RunHeader(ctx, () => this.selectRun());
    this.layout();
    watchTheme(() => {
      this.theme = readTheme();
      for (const p of this.panels) this.invalidate(p.id, true);
    });
    window.addEventListener('resize', () => this.invalidate(this.ui.tab, true));
  }

  /** Handles one message from the host (typed arrays already revived, not yet validated). */
  receive(raw: unknown): void {
    let msg: ToWebview;
    try {
      msg = validateToWebview(raw);
    } catch (e) {
      this.problem(`Malformed message from the host: ${(e as Error).message}`);
      return;
    }
    let result;
    try {
      result = this.store.apply(msg);
    } catch (e) {
      this.problem(`Could not apply ${msg.type}: ${(e as Error).message}`);
      return;
    }
    for (const p of result.problems) this.problem(p);
    for (const ev of result.events) this.route(ev);
  }

  /** Shows a problem in the banner and tells the host. */
  problem(text: string): void {
    this.banner.show(text);
    if (this.host.kind === 'vscode') this.host.post({ type: 'webview/didError', message: text.slice(0, 2000) });
  }

  private route(ev: StoreEvent): void {
    if (ev.kind === 'runs') {
      // The host's choice (dashboard/didLoadRuns selectedId) wins once; then the user's.
      const preferred = this.store.preferredRunId;
      this.store.preferredRunId = null;
      if (preferred !== null && this.store.run(preferred)) this.ui.runId = preferred;
      else if (!this.store.run(this.ui.runId)) this.ui.runId = this.store.runs[0]?.id ?? null;
      this.header.render();
      for (const p of this.panels) this.invalidate(p.id, true);
      this.saveUi();
      return;
    }
    if (ev.kind === 'show') {
      if (ev.runId !== null && ev.runId !== this.ui.runId) {
        this.ui.runId = ev.runId;
        this.selectRun();
      }
      this.showTab(ev.tab);
      return;
    }
    if (ev.kind === 'inspected') {
      // Show Attention for Selection: the text's attention, not the training snapshots; its text is the run's box's.
      this.ui.attention.view = 'text';
      const text = this.store.run(ev.runId)?.inspection?.text;
      if (text !== undefined) this.ui.inspectTexts[ev.runId] = text;
      this.saveUi();
      if (ev.runId === this.ui.runId) for (const p of this.panels) this.invalidate(p.id, true);
      return;
    }
    if (ev.kind === 'select') {
      if (ev.runId !== this.ui.runId) {
        this.ui.runId = ev.runId;
        this.selectRun();
      }
      return;
    }
    if (ev.kind === 'run') {
      if (ev.runId === this.ui.runId && ev.parts.includes('status')) this.header.render();
      else if (ev.runId === this.ui.runId) this.renderHeaderSoon();
      const comparing = this.ui.curves.compare.includes(ev.runId);
      for (const p of this.panels)
        if ((ev.runId === this.ui.runId || (comparing && p.id === 'curves')) && p.wants(ev)) this.invalidate(p.id);
      return;
    }
    for (const p of this.panels) if (p.wants(ev)) this.invalidate(p.id);
  }

  /** Re-renders the header (live step count) at most twice a second. */
  private renderHeaderSoon(): void {
    if (this.headerTimer !== null) return;
    this.headerTimer = setTimeout(() => {
      this.headerTimer = null;
      this.header.render();
    }, 500);
  }

  private selectRun(): void {
    this.ui.attention.snapshot = -1;
    this.header.render();
    for (const p of this.panels) this.invalidate(p.id, true);
    this.saveUiNow();
  }

  private invalidate(panel: TabId, full = false): void {
    this.dirty.set(panel, full || (this.dirty.get(panel) ?? false));
    if (this.frame === 0) this.frame = requestAnimationFrame(() => this.paint());
  }

  private paint(): void {
    this.frame = 0;
    const visible = this.panels.find((p) => p.id === this.ui.tab);
    if (!visible || !this.dirty.has(visible.id)) return;
    const full = this.dirty.get(visible.id) === true;
    this.dirty.delete(visible.id);
    try {
      visible.render(full);
    } catch (e) {
      this.problem(`The ${visible.label} panel failed to draw: ${(e as Error).message}`);
    }
  }

  /** Saves UI state soon (slider drags and toggles come in bursts). */
  private saveUi(): void {
    if (this.saveTimer !== null) return;
    this.saveTimer = setTimeout(() => this.saveUiNow(), 200);
  }

  /** Saves UI state at once: a reload right after a tab or run change must restore it. */
  private saveUiNow(): void {
    if (this.saveTimer !== null) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    this.host.setState(this.ui);
  }

  private layout(): void {
    const tablist = h('div', { className: 'tabs', attrs: { role: 'tablist', 'aria-label': 'Dashboard views' } });
    const body = h('div', { className: 'panels' });
    this.panels.forEach((p, i) => {
      const tab = h(
        'button',
        {
          className: 'tab',
          id: `tab-${p.id}`,
          attrs: { type: 'button', role: 'tab', 'aria-controls': `panel-${p.id}`, 'data-tab': p.id },
        },
        p.label,
      );
      tab.addEventListener('click', () => this.showTab(p.id));
      tab.addEventListener('keydown', (e) => {
        const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
        const to =
          e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? this.panels.length - 1
              : d !== 0
                ? (i + d + this.panels.length) % this.panels.length
                : -1;
        if (to < 0) return;
        e.preventDefault();
        const target = this.panels[to] as Panel;
        this.showTab(target.id);
        this.tabs[to]?.focus();
      });
      this.tabs.push(tab);
      tablist.appendChild(tab);
      p.el.id = `panel-${p.id}`;
      p.el.setAttribute('role', 'tabpanel');
      p.el.setAttribute('aria-labelledby', `tab-${p.id}`);
      p.el.tabIndex = -1;
      body.appendChild(p.el);
    });
    replaceChildren(this.root, this.header.el, this.banner.el, tablist, body);
    this.showTab(this.ui.tab);
  }

  private showTab(id: TabId): void {
    const prev = this.ui.tab;
    this.ui.tab = id;
    this.panels.forEach((p, i) => {
      const on = p.id === id;
      p.el.hidden = !on;
      const tab = this.tabs[i] as HTMLButtonElement;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
      if (!on && p.id === prev && prev !== id) p.hide?.();
    });
    this.invalidate(id, true);
    this.saveUiNow();
  }
}
