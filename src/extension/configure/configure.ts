/**
 * "Attention Lab: Configure Model…": a multi-step quick pick — model kind, data source
 * (documents by glob, detected pairs files, or a built-in task), tokenizer and vocabulary
 * size, preset, the architecture options behind it (positions, norms, feed-forward, key/value
 * heads, biases, soft-caps, window, residual; refused with the engine's message while a
 * combination is invalid), steps — ending on a review that shows the architecture, parameter
 * count, memory estimate and measured time per step, and where the settings will be written,
 * before anything is saved. The glob box counts the files it matches as the user types (the corpus plan that
 * training makes, bounded and cancelled by the next keystroke), lists them with the skipped
 * ones on request, and refuses a glob that matches nothing. The review also chooses the
 * engine (engineChoice.ts). Saves to workspace settings
 * when a folder is open (the review can switch to user settings), says where it saved, and
 * can start training.
 *
 * Leaves out: the rules and texts of the choices (configureDraft.ts, dataPreview.ts) and the
 * estimates themselves (the lab module plans the model and the corpus; the model worker
 * times a few steps).
 */

import * as vscode from 'vscode';
import type { Draft, Estimator, SettingsTarget, StepName } from './configureDraft';
import {
  STEP_ORDER,
  draftFromSettings,
  draftSize,
  draftUpdates,
  engineText,
  estimateSpecOf,
  ownTokenizer,
  presetSizes,
  stepFrom,
  targetText,
  tasksOf,
  validateGlob,
  validateSteps,
  validateVocab,
  withData,
  withKind,
} from './configureDraft';
import type { GlobPreview } from './dataPreview';
import { previewLine, previewRows } from './dataPreview';
import { messageOf } from '../base/errors';
import { formatBackend, formatCompact, formatCount, formatDuration } from '../../common/format';
import type { Back, LiveResult, StepOptions, ValueItem } from './quickInput';
import { BACK, inputStep, pickStep } from './quickInput';
import { specFromSettings } from '../base/settings';
import { engineRow, pickEngine, torchLine } from './engineChoice';
import { documentsRoot, findDocumentFiles, findWorkspaceFiles } from '../training/trainData';
import type { ExtensionHost } from '../host/extensionHost';
import type { LabLoader } from '../host/labLoader';
import type { RunsRoot } from '../runs/runStore';
import type { ModelClient } from '../workers/modelClient';
import type { EngineChoiceDeps } from './engineChoice';
import type { FieldValue } from './architectureChoice';
import {
  architectureView,
  changedOptions,
  draftConfig,
  optionChoices,
  refusalRow,
  shownConfig,
  validateOptionNumber,
  withOption,
  withPresetArchitecture,
} from './architectureChoice';
import type { ArchitectureOption } from '../../common/architecture';
import { OPTION_INFO } from '../../common/architecture';

/** What the Configure steps use: the host's files, the lab's estimates and previews, the model worker's timing. */
export interface ConfigureDeps extends EngineChoiceDeps {
  readonly host: Pick<ExtensionHost, 'fs' | 'pathOf' | 'pytorch' | 'kind'>;
  readonly lab: LabLoader;
  readonly models: Pick<ModelClient, 'request'>;
  runsRoot(): RunsRoot;
  workspaceDir(): string | null;
}

const TITLE = 'Attention Lab: Configure Model';
const TOTAL = STEP_ORDER.length + 1;

type Step = (d: Draft, back: boolean) => Promise<Draft | Back | undefined>;

/** Most files the glob box looks at (the count then reads "1,000+"); Train takes up to 20,000. */
const PREVIEW_FILES = 1000;

