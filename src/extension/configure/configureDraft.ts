/**
 * The choices of "Configure Model…" as plain data: the draft the steps edit, the settings
 * it writes, the validators of typed-in values and the texts of the choices. Pure, so the
 * flow's rules are unit-tested; configure.ts shows the steps.
 *
 * Leaves out: the quick-input UI and the size estimates (the lab module computes them).
 */

import type { DataChoice } from '../../lab/runs/runSpec';
import { dataDefaults } from '../../lab/runs/runSpec';
import type { ModelKind, PresetName, TaskName, TrainSpec } from '../../protocol/data';
import { MODEL_PRESETS, PAIR_TASK_NAMES, TASK_MODEL_KINDS, TASK_NAMES } from '../../protocol/data';
import type { Settings } from '../base/settings';
import { DEFAULT_SETTINGS, kindForData, specFromSettings } from '../base/settings';
import { estimateLine } from '../base/summaryLines';

/**
 * The steps of the flow, in order. The tokenizer comes before the preset because the
 * vocabulary is part of the model's size: the preset list is then sized with the vocabulary
 * the review will show. The data comes right after the kind so that a glob matching nothing
 * is refused before anything else. The architecture options come right after the preset they
 * change (architectureChoice.ts).
 */
export const STEP_ORDER = ['kind', 'data', 'tokenizer', 'preset', 'architecture', 'steps'] as const;
export type StepName = (typeof STEP_ORDER)[number];

/** What the configure steps edit. */
export interface Draft {
  readonly kind: Settings['model']['kind'];
  readonly preset: Settings['model']['preset'];
  /** Model config fields over the preset (`attentionLab.model.overrides`): the architecture step edits its options. */
  readonly overrides: Settings['model']['overrides'];
  readonly source: Settings['data']['source'];
  readonly include: string;
  readonly pairsSource: string;
  readonly pairsTarget: string;
  readonly task: TaskName;
  readonly tokenizer: Settings['tokenizer']['type'];
  readonly vocabSize: number;
  /** Steps, resolved: the settings' count, or the data's default where the setting is 0 (auto). */
  readonly steps: number;
  /**
   * Distinct characters in the documents, when Configure read them all while the glob was
   * typed (the character tokenizer's vocabulary then needs no guess); never saved.
   */
  readonly charsSeen: number | null;
  /** The engine that trains (chosen on the review), and the PyTorch engine's processes and device. */
  readonly engine: Settings['training']['engine'];
  readonly processes: number;
  readonly device: Settings['pytorch']['device'];
}

/** The data a draft trains on, as the defaults see it. */
export function draftData(d: Pick<Draft, 'source' | 'task'>): DataChoice {
  return d.source === 'task' ? { kind: 'task', task: d.task } : { kind: d.source };
}

/**
 * True when the draft's data brings its own tokenizer (the induction task), so the tokenizer step and settings do not
 * apply.
 */
export function ownTokenizer(d: Pick<Draft, 'source' | 'task'>): boolean {
  return dataDefaults(draftData(d)).ownTokenizer;
}

/** The steps of the flow a draft skips: the tokenizer for data with its own. */
export function skipsStep(d: Draft, step: StepName): boolean {
  return step === 'tokenizer' && ownTokenizer(d);
}

/**
 * The index in {@link STEP_ORDER} of the step shown after step `from` when moving by `dir`
 * (1 forward, -1 back), passing over the steps the draft skips; STEP_ORDER.length when the
 * steps are done (the review comes next). Going back never passes the first step.
 */
export function stepFrom(d: Draft, from: number, dir: 1 | -1): number {
  let i = from + dir;
  while (i >= 0 && i < STEP_ORDER.length && skipsStep(d, STEP_ORDER[i] as StepName)) i += dir;
  return i < 0 ? stepFrom(d, -1, 1) : i;
}

/** The draft the current settings describe. */
export function draftFromSettings(s: Settings): Draft {
  return {
    kind: s.model.kind,
    preset: s.model.preset,
    overrides: s.model.overrides,
    source: s.data.source,
    include: s.data.include,
    pairsSource: s.data.pairsSource,
    pairsTarget: s.data.pairsTarget,
    task: s.data.task,
    tokenizer: s.tokenizer.type,
    vocabSize: s.tokenizer.vocabSize,
    steps:
      s.training.steps > 0
        ? s.training.steps
        : dataDefaults(draftData({ source: s.data.source, task: s.data.task })).steps,
    charsSeen: null,
    engine: s.training.engine,
    processes: s.pytorch.processes,
    device: s.pytorch.device,
  };
}

/**
 * The draft after choosing other data. Other data (another source or task) brings its own
 * default step count (a task's own run, e.g. 3000 for induction): steps set for one data are
 * not carried to the next; the steps step comes after and can set them for it. Another glob
 * or pair of files of the same source keeps the steps.
 */
