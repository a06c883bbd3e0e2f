import { describe, expect, it } from 'vitest';
import {
  STEP_ORDER,
  applyDraft,
  draftFromSettings,
  draftSize,
  draftUpdates,
  engineText,
  estimateSpecOf,
  fitPreset,
  presetChoices,
  presetSizes,
  skipsStep,
  stepFrom,
  targetText,
  tasksOf,
  validateGlob,
  validateSteps,
  validateVocab,
  withData,
  withKind,
} from '../../../../src/extension/configure/configureDraft';
import { estimateSpec } from '../../../../src/lab/editor/extensionLab';
import { DEFAULT_SETTINGS, mismatch, specFromSettings } from '../../../../src/extension/base/settings';
import type { Settings } from '../../../../src/extension/base/settings';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';

const draft = draftFromSettings(DEFAULT_SETTINGS);

describe('configure draft', () => {
  it('round-trips the settings it was made from, with the steps resolved', () => {
    // Steps at 0 (the data's default) become the number Train will use, which the steps box shows.
    expect(draft.steps).toBe(2000);
    expect(applyDraft(DEFAULT_SETTINGS, draft)).toEqual({
      ...DEFAULT_SETTINGS,
      training: { ...DEFAULT_SETTINGS.training, steps: 2000 },
    });
    const set: Settings = { ...DEFAULT_SETTINGS, training: { ...DEFAULT_SETTINGS.training, steps: 77 } };
    expect(applyDraft(set, draftFromSettings(set))).toEqual(set);
  });

  it("proposes the chosen data's own default steps: steps set for other data are not carried over", () => {
    const induction = withData(draft, { source: 'task', task: 'induction' });
    expect(induction.steps).toBe(3000);
    expect(withData(induction, { task: 'addition' }).steps).toBe(4000);
    expect(withData({ ...induction, steps: 120 }, { source: 'documents' }).steps).toBe(2000);
    expect(withData({ ...draft, steps: 600 }, { source: 'task', task: 'induction' }).steps).toBe(3000);
    expect(withData({ ...draft, steps: 600 }, { include: '**/*.md' }).steps).toBe(600); // the same source, other files
    // A default is saved as 0, so a later task gets its own; a step count the user set is saved as set.
    expect(new Map(draftUpdates({ ...draft, steps: 2000 })).get('attentionLab.training.steps')).toBe(0);
    expect(new Map(draftUpdates({ ...draft, steps: 600 })).get('attentionLab.training.steps')).toBe(600);
    const settings: Settings = {
      ...DEFAULT_SETTINGS,
      data: { ...DEFAULT_SETTINGS.data, source: 'task', task: 'induction' },
    };
    expect(draftFromSettings(settings).steps).toBe(3000);
  });

  it('switching the kind picks a data source and a preset that fit it', () => {
    const big = { ...draft, preset: 'gpt' as const };
    const ed = withKind(big, 'encoder-decoder');
    expect(ed).toMatchObject({ kind: 'encoder-decoder', source: 'task', preset: 'tiny' });
    expect(mismatch(applyDraft(DEFAULT_SETTINGS, ed))).toBeNull();
    const back = withKind({ ...ed, source: 'pairs', preset: 'small' }, 'decoder-only');
    expect(back).toMatchObject({ kind: 'decoder-only', source: 'documents', preset: 'small' });
    expect(fitPreset('decoder-only', 'base')).toBe('tiny');
    // The induction task trains the decoder-only model: choosing a kind moves off a task of the other kind.
    const induction = withData(withKind(draft, 'decoder-only'), { source: 'task', task: 'induction' });
    expect(withKind(induction, 'decoder-only')).toEqual(induction);
    expect(withKind(induction, 'encoder-decoder')).toMatchObject({
      kind: 'encoder-decoder',
      source: 'task',
      task: 'reverse',
      steps: 1500,
    });
    expect(withKind(ed, 'decoder-only')).toMatchObject({ kind: 'decoder-only', source: 'documents', steps: 2000 });
    // Restricted Mode (tasks only): the kind's own task.
    expect(withKind(ed, 'decoder-only', true)).toMatchObject({
      kind: 'decoder-only',
      source: 'task',
      task: 'induction',
      steps: 3000,
    });
    expect(withKind(draft, 'decoder-only', true)).toMatchObject({ source: 'task', task: 'induction' });
    expect(withKind(draft, 'encoder-decoder', true)).toMatchObject({ source: 'task', task: 'reverse' });
    for (const d of [induction, withKind(induction, 'encoder-decoder'), withKind(ed, 'decoder-only', true)])
      expect(mismatch(applyDraft(DEFAULT_SETTINGS, d))).toBeNull();
    expect(tasksOf('decoder-only')).toEqual(['induction', 'modular-addition']);
    expect(tasksOf('encoder-decoder')).toEqual(['copy', 'reverse', 'sort', 'addition', 'dates']);
    expect(fitPreset('encoder-decoder', 'base')).toBe('base');
  });

  it("offers base only for encoder-decoders, gpt and today's decoders only for decoder-only models", () => {
    expect(presetChoices('encoder-decoder').map((c) => c.preset)).toEqual(['tiny', 'small', 'base']);
    expect(presetChoices('decoder-only').map((c) => c.preset)).toEqual([
      'tiny',
      'small',
      'gpt',
      'llama-tiny',
      'llama-small',
      'nanochat-tiny',
      'nanochat-small',
    ]);
    // Each preset says what it is: today's decoders name their architecture.
    expect(presetChoices('decoder-only').find((c) => c.preset === 'llama-tiny')?.label).toMatch(
      /RoPE, RMSNorm, SwiGLU/,
    );
    expect(presetChoices('decoder-only').find((c) => c.preset === 'nanochat-small')?.label).toMatch(/QK-norm, ReLU²/);
  });

  it('writes only the settings that belong to the chosen source and tokenizer', () => {
    const keys = (d: typeof draft): string[] => draftUpdates(d).map(([k]) => k);
    expect(keys(draft)).toContain('attentionLab.data.include');
    expect(keys(draft)).not.toContain('attentionLab.tokenizer.vocabSize');
    const task = {
      ...withKind(draft, 'encoder-decoder'),
      task: 'dates' as const,
      tokenizer: 'bpe' as const,
      vocabSize: 500,
    };
    const updates = new Map(draftUpdates(task));
    expect(updates.get('attentionLab.data.task')).toBe('dates');
    expect(updates.get('attentionLab.tokenizer.vocabSize')).toBe(500);
    expect(updates.has('attentionLab.data.include')).toBe(false);
    const pairs = new Map(draftUpdates({ ...task, source: 'pairs', pairsSource: 'a.de', pairsTarget: 'a.en' }));
    expect([pairs.get('attentionLab.data.pairsSource'), pairs.get('attentionLab.data.pairsTarget')]).toEqual([
      'a.de',
      'a.en',
    ]);
  });

  it('skips the tokenizer for the induction task (its own letters) and leaves the tokenizer settings alone', () => {
    const induction = { ...withKind(draft, 'decoder-only', true), tokenizer: 'bpe' as const, vocabSize: 500 };
    expect(STEP_ORDER.filter((step) => skipsStep(induction, step))).toEqual(['tokenizer']);
    expect(STEP_ORDER.filter((step) => skipsStep(draft, step))).toEqual([]);
    // Forward from the data step to the presets, and Back from the presets to the data step; the architecture follows the preset.
    const at = (name: (typeof STEP_ORDER)[number]): number => STEP_ORDER.indexOf(name);
    expect(stepFrom(induction, at('data'), 1)).toBe(at('preset'));
    expect(stepFrom(induction, at('preset'), -1)).toBe(at('data'));
    expect(stepFrom(draft, at('data'), 1)).toBe(at('tokenizer'));
    expect(stepFrom(draft, at('preset'), -1)).toBe(at('tokenizer'));
    expect(stepFrom(draft, at('preset'), 1)).toBe(at('architecture'));
    expect(stepFrom(draft, at('architecture'), -1)).toBe(at('preset'));
    expect(stepFrom(induction, -1, 1)).toBe(0);
    expect(stepFrom(induction, 0, -1)).toBe(0);
    expect(stepFrom(induction, STEP_ORDER.length - 1, 1)).toBe(STEP_ORDER.length);
    expect(new Map(draftUpdates(induction))).toEqual(
      new Map<string, unknown>([
        ['attentionLab.model.kind', 'decoder-only'],
        ['attentionLab.model.preset', 'tiny'],
        ['attentionLab.model.overrides', undefined],
        ['attentionLab.data.source', 'task'],
        ['attentionLab.training.steps', 0],
        ['attentionLab.training.engine', 'builtin'],
        ['attentionLab.data.task', 'induction'],
      ]),
    );
  });

  it('writes the engine, and the PyTorch processes and device only when PyTorch is chosen', () => {
    const keys = draftUpdates(draft).map(([k]) => k);
    expect(keys).toContain('attentionLab.training.engine');
    expect(keys).not.toContain('attentionLab.pytorch.processes');
    const torch = { ...draft, engine: 'pytorch' as const, processes: 2, device: 'cpu' as const };
    const updates = new Map(draftUpdates(torch));
    expect([
      updates.get('attentionLab.training.engine'),
      updates.get('attentionLab.pytorch.processes'),
      updates.get('attentionLab.pytorch.device'),
    ]).toEqual(['pytorch', 2, 'cpu']);
    expect(engineText(draft)).toBe("builtin (ours: WebAssembly, this machine's CPU)");
    expect(engineText(torch)).toBe('PyTorch · 2 processes · CPU');
    expect(engineText({ ...torch, processes: 4, device: 'cuda' })).toBe('PyTorch · 4 processes · one GPU each');
    const applied = applyDraft(DEFAULT_SETTINGS, torch);
    expect([applied.training.engine, applied.pytorch.processes, applied.pytorch.device]).toEqual(['pytorch', 2, 'cpu']);
    expect(draftFromSettings(applied)).toMatchObject({ engine: 'pytorch', processes: 2, device: 'cpu' });
  });

  it('estimates with data of the right kind', () => {
    expect(estimateSpecOf(DEFAULT_SETTINGS, draft).data.kind).toBe('documents');
    expect(estimateSpecOf(DEFAULT_SETTINGS, withKind(draft, 'encoder-decoder')).data).toEqual({
      kind: 'task',
      task: 'reverse',
    });
    expect(estimateSpecOf(DEFAULT_SETTINGS, { ...draft, steps: 77 }).training.steps).toBe(77);
    expect(
      estimateSpecOf(
        DEFAULT_SETTINGS,
        withData(withKind(draft, 'encoder-decoder'), { source: 'pairs', pairsSource: 'a.tsv' }),
      ).data.kind,
    ).toBe('pairs');
    // The induction task: the run Train (and `attention-lab train --task induction`) makes.
    const induction = withKind(draft, 'decoder-only', true);
    const spec = estimateSpecOf(DEFAULT_SETTINGS, induction);
    expect(spec).toEqual(trainSpecOf({ kind: 'task', task: 'induction' }));
    expect(spec).toEqual(
      specFromSettings(applyDraft(DEFAULT_SETTINGS, induction), { kind: 'task', task: 'induction' }),
    );
  });

  it('validates typed-in values with messages that say the range', () => {
    expect(validateSteps('500')).toBeNull();
    expect(validateSteps('0')).toMatch(/1 to 1000000/);
    expect(validateSteps('1e3')).toMatch(/whole number/);
    expect(validateVocab('260')).toMatch(/261 to 65536/);
    expect(validateVocab(' 4096 ')).toBeNull();
    expect(validateGlob('**/*.{md,txt}')).toBeNull();
    expect(validateGlob('')).toMatch(/glob/);
    expect(validateGlob('**/*.{md')).toMatch(/close every/);
    expect(validateGlob('a}{')).toMatch(/Unbalanced/);
  });
});