/** Runs the flow; returns true when settings were saved. */
export async function configureModel(s: ConfigureDeps): Promise<boolean> {
  const trusted = vscode.workspace.isTrusted;
  const byName: Record<StepName, Step> = {
    kind: (d, b) => kindStep(d, b),
    data: (d, b) => dataStep(s, d, b, trusted),
    tokenizer: (d, b) => tokenizerStep(d, b),
    preset: (d, b) => presetStep(s, d, b),
    architecture: (d, b) => architectureStep(s, d, b),
    steps: (d, b) => stepsStep(d, b),
  };
  let draft = draftFromSettings(s.settings());
  if (!trusted) draft = withKind(draft, draft.kind, true);
  // A step the draft skips (the tokenizer of a task with its own letters) is passed over, forward and back.
  for (let i = stepFrom(draft, -1, 1); i < STEP_ORDER.length;) {
    const r = await byName[STEP_ORDER[i] as StepName](draft, i > 0);
    if (r === undefined) return false;
    if (r !== BACK) draft = r;
    i = stepFrom(draft, i, r === BACK ? -1 : 1);
  }
  const hasFolder = (vscode.workspace.workspaceFolders?.length ?? 0) > 0;
  const choice = await reviewStep(s, draft, hasFolder ? 'workspace' : 'user', hasFolder);
  if (!choice) return false;
  const target =
    choice.target === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  const config = vscode.workspace.getConfiguration();
  for (const [key, value] of draftUpdates(choice.draft)) await config.update(key, value, target);
  const where = targetText(choice.target, workspaceFileName());
  s.log.info(`Saved the configuration to ${where}.`);
  // Not awaited: training starts while the message is up.
  void vscode.window.showInformationMessage(`Saved to ${where}.`, 'Open').then((open) => {
    if (open)
      void vscode.commands.executeCommand(
        choice.target === 'workspace'
          ? 'workbench.action.openWorkspaceSettingsFile'
          : 'workbench.action.openSettingsJson',
      );
  });
  if (choice.action === 'train') await vscode.commands.executeCommand('attentionLab.train');
  return true;
}

/** The .code-workspace file's name when one is open (workspace settings go there), else null. */
function workspaceFileName(): string | null {
  const f = vscode.workspace.workspaceFile;
  return f && f.scheme !== 'untitled' ? f.path.slice(f.path.lastIndexOf('/') + 1) : null;
}

const opts = (step: number, back: boolean): StepOptions => ({ title: TITLE, step, totalSteps: TOTAL, back });
const stepNo = (name: StepName): number => STEP_ORDER.indexOf(name) + 1;

async function kindStep(d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const trusted = vscode.workspace.isTrusted;
  const decoderTasks = tasksOf('decoder-only').join(', ');
  const items: ValueItem<Draft['kind']>[] = [
    {
      label: 'decoder-only',
      value: 'decoder-only',
      description: 'GPT-style language model',
      detail: trusted
        ? `Trains on documents (workspace files) or a built-in task (${decoderTasks}). nanoGPT's architecture.`
        : `Restricted Mode: built-in tasks only (${decoderTasks}); workspace files are not read.`,
    },
    {
      label: 'encoder-decoder',
      value: 'encoder-decoder',
      description: '"Attention Is All You Need"',
      detail: 'Trains on source → target pairs or a built-in task (reverse, sort, dates…) and translates.',
    },
  ];
  const r = await pickStep({ ...opts(stepNo('kind'), back), placeholder: 'Which transformer?', items, active: d.kind });
  return r === undefined || r === BACK ? r : withKind(d, r, !trusted);
}

async function presetStep(s: ConfigureDeps, d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const base = s.settings();
  const sizes = presetSizes(base, d, (spec, chars) => s.lab.get().estimateSpec(spec, chars));
  const items = sizes.map((c): ValueItem<Draft['preset']> => ({
    label: c.preset,
    value: c.preset,
    description: c.label,
    detail: c.size.ok ? c.size.line : c.size.error,
  }));
  const r = await pickStep({
    ...opts(stepNo('preset'), back),
    placeholder: `Size of the ${d.kind} model`,
    items,
    active: d.preset,
  });
  // Another preset is another architecture: the options changed over the old one go back to the new one's.
  return r === undefined || r === BACK ? r : r === d.preset ? d : { ...withPresetArchitecture(d), preset: r };
}

type ArchValue = 'continue' | 'reset' | ArchitectureOption;

/**
 * The architecture behind the preset: Continue first (refused, with the engine's one-line
 * message, while the combination is invalid), then each option with its value in words and
 * what it does; choosing one asks for its value and comes back here.
 */