export function withData(
  d: Draft,
  data: Partial<Pick<Draft, 'source' | 'task' | 'include' | 'pairsSource' | 'pairsTarget' | 'charsSeen'>>,
): Draft {
  const next = { ...d, ...data };
  const other = next.source !== d.source || (next.source === 'task' && next.task !== d.task);
  return { ...next, steps: other ? dataDefaults(draftData(next)).steps : d.steps };
}

/** The settings a draft writes, as [key, value] pairs. */
export function draftUpdates(d: Draft): [string, unknown][] {
  const out: [string, unknown][] = [
    ['attentionLab.model.kind', d.kind],
    ['attentionLab.model.preset', d.preset],
    // No overrides removes the setting rather than writing {} to a settings file that never had it.
    ['attentionLab.model.overrides', Object.keys(d.overrides).length ? d.overrides : undefined],
    ['attentionLab.data.source', d.source],
    // The data's own default is saved as 0 ("the data's default"), so other data later gets its own.
    ['attentionLab.training.steps', d.steps === dataDefaults(draftData(d)).steps ? 0 : d.steps],
    ['attentionLab.training.engine', d.engine],
  ];
  // Our engine leaves the PyTorch settings as they are, for the next time PyTorch is chosen.
  if (d.engine === 'pytorch')
    out.push(['attentionLab.pytorch.processes', d.processes], ['attentionLab.pytorch.device', d.device]);
  // A task with its own tokenizer leaves the tokenizer settings as they are, for other data.
  if (!ownTokenizer(d)) out.push(['attentionLab.tokenizer.type', d.tokenizer]);
  if (d.tokenizer === 'bpe' && !ownTokenizer(d)) out.push(['attentionLab.tokenizer.vocabSize', d.vocabSize]);
  if (d.source === 'documents') out.push(['attentionLab.data.include', d.include]);
  if (d.source === 'pairs')
    out.push(['attentionLab.data.pairsSource', d.pairsSource], ['attentionLab.data.pairsTarget', d.pairsTarget]);
  if (d.source === 'task') out.push(['attentionLab.data.task', d.task]);
  return out;
}

/** The settings with the draft applied (for estimates before saving). */
export function applyDraft(s: Settings, d: Draft): Settings {
  return {
    ...s,
    model: { ...s.model, kind: d.kind, preset: d.preset, overrides: d.overrides },
    data: {
      ...s.data,
      source: d.source,
      include: d.include,
      pairsSource: d.pairsSource,
      pairsTarget: d.pairsTarget,
      task: d.task,
    },
    tokenizer: { type: d.tokenizer, vocabSize: d.vocabSize },
    training: { ...s.training, steps: d.steps, engine: d.engine },
    pytorch: { ...s.pytorch, processes: d.processes, device: d.device },
  };
}

/**
 * The engine of a draft in a few words: "builtin (ours: WebAssembly, this machine's CPU)",
 * "PyTorch · 2 processes · CPU".
 */
export function engineText(d: Pick<Draft, 'engine' | 'processes' | 'device'>): string {
  if (d.engine === 'builtin') return "builtin (ours: WebAssembly, this machine's CPU)";
  const where = {
    auto: 'CUDA if torch sees a GPU, else the CPU',
    cpu: 'CPU',
    cuda: d.processes > 1 ? 'one GPU each' : 'GPU',
  }[d.device];
  return `PyTorch · ${d.processes} ${d.processes === 1 ? 'process' : 'processes'} · ${where}`;
}

/**
 * A spec for estimating a draft's model: the files are not looked at, but the data's kind,
 * and a task's own model fields and context, are those Train will use.
 */
export function estimateSpecOf(s: Settings, d: Draft): TrainSpec {
  const data: TrainSpec['data'] =
    d.source === 'task'
      ? { kind: 'task', task: d.task }
      : d.source === 'pairs'
        ? { kind: 'pairs', source: '', target: null }
        : { kind: 'documents', files: [], root: '' };
  return specFromSettings(applyDraft(s, d), data);
}

/** The size estimate the lab module makes of a spec (extensionLab.ts `estimateSpec`), with the config it planned. */
export type Estimator = (
  spec: TrainSpec,
  charsSeen: number | null,
) => {
  readonly params: number;
  readonly memoryBytes: number;
  readonly vocabNote: string;
  readonly config: Readonly<Record<string, unknown>>;
};

/** A draft's model size in one line, or why the configuration is invalid. */
export type DraftSize = { readonly ok: true; readonly line: string } | { readonly ok: false; readonly error: string };

/**
 * The one size line of a draft, shown by the preset list for each preset and by the review
 * for the chosen one: "127k parameters · ~2.1 MB with ≈360 tokens (…)".
 */
