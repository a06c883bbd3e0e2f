import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SETTINGS,
  kindForData,
  mismatch,
  pytorchOptionsOf,
  readSettings,
  specFromSettings,
} from '../../../../src/extension/base/settings';
import type { Settings } from '../../../../src/extension/base/settings';
import type { TrainSpec } from '../../../../src/protocol/data';
import {
  BACKEND_KINDS,
  DECODE_STRATEGIES,
  ENGINE_KINDS,
  MODEL_KINDS,
  LR_SCHEDULES,
  OLD_ENGINE_NAMES,
  OPTIMIZER_PRESETS,
  PRESET_NAMES,
  TASK_NAMES,
  TOKENIZER_TYPES,
  TORCH_DEVICES,
} from '../../../../src/protocol/data';

interface ManifestProperty {
  readonly type: string | string[];
  readonly default: unknown;
  readonly enum?: readonly string[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly description?: string;
  readonly markdownDescription?: string;
}

const manifest = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, ManifestProperty> } };
};
const props = manifest.contributes.configuration.properties;

function flatten(s: Settings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [section, values] of Object.entries(s))
    for (const [k, v] of Object.entries(values as object)) out[`attentionLab.${section}.${k}`] = v;
  return out;
}

describe('settings against package.json', () => {
  it('declares exactly the settings the code reads, with the same defaults', () => {
    const code = flatten(DEFAULT_SETTINGS);
    expect(Object.keys(props).sort()).toEqual(Object.keys(code).sort());
    for (const [key, value] of Object.entries(code)) expect(props[key]?.default, key).toEqual(value);
  });

  it('describes every setting, and every enum value is one the code accepts', () => {
    for (const [key, p] of Object.entries(props)) {
      expect(p.description ?? p.markdownDescription, key).toBeTruthy();
      for (const v of p.enum ?? []) {
        const { problems } = readSettings((k) => (k === key ? v : undefined));
        expect(problems, `${key}=${v}`).toEqual([]);
      }
    }
  });

  it('offers exactly the declared names (package.json keeps its enums literal)', () => {
    expect(props['attentionLab.model.kind']?.enum).toEqual(MODEL_KINDS);
    expect(props['attentionLab.model.preset']?.enum).toEqual(PRESET_NAMES);
    expect(props['attentionLab.training.backend']?.enum).toEqual(BACKEND_KINDS);
    expect(props['attentionLab.data.task']?.enum).toEqual(TASK_NAMES);
    expect(props['attentionLab.training.engine']?.enum).toEqual(ENGINE_KINDS);
    expect(props['attentionLab.pytorch.device']?.enum).toEqual(TORCH_DEVICES);
    expect(props['attentionLab.tokenizer.type']?.enum).toEqual(TOKENIZER_TYPES);
    expect(props['attentionLab.training.optimizer']?.enum).toEqual(OPTIMIZER_PRESETS);
    expect(props['attentionLab.training.schedule']?.enum).toEqual(LR_SCHEDULES);
    expect(props['attentionLab.decode.strategy']?.enum).toEqual(DECODE_STRATEGIES);
  });

  it('names no engine as a backend (of the old engine names, wasm was one)', () => {
    const engines = [...ENGINE_KINDS, ...Object.keys(OLD_ENGINE_NAMES)];
    expect(engines.filter((e) => (BACKEND_KINDS as readonly string[]).includes(e))).toEqual(['wasm']);
    expect(ENGINE_KINDS.filter((e) => (BACKEND_KINDS as readonly string[]).includes(e))).toEqual([]);
    const offered = (key: string): readonly string[] => props[key]?.enum ?? [];
    expect(
      offered('attentionLab.training.engine').filter((e) => offered('attentionLab.training.backend').includes(e)),
    ).toEqual([]);
  });

  it('rejects, with a message naming the key, values outside the declared minimum and maximum', () => {
    for (const [key, p] of Object.entries(props)) {
      if (p.maximum === undefined) continue;
      const { settings, problems } = readSettings((k) => (k === key ? p.maximum! + 1 : undefined));
      expect(
        problems.map((x) => x.key),
        key,
      ).toEqual([key]);
      expect(flatten(settings)[key]).toEqual(p.default);
      expect(readSettings((k) => (k === key ? p.maximum : undefined)).problems, key).toEqual([]);
    }
  });
});