async function architectureStep(s: ConfigureDeps, d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const estimate: Estimator = (spec, chars) => s.lab.get().estimateSpec(spec, chars);
  let active: ArchValue = 'continue';
  for (;;) {
    const view = architectureView(s.settings(), d, estimate);
    const changed = view.rows.some((r) => r.changed);
    const items: ValueItem<ArchValue>[] = [
      view.problem === null
        ? { label: '$(arrow-right) Continue', value: 'continue', description: view.line ?? '' }
        : // No value: Enter does nothing until an option below (or Back to the preset) makes it fit.
          { ...refusalRow(view.problem), label: `$(error) ${refusalRow(view.problem).label}` },
      ...(changed
        ? [{ label: `$(discard) Back to the ${d.preset} preset's architecture`, value: 'reset' as const }]
        : []),
      { label: `Options behind the ${d.preset} preset`, kind: vscode.QuickPickItemKind.Separator },
      ...view.rows.map((r): ValueItem<ArchValue> => ({
        label: r.title,
        value: r.key,
        description: `${r.value}${r.changed ? ' (changed)' : ''}`,
        detail: r.description,
      })),
    ];
    const r: ArchValue | Back | undefined = await pickStep<ArchValue>({
      ...opts(stepNo('architecture'), back),
      placeholder: `Architecture of the ${d.kind} model: the ${d.preset} preset's, or change an option`,
      items,
      active,
    });
    if (r === undefined || r === BACK || r === 'continue') return r === 'continue' ? d : r;
    active = r;
    if (r === 'reset') {
      d = withPresetArchitecture(d);
      continue;
    }
    const v = await optionStep(s, d, r, estimate);
    if (v === undefined) return undefined;
    if (v !== BACK) d = withOption(s.settings(), d, r, v, estimate);
  }
}

/** The value of one option: a pick for choices and on/off, a box (checked by the engine as typed) for numbers. */
async function optionStep(
  s: ConfigureDeps,
  d: Draft,
  key: ArchitectureOption,
  estimate: Estimator,
): Promise<FieldValue | Back | undefined> {
  const info = OPTION_INFO[key];
  const config = shownConfig(s.settings(), d, estimate);
  const current = config ? (config as Record<string, unknown>)[key] : undefined;
  const o = opts(stepNo('architecture'), true);
  if (info.type === 'choice' || info.type === 'bool') {
    const items = optionChoices(key, config).map((c): ValueItem<FieldValue> => ({
      label: c.label,
      value: c.value,
      description: `${key} ${String(c.value)}${c.value === current ? ' (now)' : ''}`,
    }));
    return pickStep<FieldValue>({
      ...o,
      placeholder: `${info.title}: ${info.description}`,
      items,
      active: current as FieldValue,
    });
  }
  // The engine's message for the value as typed: a window past the context, kv heads that do not divide the heads…
  const validate = (v: string): string | null => {
    const bad = validateOptionNumber(key, v);
    if (bad) return bad;
    const next = withOption(s.settings(), d, key, Number(v.trim()), estimate);
    const r = draftConfig(s.settings(), next, estimate);
    return r.ok ? null : r.error;
  };
  const r = await inputStep({
    ...o,
    prompt: `${info.title}: ${info.description}`,
    value: String(current ?? ''),
    validate,
  });
  return r === undefined || r === BACK ? r : Number(r.trim());
}

type DataChoice =
  { kind: 'documents' } | { kind: 'pairs'; source: string; target: string } | { kind: 'task'; task: Draft['task'] };

/** The built-in tasks of a model kind, under a separator. */
function taskItems(kind: Draft['kind']): ValueItem<DataChoice>[] {
  return [
    { label: 'Built-in tasks', kind: vscode.QuickPickItemKind.Separator },
    ...tasksOf(kind).map((task): ValueItem<DataChoice> => ({
      label: `$(beaker) ${task}`,
      value: { kind: 'task', task },
      description: taskBlurb(task),
    })),
  ];
}

/**
 * Documents (then the glob box) or the decoder-only model's built-in task. One line per row:
 * a truncated detail line would open a hover over the row below it.
 */
