/**
 * The dashboard's data: every run it knows (summary, step columns, evaluations, attention
 * snapshots, the attention of a text with its model) and the playground's decode, logit-lens
 * and ablation requests, updated only by validated ToWebview
 * messages. `apply` returns what changed (so panels redraw only that) and the problems a
 * message had — out-of-order steps, updates for unknown runs, answers to decodes never
 * requested — which the page shows in its error banner instead of drawing nonsense.
 *
 * Leaves out: validation of the message shape (src/protocol/webview.ts, before `apply`), the DOM and
 * anything about how the data is drawn.
 */

import type { AblationOutputData, HeadRefData, LensInputData, LensOutputData } from '../src/protocol/analysis';
import type { SteerOutputData, SteerRequestData } from '../src/protocol/steering';
import type { PatchOutputData, PatchRequestData } from '../src/protocol/patching';
import type { AttributionOutputData, AttributionParamsData } from '../src/protocol/attribution';
import type { ErrorData, EvalMetrics, PrepareProgress } from '../src/protocol/data';
import type { EvaluationRecord } from '../src/protocol/evaluation';
import type {
  AttentionMapData,
  AttentionSnapshot,
  AttentionStack,
  DecodeOutput,
  DecodeParams,
} from '../src/protocol/model';
import type { FromTrainingWorker } from '../src/protocol/trainingWorker';
import type { DashboardTab, ToWebview, RunState, RunSummary } from '../src/protocol/webview';
import { HeadHistory } from './charts/headHistory';
import { StepColumns } from './charts/stepColumns';

/** One run as the dashboard holds it. */
export interface RunEntry {
  readonly id: string;
  summary: RunSummary;
  readonly steps: StepColumns;
  evals: EvalMetrics[];
  /** Evaluations on test data (the run's evaluations.jsonl), oldest first. */
  evaluations: EvaluationRecord[];
  snapshots: AttentionSnapshot[];
  /** Head scores over the snapshots' steps (the Heads view, the loss curve's threshold marker). */
  heads: HeadHistory;
  /** The error a failed run stopped with. */
  failure: ErrorData | null;
  /** The worker's last log line. */
  lastLog: { readonly level: 'info' | 'warn'; readonly message: string } | null;
  /** What the worker is doing before the first step (reading, tokenizer, encoding); null once training. */
  preparing: PrepareProgress | null;
  /**
   * The attention of a text with this run's model (the Attention and Heads tabs' text box, Show Attention for
   * Selection).
   */
  inspection: Inspection | null;
  /** Bumped on every change, so views can skip redraws. */
  revision: number;
}

/** The attention of a text with one run's model, as asked and as answered. */
export interface Inspection {
  readonly id: number;
  readonly runId: string;
  readonly text: string;
  snapshot: AttentionSnapshot | null;
  error: ErrorData | null;
  /** The text's head scores as a one-row history, drawn like training's. */
  heads: HeadHistory | null;
  /** Whole maps of layers whose overview was shown, by `stack.layer` (asked for one at a time). */
  readonly layers: Map<string, AttentionMapData>;
  /** Layer requests in flight: request id → `stack.layer`. */
  readonly pendingLayers: Map<number, string>;
  /** Layers whose request failed, with why. */
  readonly failedLayers: Map<string, string>;
}

/** The key of a layer in an inspection's maps. */
export function layerKey(stack: AttentionStack, layer: number): string {
  return `${stack}.${layer}`;
}

/** Which parts of a run changed. */
export type RunPart = 'steps' | 'evals' | 'evaluations' | 'snapshots' | 'status' | 'inspection';

/** A playground decode as it streams in. */
export interface PlaygroundDecode {
  readonly id: number;
  readonly runId: string;
  readonly params: DecodeParams;
  readonly tokens: { readonly token: string; readonly logprob: number }[];
  output: DecodeOutput | null;
  error: ErrorData | null;
}

