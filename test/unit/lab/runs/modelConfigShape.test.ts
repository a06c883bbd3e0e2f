import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ModelConfig } from '../../../../src/engine/config';
import { presetConfig, presetNames } from '../../../../src/engine/config';
import type { AttentionStack as EngineAttentionStack } from '../../../../src/engine/models/heads';
import type {
  EngineConfigFitsProtocol,
  SameAttentionMapFields,
  SameAttentionStacks,
  SameConfigFields,
  SameConfigFieldTypes,
  SameHeadRefs,
} from '../../../../src/lab/runs/modelConfigShape';
import { ATTENTION_STACKS, attentionStack, modelConfig, validateModelInfo } from '../../../../src/protocol/model';
import type { AttentionStack, ModelConfigData } from '../../../../src/protocol/model';

describe("the engine's model types and the protocol's shapes of them", () => {
  it('agree at compile time (src/lab/runs/modelConfigShape.ts)', () => {
    expectTypeOf<EngineConfigFitsProtocol>().toEqualTypeOf<true>();
    expectTypeOf<SameConfigFields>().toEqualTypeOf<true>();
    expectTypeOf<SameConfigFieldTypes>().toEqualTypeOf<true>();
    expectTypeOf<ModelConfig>().toExtend<ModelConfigData>();
    expectTypeOf<ModelConfigData['norm']>().toEqualTypeOf<'post' | 'pre' | undefined>();
  });

  it('name the attention a map or head belongs to the same way (one union, one spelling)', () => {
    expectTypeOf<SameAttentionStacks>().toEqualTypeOf<true>();
    expectTypeOf<SameAttentionMapFields>().toEqualTypeOf<true>();
    expectTypeOf<SameHeadRefs>().toEqualTypeOf<true>();
    expectTypeOf<EngineAttentionStack>().toEqualTypeOf<AttentionStack>();
    expect(ATTENTION_STACKS).toEqual(['encoder.self', 'decoder.self', 'decoder.cross']);
    expect(() => attentionStack.check('decoder-self', 'map.stack')).toThrow(
      'map.stack: expected one of encoder.self, decoder.self, decoder.cross, got "decoder-self"',
    );
  });

  it.each(
    (['decoder-only', 'encoder-decoder'] as const).flatMap((kind) =>
      presetNames(kind).map((n) => [kind as ModelConfig['kind'], n] as const),
    ),
  )('accepts the %s preset %s as the engine makes it', (kind, preset) => {
    const config = presetConfig(kind, preset, 300);
    expect(modelConfig.check(config, 'config')).toBe(config);
    const info = { config, params: 1, paramsByModule: {}, memoryBytes: 1, flopsPerToken: 1, backend: 'reference' };
    expect(validateModelInfo(info)).toBe(info);
  });

  it('rejects a field of the wrong type, naming it, and lets absent fields through', () => {
    expect(() =>
      modelConfig.check({ ...presetConfig('decoder-only', 'tiny', 300), nHeads: 0 }, 'model.config'),
    ).toThrow('model.config.nHeads: expected an integer ≥ 1, got number');
    expect(() => modelConfig.check({ kind: 'decoder-only', norm: 'rms' }, 'c')).toThrow(
      'c.norm: expected one of post, pre, got "rms"',
    );
    expect(() => modelConfig.check({ dModel: 8 }, 'c')).toThrow(
      'c.kind: expected one of decoder-only, encoder-decoder, got undefined',
    );
    expect(modelConfig.check({ kind: 'encoder-decoder' }, 'c')).toEqual({ kind: 'encoder-decoder' });
  });
});