export function draftSize(s: Settings, d: Draft, estimate: Estimator): DraftSize {
  try {
    const e = estimate(estimateSpecOf(s, d), d.tokenizer === 'char' && d.source === 'documents' ? d.charsSeen : null);
    return { ok: true, line: `${estimateLine(e.params, e.memoryBytes, null)} with ${e.vocabNote}` };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The preset list: each preset with what it is and its size for this draft. */
export function presetSizes(
  s: Settings,
  d: Draft,
  estimate: Estimator,
): { preset: Draft['preset']; label: string; size: DraftSize }[] {
  return presetChoices(d.kind).map((c) => ({ ...c, size: draftSize(s, { ...d, preset: c.preset }, estimate) }));
}

/** Where "Configure Model…" writes the settings. */
export type SettingsTarget = 'workspace' | 'user';

/** Where the settings go, for people: "workspace settings (.vscode/settings.json)". */
export function targetText(target: SettingsTarget, workspaceFile: string | null): string {
  if (target === 'user') return 'user settings (every workspace)';
  return `workspace settings (${workspaceFile ?? '.vscode/settings.json'})`;
}

/** What each preset is, for the quick pick (sizes as in src/engine/config.ts `presetConfig`). */
const PRESET_LABELS: Readonly<Record<PresetName, (kind: ModelKind) => string>> = {
  tiny: () => 'd_model 64, 2 layers, 4 heads: quick to train',
  small: (kind) => (kind === 'encoder-decoder' ? 'd_model 128, 3+3 layers, 4 heads' : 'd_model 128, 4 layers, 4 heads'),
  base: () => "the paper's base model: d_model 512, 6+6 layers, 8 heads",
  gpt: () => "GPT-2 small's shape: d_model 768, 12 layers, 12 heads (slow on a CPU)",
  'llama-tiny': () => 'Llama-style (RoPE, RMSNorm, SwiGLU, 2 key/value heads): d_model 64, 2 layers, 4 heads',
  'llama-small': () => 'Llama-style (RoPE, RMSNorm, SwiGLU, 2 key/value heads): d_model 128, 4 layers, 4 heads',
  'nanochat-tiny': () => 'nanochat-style (RoPE, QK-norm, ReLU², logit soft-cap): d_model 64, 2 layers, 4 heads',
  'nanochat-small': () => 'nanochat-style (RoPE, QK-norm, ReLU², logit soft-cap): d_model 128, 4 layers, 4 heads',
};

/** Presets of a kind, with what they are. */
export function presetChoices(kind: Draft['kind']): { preset: Draft['preset']; label: string }[] {
  return MODEL_PRESETS[kind].map((preset) => ({ preset, label: PRESET_LABELS[preset](kind) }));
}

/** A preset that does not exist for the kind becomes `tiny`. */
export function fitPreset(kind: Draft['kind'], preset: Draft['preset']): Draft['preset'] {
  return presetChoices(kind).some((c) => c.preset === preset) ? preset : 'tiny';
}

/**
 * The draft after choosing a kind: data that trains that kind (documents, or the built-in
 * task of that kind when `tasksOnly`, in Restricted Mode), a preset that exists for it.
 */
export function withKind(d: Draft, kind: Draft['kind'], tasksOnly = false): Draft {
  const fits = kindForData(d.source, d.task) === kind && !(tasksOnly && d.source !== 'task');
  const task =
    TASK_MODEL_KINDS[d.task] === kind
      ? d.task
      : kind === 'encoder-decoder'
        ? pairTask(d.task)
        : (tasksOf(kind)[0] as TaskName);
  const data = fits
    ? {}
    : kind === 'decoder-only' && !tasksOnly
      ? { source: 'documents' as const }
      : { source: 'task' as const, task };
  return { ...withData(d, data), kind, preset: fitPreset(kind, d.preset) };
}

/** The built-in tasks of each model kind, in the order people are offered them. */
export function tasksOf(kind: ModelKind): TaskName[] {
  return TASK_NAMES.filter((t) => TASK_MODEL_KINDS[t] === kind);
}

/** `task` when it is a source→target task, else the settings' default one. */
function pairTask(task: TaskName): TaskName {
  return PAIR_TASK_NAMES.includes(task) ? task : DEFAULT_SETTINGS.data.task;
}

function intError(v: string, min: number, max: number, what: string): string | null {
  const t = v.trim();
  if (!/^\d+$/.test(t)) return `${what} must be a whole number from ${min} to ${max}.`;
  const n = Number(t);
  return n < min || n > max ? `${what} must be from ${min} to ${max}; got ${n}.` : null;
}

/** Error of a typed-in step count, or null. */
export function validateSteps(v: string): string | null {
  return intError(v, 1, 1_000_000, 'Steps');
}

/** Error of a typed-in BPE vocabulary size, or null. */
export function validateVocab(v: string): string | null {
  return intError(v, 261, 65536, 'The vocabulary size (260 special and byte tokens plus merges)');
}

/** Error of a typed-in glob, or null. */
export function validateGlob(v: string): string | null {
  if (v.trim() === '') return 'Give a glob such as **/*.md or notes/**/*.txt.';
  let depth = 0;
  for (const ch of v) {
    if (ch === '{') depth++;
    if (ch === '}' && --depth < 0) return 'Unbalanced braces: every } needs a { before it.';
  }
  return depth === 0 ? null : 'Unbalanced braces: close every { with a }.';
}