/** A playground logit lens or ablation, as asked and as answered. */
export type PlaygroundAnalysis =
  | {
      readonly kind: 'lens';
      readonly id: number;
      readonly runId: string;
      readonly input: LensInputData;
      output: LensOutputData | null;
      error: ErrorData | null;
    }
  | {
      readonly kind: 'ablate';
      readonly id: number;
      readonly runId: string;
      readonly input: LensInputData;
      readonly off: readonly HeadRefData[];
      output: AblationOutputData | null;
      error: ErrorData | null;
    }
  | {
      readonly kind: 'steer';
      readonly id: number;
      readonly runId: string;
      readonly request: SteerRequestData;
      output: SteerOutputData | null;
      error: ErrorData | null;
    }
  | {
      readonly kind: 'patch';
      readonly id: number;
      readonly runId: string;
      readonly request: PatchRequestData;
      output: PatchOutputData | null;
      error: ErrorData | null;
      /** The last model/didProgress: patched runs done of their total. */
      progress: Progress | null;
    }
  | {
      readonly kind: 'attribute';
      readonly id: number;
      readonly runId: string;
      readonly request: AttributionParamsData;
      output: AttributionOutputData | null;
      error: ErrorData | null;
      /** The last model/didProgress: passes (or, beside full patching, patched runs) done of their total. */
      progress: Progress | null;
    };

/** How far a long request is. */
export interface Progress {
  readonly done: number;
  readonly total: number;
}

/** How a problem message names each kind of analysis. */
const ANALYSIS_NAMES: Record<PlaygroundAnalysis['kind'], string> = {
  lens: 'logit lens',
  ablate: 'ablation',
  steer: 'steering',
  patch: 'patching',
  attribute: 'attribution',
};

/** What one message changed. */
export type StoreEvent =
  | { readonly kind: 'runs' }
  | { readonly kind: 'run'; readonly runId: string; readonly parts: readonly RunPart[] }
  | { readonly kind: 'decode'; readonly id: number; readonly fromHost?: boolean }
  | { readonly kind: 'analysis'; readonly id: number }
  | { readonly kind: 'show'; readonly runId: string | null; readonly tab: DashboardTab }
  /** The host's active run changed: show it (the tab stays). */
  | { readonly kind: 'select'; readonly runId: string }
  /**
   * The host computed the attention of a text for a run (Show Attention for Selection): show it, not the training
   * snapshots.
   */
  | { readonly kind: 'inspected'; readonly runId: string };

/** Result of applying one message. */
export interface ApplyResult {
  readonly events: readonly StoreEvent[];
  /** Human-readable problems (the message was ignored, fully or in part). */
  readonly problems: readonly string[];
}

/** A store entry for a run; `skipped` counts steps that were not after their predecessor. */
function entryOf(state: RunState): { entry: RunEntry; skipped: number } {
  const steps = new StepColumns(state.steps.length + 64);
  let skipped = 0;
  for (const m of state.steps) {
    if (steps.length === 0 || m.step > steps.lastStep) steps.push(m);
    else skipped++;
  }
  const sortByStep = <T extends { readonly step: number }>(xs: readonly T[]): T[] =>
    [...xs].sort((a, b) => a.step - b.step);
  const snapshots = sortByStep(state.snapshots);
  const heads = HeadHistory.of(snapshots, state.headScores ?? []);
  const entry = {
    id: state.run.id,
    summary: state.run,
    steps,
    evals: sortByStep(state.evals),
    evaluations: [...(state.evaluations ?? [])],
    snapshots,
    heads,
    failure: null,
    lastLog: null,
    preparing: null,
    inspection: null,
    revision: 0,
  };
  return { entry, skipped };
}

function baseName(dir: string): string {
  const parts = dir.split(/[\\/]/).filter((p) => p.length > 0);
  return parts[parts.length - 1] ?? dir;
}