describe('configure sizes', () => {
  const sizeOf = (d: typeof draft, preset = d.preset): string => {
    const row = presetSizes(DEFAULT_SETTINGS, d, estimateSpec).find((r) => r.preset === preset);
    if (!row?.size.ok) throw new Error(`no size for ${preset}`);
    return row.size.line;
  };
  const review = (d: typeof draft): string => {
    const r = draftSize(DEFAULT_SETTINGS, d, estimateSpec);
    if (!r.ok) throw new Error(r.error);
    return r.line;
  };

  it('asks for the tokenizer before the preset, so the preset list is sized with it', () => {
    expect(STEP_ORDER.indexOf('tokenizer')).toBeLessThan(STEP_ORDER.indexOf('preset'));
    expect(STEP_ORDER.indexOf('data')).toBe(1);
  });

  it('shows the same size in the preset list and the review, with the vocabulary it assumes', () => {
    // 232k vs 127k parameters: a 2,000-token BPE vocabulary vs characters.
    const bpe = { ...draft, tokenizer: 'bpe' as const, vocabSize: 2000 };
    expect(sizeOf(bpe)).toBe(review(bpe));
    expect(review(bpe)).toMatch(/^232k parameters · ~[\d.]+ [KM]B with a 2,000-token BPE vocabulary$/);
    const chars = { ...draft, tokenizer: 'char' as const };
    expect(sizeOf(chars)).toBe(review(chars));
    expect(review(chars)).toMatch(/^127k parameters · .* with ≈360 tokens \(~100 characters assumed\)$/);
    const seen = { ...chars, charsSeen: 65 };
    expect(sizeOf(seen)).toBe(review(seen));
    expect(review(seen)).toContain('with 325 tokens (65 characters in the files)');
    for (const d of [bpe, chars, seen, withKind(draft, 'encoder-decoder')]) {
      // The same line, or the same message for a preset the engine cannot make yet (today's decoders join the
      // engine's table when the models build their options).
      for (const row of presetSizes(DEFAULT_SETTINGS, d, estimateSpec))
        expect(row.size).toEqual(draftSize(DEFAULT_SETTINGS, { ...d, preset: row.preset }, estimateSpec));
    }
  });

  it('uses the characters seen only for a character tokenizer on documents', () => {
    const bpe = { ...draft, tokenizer: 'bpe' as const, vocabSize: 2000, charsSeen: 65 };
    expect(review(bpe)).toContain('2,000-token BPE');
    const task = { ...withKind(draft, 'encoder-decoder'), charsSeen: 65 };
    expect(review(task)).toContain('~100 characters assumed');
  });

  it("sizes the induction task's model (dFF 4, untied, the task's 26 letters) as Train will build it", () => {
    const induction = withKind(draft, 'decoder-only', true);
    const e = estimateSpec(trainSpecOf({ kind: 'task', task: 'induction' }));
    expect(e.vocabSize).toBe(286);
    expect(e.config).toMatchObject({ dFF: 4, tieEmbeddings: false, positional: 'sinusoidal' });
    expect(review(induction)).toBe(sizeOf(induction));
    expect(review(induction)).toMatch(/ with 286 tokens \(the task's 26 letters\)$/);
    // Not the documents model's size: the MLP is 4 wide, not 256.
    expect(review(induction).split(' ')[0]).not.toBe(review(draft).split(' ')[0]);
    expect(review({ ...induction, tokenizer: 'bpe', vocabSize: 4000 })).toBe(review(induction));
  });

  it('says where the settings go', () => {
    expect(targetText('workspace', null)).toBe('workspace settings (.vscode/settings.json)');
    expect(targetText('workspace', 'lab.code-workspace')).toBe('workspace settings (lab.code-workspace)');
    expect(targetText('user', null)).toBe('user settings (every workspace)');
  });

  it('reports an invalid configuration instead of a size', () => {
    const bad = { ...DEFAULT_SETTINGS, model: { ...DEFAULT_SETTINGS.model, overrides: { nHeads: 5 } } };
    const r = draftSize(bad, draftFromSettings(bad), estimateSpec);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/not divisible by nHeads 5/);
  });
});
