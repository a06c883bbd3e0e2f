/**
 * What every dashboard panel implements, and the context the app hands it: the store, the
 * persisted UI state, the host, the current theme and a way to report problems. Panels only
 * draw while visible; the app marks them dirty when data they show changes and repaints at
 * most once per animation frame.
 *
 * Leaves out: the panels themselves (one file each in this folder).
 */

import type { Theme } from '../base/theme';
import type { Host } from '../host';
import type { DashboardStore, RunEntry, StoreEvent } from '../store';
import type { TabId, UiState } from '../uiState';

/** Shared context of the panels. */
export interface PanelContext {
  readonly store: DashboardStore;
  readonly ui: UiState;
  readonly host: Host;
  readonly theme: Theme;
  /** The selected run. */
  run(): RunEntry | undefined;
  /** Saves the UI state (debounced). */
  saveUi(): void;
  /** Shows a problem in the error banner. */
  problem(text: string): void;
  /** Asks the app to repaint a panel on the next frame. */
  invalidate(panel: TabId, full?: boolean): void;
  /** Brings a tab to the front and moves keyboard focus to it (e.g. a head opened from the Heads tab). */
  show(tab: TabId): void;
  /** Opens the playground on `text` for the selected run and asks for its logit lens (head ablation sits beside it). */
  lookInside(text: string): void;
}

/** One tab of the dashboard. */
export interface Panel {
  readonly id: TabId;
  readonly label: string;
  readonly el: HTMLElement;
  /** Draws the panel. `full`: the run, theme or layout changed, rebuild everything. */
  render(full: boolean): void;
  /** Whether a store change concerns this panel. */
  wants(ev: StoreEvent): boolean;
  /** The panel was hidden (stop timers). */
  hide?(): void;
}