async function decoderDataStep(
  s: ConfigureDeps,
  d: Draft,
  back: boolean,
  trusted: boolean,
): Promise<Draft | Back | undefined> {
  // A window with no folder has no workspace files to offer.
  const folder = s.workspaceDir() !== null;
  const documents: ValueItem<DataChoice>[] =
    trusted && folder
      ? [
          {
            label: '$(files) Documents in this workspace…',
            value: { kind: 'documents' },
            description: `a glob, now ${d.include}`,
          },
        ]
      : [];
  const items = [...documents, ...taskItems('decoder-only')];
  for (;;) {
    const active =
      d.source === 'task'
        ? items.find((i) => i.value?.kind === 'task' && i.value.task === d.task)?.value
        : documents[0]?.value;
    const placeholder = !trusted
      ? 'Built-in task (Restricted Mode: workspace files are not read)'
      : folder
        ? 'Train on documents or a built-in task'
        : 'Built-in task (no folder is open: open one to train on its files)';
    const r = await pickStep<DataChoice>({
      ...opts(stepNo('data'), back),
      placeholder,
      items,
      ...(active ? { active } : {}),
    });
    if (r === undefined || r === BACK) return r;
    if (r.kind === 'task') return withData(d, { source: 'task', task: r.task });
    const g = await globStep(s, d, true);
    if (g !== BACK) return g;
  }
}

async function dataStep(
  s: ConfigureDeps,
  d: Draft,
  back: boolean,
  trusted: boolean,
): Promise<Draft | Back | undefined> {
  if (d.kind === 'decoder-only') return decoderDataStep(s, d, back, trusted);
  const ws = s.workspaceDir();
  const tasks = taskItems('encoder-decoder');
  const pairs = trusted && ws ? findPairs(s, ws).catch(() => []) : Promise.resolve([]);
  const withPairs = pairs.then((found) => [
    ...(found.length
      ? [
          { label: 'Pairs files in this workspace', kind: vscode.QuickPickItemKind.Separator } as ValueItem<DataChoice>,
          ...found,
        ]
      : []),
    ...tasks,
  ]);
  const placeholder = !trusted
    ? 'Built-in task (Restricted Mode: workspace files are not read)'
    : ws
      ? 'Source → target data'
      : 'Built-in task (no folder is open: open one to train on its pairs files)';
  const r = await pickStep<DataChoice>({ ...opts(stepNo('data'), back), placeholder, items: tasks, busy: withPairs });
  if (r === undefined || r === BACK) return r;
  if (r.kind === 'task') return withData(d, { source: 'task', task: r.task });
  if (r.kind === 'pairs') return withData(d, { source: 'pairs', pairsSource: r.source, pairsTarget: r.target });
  return withData(d, { source: 'documents' });
}

/** The documents glob, with the live count and the preview list. */
async function globStep(s: ConfigureDeps, d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const seen = new Map<string, GlobPreview & { chars: number | null }>();
  const r = await inputStep({
    ...opts(stepNo('data'), back),
    prompt: 'Documents to train on: a glob of workspace files (files.exclude and .gitignore are honored)',
    value: d.include,
    validate: validateGlob,
    live: {
      delayMs: 300,
      run: async (value, token): Promise<LiveResult> => {
        const p = await previewGlob(s, value.trim(), token);
        seen.set(value.trim(), p);
        return previewLine(p);
      },
    },
    button: { icon: 'list-flat', tooltip: 'Preview files…', run: (value) => showPreview(s, value.trim(), seen) },
  });
  if (r === undefined || r === BACK) return r;
  const include = r.trim();
  return withData(d, { source: 'documents', include, charsSeen: seen.get(include)?.chars ?? null });
}

/**
 * Largest file whose first bytes the preview checks on the web: `workspace.fs` reads only whole
 * files, through the page, so checking a 60 MB file's start would move all of it there.
 */
const WEB_SNIFF_FILE_BYTES = 4 << 20;

/** The preview's budget on this host (lab/data/corpusPreview.ts). */
function sniffBudget(s: Pick<ConfigureDeps, 'host'>): { maxSniffFileBytes?: number } {
  return s.host.kind === 'web' ? { maxSniffFileBytes: WEB_SNIFF_FILE_BYTES } : {};
}