/** All runs and playground decodes. */
export class DashboardStore {
  private readonly runMap = new Map<string, RunEntry>();
  private readonly decodes = new Map<number, PlaygroundDecode>();
  private readonly analyses = new Map<number, PlaygroundAnalysis>();
  /**
   * Ids of the page's model requests — decodes, lenses, ablations, inspections and layers — from one counter, so a
   * `model/didFail` names one request.
   */
  private nextRequestId = 1;
  /** The run of each inspection or layer request id. */
  private readonly inspectionRuns = new Map<number, string>();
  /** The run the host asked to select (null: the first). */
  preferredRunId: string | null = null;
  /** Whether a dashboard/didLoadRuns arrived. */
  loaded = false;

  /** Runs in the order they arrived. */
  get runs(): readonly RunEntry[] {
    return [...this.runMap.values()];
  }

  /** One run, if known. */
  run(id: string | null | undefined): RunEntry | undefined {
    return id == null ? undefined : this.runMap.get(id);
  }

  /** The run whose folder is `runDir` (messages name a run by its folder; the page keys it by its id). */
  runAt(runDir: string): RunEntry | undefined {
    for (const r of this.runMap.values()) if (r.summary.runDir === runDir) return r;
    return undefined;
  }

  /** A playground decode, if known. */
  decode(id: number): PlaygroundDecode | undefined {
    return this.decodes.get(id);
  }

  /** Starts a playground decode; returns it (its id goes in the model/decode). */
  beginDecode(runId: string, params: DecodeParams): PlaygroundDecode {
    const s: PlaygroundDecode = { id: this.nextRequestId++, runId, params, tokens: [], output: null, error: null };
    this.decodes.set(s.id, s);
    return s;
  }

  /** A lens or ablation request, if known. */
  analysis(id: number): PlaygroundAnalysis | undefined {
    return this.analyses.get(id);
  }

  /** Starts a lens (no `off`) or ablation request; its id goes in the request. */
  beginAnalysis(runId: string, input: LensInputData, off?: readonly HeadRefData[]): PlaygroundAnalysis {
    const id = this.nextRequestId++;
    const s: PlaygroundAnalysis =
      off === undefined
        ? { kind: 'lens', id, runId, input, output: null, error: null }
        : { kind: 'ablate', id, runId, input, off, output: null, error: null };
    this.analyses.set(id, s);
    return s;
  }

  /** Starts a steering request (the playground's steered decode beside the unsteered); its id goes in the request. */
  beginSteer(runId: string, request: SteerRequestData): PlaygroundAnalysis {
    const s: PlaygroundAnalysis = {
      kind: 'steer',
      id: this.nextRequestId++,
      runId,
      request,
      output: null,
      error: null,
    };
    this.analyses.set(s.id, s);
    return s;
  }

  /** Starts a Patching tab request (model/patch or model/attribute); its id goes in the request. */
  beginPatching(
    runId: string,
    ask:
      | { readonly kind: 'patch'; readonly request: PatchRequestData }
      | { readonly kind: 'attribute'; readonly request: AttributionParamsData },
  ): PlaygroundAnalysis {
    const id = this.nextRequestId++;
    const s: PlaygroundAnalysis =
      ask.kind === 'patch'
        ? { kind: 'patch', id, runId, request: ask.request, output: null, error: null, progress: null }
        : { kind: 'attribute', id, runId, request: ask.request, output: null, error: null, progress: null };
    this.analyses.set(id, s);
    return s;
  }

  /**
   * Starts the attention of `text` with run `runId`'s model: it replaces what the run showed
   * for another text. Its id goes in the model/attend.
   */
  beginInspection(runId: string, text: string): Inspection | null {
    const r = this.runMap.get(runId);
    if (!r) return null;
    const insp = this.inspectionOf(runId, text, this.nextRequestId++);
    this.inspectionRuns.set(insp.id, runId);
    r.inspection = insp;
    r.revision++;
    return insp;
  }

