/**
 * Direct logit attribution, the accumulated residual stream and attribution patching against
 * PyTorch (scripts/pytorch/make_attribution_golden.py: forward hooks and autograd on
 * reference.py's model), on the random small GPT of test/golden/gpt.safetensors (LayerNorm with
 * biases, tied embeddings) and the Llama-shaped model of test/golden/modern/preset-llama.safetensors
 * (RMSNorm, RoPE, SwiGLU, grouped-query attention), on every backend: each number to 1e-5 of
 * max(1, the largest |number| of its tensor). And the DLA identity: Σ components + the excluded
 * biases = the model's logit difference. The encoder-decoder of test/golden/encdec-pre.safetensors
 * likewise, on two sources under one target prefix: DLA with the cross-attention heads, and
 * attribution patching's decoder, cross-attention and encoder estimates.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attributionPatching } from '../../../../src/engine/analysis/attributionPatching';
import { directLogitAttribution } from '../../../../src/engine/analysis/directLogit';
import type { LogitMetric } from '../../../../src/engine/analysis/logitMetric';
import type { ModelConfig } from '../../../../src/engine/config';
import { validateConfig } from '../../../../src/engine/config';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import type { Backend } from '../../../../src/engine/backend';
import type { Batch } from '../../../../src/engine/models/inputs';
import { PARITY_BACKENDS, goldenModel, goldenTensor } from '../models/goldenParity';

const GOLDEN = join(__dirname, '../../../golden');
const read = (file: string): ReturnType<typeof decodeSafetensors> =>
  decodeSafetensors(new Uint8Array(readFileSync(join(GOLDEN, file))), file);

const CASES = ['gpt', 'llama'].map((name) => {
  const f = read(`attribution/${name}.safetensors`);
  const source = read(f.metadata.model as string);
  const cfg = validateConfig(JSON.parse(source.metadata.config as string) as ModelConfig);
  return { name, f, source, cfg, answer: Number(f.metadata.answer), wrong: Number(f.metadata.wrong) };
});

function batchOf(ids: Int32Array): Batch {
  return { B: 1, T: ids.length, input: ids, targets: new Int32Array(ids.length) };
}

/** Every element within 1e-5 of max(1, max |want|). */
function expectClose(got: ArrayLike<number>, want: ArrayLike<number>, what: string): void {
  expect(got.length, what).toBe(want.length);
  let scale = 1;
  for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i] as number));
  for (let i = 0; i < want.length; i++)
    expect(Math.abs((got[i] as number) - (want[i] as number)) / scale, `${what}[${i}]`).toBeLessThan(1e-5);
}

describe.each(CASES)('attribution of $name against PyTorch', (c) => {
  const want = (name: string): Float64Array => goldenTensor(c.f, name).data as unknown as Float64Array;
  const clean = batchOf(goldenTensor(c.f, 'input.clean').data as Int32Array);
  const corrupted = batchOf(goldenTensor(c.f, 'input.corrupted').data as Int32Array);

  it.each(PARITY_BACKENDS)('direct logit attribution and the accumulated residual on %s', (_, make) => {
    const { model } = goldenModel(c.source, c.cfg, make());
    const d = directLogitAttribution(model, clean, c.answer, c.wrong);
    expectClose(d.embed, want('dla.embed'), 'embed');
    expectClose(d.heads, want('dla.heads'), 'heads');
    expectClose(d.mlp, want('dla.mlp'), 'mlp');
    expectClose(d.excluded, want('dla.excluded'), 'excluded');
    expectClose(d.accumulated, want('dla.accumulated'), 'accumulated');
    expectClose(d.logitDiff, want('dla.logit_diff'), 'logit difference');
    if (c.cfg.attnOutBias) expectClose(d.attnBias ?? [], want('dla.attn_bias'), 'attention bias');
    else expect(d.attnBias).toBeNull();
    // The identity: every component plus the excluded biases is the logit difference, at every position.
    for (let p = 0; p < d.T; p++) {
      let sum = (d.embed[p] as number) + (d.excluded[p] as number);
      for (let l = 0; l < d.L; l++) {
        sum += (d.mlp[l * d.T + p] as number) + (d.attnBias ? (d.attnBias[l * d.T + p] as number) : 0);
        for (let h = 0; h < d.H; h++) sum += d.heads[(l * d.H + h) * d.T + p] as number;
      }
      expect(Math.abs(sum - (d.logitDiff[p] as number)), `position ${p}`).toBeLessThan(1e-4);
    }
  });

  it.each(PARITY_BACKENDS)('attribution patching, logit-diff and logprob, on %s', (_, make) => {
    const { model } = goldenModel(c.source, c.cfg, make());
    for (const kind of ['logit-diff', 'logprob'] as const) {
      const metric: LogitMetric = { kind, answer: c.answer, wrong: c.wrong };
      const passes: string[] = [];
      const a = attributionPatching(model, clean, corrupted, metric, (p) => passes.push(p));
      expect(passes).toEqual(['clean', 'corrupted', 'backward']);
      expectClose(
        [a.clean, a.corrupted],
        [want(`attr.${kind}.clean`)[0] as number, want(`attr.${kind}.corrupted`)[0] as number],
        `${kind} metrics`,
      );
      expectClose(a.resid, want(`attr.${kind}.resid`), `${kind} resid`);
      expectClose(a.attnOut, want(`attr.${kind}.attn_out`), `${kind} attn_out`);
      expectClose(a.mlpOut, want(`attr.${kind}.mlp_out`), `${kind} mlp_out`);
      expectClose(a.headPos, want(`attr.${kind}.head_pos`), `${kind} head per position`);
      expectClose(a.head, want(`attr.${kind}.head`), `${kind} head`);
    }
  });
});