/** What the glob names: the files VS Code finds, planned (and the first ones read) as training would. */
async function previewGlob(
  s: ConfigureDeps,
  glob: string,
  token: vscode.CancellationToken,
): Promise<GlobPreview & { chars: number | null }> {
  const settings = s.settings();
  const found = await findDocumentFiles(s.host, glob, settings.data.exclude, s.runsRoot().root, PREVIEW_FILES, token);
  const none = {
    glob,
    found: 0,
    capped: false,
    excluded: found.excluded,
    files: [],
    bytes: 0,
    skipped: [],
    read: 0,
    planned: 0,
    chars: null,
  };
  if (found.files.length === 0) return none;
  const data = specFromSettings(settings, { kind: 'documents', files: [], root: '' }).data;
  const limits =
    data.kind === 'documents'
      ? { maxFileBytes: data.maxFileBytes, maxTotalBytes: data.maxTotalBytes, skipGenerated: data.skipGenerated }
      : {};
  const abort = new AbortController();
  const sub = token.onCancellationRequested(() => abort.abort());
  try {
    const p = await s.lab
      .get()
      .previewDocuments(
        s.host.fs,
        found.files,
        documentsRoot(s.host, found.files),
        limits,
        sniffBudget(s),
        abort.signal,
      );
    const complete = !found.capped && p.read === p.planned;
    return {
      glob,
      found: found.files.length,
      capped: found.capped,
      excluded: found.excluded,
      files: p.files,
      bytes: p.bytes,
      skipped: p.skipped,
      read: p.read,
      planned: p.planned,
      chars: complete ? p.distinctChars : null,
    };
  } finally {
    sub.dispose();
  }
}

/** The "Preview files…" list: the files to train on with their sizes, then the skipped ones with why. */
async function showPreview(s: ConfigureDeps, glob: string, seen: Map<string, GlobPreview>): Promise<void> {
  const qp = vscode.window.createQuickPick<vscode.QuickPickItem>();
  qp.title = `Files matching ${glob}`;
  qp.placeholder = 'Type to filter; Escape goes back to the glob';
  qp.matchOnDescription = true;
  qp.busy = true;
  const show = (p: GlobPreview): void => {
    qp.busy = false;
    qp.items = previewRows(p).map((row): vscode.QuickPickItem =>
      row.kind === 'separator'
        ? { label: row.label, kind: vscode.QuickPickItemKind.Separator }
        : {
            label: `$(${row.kind === 'file' ? 'file' : 'circle-slash'}) ${row.label}`,
            ...(row.description ? { description: row.description } : {}),
          },
    );
    if (p.found === 0) qp.items = [{ label: `$(warning) ${previewLine(p).message}` }];
  };
  const known = seen.get(glob);
  const cts = new vscode.CancellationTokenSource();
  if (known) show(known);
  else
    void previewGlob(s, glob, cts.token).then(
      (p) => !cts.token.isCancellationRequested && show(p),
      (e: unknown) => {
        qp.busy = false;
        qp.items = [{ label: `$(error) ${messageOf(e)}` }];
      },
    );
  await new Promise<void>((resolve) => {
    qp.onDidAccept(() => qp.hide());
    qp.onDidHide(() => resolve());
    qp.show();
  });
  cts.cancel();
  cts.dispose();
  qp.dispose();
}

function taskBlurb(task: Draft['task']): string {
  return {
    copy: "'abc' → 'abc'",
    reverse: "'abcde' → 'edcba'",
    sort: "'dbca' → 'abcd'",
    addition: "'12+345' → '357'",
    dates: "'Wed, 3 Mar 2021' → '2021-03-03'",
    induction: "'qxfb…qxfb…' repeated random letters: watch an induction head form",
    'modular-addition': 'a + b mod 113 on 30% of the pairs: watch it grok (Curves → Grokking)',
  }[task];
}

