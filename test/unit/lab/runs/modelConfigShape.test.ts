import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ModelConfig } from '../../../../src/engine/config';
import { presetConfig, presetNames } from '../../../../src/engine/config';
import type { EngineConfigFitsProtocol, SameConfigFields, SameConfigFieldTypes } from '../../../../src/lab/runs/modelConfigShape';
import { modelConfig, validateModelInfo } from '../../../../src/protocol/model';
import type { ModelConfigData } from '../../../../src/protocol/model';

describe("the engine's ModelConfig and the protocol's model config shape", () => {
  it('agree at compile time (src/lab/runs/modelConfigShape.ts)', () => {
    expectTypeOf<EngineConfigFitsProtocol>().toEqualTypeOf<true>();
    expectTypeOf<SameConfigFields>().toEqualTypeOf<true>();
    expectTypeOf<SameConfigFieldTypes>().toEqualTypeOf<true>();
    expectTypeOf<ModelConfig>().toExtend<ModelConfigData>();
    expectTypeOf<ModelConfigData['norm']>().toEqualTypeOf<'post' | 'pre' | undefined>();
  });

  it.each((['decoder-only', 'encoder-decoder'] as const).flatMap((kind) => presetNames(kind).map((n) => [kind as ModelConfig['kind'], n] as const)))('accepts the %s preset %s as the engine makes it', (kind, preset) => {
    const config = presetConfig(kind, preset, 300);
    expect(modelConfig.check(config, 'config')).toBe(config);
    const info = { config, params: 1, paramsByModule: {}, memoryBytes: 1, flopsPerToken: 1, backend: 'reference' };
    expect(validateModelInfo(info)).toBe(info);
  });

  it('rejects a field of the wrong type, naming it, and lets absent fields through', () => {
    expect(() => modelConfig.check({ ...presetConfig('decoder-only', 'tiny', 300), nHeads: 0 }, 'model.config')).toThrow('model.config.nHeads: expected an integer ≥ 1, got number');
    expect(() => modelConfig.check({ kind: 'decoder-only', norm: 'rms' }, 'c')).toThrow('c.norm: expected one of post, pre, got "rms"');
    expect(() => modelConfig.check({ dModel: 8 }, 'c')).toThrow('c.kind: expected one of decoder-only, encoder-decoder, got undefined');
    expect(modelConfig.check({ kind: 'encoder-decoder' }, 'c')).toEqual({ kind: 'encoder-decoder' });
  });
});
