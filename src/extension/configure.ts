/**
 * "Attention Lab: Configure Model…": a multi-step quick pick — model kind, preset, data
 * source (documents by glob, detected pairs files, or a built-in task), tokenizer and
 * vocabulary size, steps — ending on a review that shows the parameter count, memory
 * estimate and measured time per step before anything is saved. Saves to workspace
 * settings when a folder is open (user settings otherwise), and can start training.
 *
 * Leaves out: the rules of the choices (configureDraft.ts) and the estimates themselves
 * (the lab module plans the model; the model worker times a few steps).
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { PAIR_TASK_NAMES } from '../protocol/data';
import type { Draft } from './configureDraft';
import { draftFromSettings, draftUpdates, estimateSpecOf, presetChoices, validateGlob, validateSteps, validateVocab, withKind } from './configureDraft';
import { messageOf } from './errors';
import { formatCompact, formatDuration } from '../format';
import { estimateLine } from './summaryLines';
import type { Back, StepOptions, ValueItem } from './quickInput';
import { BACK, inputStep, pickStep } from './quickInput';
import type { Services } from './services';

const TITLE = 'Attention Lab: Configure Model';
const TOTAL = 6;

type Step = (d: Draft, back: boolean) => Promise<Draft | Back | undefined>;

/** Runs the flow; returns true when settings were saved. */
export async function configureModel(s: Services): Promise<boolean> {
  const trusted = vscode.workspace.isTrusted;
  const steps: Step[] = [(d, b) => kindStep(d, b), (d, b) => presetStep(s, d, b), (d, b) => dataStep(s, d, b, trusted), (d, b) => tokenizerStep(d, b), (d, b) => stepsStep(d, b)];
  let draft = draftFromSettings(s.settings());
  if (!trusted) draft = { ...withKind(draft, 'encoder-decoder'), source: 'task' };
  for (let i = 0; i < steps.length; ) {
    const r = await (steps[i] as Step)(draft, i > 0);
    if (r === undefined) return false;
    if (r === BACK) {
      i--;
      continue;
    }
    draft = r;
    i++;
  }
  const choice = await reviewStep(s, draft);
  if (!choice) return false;
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  const config = vscode.workspace.getConfiguration();
  for (const [key, value] of draftUpdates(draft)) await config.update(key, value, target);
  s.log.info(`Saved the configuration to ${target === vscode.ConfigurationTarget.Workspace ? 'workspace' : 'user'} settings.`);
  if (choice === 'train') await vscode.commands.executeCommand('attentionLab.train');
  return true;
}

const opts = (step: number, back: boolean): StepOptions => ({ title: TITLE, step, totalSteps: TOTAL, back });

async function kindStep(d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const trusted = vscode.workspace.isTrusted;
  const items: ValueItem<Draft['kind']>[] = [
    { label: 'decoder-only', value: 'decoder-only', description: 'GPT-style language model', detail: trusted ? 'Trains on documents (workspace files) and continues text. nanoGPT\'s architecture.' : 'Needs workspace files: not available in Restricted Mode.' },
    { label: 'encoder-decoder', value: 'encoder-decoder', description: '"Attention Is All You Need"', detail: 'Trains on source → target pairs or a built-in task (reverse, sort, dates…) and translates.' },
  ];
  const r = await pickStep({ ...opts(1, back), placeholder: 'Which transformer?', items: trusted ? items : items.slice(1), active: d.kind });
  return r === undefined || r === BACK ? r : withKind(d, r);
}

async function presetStep(s: Services, d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const base = s.settings();
  const items = presetChoices(d.kind).map((c): ValueItem<Draft['preset']> => ({ label: c.preset, value: c.preset, description: c.label }));
  const sized = Promise.resolve().then(() =>
    items.map((it) => {
      try {
        const e = s.lab.get().estimateSpec(estimateSpecOf(base, { ...d, preset: it.value as Draft['preset'] }));
        return { ...it, detail: estimateLine(e.params, e.memoryBytes, null) };
      } catch (err) {
        return { ...it, detail: messageOf(err) };
      }
    }),
  );
  const r = await pickStep({ ...opts(2, back), placeholder: `Size of the ${d.kind} model`, items, active: d.preset, busy: sized });
  return r === undefined || r === BACK ? r : { ...d, preset: r };
}

type DataChoice = { kind: 'documents' } | { kind: 'pairs'; source: string; target: string } | { kind: 'task'; task: Draft['task'] };

async function dataStep(s: Services, d: Draft, back: boolean, trusted: boolean): Promise<Draft | Back | undefined> {
  if (d.kind === 'decoder-only') {
    const r = await inputStep({
      ...opts(3, back),
      prompt: 'Documents to train on: a glob of workspace files (files.exclude and .gitignore are honored)',
      value: d.include,
      validate: validateGlob,
    });
    return r === undefined || r === BACK ? r : { ...d, source: 'documents', include: r.trim() };
  }
  const ws = s.workspaceDir();
  const tasks: ValueItem<DataChoice>[] = [
    { label: 'Built-in tasks', kind: vscode.QuickPickItemKind.Separator },
    ...PAIR_TASK_NAMES.map((task): ValueItem<DataChoice> => ({ label: `$(beaker) ${task}`, value: { kind: 'task', task }, description: taskBlurb(task) })),
  ];
  const pairs = trusted && ws ? findPairs(s, ws).catch(() => []) : Promise.resolve([]);
  const withPairs = pairs.then((found) => [
    ...(found.length ? [{ label: 'Pairs files in this workspace', kind: vscode.QuickPickItemKind.Separator } as ValueItem<DataChoice>, ...found] : []),
    ...tasks,
  ]);
  const r = await pickStep<DataChoice>({ ...opts(3, back), placeholder: trusted ? 'Source → target data' : 'Built-in task (Restricted Mode: workspace files are not read)', items: tasks, busy: withPairs });
  if (r === undefined || r === BACK) return r;
  if (r.kind === 'task') return { ...d, source: 'task', task: r.task };
  if (r.kind === 'pairs') return { ...d, source: 'pairs', pairsSource: r.source, pairsTarget: r.target };
  return { ...d, source: 'documents' };
}