async function findPairs(s: ConfigureDeps, ws: string): Promise<ValueItem<DataChoice>[]> {
  const hits = await findWorkspaceFiles(
    s.host,
    '**/*.{tsv,jsonl,src,tgt,en,de,fr,es,it,pt,nl,ru,zh,ja}',
    200,
    s.runsRoot().root,
  );
  const { fs } = s.host;
  const dirs = [ws, ...hits.map((p) => fs.dirname(p))];
  const found = await s.lab.get().detectPairs(fs, dirs);
  const rel = (p: string): string => fs.relative(ws, p) || p;
  const folderOf = (p: string): string => {
    const cut = p.lastIndexOf('/');
    return cut < 0 ? '' : p.slice(0, cut);
  };
  return found.map((c) => ({
    label: `$(files) ${c.label}`,
    value: { kind: 'pairs', source: rel(c.source), target: c.target ? rel(c.target) : '' },
    description: folderOf(rel(c.source)),
  }));
}

async function tokenizerStep(d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const items: ValueItem<Draft['tokenizer']>[] = [
    {
      label: 'char',
      value: 'char',
      description: 'one token per character',
      detail: 'Small vocabulary; the clearest attention maps.',
    },
    {
      label: 'bpe',
      value: 'bpe',
      description: 'byte-level BPE (GPT-2 pre-tokenizer)',
      detail: 'Merges frequent byte pairs; shorter sequences, larger vocabulary.',
    },
  ];
  for (;;) {
    const r = await pickStep({
      ...opts(stepNo('tokenizer'), back),
      placeholder: 'Tokenizer (trained on your data before the model)',
      items,
      active: d.tokenizer,
    });
    if (r === undefined || r === BACK) return r;
    if (r === 'char') return { ...d, tokenizer: 'char' };
    const v = await inputStep({
      ...opts(stepNo('tokenizer'), true),
      prompt: 'BPE vocabulary size (260 special and byte tokens plus merges)',
      value: String(d.vocabSize),
      validate: validateVocab,
    });
    if (v === undefined) return undefined;
    if (v !== BACK) return { ...d, tokenizer: 'bpe', vocabSize: Number(v.trim()) };
  }
}

async function stepsStep(d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const r = await inputStep({
    ...opts(stepNo('steps'), back),
    prompt: 'Training steps (optimizer updates)',
    value: String(d.steps),
    validate: validateSteps,
  });
  return r === undefined || r === BACK ? r : { ...d, steps: Number(r.trim()) };
}

/** What the review decided: save (and maybe train) a draft to a settings target. */
interface ReviewChoice {
  readonly action: 'save' | 'train';
  readonly target: SettingsTarget;
  readonly draft: Draft;
}

type ReviewValue = 'save' | 'train' | 'where' | 'engine';

/**
 * The review: Save and Save and Train on short rows (a row's hover then never covers
 * another action), where the settings go (a row switches workspace ↔ user), the engine
 * (a row opens the list; for PyTorch it says what the chosen Python's torch offers), and the
 * configuration with its size and measured speed on the last row.
 */
