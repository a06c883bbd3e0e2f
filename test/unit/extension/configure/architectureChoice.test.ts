/**
 * Configure Model…'s architecture step as data (src/extension/configure/architectureChoice.ts):
 * each option behind the preset with its value in words, overrides that hold only what differs
 * from the preset, and the engine's one-line message for a combination that does not fit, shown
 * before anything trains.
 */
import { describe, expect, it } from 'vitest';
import {
  architectureView,
  changedOptions,
  draftConfig,
  optionChoices,
  refusalRow,
  validateOptionNumber,
  withOption,
  withPresetArchitecture,
} from '../../../../src/extension/configure/architectureChoice';
import type { Draft } from '../../../../src/extension/configure/configureDraft';
import {
  STEP_ORDER,
  applyDraft,
  draftFromSettings,
  draftUpdates,
} from '../../../../src/extension/configure/configureDraft';
import { estimateSpec } from '../../../../src/lab/editor/extensionLab';
import { DEFAULT_SETTINGS } from '../../../../src/extension/base/settings';
import { ARCHITECTURE_OPTIONS } from '../../../../src/common/architecture';
import { validateConfig } from '../../../../src/engine/config';
import type { ModelConfig } from '../../../../src/engine/config';
import { unbuiltOptions } from '../../../../src/engine/models/modelParts';

const s = DEFAULT_SETTINGS;
const draft = draftFromSettings(s);
const set = (d: Draft, key: Parameters<typeof withOption>[2], v: string | number | boolean): Draft =>
  withOption(s, d, key, v, estimateSpec);
const problem = (d: Draft): string | null => architectureView(s, d, estimateSpec).problem;
/** The engine's message for the draft's config with `over` applied, or null when validateConfig accepts it. */
const engineMessage = (over: Partial<ModelConfig>): string | null => {
  const r = draftConfig(s, draft, estimateSpec);
  if (!r.ok) throw new Error(r.error);
  try {
    validateConfig({ ...(r.config as ModelConfig), ...over });
    return null;
  } catch (e) {
    return (e as Error).message;
  }
};

