/**
 * The runs the extension knows — every run folder under the runs root plus the ones
 * opened from elsewhere — read through the lazily loaded lab module, with the live state
 * of the run that is training laid over its folder's (last checkpointed) state. A run
 * whose run.json says "training" while nothing trains it was interrupted (e.g. by a
 * window reload) and can resume from its last checkpoint. No VS Code import.
 *
 * Leaves out: drawing (runsTree.ts) and the context keys (extension.ts sets them from
 * `onDidChange`).
 */

import type { LabFs } from '../../lab/files/labFs';
import type { DataSummary } from '../../protocol/data';
import type { LiveProgress, ShownRunStatus } from '../../protocol/runStatus';
import { shownRunState } from '../../protocol/runStatus';
import type { RunSummary } from '../../protocol/webview';
import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { Emitter } from '../base/emitter';
import type { Event } from '../base/emitter';
import type { LabLoader } from '../host/labLoader';

/** What the runs show of the run training in this window. */
export interface LiveRun extends LiveProgress {
  /** Its folder (resolved). */
  readonly runId: string;
  readonly name: string;
  readonly totalSteps: number;
  readonly bestValLoss: number | null;
  readonly backend: string | null;
}

/**
 * The training in this window, as far as the runs overlay it (training/trainingController.ts gives it; passed in, so
 * the runs sit below training).
 */
export interface LiveTraining {
  /** The run training now, or null. */
  readonly state: LiveRun | null;
  /** The live run changed: its progress, or it started or ended. */
  readonly onDidChange: Event<unknown>;
  /** A notification of the live run's worker. */
  readonly onEvent: Event<{ readonly event: { readonly type: string } }>;
  /** The live run ended. */
  readonly onDidEnd: Event<unknown>;
}

/** A run's status as the UI shows it (protocol/runStatus.ts decides it). */
export type RunStatus = ShownRunStatus;

/** One run as the tree and the commands see it. */
export interface RunItem {
  readonly runDir: string;
  /** The name the user gave it, else its folder's name. */
  readonly name: string;
  readonly status: RunStatus;
  /** The user's note, or null. */
  readonly note: string | null;
  /** The kernel backend it last trained on ("wasm", "reference"; "auto" for runs from before that was recorded). */
  readonly backend: string | null;
  readonly kind: RunSummary['kind'] | null;
  readonly step: number;
  readonly totalSteps: number;
  readonly bestValLoss: number | null;
  /** model.safetensors exists: decode, score, export work. */
  readonly hasModel: boolean;
  /** This run is training right now. */
  readonly active: boolean;
  readonly params: number | null;
  readonly data: DataSummary | null;
  /** Set on a model imported from a checkpoint and not trained here since: its layout ("Hugging Face GPT-2"). */
  readonly imported: string | null;
  /** Why the folder could not be read (the other fields are placeholders then). */
  readonly error: string | null;
}

/** True when a run can continue training from its last checkpoint. */
export function isResumable(r: RunItem): boolean {
  return !r.active && r.error === null && r.hasModel && r.step < r.totalSteps && r.status !== 'completed';
}

/**
 * True when a run can be trained for more steps than it planned ("Continue Training…"): a finished, stopped or
 * interrupted run with a checkpoint.
 */
export function isExtendable(r: RunItem): boolean {
  return (
    !r.active &&
    r.error === null &&
    r.hasModel &&
    (r.status === 'completed' || r.status === 'stopped' || r.status === 'interrupted')
  );
}

/**
 * The tree item's `contextValue`: `run.<status>[.trained][.resumable][.extendable | .imported][.active][.current]`
 * (package.json matches on it): `.imported` is a model imported and not trained here (its
 * training action is Fine-tune…), `.active` is training now, `.current` is the active run the commands use.
 */
export function contextValueOf(r: RunItem, current = false): string {
  const tag =
    r.imported !== null ? '.imported' : `${isResumable(r) ? '.resumable' : ''}${isExtendable(r) ? '.extendable' : ''}`;
  return `run.${r.status}${r.hasModel ? '.trained' : ''}${tag}${r.active ? '.active' : ''}${current ? '.current' : ''}`;
}

/** Known runs, refreshed from disk on demand and overlaid with the live run. */
export class RunsModel implements DisposableLike {
  private readonly store = new DisposableStore();
  private readonly changes = new Emitter<readonly RunItem[]>();
  private disk: RunItem[] = [];
  private loaded = false;
  /** The read in flight, and whether another must follow it (the folders changed meanwhile). */
  private reading: Promise<readonly RunItem[]> | null = null;
  private again = false;