  /** Asks for the whole map of one layer of the run's inspection; null when it is there or on its way. */
  beginLayer(insp: Inspection, stack: AttentionStack, layer: number): number | null {
    const key = layerKey(stack, layer);
    if (insp.layers.has(key) || insp.failedLayers.has(key) || [...insp.pendingLayers.values()].includes(key))
      return null;
    const id = this.nextRequestId++;
    insp.pendingLayers.set(id, key);
    this.inspectionRuns.set(id, insp.runId);
    return id;
  }

  private inspectionOf(runId: string, text: string, id: number): Inspection {
    return {
      id,
      runId,
      text,
      snapshot: null,
      error: null,
      heads: null,
      layers: new Map(),
      pendingLayers: new Map(),
      failedLayers: new Map(),
    };
  }

  /**
   * The run's current inspection that request `id` belongs to (as the inspection itself or one of its layers), or null
   * when it was replaced.
   */
  private inspectionFor(id: number): Inspection | null {
    const insp = this.runMap.get(this.inspectionRuns.get(id) ?? '')?.inspection ?? null;
    return insp && (insp.id === id || insp.pendingLayers.has(id)) ? insp : null;
  }

  private setInspected(insp: Inspection, snapshot: AttentionSnapshot): void {
    insp.snapshot = snapshot;
    insp.heads = HeadHistory.of([snapshot]);
  }