function taskBlurb(task: Draft['task']): string {
  return { copy: "'abc' → 'abc'", reverse: "'abcde' → 'edcba'", sort: "'dbca' → 'abcd'", addition: "'12+345' → '357'", dates: "'1999-12-31' → 'Friday, 31 December 1999'", induction: "'qxfb…qxfb…' (decoder-only)" }[task];
}

async function findPairs(s: Services, ws: string): Promise<ValueItem<DataChoice>[]> {
  const hits = await vscode.workspace.findFiles('**/*.{tsv,jsonl,src,tgt,en,de,fr,es,it,pt,nl,ru,zh,ja}', undefined, 200);
  const dirs = [ws, ...hits.map((u) => path.dirname(u.fsPath))];
  const found = await s.lab.get().detectPairs(dirs);
  const rel = (p: string): string => path.relative(ws, p) || p;
  return found.map((c) => ({ label: `$(files) ${c.label}`, value: { kind: 'pairs', source: rel(c.source), target: c.target ? rel(c.target) : '' }, description: path.dirname(rel(c.source)) === '.' ? '' : path.dirname(rel(c.source)) }));
}

async function tokenizerStep(d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const items: ValueItem<Draft['tokenizer']>[] = [
    { label: 'char', value: 'char', description: 'one token per character', detail: 'Small vocabulary; the clearest attention maps.' },
    { label: 'bpe', value: 'bpe', description: 'byte-level BPE (GPT-2 pre-tokenizer)', detail: 'Merges frequent byte pairs; shorter sequences, larger vocabulary.' },
  ];
  for (;;) {
    const r = await pickStep({ ...opts(4, back), placeholder: 'Tokenizer (trained on your data before the model)', items, active: d.tokenizer });
    if (r === undefined || r === BACK) return r;
    if (r === 'char') return { ...d, tokenizer: 'char' };
    const v = await inputStep({ ...opts(4, true), prompt: 'BPE vocabulary size (260 special and byte tokens plus merges)', value: String(d.vocabSize), validate: validateVocab });
    if (v === undefined) return undefined;
    if (v !== BACK) return { ...d, tokenizer: 'bpe', vocabSize: Number(v.trim()) };
  }
}

async function stepsStep(d: Draft, back: boolean): Promise<Draft | Back | undefined> {
  const r = await inputStep({ ...opts(5, back), prompt: 'Training steps (optimizer updates)', value: String(d.steps), validate: validateSteps });
  return r === undefined || r === BACK ? r : { ...d, steps: Number(r.trim()) };
}

async function reviewStep(s: Services, d: Draft): Promise<'save' | 'train' | undefined> {
  const spec = estimateSpecOf(s.settings(), d);
  let summary: string;
  let error: string | null = null;
  let params = 0;
  let memory = 0;
  let vocab = 0;
  try {
    const e = s.lab.get().estimateSpec(spec);
    [params, memory, vocab] = [e.params, e.memoryBytes, e.vocabSize];
    summary = estimateLine(params, memory, null);
  } catch (err) {
    error = messageOf(err);
    summary = error;
  }
  const describe = `${d.kind} · ${d.preset} · ${d.source === 'task' ? `task ${d.task}` : d.source === 'pairs' ? `pairs ${d.pairsSource}${d.pairsTarget ? ` → ${d.pairsTarget}` : ''}` : `documents ${d.include}`} · ${d.tokenizer}${d.tokenizer === 'bpe' ? ` ${d.vocabSize}` : ''} · ${d.steps} steps`;
  const items = (time: string): ValueItem<'save' | 'train' | 'none'>[] =>
    error
      ? [{ label: '$(error) This configuration is invalid', detail: error, value: 'none' }]
      : [
          { label: '$(check) Save', value: 'save', description: summary, detail: time },
          { label: '$(play) Save and Train', value: 'train', description: summary, detail: time },
        ];
  const timed = error
    ? undefined
    : s.models.calibrate(spec, vocab).then(
        (c) => items(`≈ ${formatDuration(c.secondsPerStep)} per step (${formatCompact(c.flopsPerSec, 'FLOP/s')} measured, ${c.backend} backend) · ${d.steps} steps ≈ ${formatDuration(c.secondsPerStep * d.steps)}`),
        (err) => items(`Time per step unknown: ${messageOf(err)}`),
      );
  const r = await pickStep({ ...opts(6, true), placeholder: describe, items: items('Measuring time per step on this machine…'), ...(timed ? { busy: timed } : {}) });
  if (r === BACK) return reviewBack(s, d);
  return r === 'save' || r === 'train' ? r : undefined;
}

async function reviewBack(s: Services, d: Draft): Promise<'save' | 'train' | undefined> {
  const r = await stepsStep(d, true);
  if (r === undefined || r === BACK) return undefined;
  return reviewStep(s, r);
}
