import { describe, expect, it } from 'vitest';
import type { SourceTensor } from '../../../../src/engine/models/importLayouts';
import { validateConfig } from '../../../../src/engine/config';
import { planImport } from '../../../../src/engine/models/importLayouts';
import { torchTensors } from '../../../../src/engine/models/pytorchNames';
import { Transformer } from '../../../../src/engine/models/transformer';
import { engineErrorOf as errorOf } from '../../../engineErrorOf';

const V = 50;
const C = 16;
const F = 64;
const P = 32;

/** The tensors of a 2-layer GPT in nanoGPT's (Linear) or Hugging Face's (Conv1D) layout. */
function gpt(
  opts: { conv1d?: boolean; prefix?: string; bias?: boolean; lmHead?: boolean; buffers?: boolean } = {},
): SourceTensor[] {
  const p = opts.prefix ?? 'transformer.';
  const lin = (o: number, i: number): number[] => (opts.conv1d ? [i, o] : [o, i]);
  const out: SourceTensor[] = [
    { name: `${p}wte.weight`, shape: [V, C] },
    { name: `${p}wpe.weight`, shape: [P, C] },
  ];
  const bias = opts.bias ?? true;
  for (let i = 0; i < 2; i++) {
    const b = `${p}h.${i}.`;
    const add = (name: string, o: number, inF: number | null): void => {
      out.push({ name: `${b}${name}.weight`, shape: inF === null ? [o] : lin(o, inF) });
      if (bias) out.push({ name: `${b}${name}.bias`, shape: [o] });
    };
    add('ln_1', C, null);
    add('attn.c_attn', 3 * C, C);
    add('attn.c_proj', C, C);
    add('ln_2', C, null);
    add('mlp.c_fc', F, C);
    add('mlp.c_proj', C, F);
    if (opts.buffers)
      out.push({ name: `${b}attn.bias`, shape: [1, 1, P, P] }, { name: `${b}attn.masked_bias`, shape: [] });
  }
  out.push({ name: `${p}ln_f.weight`, shape: [C] });
  if (bias) out.push({ name: `${p}ln_f.bias`, shape: [C] });
  if (opts.lmHead) out.push({ name: 'lm_head.weight', shape: [V, C] });
  return out;
}

describe('planImport detects', () => {
  it("nanoGPT's GPT: sizes from shapes, heads from config.json, exact GELU, tied", () => {
    const plan = planImport(gpt(), {}, { n_head: 4 });
    expect(plan.layout).toBe('nanogpt');
    expect(plan.config).toMatchObject({
      kind: 'decoder-only',
      vocabSize: V,
      dModel: C,
      nHeads: 4,
      dFF: F,
      nDecoderLayers: 2,
      maxLen: P,
      activation: 'gelu',
      bias: true,
      tieEmbeddings: true,
      norm: 'pre',
      positional: 'learned',
    });
    expect(plan.tensors.every((t) => !t.transpose)).toBe(true);
    expect(plan.tensors.map((t) => t.source)).toContain('transformer.h.1.attn.c_attn.weight');
    expect(plan.lmHead).toBeNull();
  });

  it('bias-free nanoGPT, torch.compile prefixes and a separate lm_head', () => {
    const t = gpt({ bias: false, lmHead: true }).map((x) => ({ ...x, name: `_orig_mod.${x.name}` }));
    const plan = planImport(t, {}, null, { heads: 2 });
    expect(plan.config.bias).toBe(false);
    expect(plan.config.tieEmbeddings).toBe(false);
    expect(plan.lmHead).toBe('_orig_mod.lm_head.weight');
    expect(plan.notes.join(' ')).toMatch(/_orig_mod/);
    expect(
      plan.tensors.every(
        (x) => x.source.startsWith('_orig_mod.transformer.') || x.source === '_orig_mod.lm_head.weight',
      ),
    ).toBe(true);
    const tied = planImport(t, {}, null, { heads: 2, tiedHead: true });
    expect(tied.config.tieEmbeddings).toBe(true);
    expect(tied.ignored).toEqual(['_orig_mod.lm_head.weight']);
  });

  it.each(['module.', 'module._orig_mod.', '_orig_mod.module.'])(
    'a wrapper prefix on every name (%s, DataParallel/DDP and torch.compile) is dropped and said',
    (pre) => {
      const bare = planImport(gpt({ lmHead: true }), {}, null, { heads: 2 });
      const t = gpt({ lmHead: true }).map((x) => ({ ...x, name: `${pre}${x.name}` }));
      const plan = planImport(t, {}, null, { heads: 2 });
      expect(plan.layout).toBe('nanogpt');
      expect(plan.config).toEqual(bare.config);
      expect(plan.tensors.map((x) => x.source)).toEqual(bare.tensors.map((x) => `${pre}${x.source}`));
      expect(plan.lmHead).toBe(`${pre}lm_head.weight`);
      expect(plan.notes[0]).toContain(`every tensor name starts with \`${pre}\``);
      expect(plan.notes[0]).toMatch(pre.includes('module.') ? /DataParallel/ : /torch\.compile/);
      const hf = gpt({ conv1d: true, prefix: '', buffers: true }).map((x) => ({ ...x, name: `${pre}${x.name}` }));
      const gpt2 = planImport(hf, {}, { n_head: 4, activation_function: 'gelu_new' });
      expect(gpt2.layout).toBe('hf-gpt2');
      expect(gpt2.ignored).toHaveLength(4);
      expect(gpt2.ignored.every((n) => n.startsWith(pre))).toBe(true);
    },
  );

  it('a prefix on only some names is not a wrapper: kept, and the file refused as before', () => {
    for (const pre of ['module.', '_orig_mod.']) {
      const t = gpt().map((x, i) => (i % 2 === 0 ? { ...x, name: `${pre}${x.name}` } : x));
      const e = errorOf(() => planImport(t, {}, null, { heads: 2 }));
      expect(e.code).toBe('checkpoint/invalid');
      expect(e.message).not.toMatch(/is dropped/);
      // one unprefixed name among prefixed ones: the same
      const one = gpt().map((x, i) => (i === 0 ? x : { ...x, name: `${pre}${x.name}` }));
      expect(errorOf(() => planImport(one, {}, null, { heads: 2 })).code).toBe('checkpoint/invalid');
    }
  });

  it('Hugging Face GPT-2 with and without the transformer. prefix: Conv1D transposed, gelu_new, mask buffers ignored', () => {
    for (const prefix of ['', 'transformer.']) {
      const plan = planImport(
        gpt({ conv1d: true, prefix, buffers: true }),
        {},
        { n_head: 4, activation_function: 'gelu_new', layer_norm_epsilon: 1e-5 },
      );
      expect(plan.layout).toBe('hf-gpt2');
      expect(plan.config.activation).toBe('geluTanh');
      expect(plan.ignored).toHaveLength(4);
      const qkv = plan.tensors.find((x) => x.source === `${prefix}h.0.attn.c_attn.weight`);
      expect(qkv?.transpose).toBe(true);
      expect(plan.tensors.find((x) => x.source === `${prefix}h.0.ln_1.weight`)?.transpose).toBe(false);
    }
  });
});