  /** Applies one validated message. */
  apply(msg: ToWebview): ApplyResult {
    switch (msg.type) {
      case 'dashboard/didLoadRuns': {
        // A reload (a run renamed, deleted, added) keeps what each run's text showed: it is that run's.
        const inspections = new Map([...this.runMap].map(([id, r]) => [id, r.inspection]));
        this.runMap.clear();
        const problems: string[] = [];
        for (const r of msg.runs) {
          if (this.runMap.has(r.run.id))
            problems.push(
              `dashboard/didLoadRuns lists run ${JSON.stringify(r.run.id)} twice; the second copy was ignored.`,
            );
          else {
            const { entry, skipped } = entryOf(r);
            entry.inspection = inspections.get(r.run.id) ?? null;
            this.runMap.set(r.run.id, entry);
            if (skipped > 0)
              problems.push(
                `Run ${JSON.stringify(r.run.name)}: ${skipped} logged step(s) were not in ` +
                  `increasing order and were left out.`,
              );
          }
        }
        this.preferredRunId = msg.selectedId;
        this.loaded = true;
        return { events: [{ kind: 'runs' }], problems };
      }
      case 'run/didUpdate':
        return this.applyWorkerEvent(msg.runDir, msg.event);
      case 'run/didEvaluate': {
        const r = this.runAt(msg.runDir);
        if (!r) return { events: [], problems: [] }; // a run this page does not list: the next run list brings it
        r.evaluations.push(msg.evaluation);
        r.revision++;
        return { events: [{ kind: 'run', runId: r.id, parts: ['evaluations'] }], problems: [] };
      }
      case 'model/didToken': {
        const s = this.decodes.get(msg.id);
        if (!s)
          return {
            events: [],
            problems: [`model/didToken for decode ${msg.id}, which this page never requested; ignored.`],
          };
        if (s.output || s.error)
          return { events: [], problems: [`model/didToken for decode ${msg.id} after it finished; ignored.`] };
        s.tokens.push({ token: msg.token, logprob: msg.logprob });
        return { events: [{ kind: 'decode', id: s.id }], problems: [] };
      }
      case 'model/didProgress': {
        // Progress of a request that already finished (its answer overtook it, or it was cancelled) changes nothing.
        const s = this.analyses.get(msg.id);
        if (s?.kind !== 'patch' && s?.kind !== 'attribute')
          return {
            events: [],
            problems: [`model/didProgress for ${msg.id}, which is no patching this page requested; ignored.`],
          };
        if (s.output || s.error) return { events: [], problems: [] };
        s.progress = { done: msg.done, total: msg.total };
        return { events: [{ kind: 'analysis', id: s.id }], problems: [] };
      }
      case 'model/didDecode':
        return this.decodeDone(msg.type, msg.id, { output: msg.output });
      case 'model/didFail':
        // Every request of the page has its own id (one counter): the id says which kind failed.
        if (this.decodes.has(msg.id)) return this.decodeDone(msg.type, msg.id, { error: msg.error });
        if (this.analyses.has(msg.id)) return this.analysisDone(msg.type, msg.id, { error: msg.error });
        return this.inspectionDone(msg.type, msg.id, { error: msg.error });
      case 'playground/didDecode': {
        const r = this.runAt(msg.runDir);
        if (!r)
          return {
            events: [],
            problems: [
              `playground/didDecode for run ${JSON.stringify(msg.runDir)}, which the dashboard has ` +
                `not been told about; ignored.`,
            ],
          };
        const s = this.beginDecode(r.id, msg.params);
        s.output = msg.output;
        for (const [i, token] of msg.output.tokens.entries())
          s.tokens.push({ token, logprob: msg.output.logprobs[i] ?? 0 });
        return { events: [{ kind: 'decode', id: s.id, fromHost: true }], problems: [] };
      }
      case 'model/didLens':
        return this.analysisDone(msg.type, msg.id, { output: msg.output, kind: 'lens' });
      case 'model/didAblate':
        return this.analysisDone(msg.type, msg.id, { output: msg.output, kind: 'ablate' });
      case 'model/didSteer':
        return this.analysisDone(msg.type, msg.id, { output: msg.output, kind: 'steer' });
      case 'model/didPatch':
        return this.analysisDone(msg.type, msg.id, { output: msg.output, kind: 'patch' });
      case 'model/didAttribute':
        return this.analysisDone(msg.type, msg.id, { output: msg.output, kind: 'attribute' });
      case 'dashboard/show': {
        const r = msg.runDir === null ? null : this.runAt(msg.runDir);
        if (r === undefined)
          return {
            events: [],
            problems: [
              `dashboard/show for run ${JSON.stringify(msg.runDir)}, which the dashboard has not ` +
                `been told about; ignored.`,
            ],
          };
        return { events: [{ kind: 'show', runId: r?.id ?? null, tab: msg.tab }], problems: [] };
      }
      case 'model/didAttend':
        return this.inspectionDone(msg.type, msg.id, { snapshot: msg.output });
      case 'model/didAttendLayer':
        return this.inspectionDone(msg.type, msg.id, { map: msg.output });
      case 'dashboard/didAttend': {
        const r = this.runAt(msg.runDir);
        if (!r)
          return {
            events: [],
            problems: [
              `dashboard/didAttend for run ${JSON.stringify(msg.runDir)}, which the dashboard has ` +
                `not been told about; ignored.`,
            ],
          };
        const insp = this.inspectionOf(r.id, msg.snapshot.text ?? '', this.nextRequestId++);
        this.setInspected(insp, msg.snapshot);
        r.inspection = insp;
        r.revision++;
        return {
          events: [
            { kind: 'run', runId: r.id, parts: ['inspection'] },
            { kind: 'inspected', runId: r.id },
          ],
          problems: [],
        };
      }
      case 'dashboard/didSetActiveRun': {
        // A run this page does not list (yet) is not a problem: the next run list brings it.
        const r = this.runAt(msg.runDir);
        return { events: r ? [{ kind: 'select', runId: r.id }] : [], problems: [] };
      }
      default:
        return msg satisfies never;
    }
  }

  /** Decode `id` finished (`output`) or failed (`error`). */
  private decodeDone(
    type: string,
    id: number,
    end: { readonly output: DecodeOutput } | { readonly error: ErrorData },
  ): ApplyResult {
    const s = this.decodes.get(id);
    if (!s) return { events: [], problems: [`${type} for decode ${id}, which this page never requested; ignored.`] };
    if (s.output || s.error)
      return { events: [], problems: [`${type} for decode ${id}, which had already finished; ignored.`] };
    if ('output' in end) s.output = end.output;
    else s.error = end.error;
    return { events: [{ kind: 'decode', id: s.id }], problems: [] };
  }