describe('readSettings', () => {
  it('reads the old engine value wasm as builtin, with one notice and no problem', () => {
    const old = readSettings((k) => (k === 'attentionLab.training.engine' ? 'wasm' : undefined));
    expect(old.settings).toEqual(DEFAULT_SETTINGS);
    expect(old.settings.training.engine).toBe('builtin');
    expect(old.problems).toEqual([]);
    expect(old.notices).toEqual([
      'attentionLab.training.engine "wasm" is now "builtin" (wasm names a kernel backend); training with builtin: set it to "builtin".',
    ]);
    for (const engine of ENGINE_KINDS) {
      const r = readSettings((k) => (k === 'attentionLab.training.engine' ? engine : undefined));
      expect([r.settings.training.engine, r.problems, r.notices]).toEqual([engine, [], []]);
    }
    const bad = readSettings((k) => (k === 'attentionLab.training.engine' ? 'reference' : undefined));
    expect([bad.settings.training.engine, bad.notices]).toEqual(['builtin', []]);
    expect(bad.problems.map((p) => p.message)).toEqual([
      'attentionLab.training.engine must be builtin or pytorch; got "reference". Using "builtin".',
    ]);
  });

  it('uses the defaults for unset values', () => {
    const { settings, problems } = readSettings(() => undefined);
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect(problems).toEqual([]);
  });

  it('keeps valid values and replaces invalid ones, saying what was wrong', () => {
    const values: Record<string, unknown> = {
      'attentionLab.training.steps': 60,
      'attentionLab.training.batchSize': 2.5,
      'attentionLab.model.preset': 'huge',
      'attentionLab.model.overrides': { dModel: 96, bias: false, norm: 'post' },
      'attentionLab.data.task': 'dates',
    };
    const { settings, problems } = readSettings((k) => values[k]);
    expect(settings.training.steps).toBe(60);
    expect(settings.training.batchSize).toBe(32);
    expect(settings.model.preset).toBe('tiny');
    expect(settings.model.overrides).toEqual({ dModel: 96, bias: false, norm: 'post' });
    expect(settings.data.task).toBe('dates');
    expect(problems.map((p) => p.key).sort()).toEqual(['attentionLab.model.preset', 'attentionLab.training.batchSize']);
    expect(problems.find((p) => p.key === 'attentionLab.model.preset')?.message).toMatch(
      /tiny, small, gpt, llama-tiny, llama-small, nanochat-tiny, nanochat-small or base.*"huge"/,
    );
  });

  it("accepts every built-in task, the induction task included, and 0 (the data's default) for steps and context", () => {
    for (const task of TASK_NAMES)
      expect(readSettings((k) => (k === 'attentionLab.data.task' ? task : undefined)).settings.data.task).toBe(task);
    const zero = readSettings((k) =>
      k === 'attentionLab.training.steps' || k === 'attentionLab.training.seqLen' ? 0 : undefined,
    );
    expect(zero.problems).toEqual([]);
    const one = readSettings((k) =>
      k === 'attentionLab.training.seqLen' ? 1 : k === 'attentionLab.data.task' ? 'induct' : undefined,
    );
    expect(one.problems.map((p) => p.key).sort()).toEqual(['attentionLab.data.task', 'attentionLab.training.seqLen']);
    expect(one.problems.find((p) => p.key === 'attentionLab.data.task')?.message).toMatch(
      /induction or modular-addition/,
    );
  });

  it('rejects overrides that are not a flat object of primitives', () => {
    const { problems } = readSettings((k) => (k === 'attentionLab.model.overrides' ? { dModel: [1, 2] } : undefined));
    expect(problems).toHaveLength(1);
  });
});

describe('specFromSettings', () => {
  it('turns automatic intervals into fractions of the run', () => {
    const s: Settings = {
      ...DEFAULT_SETTINGS,
      training: { ...DEFAULT_SETTINGS.training, steps: 400, evalEvery: 0, snapshotEvery: 0, checkpointEvery: 7 },
    };
    const spec = specFromSettings(s, { kind: 'task', task: 'sort' });
    expect(spec.training).toMatchObject({ steps: 400, evalEvery: 40, snapshotEvery: 20, checkpointEvery: 7 });
    expect(spec.data).toEqual({ kind: 'task', task: 'sort' });
  });

  it('passes the optimizer and the wsd schedule on; cosine (the default) and the paper optimizer leave it out', () => {
    const withT = (t: Partial<Settings['training']>): TrainSpec['training'] =>
      specFromSettings(
        { ...DEFAULT_SETTINGS, training: { ...DEFAULT_SETTINGS.training, ...t } },
        { kind: 'task', task: 'sort' },
      ).training;
    expect(withT({ optimizer: 'muon', schedule: 'wsd' })).toMatchObject({ optimizer: 'muon', schedule: 'wsd' });
    expect(withT({ optimizer: 'adamw' }).schedule).toBeUndefined();
    expect(withT({ optimizer: 'paper', schedule: 'wsd' }).schedule).toBeUndefined();
    const bad = readSettings((k) => (k === 'attentionLab.training.schedule' ? 'linear' : undefined));
    expect(bad.problems.map((q) => q.message).join()).toMatch(/training\.schedule must be cosine, wsd or constant/);
    expect(bad.settings.training.schedule).toBe('cosine');
  });

  it('never makes an interval of 0 for very short runs', () => {
    const s: Settings = { ...DEFAULT_SETTINGS, training: { ...DEFAULT_SETTINGS.training, steps: 3 } };
    const t = specFromSettings(s, { kind: 'task', task: 'copy' }).training;
    expect([t.evalEvery, t.snapshotEvery, t.checkpointEvery]).toEqual([1, 1, 1]);
  });

  it("gives 0 steps, context and learning rate the data's defaults: a task's own run, the general ones for documents", () => {
    const task: Settings = {
      ...DEFAULT_SETTINGS,
      model: { ...DEFAULT_SETTINGS.model, kind: 'decoder-only' },
      data: { ...DEFAULT_SETTINGS.data, source: 'task', task: 'induction' },
    };
    const spec = specFromSettings(task, { kind: 'task', task: 'induction' });
    expect(spec.training).toMatchObject({ steps: 3000, seqLen: 32, lr: 3e-3, evalEvery: 100, snapshotEvery: 50 });
    expect(spec.model.overrides).toEqual({
      dropout: 0,
      labelSmoothing: 0,
      dFF: 4,
      tieEmbeddings: false,
      positional: 'sinusoidal',
    });
    const docs = specFromSettings(DEFAULT_SETTINGS, { kind: 'documents', files: [], root: '' });
    expect(docs.training).toMatchObject({ steps: 2000, seqLen: 64, lr: 0 });
    const mine: Settings = {
      ...task,
      model: { ...task.model, overrides: { dFF: 32 } },
      training: { ...task.training, steps: 50, seqLen: 20 },
    };
    const chosen = specFromSettings(mine, { kind: 'task', task: 'induction' });
    expect(chosen.training).toMatchObject({ steps: 50, seqLen: 20 });
    expect(chosen.model.overrides).toMatchObject({ dFF: 32, positional: 'sinusoidal' });
  });

  it('copies the overrides instead of sharing them', () => {
    const overrides = { dModel: 32 };
    const s: Settings = { ...DEFAULT_SETTINGS, model: { ...DEFAULT_SETTINGS.model, overrides } };
    const spec = specFromSettings(s, { kind: 'documents', files: [], root: '' });
    expect(spec.model.overrides).toEqual(overrides);
    expect(spec.model.overrides).not.toBe(overrides);
  });
});