describe('attribution of an encoder-decoder against PyTorch', () => {
  const f = read('attribution/encdec.safetensors');
  const source = read(f.metadata.model as string);
  const cfg = validateConfig(JSON.parse(source.metadata.config as string) as ModelConfig);
  const want = (name: string): Float64Array => goldenTensor(f, name).data as unknown as Float64Array;
  const target = goldenTensor(f, 'input.target').data as Int32Array;
  const batchOfSource = (name: string): Batch => {
    const src = goldenTensor(f, name).data as Int32Array;
    return { ...batchOf(target), S: src.length, src };
  };
  const clean = batchOfSource('input.clean');
  const corrupted = batchOfSource('input.corrupted');
  const answer = Number(f.metadata.answer);
  const wrong = Number(f.metadata.wrong);

  it.each(PARITY_BACKENDS)('direct logit attribution with cross-attention heads on %s', (_, make) => {
    const { model } = goldenModel(source, cfg, make());
    const d = directLogitAttribution(model, clean, answer, wrong);
    expectClose(d.embed, want('dla.embed'), 'embed');
    expectClose(d.heads, want('dla.heads'), 'heads');
    expectClose(d.crossHeads ?? [], want('dla.cross_heads'), 'cross heads');
    expectClose(d.mlp, want('dla.mlp'), 'mlp');
    expectClose(d.accumulated, want('dla.accumulated'), 'accumulated');
    expectClose(d.logitDiff, want('dla.logit_diff'), 'logit difference');
    expect(d.crossBias).toBeNull(); // encdec-pre has no attention output bias
    for (let p = 0; p < d.T; p++) {
      let sum = (d.embed[p] as number) + (d.excluded[p] as number);
      for (let l = 0; l < d.L; l++) {
        sum += d.mlp[l * d.T + p] as number;
        for (let h = 0; h < d.H; h++)
          sum +=
            (d.heads[(l * d.H + h) * d.T + p] as number) +
            ((d.crossHeads as Float64Array)[(l * d.H + h) * d.T + p] as number);
      }
      expect(Math.abs(sum - (d.logitDiff[p] as number)), `position ${p}`).toBeLessThan(1e-4);
    }
  });

  it.each(PARITY_BACKENDS)('attribution patching of the decoder, cross-attention and encoder on %s', (_, make) => {
    const { model } = goldenModel(source, cfg, make());
    for (const kind of ['logit-diff', 'logprob'] as const) {
      const a = attributionPatching(model, clean, corrupted, { kind, answer, wrong });
      const w = (name: string): Float64Array => want(`attr.${kind}.${name}`);
      expectClose([a.clean, a.corrupted], [w('clean')[0] as number, w('corrupted')[0] as number], `${kind} metrics`);
      expectClose(a.resid, w('resid'), `${kind} resid`);
      expectClose(a.attnOut, w('attn_out'), `${kind} attn_out`);
      expectClose(a.mlpOut, w('mlp_out'), `${kind} mlp_out`);
      expectClose(a.headPos, w('head_pos'), `${kind} head per position`);
      expectClose(a.cross?.out ?? [], w('cross_out'), `${kind} cross_out`);
      expectClose(a.cross?.headPos ?? [], w('cross_head_pos'), `${kind} cross head per position`);
      expectClose(a.encoder?.resid ?? [], w('enc_resid'), `${kind} encoder resid`);
      expectClose(a.encoder?.attnOut ?? [], w('enc_attn_out'), `${kind} encoder attn_out`);
      expectClose(a.encoder?.mlpOut ?? [], w('enc_mlp_out'), `${kind} encoder mlp_out`);
      expectClose(a.encoder?.headPos ?? [], w('enc_head_pos'), `${kind} encoder head per position`);
      // the source differs, so the encoder's estimates are not all 0
      expect(Math.max(...(a.encoder?.resid ?? []).map(Math.abs)), kind).toBeGreaterThan(1e-4);
    }
  });

  it('refuses sources of different lengths in one line', () => {
    const { model } = goldenModel(source, cfg, PARITY_BACKENDS[0]?.[1]() as Backend);
    const short = { ...corrupted, S: 6, src: (corrupted.src as Int32Array).slice(0, 6) };
    expect(() => attributionPatching(model, clean, short, { kind: 'logprob', answer, wrong })).toThrow(
      /clean source has 7 tokens and the corrupted 6/,
    );
  });
});

describe('direct logit attribution of a postNorms model', () => {
  it("is refused: each sublayer's own norm keeps the heads' results from adding up to the stream", () => {
    const file = read('modern/gemma3-layers.safetensors');
    const cfg = validateConfig(JSON.parse(file.metadata.config as string) as ModelConfig);
    const { model, batch } = goldenModel(file, cfg, PARITY_BACKENDS[0]?.[1]() as Backend);
    const one = {
      ...batch,
      B: 1,
      input: batch.input.subarray(0, batch.T),
      targets: batch.targets.subarray(0, batch.T),
    };
    expect(() => directLogitAttribution(model, one, 5, 6)).toThrow(/postNorms passes every sublayer's output/);
    // attribution patching needs no decomposition, so it still reads such a model
    const other = Int32Array.from(one.input, (x, i) => (i === 2 ? (x % 15) + 1 : x));
    const a = attributionPatching(model, one, { ...one, input: other }, { kind: 'logprob', answer: 5, wrong: 6 });
    expect(Array.from(a.resid).every(Number.isFinite)).toBe(true);
  });
});
