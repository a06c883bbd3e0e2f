/**
 * The dashboard's UI state — which tab, run, layer and head are selected, where the timeline
 * slider is, the chart toggles and the playground's settings — and nothing else: it is what
 * the webview saves through `vscode.setState` (persist only UI state: CONTRIBUTING.md, "Disposables and webview
 * state"), so it
 * must survive being read back from an older or damaged save. `sanitizeUiState` keeps every
 * valid field and replaces the rest with defaults.
 *
 * Leaves out: run data (the host resends it on restore) and the DOM.
 */

import type { DashboardTab } from '../src/protocol/webview';
import { dashboardTab } from '../src/protocol/webview';

import type { AttentionStack, DecodeParams } from '../src/protocol/model';
import { ATTENTION_STACKS } from '../src/protocol/model';
import { DECODE_STRATEGIES } from '../src/protocol/data';
import type { RampScale } from './base/colorRamp';
import type { ScoreName } from './charts/headHistory';
import { STACK_SCORES } from './charts/headHistory';
import type { LossUnit, XMode } from './charts/series';

/** The dashboard's tabs. */
export type TabId = DashboardTab;
/** The tabs, in display order. */
export const TAB_IDS: readonly TabId[] = dashboardTab.values;

/** Everything the page persists. */
export interface UiState {
  version: 1;
  tab: TabId;
  runId: string | null;
  /** `per`: the loss axis in nats per token, or in bits per UTF-8 byte (runs of different tokenizers compare there). */
  curves: { x: XMode; log: boolean; smoothing: number; compare: string[]; per: LossUnit };
  /**
   * stack: the attention shown; snapshot: index into the run's snapshots, or -1 to follow the
   * latest; view: the Attention and Heads tabs show the training snapshots or the model on
   * the user's text (inspectBar.ts).
   */
  attention: {
    stack: AttentionStack;
    layer: number;
    head: number;
    snapshot: number;
    scale: RampScale;
    view: 'training' | 'text';
  };
  masks: { batch: number };
  /**
   * The Heads view: the score that ranks, filters and marks (`stack` · `score`), its threshold,
   * whether only heads at or above it are shown, the arrangement, and whether the loss curve
   * marks the first step where any head reaches it.
   */
  heads: {
    stack: AttentionStack;
    score: ScoreName;
    threshold: number;
    only: boolean;
    order: 'grid' | 'ranked';
    mark: boolean;
  };
  /** The playground's settings; `input` is the selected run's text (see playgroundInputs). */
  playground: DecodeParams;
  /** The playground's text per run id, so switching runs never shows another run's prompt. */
  playgroundInputs: Record<string, string>;
  /**
   * An encoder-decoder's target prefix for the logit lens and ablation, per run id (empty: the model's own
   * translation).
   */
  playgroundTargets: Record<string, string>;
  /** Heads switched off in the playground's ablation, per run id, as `stack:layer:head` (0-based). */
  playgroundOff: Record<string, string[]>;
  /** Candidates the logit lens and the ablation show per position. */
  lensTopK: number;
  /** The Attention and Heads tabs' text per run id (the run's model reads it). */
  inspectTexts: Record<string, string>;
  /** Runs the playground decodes side by side with the selected one (run ids). */
  playgroundCompare: string[];
}

/** Most runs whose playground text is kept. */
const MAX_PLAYGROUND_INPUTS = 50;

/** A fresh state. */
export function defaultUiState(): UiState {
  return {
    version: 1,
    tab: 'curves',
    runId: null,
    curves: { x: 'step', log: true, smoothing: 0.6, compare: [], per: 'token' },
    attention: { stack: 'decoder.self', layer: 0, head: 0, snapshot: -1, scale: 'linear', view: 'training' },
    masks: { batch: 0 },
    heads: { stack: 'decoder.self', score: 'induction', threshold: 0.5, only: false, order: 'grid', mark: true },
    playground: {
      input: '',
      strategy: 'greedy',
      beam: 4,
      lengthPenalty: 0.6,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: 40,
      seed: 1,
    },
    playgroundInputs: {},
    playgroundTargets: {},
    playgroundOff: {},
    lensTopK: 5,
    inspectTexts: {},
    playgroundCompare: [],
  };
}

type Obj = Record<string, unknown>;