describe('planImport of our own export', () => {
  it('reads a grouped-query model by its config: c_attn [(H + 2·Hkv)·D, C], qk-norm weights', () => {
    const cfg = validateConfig({
      kind: 'decoder-only',
      vocabSize: V,
      srcVocabSize: 0,
      nEncoderLayers: 0,
      nDecoderLayers: 2,
      dModel: C,
      nHeads: 4,
      nKvHeads: 1,
      dFF: F,
      maxLen: P,
      dropout: 0,
      norm: 'pre',
      positional: 'rope',
      qkNorm: true,
      activation: 'gelu',
      tieEmbeddings: true,
      bias: false,
      layerNormEps: 1e-5,
      embedScale: false,
      labelSmoothing: 0,
    });
    const tensors = torchTensors(new Transformer(cfg, { maxBatch: 1 })).map((t) => ({ name: t.name, shape: t.shape }));
    expect(tensors).toContainEqual({ name: 'transformer.h.0.attn.c_attn.weight', shape: [(4 + 2) * 4, C] });
    const plan = planImport(tensors, { attention_lab_config: JSON.stringify(cfg) }, null);
    expect(plan.layout).toBe('attention-lab');
    expect(plan.config).toEqual(cfg);
    expect(plan.tensors.map((t) => t.source)).toContain('transformer.h.1.attn.k_norm.weight');
  });
});

describe('planImport refuses in one line', () => {
  it('unknown heads, naming --heads', () => {
    const e = errorOf(() => planImport(gpt(), {}, null));
    expect(e.message).toMatch(/cannot be read from the tensor shapes.*pass --heads N/);
  });

  it('a wrong shape, naming the tensor, the expected and the found shape', () => {
    const t = gpt().map((x) => (x.name === 'transformer.h.1.mlp.c_proj.weight' ? { ...x, shape: [C, F + 1] } : x));
    const e = errorOf(() => planImport(t, {}, { n_head: 4 }));
    expect(e.message).toMatch(
      /Tensor transformer\.h\.1\.mlp\.c_proj\.weight: expected shape \[16, 64\] .*found \[16, 65\]/,
    );
    expect(e.message).not.toContain('\n');
  });

  it('a missing tensor, a missing block, an extra tensor and an unknown layout', () => {
    expect(
      errorOf(() =>
        planImport(
          gpt().filter((x) => x.name !== 'transformer.h.0.ln_2.bias'),
          {},
          { n_head: 4 },
        ),
      ).message,
    ).toMatch(/no tensor transformer\.h\.0\.ln_2\.bias/);
    expect(
      errorOf(() =>
        planImport(
          gpt().filter((x) => !x.name.startsWith('transformer.h.0.')),
          {},
          { n_head: 4 },
        ),
      ).message,
    ).toMatch(/blocks up to transformer\.h\.1 but none named transformer\.h\.0/);
    expect(
      errorOf(() => planImport([...gpt(), { name: 'transformer.h.0.attn.rotary', shape: [4] }], {}, { n_head: 4 }))
        .message,
    ).toMatch(/rotary \[4\] has no place/);
    expect(
      errorOf(() => planImport([{ name: 'model.layers.0.q_proj.weight', shape: [4, 4] }], {}, null)).message,
    ).toMatch(/Unknown checkpoint layout/);
  });

  it('config.json disagreeing with the shapes or --heads, and an unknown activation', () => {
    expect(errorOf(() => planImport(gpt(), {}, { n_head: 4, n_layer: 3 })).message).toMatch(
      /n_layer 3 but the checkpoint has blocks/,
    );
    expect(errorOf(() => planImport(gpt(), {}, { n_head: 4 }, { heads: 2 })).message).toMatch(
      /--heads 2 disagrees with config\.json's n_head 4/,
    );
    expect(
      errorOf(() => planImport(gpt({ conv1d: true }), {}, { n_head: 4, activation_function: 'swish' })).message,
    ).toMatch(/activation_function "swish"/);
    expect(errorOf(() => planImport(gpt(), {}, { n_head: 5 })).message).toMatch(/not divisible by nHeads 5/);
  });
});