describe('architecture step', () => {
  it('comes right after the preset it changes', () => {
    expect(STEP_ORDER.indexOf('architecture')).toBe(STEP_ORDER.indexOf('preset') + 1);
  });

  it("lists every option with the preset's value in words and what it does", () => {
    const v = architectureView(s, draft, estimateSpec);
    expect(v.problem).toBeNull();
    expect(v.rows.map((r) => r.key)).toEqual([...ARCHITECTURE_OPTIONS]);
    const by = Object.fromEntries(v.rows.map((r) => [r.key, r]));
    expect(by['positional']?.value).toBe('learned positions');
    expect(by['normType']?.value).toBe('LayerNorm');
    expect(by['nKvHeads']?.value).toBe('MHA 4 heads');
    expect(by['activation']?.value).toBe('GELU');
    expect(by['ropeTheta']?.value).toBe('10000 (used with RoPE only)');
    expect(by['normScale']?.value).toBe('learned scale');
    const rope = Object.fromEntries(
      architectureView(s, set(draft, 'positional', 'rope'), estimateSpec).rows.map((r) => [r.key, r.value]),
    );
    expect(rope['ropeTheta']).toBe('10000');
    expect(rope['positional']).toBe('RoPE θ 10000');
    expect(by['slidingWindow']?.description).toMatch(/Mistral/);
    expect(v.rows.every((r) => !r.changed)).toBe(true);
    expect(v.line).toBe('learned positions · LayerNorm · GELU');
  });

  it('keeps only what differs from the preset in the overrides, and writes them to the settings', () => {
    const rope = set(draft, 'positional', 'rope');
    expect(rope.overrides).toEqual({ positional: 'rope' });
    expect(architectureView(s, rope, estimateSpec).rows.find((r) => r.key === 'positional')?.changed).toBe(true);
    expect(changedOptions(rope)).toEqual(['positional=rope']);
    // Back to the preset's value: no override left, and the setting is removed rather than written as {}.
    const back = set(rope, 'positional', 'learned');
    expect(back.overrides).toEqual({});
    expect(new Map(draftUpdates(back)).get('attentionLab.model.overrides')).toBeUndefined();
    expect(new Map(draftUpdates(rope)).get('attentionLab.model.overrides')).toEqual({ positional: 'rope' });
    // Other overrides (sizes) are kept through option changes and a return to the preset's architecture.
    const sized = { ...draft, overrides: { dModel: 96, nHeads: 6 } };
    const kv = set(sized, 'nKvHeads', 3);
    expect(kv.overrides).toEqual({ dModel: 96, nHeads: 6, nKvHeads: 3 });
    expect(withPresetArchitecture(kv).overrides).toEqual({ dModel: 96, nHeads: 6 });
    // The draft's overrides are what the estimate and Train use.
    expect(applyDraft(s, kv).model.overrides).toEqual(kv.overrides);
    expect(draftFromSettings(applyDraft(s, kv)).overrides).toEqual(kv.overrides);
  });

  it("shows the engine's one-line message for a combination that does not fit", () => {
    const cases: [Draft, Partial<ModelConfig>, RegExp][] = [
      [set(draft, 'nKvHeads', 3), { nKvHeads: 3 }, /nHeads 4 is not divisible by nKvHeads 3.*Use nKvHeads 1, 2, 4/],
      [
        set(set(draft, 'positional', 'rope'), 'rotaryFraction', 0.3),
        { positional: 'rope', rotaryFraction: 0.3 },
        /RoPE rotates channels in pairs/,
      ],
      [set(draft, 'slidingWindow', 500), { slidingWindow: 500 }, /slidingWindow 500 is larger than the context maxLen/],
      [
        set(set(draft, 'norm', 'post'), 'parallelResidual', true),
        { norm: 'post', parallelResidual: true },
        /parallelResidual needs norm pre/,
      ],
      [set(draft, 'normScale', false), { normScale: false }, /normScale false .* needs normType rmsnorm/],
    ];
    for (const [d, over, re] of cases) {
      const msg = problem(d);
      expect(msg).toMatch(re);
      expect(msg).toBe(engineMessage(over));
      expect(msg).not.toContain('\n');
      expect(architectureView(s, d, estimateSpec).line).toBeNull();
      // Shown as a row: the problem, then the fix, all of the message's words.
      const row = refusalRow(msg as string);
      expect(`${row.label} ${row.detail}`.replace(/[:;]/g, '').toLowerCase()).toBe(
        (msg as string).replace(/[:;]/g, '').toLowerCase(),
      );
    }
    expect(refusalRow('parallelResidual needs norm pre (x); set norm pre or parallelResidual false.')).toEqual({
      label: 'parallelResidual needs norm pre (x):',
      detail: 'Set norm pre or parallelResidual false.',
    });
    expect(refusalRow('Unknown preset "x".').detail).toMatch(/Back to the preset/);
  });

  it('accepts a combination the engine validates (refused by name only while the models do not build it)', () => {
    for (const over of [
      { positional: 'rope', nKvHeads: 2 },
      { normType: 'rmsnorm', normScale: false, qkNorm: true },
      { slidingWindow: 16, norm: 'pre', parallelResidual: true },
    ] as const) {
      let d = draft;
      for (const [k, v] of Object.entries(over)) d = set(d, k as Parameters<typeof withOption>[2], v);
      expect(engineMessage(over)).toBeNull();
      const r = draftConfig(s, { ...d, overrides: {} }, estimateSpec);
      if (!r.ok) throw new Error(r.error);
      const unbuilt = unbuiltOptions({ ...(r.config as ModelConfig), ...over });
      const msg = problem(d);
      if (unbuilt.length === 0) expect(msg).toBeNull();
      else expect(msg).toMatch(new RegExp(`does not build ${unbuilt[0]}`));
    }
  });

  it('offers the values of choices and switches in words, and checks typed numbers', () => {
    const r = draftConfig(s, draft, estimateSpec);
    const config = r.ok ? r.config : null;
    expect(optionChoices('positional', config).map((c) => c.label)).toEqual([
      'sinusoidal positions',
      'learned positions',
      'RoPE',
      'ALiBi',
      'no positions (NoPE)',
    ]);
    expect(optionChoices('activation', config).find((c) => c.value === 'swiglu')?.label).toBe('SwiGLU');
    expect(optionChoices('qkNorm', config)).toEqual([
      { value: true, label: 'QK-norm' },
      { value: false, label: 'no QK-norm' },
    ]);
    expect(validateOptionNumber('nKvHeads', '2')).toBeNull();
    expect(validateOptionNumber('nKvHeads', '1.5')).toMatch(/whole number/);
    expect(validateOptionNumber('slidingWindow', '-1')).toMatch(/whole number/);
    expect(validateOptionNumber('ropeTheta', '5e5')).toBeNull();
    expect(validateOptionNumber('ropeTheta', 'abc')).toMatch(/must be a number/);
    expect(validateOptionNumber('rotaryFraction', '')).toMatch(/must be a number/);
  });

  it("says why when the preset's model cannot be made", () => {
    const bad = { ...draft, overrides: { nHeads: 5 } };
    const v = architectureView(s, bad, estimateSpec);
    expect(v.problem).toMatch(/not divisible by nHeads 5/);
    expect(v.rows.every((r) => r.value === '?')).toBe(true);
    // A refused choice still shows what was chosen, beside the engine's message.
    const kv = architectureView(s, set(draft, 'nKvHeads', '3'), estimateSpec);
    expect(kv.problem).toMatch(/not divisible by nKvHeads 3/);
    expect(kv.rows.find((r) => r.key === 'nKvHeads')?.value).toBe('GQA 4 q / 3 kv heads');
    expect(kv.rows.find((r) => r.key === 'positional')?.value).toBe('learned positions');
  });
});
