import { describe, expect, it } from 'vitest';
import { applyDraft, draftFromSettings, draftUpdates, estimateSpecOf, fitPreset, presetChoices, validateGlob, validateSteps, validateVocab, withKind } from '../../../src/extension/configureDraft';
import { DEFAULT_SETTINGS, mismatch } from '../../../src/extension/settings';

const draft = draftFromSettings(DEFAULT_SETTINGS);

describe('configure draft', () => {
  it('round-trips the settings it was made from', () => {
    expect(applyDraft(DEFAULT_SETTINGS, draft)).toEqual(DEFAULT_SETTINGS);
  });

  it('switching the kind picks a data source and a preset that fit it', () => {
    const big = { ...draft, preset: 'gpt' as const };
    const ed = withKind(big, 'encoder-decoder');
    expect(ed).toMatchObject({ kind: 'encoder-decoder', source: 'task', preset: 'tiny' });
    expect(mismatch(applyDraft(DEFAULT_SETTINGS, ed))).toBeNull();
    const back = withKind({ ...ed, source: 'pairs', preset: 'small' }, 'decoder-only');
    expect(back).toMatchObject({ kind: 'decoder-only', source: 'documents', preset: 'small' });
    expect(fitPreset('decoder-only', 'base')).toBe('tiny');
    expect(fitPreset('encoder-decoder', 'base')).toBe('base');
  });

  it('offers base only for encoder-decoders and gpt only for decoder-only models', () => {
    expect(presetChoices('encoder-decoder').map((c) => c.preset)).toEqual(['tiny', 'small', 'base']);
    expect(presetChoices('decoder-only').map((c) => c.preset)).toEqual(['tiny', 'small', 'gpt']);
  });

  it('writes only the settings that belong to the chosen source and tokenizer', () => {
    const keys = (d: typeof draft): string[] => draftUpdates(d).map(([k]) => k);
    expect(keys(draft)).toContain('attentionLab.data.include');
    expect(keys(draft)).not.toContain('attentionLab.tokenizer.vocabSize');
    const task = { ...withKind(draft, 'encoder-decoder'), task: 'dates' as const, tokenizer: 'bpe' as const, vocabSize: 500 };
    const updates = new Map(draftUpdates(task));
    expect(updates.get('attentionLab.data.task')).toBe('dates');
    expect(updates.get('attentionLab.tokenizer.vocabSize')).toBe(500);
    expect(updates.has('attentionLab.data.include')).toBe(false);
    const pairs = new Map(draftUpdates({ ...task, source: 'pairs', pairsSource: 'a.de', pairsTarget: 'a.en' }));
    expect([pairs.get('attentionLab.data.pairsSource'), pairs.get('attentionLab.data.pairsTarget')]).toEqual(['a.de', 'a.en']);
  });

  it('estimates with data of the right kind', () => {
    expect(estimateSpecOf(DEFAULT_SETTINGS, draft).data.kind).toBe('documents');
    expect(estimateSpecOf(DEFAULT_SETTINGS, withKind(draft, 'encoder-decoder')).data).toEqual({ kind: 'task', task: 'reverse' });
    expect(estimateSpecOf(DEFAULT_SETTINGS, { ...draft, steps: 77 }).training.steps).toBe(77);
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