  /** The list after any change. */
  readonly onDidChange: Event<readonly RunItem[]> = this.changes.event;

  constructor(
    private readonly lab: LabLoader,
    private readonly fs: LabFs,
    private readonly controller: LiveTraining,
    private readonly roots: () => Promise<{ root: string; opened: readonly string[] }>,
    private readonly onError: (message: string) => void,
  ) {
    this.store.add(this.changes);
    this.store.add(controller.onDidChange(() => this.changes.fire(this.items())));
    this.store.add(
      controller.onEvent(({ event }) => {
        if (event.type === 'train/didStart' || event.type === 'train/didSaveCheckpoint') void this.refresh();
      }),
    );
    this.store.add(controller.onDidEnd(() => void this.refresh()));
  }

  /** True once the folders were read at least once. */
  get isLoaded(): boolean {
    return this.loaded;
  }

  /**
   * Rereads every run folder; resolves to the runs once read. A call while a read is in
   * flight is answered by one more read after it (never two at once).
   */
  refresh(): Promise<readonly RunItem[]> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    const read = async (): Promise<readonly RunItem[]> => {
      let items: readonly RunItem[];
      do {
        this.again = false;
        items = await this.readOnce();
      } while (this.again);
      this.reading = null;
      return items;
    };
    this.reading = read();
    return this.reading;
  }

  private async readOnce(): Promise<readonly RunItem[]> {
    const { fs } = this;
    const { root, opened } = await this.roots();
    try {
      const lab = this.lab.get();
      const elsewhere = opened.filter((d) => fs.dirname(fs.resolve(d)) !== fs.resolve(root));
      const listings = [
        ...(await lab.listRuns(fs, root)),
        ...(await Promise.all(elsewhere.map((d) => lab.readListing(fs, d)))),
      ];
      this.disk = listings.map((l): RunItem => {
        if (!l.ok)
          return {
            runDir: l.runDir,
            name: fs.basename(l.runDir),
            status: 'failed',
            note: null,
            backend: null,
            kind: null,
            step: 0,
            totalSteps: 0,
            bestValLoss: null,
            hasModel: false,
            active: false,
            params: null,
            data: null,
            imported: null,
            error: l.error,
          };
        const s = l.summary;
        return {
          runDir: s.runDir,
          name: s.name,
          status: s.status,
          note: s.note ?? null,
          backend: s.model?.backend ?? null,
          kind: s.kind,
          step: s.step,
          totalSteps: s.totalSteps,
          bestValLoss: s.bestValLoss,
          hasModel: l.hasModel,
          active: false,
          params: s.model?.params ?? null,
          data: s.data,
          imported: s.imported && s.step === 0 ? s.imported.layout : null,
          error: null,
        };
      });
    } catch (e) {
      this.onError(`Could not read the runs in ${root}: ${(e as Error).message}`);
    }
    this.loaded = true;
    const items = this.items();
    this.changes.fire(items);
    return items;
  }

  /** Every run, the live one overlaid; newest first. */
  items(): RunItem[] {
    const live = this.controller.state;
    const out = this.disk.map((r): RunItem => {
      const mine = live !== null && live.runId === r.runDir ? live : null;
      const shown = r.error === null ? shownRunState(r, mine) : { status: r.status, step: r.step };
      // While it fine-tunes, an imported model is a run training like any other.
      if (mine)
        return {
          ...r,
          ...shown,
          active: true,
          imported: null,
          totalSteps: mine.totalSteps,
          bestValLoss: mine.bestValLoss ?? r.bestValLoss,
          backend: mine.backend ?? r.backend,
        };
      return { ...r, ...shown };
    });
    if (live && !out.some((r) => r.runDir === live.runId)) {
      out.unshift({
        runDir: live.runId,
        name: live.name,
        ...shownRunState({ status: 'created', step: 0 }, live),
        note: null,
        backend: live.backend,
        kind: null,
        totalSteps: live.totalSteps,
        bestValLoss: live.bestValLoss,
        hasModel: false,
        active: true,
        params: null,
        data: null,
        imported: null,
        error: null,
      });
    }
    return out;
  }

  /** The run in `runDir`, if known. */
  find(runDir: string): RunItem | undefined {
    const id = this.fs.resolve(runDir);
    return this.items().find((r) => r.runDir === id);
  }

  dispose(): void {
    this.store.dispose();
  }
}