describe('mismatch', () => {
  const with_ = (
    kind: Settings['model']['kind'],
    source: Settings['data']['source'],
    preset: Settings['model']['preset'] = 'tiny',
  ): Settings => ({
    ...DEFAULT_SETTINGS,
    model: { ...DEFAULT_SETTINGS.model, kind, preset },
    data: { ...DEFAULT_SETTINGS.data, source },
  });

  it('accepts documents with a decoder-only model and pairs or tasks with an encoder-decoder', () => {
    expect(mismatch(with_('decoder-only', 'documents'))).toBeNull();
    expect(mismatch(with_('encoder-decoder', 'pairs'))).toBeNull();
    expect(mismatch(with_('encoder-decoder', 'task', 'base'))).toBeNull();
    expect(kindForData('task', 'reverse')).toBe('encoder-decoder');
    expect(kindForData('task', 'induction')).toBe('decoder-only');
    expect(kindForData('documents', 'induction')).toBe('decoder-only');
    const induction = {
      ...with_('decoder-only', 'task', 'gpt'),
      data: { ...DEFAULT_SETTINGS.data, source: 'task' as const, task: 'induction' as const },
    };
    expect(mismatch(induction)).toBeNull();
  });

  it('explains a kind that does not fit the data, and a preset of the other kind', () => {
    expect(mismatch(with_('encoder-decoder', 'documents'))).toMatch(/decoder-only/);
    expect(mismatch(with_('decoder-only', 'task'))).toMatch(/built-in task "reverse" trains an encoder-decoder model/);
    const induction = {
      ...with_('encoder-decoder', 'task'),
      data: { ...DEFAULT_SETTINGS.data, source: 'task' as const, task: 'induction' as const },
    };
    expect(mismatch(induction)).toMatch(
      /built-in task "induction" trains a decoder-only model, but attentionLab.model.kind is encoder-decoder.*set the kind to decoder-only/,
    );
    expect(mismatch(with_('decoder-only', 'documents', 'base'))).toMatch(
      /tiny, small, gpt, llama-tiny, llama-small, nanochat-tiny or nanochat-small/,
    );
    expect(mismatch(with_('encoder-decoder', 'pairs', 'gpt'))).toMatch(/tiny, small or base/);
  });
});

describe('pytorchOptionsOf', () => {
  it('is null for our engine, and the session options of the PyTorch settings otherwise', () => {
    expect(pytorchOptionsOf(DEFAULT_SETTINGS, 'python3', '/ext/dist/pytorch')).toBeNull();
    const { settings, problems } = readSettings(
      (k) =>
        ({
          'attentionLab.training.engine': 'pytorch',
          'attentionLab.pytorch.processes': 2,
          'attentionLab.pytorch.device': 'cpu',
          'attentionLab.pytorch.bf16': 'yes',
        })[k],
    );
    expect(problems.map((p) => p.key)).toEqual(['attentionLab.pytorch.bf16']);
    expect(pytorchOptionsOf(settings, '/usr/bin/python3', '/ext/dist/pytorch')).toEqual({
      python: '/usr/bin/python3',
      nproc: 2,
      accumulate: 1,
      device: 'cpu',
      bf16: false,
      trainerDir: '/ext/dist/pytorch',
    });
  });
});