function objOf(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

function pick<T>(v: unknown, ok: (x: unknown) => boolean, fallback: T): T {
  return ok(v) ? (v as T) : fallback;
}

/**
 * Saves written before the attention tab was keyed by the attention's stack name kept it as
 * `attention.family` in another spelling; read once, then saved as `attention.stack`.
 */
const FAMILY_STACKS: ReadonlyMap<unknown, AttentionStack> = new Map([
  ['encoder-self', 'encoder.self'],
  ['decoder-self', 'decoder.self'],
  ['cross', 'decoder.cross'],
]);

const isOneOf =
  (values: readonly unknown[]) =>
  (x: unknown): boolean =>
    values.includes(x);
const isInt =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (x: unknown): boolean =>
    typeof x === 'number' && Number.isInteger(x) && x >= min && x <= max;
const isNum =
  (min: number, max: number) =>
  (x: unknown): boolean =>
    typeof x === 'number' && Number.isFinite(x) && x >= min && x <= max;

/** Reads a saved state, keeping valid fields and defaulting the rest. */
export function sanitizeUiState(raw: unknown): UiState {
  const d = defaultUiState();
  const o = objOf(raw);
  if (o.version !== 1) return d;
  const c = objOf(o.curves);
  const a = objOf(o.attention);
  const m = objOf(o.masks);
  const hd = objOf(o.heads);
  const stack = pick<AttentionStack>(hd.stack, isOneOf(ATTENTION_STACKS), d.heads.stack);
  const p = objOf(o.playground);
  const dp = d.playground;
  return {
    version: 1,
    tab: pick(o.tab, isOneOf(TAB_IDS), d.tab),
    runId: pick(o.runId, (x) => typeof x === 'string' || x === null, d.runId),
    curves: {
      x: pick(c.x, isOneOf(['step', 'tokens', 'time']), d.curves.x),
      log: pick(c.log, (x) => typeof x === 'boolean', d.curves.log),
      smoothing: pick(c.smoothing, isNum(0, 0.999), d.curves.smoothing),
      compare: Array.isArray(c.compare) ? c.compare.filter((x): x is string => typeof x === 'string') : [],
      per: pick(c.per, isOneOf(['token', 'byte']), d.curves.per),
    },
    attention: {
      stack: pick(a.stack, isOneOf(ATTENTION_STACKS), FAMILY_STACKS.get(a.family) ?? d.attention.stack),
      layer: pick(a.layer, isInt(0), 0),
      head: pick(a.head, isInt(0), 0),
      snapshot: pick(a.snapshot, isInt(-1), -1),
      scale: pick(a.scale, isOneOf(['linear', 'sqrt']), d.attention.scale),
      view: pick(a.view, isOneOf(['training', 'text']), d.attention.view),
    },
    masks: { batch: pick(m.batch, isInt(0), 0) },
    heads: {
      stack,
      score: pick(
        hd.score,
        isOneOf(STACK_SCORES[stack]),
        STACK_SCORES[stack].includes(d.heads.score) ? d.heads.score : (STACK_SCORES[stack][0] as ScoreName),
      ),
      threshold: pick(hd.threshold, isNum(-1e6, 1e6), d.heads.threshold),
      only: pick(hd.only, (x) => typeof x === 'boolean', d.heads.only),
      order: pick(hd.order, isOneOf(['grid', 'ranked']), d.heads.order),
      mark: pick(hd.mark, (x) => typeof x === 'boolean', d.heads.mark),
    },
    playground: {
      input: pick(p.input, (x) => typeof x === 'string', dp.input),
      strategy: pick(p.strategy, isOneOf(DECODE_STRATEGIES), dp.strategy),
      beam: pick(p.beam, isInt(1, 64), dp.beam),
      lengthPenalty: pick(p.lengthPenalty, isNum(0, 10), dp.lengthPenalty),
      temperature: pick(p.temperature, isNum(0, 100), dp.temperature),
      topK: pick(p.topK, isInt(0), dp.topK),
      topP: pick(p.topP, isNum(0, 1), dp.topP),
      maxTokens: pick(p.maxTokens, isInt(1, 10000), dp.maxTokens),
      seed: pick(p.seed, isInt(Number.MIN_SAFE_INTEGER), dp.seed),
    },
    playgroundInputs: perRun(o.playgroundInputs, (x): x is string => typeof x === 'string'),
    playgroundTargets: perRun(o.playgroundTargets, (x): x is string => typeof x === 'string'),
    playgroundOff: perRun(
      o.playgroundOff,
      (x): x is string[] => Array.isArray(x) && x.every((k) => typeof k === 'string' && HEAD_KEY.test(k)),
    ),
    lensTopK: pick(o.lensTopK, isInt(1, 50), d.lensTopK),
    inspectTexts: perRun(o.inspectTexts, (x): x is string => typeof x === 'string'),
    playgroundCompare: Array.isArray(o.playgroundCompare)
      ? o.playgroundCompare.filter((x): x is string => typeof x === 'string').slice(0, MAX_PLAYGROUND_INPUTS)
      : [],
  };
}

/** A head switched off, as the UI state keeps it: `stack:layer:head`, 0-based. */
const HEAD_KEY = /^(encoder\.self|decoder\.self|decoder\.cross):\d+:\d+$/;

/** The valid entries of a per-run record (the last MAX_PLAYGROUND_INPUTS). */
function perRun<T>(v: unknown, ok: (x: unknown) => x is T): Record<string, T> {
  return Object.fromEntries(
    Object.entries(objOf(v))
      .filter((e): e is [string, T] => ok(e[1]))
      .slice(-MAX_PLAYGROUND_INPUTS),
  );
}