async function reviewStep(
  s: ConfigureDeps,
  d: Draft,
  target: SettingsTarget,
  canSwitch: boolean,
  timing?: Promise<string>,
): Promise<ReviewChoice | undefined> {
  const spec = estimateSpecOf(s.settings(), d);
  const size = draftSize(s.settings(), d, (sp, chars) => s.lab.get().estimateSpec(sp, chars));
  const changed = changedOptions(d);
  const arch = architectureView(s.settings(), d, (sp, chars) => s.lab.get().estimateSpec(sp, chars)).line;
  const describe =
    `${d.engine === 'pytorch' ? 'PyTorch · ' : ''}${d.kind} · ${d.preset}` +
    `${changed.length ? ` (${changed.join(', ')})` : ''} · ` +
    (d.source === 'task'
      ? `task ${d.task}`
      : d.source === 'pairs'
        ? `pairs ${d.pairsSource}${d.pairsTarget ? ` → ${d.pairsTarget}` : ''}`
        : `documents ${d.include}`) +
    ' · ' +
    (ownTokenizer(d) ? 'its own letters' : `${d.tokenizer}${d.tokenizer === 'bpe' ? ` ${d.vocabSize}` : ''}`) +
    ` · ${formatCount(d.steps)} steps · context ${spec.training.seqLen}`;
  const where = targetText(target, workspaceFileName());
  const other: SettingsTarget = target === 'workspace' ? 'user' : 'workspace';
  const torch = torchLine(s, s.settings(), d);
  const items = (time: string, probe: { ok: boolean; line: string } | 'probing' | null): ValueItem<ReviewValue>[] =>
    !size.ok
      ? [{ label: '$(error) This configuration is invalid', detail: size.error }]
      : [
          { label: '$(play) Save and Train', value: 'train', description: `to ${where}` },
          { label: '$(check) Save', value: 'save', description: `to ${where}` },
          ...(canSwitch
            ? [
                {
                  label: `$(arrow-swap) Save to ${targetText(other, workspaceFileName())} instead`,
                  value: 'where' as const,
                },
              ]
            : []),
          // The browser's VS Code starts no processes: no engine to choose there, unless a setting already asks for
          // PyTorch.
          ...(s.host.pytorch || d.engine === 'pytorch' ? [engineRow<ReviewValue>(d, 'engine', probe)] : []),
          { label: 'Review', kind: vscode.QuickPickItemKind.Separator },
          ...(s.host.pytorch || d.engine === 'pytorch'
            ? []
            : [{ label: `$(server-process) Engine: ${engineText(d)}`, description: 'PyTorch needs desktop VS Code' }]),
          // The architecture the size was planned for (the preset's, with the options changed behind it).
          ...(arch ? [{ label: `$(symbol-structure) ${arch}`, description: 'architecture' }] : []),
          // Timed on our engine; PyTorch reports its own tokens/s once it trains.
          {
            label: `$(info) ${size.line}`,
            detail: d.engine === 'pytorch' && time ? `our engine on this machine: ${time}` : time,
          },
        ];
  const timed =
    timing ??
    (size.ok
      ? s.models
          .request('calibrate', {
            spec,
            vocabSize: s.lab
              .get()
              .estimateSpec(spec, d.tokenizer === 'char' && d.source === 'documents' ? d.charsSeen : null).vocabSize,
          })
          .then(
            (c) =>
              `≈ ${formatDuration(c.secondsPerStep)} per step on ` +
              // On WebGPU the adapter is the place ("WebGPU (apple m2 · Metal)"); on the CPU, the threads.
              (c.backend.startsWith('webgpu')
                ? `${formatBackend(c.backend)} (${formatCompact(c.flopsPerSec, 'FLOP/s')} measured)`
                : `${c.threads} ${c.threads === 1 ? 'thread' : 'threads'} ` +
                  `(${formatCompact(c.flopsPerSec, 'FLOP/s')} measured, ${c.backend} backend)`) +
              ` · ${formatCount(d.steps)} steps ≈ ` +
              `${formatDuration(c.secondsPerStep * d.steps)}`,
            (err) => `Time per step unknown: ${messageOf(err)}`,
          )
      : Promise.resolve(''));
  const probing = torch ? ('probing' as const) : null;
  const ready = Promise.all([timed, torch]).then(([time, t]) => items(time, t));
  const r = await pickStep({
    ...opts(TOTAL, true),
    placeholder: describe,
    items: items('Measuring time per step on this machine…', probing),
    busy: ready,
    active: 'train',
  });
  if (r === BACK) return reviewBack(s, d, target, canSwitch);
  if (r === 'where') return reviewStep(s, d, other, canSwitch, timed);
  if (r === 'engine') {
    const e = await pickEngine(s, s.settings(), d, opts(TOTAL, true));
    return e === undefined ? undefined : reviewStep(s, e === BACK ? d : e, target, canSwitch, timed);
  }
  return r === 'save' || r === 'train' ? { action: r, target, draft: d } : undefined;
}

async function reviewBack(
  s: ConfigureDeps,
  d: Draft,
  target: SettingsTarget,
  canSwitch: boolean,
): Promise<ReviewChoice | undefined> {
  const r = await stepsStep(d, true);
  if (r === undefined || r === BACK) return undefined;
  return reviewStep(s, r, target, canSwitch);
}