  /** Lens or ablation `id` finished (`output`, of the kind asked) or failed (`error`). */
  private analysisDone(
    type: string,
    id: number,
    end:
      | { readonly kind: 'lens'; readonly output: LensOutputData }
      | { readonly kind: 'ablate'; readonly output: AblationOutputData }
      | { readonly kind: 'steer'; readonly output: SteerOutputData }
      | { readonly kind: 'patch'; readonly output: PatchOutputData }
      | { readonly kind: 'attribute'; readonly output: AttributionOutputData }
      | { readonly error: ErrorData },
  ): ApplyResult {
    const s = this.analyses.get(id);
    if (!s || ('kind' in end && s.kind !== end.kind))
      return {
        events: [],
        problems: [
          `${type} for ${'kind' in end ? ANALYSIS_NAMES[end.kind] : 'request'} ${id}, which this ` +
            `page never requested; ignored.`,
        ],
      };
    if (s.output || s.error)
      return { events: [], problems: [`${type} for ${id}, which had already finished; ignored.`] };
    if (!('kind' in end)) s.error = end.error;
    else if (end.kind === 'lens' && s.kind === 'lens') s.output = end.output;
    else if (end.kind === 'ablate' && s.kind === 'ablate') s.output = end.output;
    else if (end.kind === 'steer' && s.kind === 'steer') s.output = end.output;
    else if (end.kind === 'patch' && s.kind === 'patch') s.output = end.output;
    else if (end.kind === 'attribute' && s.kind === 'attribute') s.output = end.output;
    return { events: [{ kind: 'analysis', id: s.id }], problems: [] };
  }

  /** Inspection `id`, or one of its layers, arrived (`snapshot`, `map`) or failed (`error`). */
  private inspectionDone(
    type: string,
    id: number,
    end: { readonly snapshot: AttentionSnapshot } | { readonly map: AttentionMapData } | { readonly error: ErrorData },
  ): ApplyResult {
    if (!this.inspectionRuns.has(id))
      return { events: [], problems: [`${type} for ${id}, which this page never requested; ignored.`] };
    const insp = this.inspectionFor(id);
    this.inspectionRuns.delete(id);
    if (!insp) return { events: [], problems: [] }; // another text replaced it meanwhile
    const events: StoreEvent[] = [{ kind: 'run', runId: insp.runId, parts: ['inspection'] }];
    const key = insp.pendingLayers.get(id);
    if (key === undefined) {
      if ('snapshot' in end) this.setInspected(insp, end.snapshot);
      else if ('error' in end) insp.error = end.error;
    } else {
      insp.pendingLayers.delete(id);
      if ('map' in end) insp.layers.set(key, end.map);
      else if ('error' in end) insp.failedLayers.set(key, end.error.message);
    }
    (this.runMap.get(insp.runId) as RunEntry).revision++;
    return { events, problems: [] };
  }

