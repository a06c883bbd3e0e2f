/**
 * One open dashboard panel: waits for the page's `webview/ready` before posting anything,
 * then sends every known run (`dashboard/didLoadRuns`) and forwards the live run's worker
 * notifications (`run/didUpdate`), dropping the ones already contained in what was read
 * from disk so the page never sees a step twice. Forwards the page's model worker requests
 * (decode, attention, logit lens, ablation: `modelRequests`'s `page` entries) with one generic
 * forwarder, and answers its pause / resume / stop buttons through the controller.
 * Every message from the page is validated first. Resent whole whenever the page reloads
 * (hidden panels are not kept alive: `retainContextWhenHidden` stays off).
 *
 * Leaves out: creating and restoring panels (dashboardManager.ts), the page (webview/).
 */

import type * as vscode from 'vscode';
import type { ToWebview, PageModelRequest, RunState, FromWebview } from '../../protocol/webview';
import { ProtocolError } from '../../protocol/schema';
import { modelRequestKind, modelRequests } from '../../protocol/modelWorker';
import { isPageModelRequest, validateFromWebview } from '../../protocol/webview';
import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { encodeArrays } from '../../common/wireCodec';
import { messageOf } from '../base/errors';
import type { ActiveRun } from '../runs/activeRun';
import type { LabFs } from '../../lab/files/labFs';
import type { LabLoader, PytorchLab } from '../host/labLoader';
import type { ModelClient } from '../workers/modelClient';
import type { RunItem, RunsModel } from '../runs/runsModel';
import type { RunEvent, TrainingController } from '../training/trainingController';

/** Runs whose attention snapshots are sent (besides the selected and the live one). */
const SNAPSHOT_RUNS = 5;
/** How soon a list is read again when the live run's folder could not be read into it. */
const RETRY_MS = 1000;

/** What a connection needs. */
export interface ConnectionDeps {
  readonly log: vscode.LogOutputChannel;
  readonly lab: LabLoader;
  /** The PyTorch engine's host side (a Node host only; null on the web, where no trainer runs). */
  readonly pytorch: (() => PytorchLab) | null;
  /** The file system the run folders are read from. */
  readonly fs: LabFs;
  readonly controller: TrainingController;
  readonly models: ModelClient;
  readonly runs: RunsModel;
  /** The active run: the header's picker sets it, and shows it when it is set elsewhere. */
  readonly active: ActiveRun;
  /** Saves an exported chart, heatmap or table (exportSave.ts: a save dialog, then the file). */
  readonly saveExport: (msg: Extract<FromWebview, { type: 'export/save' }>) => Promise<unknown>;
  /** Resumes a stopped or interrupted run from its last checkpoint (the Resume command). */
  readonly resume: (runDir: string) => unknown;
}

interface Watermark {
  step: number;
  evalStep: number;
  snapshotStep: number;
}

/** The messaging of one dashboard panel. */
export class DashboardConnection implements DisposableLike {
  private readonly store = new DisposableStore();
  private ready = false;
  private readonly sent = new Map<string, Watermark>();
  /** Runs whose pending snapshot weights the model worker is drawing (drawPending). */
  private readonly drawing = new Set<string>();
  /** Messages waiting for the page's first run list. */
  private readonly pending: ToWebview[] = [];
  /** Run lists being read (one after another), and the live notifications that arrived meanwhile. */
  private loads: Promise<void> = Promise.resolve();
  private loading = 0;
  private readonly held: RunEvent[] = [];
  /** The runs the last list tried to read (sent or left out). */
  private listed = new Set<string>();
  /** A list read again soon: the live run could not be read into the last one. */
  private retry: ReturnType<typeof setTimeout> | null = null;
  /** The page's model worker requests in flight, by the page's id: aborting one cancels it (model/cancel). */
  private readonly inFlight = new Map<number, AbortController>();

  constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly deps: ConnectionDeps,
    private selectedId: string | null,
  ) {
    this.store.add(panel.webview.onDidReceiveMessage((raw: unknown) => this.onMessage(raw)));
    // A hidden panel's page is gone (not retained): nothing is posted until the next one says webview/ready,
    // which gets every run again; what was posted meanwhile would reach it before its run list.
    this.store.add(
      panel.onDidChangeViewState(() => {
        if (!panel.visible) this.ready = false;
      }),
    );
    this.store.add(deps.controller.onEvent((e) => this.forward(e)));
    // A run the last list did not have (read before its folder was, or while its run.json
    // could not be read, as on the web where reading takes longer) is listed once the runs
    // model has it; so is a run gone from it.
    this.store.add(
      deps.runs.onDidChange((items) => this.ready && this.loading === 0 && this.listChanged(items) && this.sendRuns()),
    );
  }

  /** Whether `items` has a readable run the last list did not try, or lacks one it did. */
  private listChanged(items: readonly RunItem[]): boolean {
    const now = new Set(items.filter((r) => r.error === null).map((r) => r.runDir));
    return [...now].some((d) => !this.listed.has(d)) || [...this.listed].some((d) => !now.has(d));
  }

  /** Shows `runId` (now if the page is ready, else when it is). */
  select(runId: string | null): void {
    this.selectedId = runId;
    if (this.ready) this.sendRuns();
  }

  /** Resends every run (e.g. after one was deleted). */
  reload(): void {
    if (this.ready) this.sendRuns();
  }

  /** Shows the active run that was set elsewhere (the page ignores a run it does not list). */
  showActive(runId: string): void {
    if (this.ready) this.post({ type: 'dashboard/didSetActiveRun', runDir: runId });
  }

  /** Posts `msgs` once the page has its runs (at once when it already has). */
  afterLoad(msgs: readonly ToWebview[]): void {
    if (!this.ready) this.pending.push(...msgs);
    // After the run list being read: the page ignores a message about a run it does not list yet.
    else if (this.loading > 0) this.loads = this.loads.then(() => msgs.forEach((m) => this.post(m)));
    else for (const m of msgs) this.post(m);
  }

  private post(msg: ToWebview): void {
    // Typed arrays go as base64 strings: VS Code transfers ArrayBuffers to the page, and a
    // message it delivers twice then arrives with empty arrays (see src/common/wireCodec.ts).
    void this.panel.webview
      .postMessage(encodeArrays(msg))
      .then(undefined, (e: unknown) =>
        this.deps.log.warn(`Could not post ${msg.type} to the dashboard: ${messageOf(e)}`),
      );
  }

  private onMessage(raw: unknown): void {
    let msg: FromWebview;
    try {
      msg = validateFromWebview(raw);
    } catch (e) {
      this.deps.log.warn(
        `Ignored an invalid message from the dashboard: ${e instanceof ProtocolError ? e.message : messageOf(e)}`,
      );
      return;
    }
    if (!this.namesKnownRun(msg)) return;
    if (isPageModelRequest(msg)) {
      void this.forwardRequest(msg);
      return;
    }
    switch (msg.type) {
      case 'webview/ready':
        this.ready = true;
        this.sendRuns();
        this.afterLoad(this.pending.splice(0));
        return;
      case 'webview/didError':
        this.deps.log.warn(`Dashboard: ${msg.message}`);
        return;
      case 'model/cancel':
        this.inFlight.get(msg.id)?.abort();
        return;
      case 'train/control':
        this.control(msg.runDir, msg.action);
        return;
      case 'export/save':
        void this.deps.saveExport(msg);
        return;
      case 'dashboard/didSelectRun':
        if (this.deps.runs.find(msg.runDir)) void this.deps.active.set(msg.runDir);
        return;
      default:
        msg satisfies never;
    }
  }

  /**
   * Whether a message that names a run (its folder, `runDir`) names one the runs
   * model knows: the page is never trusted to pick a folder, so a model is opened, a decode run
   * or training controlled only for a run this window lists. A request for any other is
   * answered with a one-line refusal; anything else is logged and dropped.
   */
  private namesKnownRun(msg: FromWebview): boolean {
    const dir = 'runDir' in msg ? msg.runDir : null;
    if (dir === null || this.deps.runs.find(dir)) return true;
    this.deps.log.warn(`Refused a dashboard message about an unknown run (${msg.type}): ${dir}`);
    if (isPageModelRequest(msg))
      this.post({
        type: 'model/didFail',
        id: msg.id,
        error: {
          code: 'input/invalid',
          message: `${dir} is not a run this window lists; pick a run from the dashboard's list or the Runs view.`,
        },
      });
    return false; // train/control and a selection: nothing to answer
  }

  /**
   * A model worker request of the page (decode, attention, lens, ablation: modelRequests's `page` entries), sent to
   * the model worker as it came and answered with the page's id: its answer, its tokens, or its failure. The model
   * worker's answer was validated on arrival (modelClient.ts), the page validates what it gets.
   */
  private async forwardRequest(msg: PageModelRequest): Promise<void> {
    const { id } = msg;
    const kind = modelRequestKind(msg);
    const abort = new AbortController(); // the page's model/cancel
    this.inFlight.set(id, abort);
    try {
      const output = await this.deps.models.request(kind, msg, {
        onToken: (token, logprob) => this.post({ type: 'model/didToken', id, token, logprob }),
        onProgress: (done, total) => this.post({ type: 'model/didProgress', id, done, total }),
        signal: abort.signal,
      });
      this.post(modelRequests.answer(kind, id, output));
    } catch (e) {
      this.post({ type: 'model/didFail', id, error: { code: codeOf(e), message: messageOf(e) } });
    } finally {
      this.inFlight.delete(id);
    }
  }

  private control(runId: string, action: 'pause' | 'resume' | 'stop'): void {
    const live = this.deps.controller.state;
    if (action === 'resume' && (!live || live.runId !== runId) && this.deps.runs.find(runId)) {
      // A stopped or interrupted run's Resume: the command resumes it from its last checkpoint
      // (and says so when another run is training).
      void this.deps.resume(runId);
      return;
    }
    if (!live || live.runId !== runId) {
      this.deps.log.warn(`The dashboard asked to ${action} ${runId}, which is not training.`);
      return;
    }
    if (action === 'stop') this.deps.controller.stop();
    else this.deps.controller.setPaused(action === 'pause');
  }

  /**
   * Forwards a live notification unless what was read from disk already held it; while the
   * runs are being read it is held, and forwarded (or dropped as read) once they are sent.
   */
  private forward(e: RunEvent): void {
    if (this.loading > 0) {
      this.held.push(e);
      return;
    }
    const { runId, event } = e;
    if (!this.ready || event.type === 'worker/ready') return;
    const w = this.sent.get(runId);
    if (event.type === 'train/didStart')
      this.sent.set(runId, { step: event.startStep, evalStep: event.startStep, snapshotStep: event.startStep - 1 });
    else if (w && event.type === 'train/didStep') {
      if (event.step <= w.step) return;
      w.step = event.step;
    } else if (w && event.type === 'train/didEval') {
      if (event.step <= w.evalStep) return;
      w.evalStep = event.step;
    } else if (w && event.type === 'train/didSnapshot') {
      if (event.step <= w.snapshotStep) return;
      w.snapshotStep = event.step;
    } else if (!w) return; // the page learns of a run from didStart or didLoadRuns first
    this.post({ type: 'run/didUpdate', runDir: runId, event });
  }

  /** Reads every run and sends the list (after any list still being read). */
  private sendRuns(): void {
    this.loading++;
    this.loads = this.loads
      .then(() => this.readAndSend())
      .catch((e: unknown) => this.deps.log.warn(`Could not send the runs to the dashboard: ${messageOf(e)}`))
      .finally(() => {
        if (--this.loading > 0) return;
        for (const e of this.held.splice(0)) this.forward(e);
      });
  }

  private async readAndSend(): Promise<void> {
    // A dashboard restored with the window may be ready before the runs were first read (a run
    // read later is listed then: see the constructor).
    if (!this.deps.runs.isLoaded) await this.deps.runs.refresh();
    const live = this.deps.controller.state;
    const items = this.deps.runs.items().filter((r) => r.error === null);
    const withSnapshots = new Set([
      ...items.slice(0, SNAPSHOT_RUNS).map((r) => r.runDir),
      this.selectedId,
      live?.runId,
    ]);
    const read = await Promise.all(
      items.map(async (item) => {
        try {
          const lab = this.deps.lab.get();
          const { state, skipped } = await lab.loadRunStateCounted(this.deps.fs, item.runDir);
          const note = lab.skippedNote(item.runDir, skipped);
          if (note) this.deps.log.warn(note);
          return { item, state };
        } catch (e) {
          this.deps.log.warn(`Left ${item.name} out of the dashboard: ${messageOf(e)}`);
          return null;
        }
      }),
    );
    const runs: RunState[] = [];
    const showing = live !== null && this.sent.has(live.runId);
    this.sent.clear();
    this.listed = new Set(items.map((r) => r.runDir));
    for (const r of read) {
      if (!r) continue;
      const { item, state } = r;
      if (item.runDir !== live?.runId) this.drawPending(item.runDir);
      // The state and step the Runs view shows too (runsModel.ts applies protocol/runStatus.ts).
      const snapshots = withSnapshots.has(item.runDir) ? state.snapshots : [];
      runs.push({ ...state, run: { ...state.run, status: item.status, step: item.step }, snapshots });
      this.sent.set(item.runDir, {
        step: state.steps.at(-1)?.step ?? 0,
        evalStep: state.evals.at(-1)?.step ?? -1,
        snapshotStep: state.snapshots.at(-1)?.step ?? -1,
      });
    }
    // The run asked for, else the active run; null lets the page keep the run its saved UI state had
    // (webview/README.md).
    const want = this.selectedId ?? this.deps.active.id();
    const selected = want && runs.some((r) => r.run.id === want) ? want : null;
    this.post({ type: 'dashboard/didLoadRuns', runs, selectedId: selected });
    // The page was showing the live run train and this read could not have it (its run.json
    // being replaced, say): read again shortly rather than leave the page without it.
    if (live && showing && !runs.some((r) => r.run.id === live.runId) && this.retry === null) {
      this.retry = setTimeout(() => {
        this.retry = null;
        if (this.ready && this.deps.controller.state?.runId === live.runId) this.sendRuns();
      }, RETRY_MS);
    }
    // A selection is asked for once: when the page reloads later (it is not kept alive while
    // hidden), it keeps whatever run the user picked since.
    this.selectedId = null;
  }

  /**
   * A PyTorch run trained where no lab followed it (a cluster) left its snapshot steps as
   * weights: the model worker draws them (never this thread), then the runs are sent again.
   */
  private drawPending(runDir: string): void {
    if (
      !this.deps.pytorch ||
      this.drawing.has(runDir) ||
      this.deps.pytorch().pendingSnapshotWeights(runDir).length === 0
    )
      return;
    this.drawing.add(runDir);
    void this.deps.models.request('drawSnapshots', { runDir }).then(
      (drawn) => {
        this.drawing.delete(runDir);
        if (drawn > 0 && this.ready) this.sendRuns();
      },
      (e: unknown) => this.deps.log.warn(`Could not draw the attention snapshots of ${runDir}: ${messageOf(e)}`),
    );
  }

  dispose(): void {
    this.ready = false;
    if (this.retry !== null) clearTimeout(this.retry);
    for (const abort of this.inFlight.values()) abort.abort(); // nobody is left to see a sweep's answer
    this.store.dispose();
  }
}

/** The error code of a failed request (the worker's, else 'internal'). */
function codeOf(e: unknown): string {
  return typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : 'internal';
}