  /**
   * A training notification of the run in `runDir`; a train/didStart adds a run it does not
   * list (its id: `runDir`).
   */
  private applyWorkerEvent(runDir: string, ev: FromTrainingWorker): ApplyResult {
    let r = this.runAt(runDir);
    const runId = r?.id ?? runDir;
    if (!r) {
      if (ev.type !== 'train/didStart') {
        return {
          events: [],
          problems: [
            `${ev.type} for run ${JSON.stringify(runId)}, which the dashboard has not been told ` +
              `about (no dashboard/didLoadRuns or train/didStart for it); ignored.`,
          ],
        };
      }
      const summary: RunSummary = {
        id: runId,
        name: baseName(ev.runDir),
        runDir,
        status: 'training',
        kind: ev.model.config.kind,
        step: ev.startStep,
        totalSteps: ev.totalSteps,
        segments: ev.segments,
        bestValLoss: null,
        model: ev.model,
        data: ev.data,
      };
      r = entryOf({ run: summary, steps: [], evals: [], snapshots: [] }).entry;
      this.runMap.set(runId, r);
      return { events: [{ kind: 'runs' }], problems: [] };
    }
    const done = (parts: RunPart[], problems: string[] = []): ApplyResult => {
      if (parts.length) r.revision++;
      return { events: parts.length ? [{ kind: 'run', runId, parts }] : [], problems };
    };
    const setStatus = (status: RunSummary['status'], step = r.summary.step): void => {
      r.summary = { ...r.summary, status, step };
    };
    switch (ev.type) {
      case 'worker/ready':
      case 'train/didSaveCheckpoint':
        return done([]);
      case 'train/didLog':
        r.lastLog = { level: ev.level, message: ev.message };
        return done(['status']);
      case 'train/didProgress': {
        const { type: _type, ...p } = ev;
        r.preparing = p;
        return done(['status']);
      }
      case 'train/didStart': {
        // A resume restarts at its checkpoint: what was logged after it is gone.
        r.steps.truncateAfter(ev.startStep);
        r.evals = r.evals.filter((e) => e.step <= ev.startStep);
        r.snapshots = r.snapshots.filter((s) => s.step <= ev.startStep);
        r.heads.truncateAfter(ev.startStep);
        r.failure = null;
        r.preparing = null;
        r.summary = {
          ...r.summary,
          status: 'training',
          step: ev.startStep,
          totalSteps: ev.totalSteps,
          segments: ev.segments,
          model: ev.model,
          data: ev.data,
        };
        return done(['steps', 'evals', 'snapshots', 'status']);
      }
      case 'train/didStep': {
        if (r.steps.length > 0 && ev.step <= r.steps.lastStep) {
          return done(
            [],
            [
              `Out-of-order train/didStep: step ${ev.step} arrived after step ${r.steps.lastStep} ` +
                `of run ${JSON.stringify(r.summary.name)}; ignored.`,
            ],
          );
        }
        r.steps.push(ev);
        return done(['steps']);
      }
      case 'train/didEval': {
        const last = r.evals[r.evals.length - 1];
        if (last && ev.step < last.step)
          return done([], [`Out-of-order train/didEval: step ${ev.step} arrived after step ${last.step}; ignored.`]);
        const { type: _type, ...e } = ev;
        // The same step again (a run restarted from that checkpoint) replaces it.
        if (last && ev.step === last.step) r.evals.pop();
        r.evals.push(e);
        if (r.summary.bestValLoss === null || e.loss < r.summary.bestValLoss)
          r.summary = { ...r.summary, bestValLoss: e.loss };
        return done(['evals']);
      }
      case 'train/didSnapshot': {
        const last = r.snapshots[r.snapshots.length - 1];
        if (last && ev.step < last.step)
          return done(
            [],
            [`Out-of-order train/didSnapshot: step ${ev.step} arrived after step ${last.step}; ignored.`],
          );
        const { type: _type, ...s } = ev;
        // The same step again (a restart from step 0 retakes the step-0 snapshot) replaces it.
        if (last && ev.step === last.step) r.snapshots.pop();
        r.snapshots.push(s);
        if (s.headScores) r.heads.add(s.step, s.headScores);
        r.heads.selection = s.source === 'selection';
        return done(['snapshots']);
      }
      case 'train/didPause':
        setStatus('paused', ev.step);
        return done(['status']);
      case 'train/didResume':
        setStatus('training', ev.step);
        return done(['status']);
      case 'train/didFinish':
        setStatus(ev.reason, ev.step);
        return done(['status']);
      case 'train/didFail':
        // A full disk or a lost GPU stops the run with its last checkpoint kept (it resumes: lab/base/errorCodes.ts's
        // stopsRun); anything else failed it.
        setStatus(ev.error.code === 'disk/full' || ev.error.code === 'gpu/lost' ? 'stopped' : 'failed', ev.step);
        r.failure = ev.error;
        return done(['status']);
      default:
        return ev satisfies never;
    }
  }
}
