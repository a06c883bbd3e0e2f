import { beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import type { LensInput } from '../../../../src/lab/inference/lens';
import { inputBatch, logitLens, probsAt, topIds, topTokens } from '../../../../src/lab/inference/lens';
import { attendText } from '../../../../src/lab/inference/attend';
import { decodeText } from '../../../../src/lab/inference/decode';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { nextTokenLabel } from '../../../../src/engine/tokenizers/tokenDisplay';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

let lm: OpenRun;
let mt: OpenRun;

beforeAll(async () => {
  lm = await trainTiny(tinySpec(await tinyDocuments()));
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
}, 120_000);

/** softmax of the model's own logits at every position, in float64. */
function modelProbs(r: OpenRun, input: LensInput): number[][] {
  const b = inputBatch(r, input);
  r.model.forward(b, { train: false });
  const logits = r.model.logits();
  const V = r.model.config.vocabSize;
  return Array.from({ length: b.T }, (_, t) => {
    const row = Array.from(logits.subarray(t * V, (t + 1) * V));
    const max = Math.max(...row);
    const sum = row.reduce((a, x) => a + Math.exp(x - max), 0);
    return row.map((x) => Math.exp(x - max) / sum);
  });
}

describe.each([
  ['decoder-only', (): OpenRun => lm, { prompt: 'the cat' } as LensInput],
  ['encoder-decoder, given target', (): OpenRun => mt, { src: 'abc', tgt: 'cb' } as LensInput],
  ['encoder-decoder, greedy target', (): OpenRun => mt, { src: 'abcd' } as LensInput],
])('logitLens: %s', (_name, run, input) => {
  it("the last layer's lens is the softmax of the model's logits, top-k sorted", () => {
    const r = run();
    const lens = logitLens(r, input, { topK: 3 });
    const n = r.model.config.nDecoderLayers;
    expect(lens.layers.map((l) => l.layer)).toEqual(Array.from({ length: n + 1 }, (_, i) => i));
    const probs = modelProbs(r, input);
    const top = lens.layers[n]?.positions ?? [];
    expect(top.length).toBe(lens.tokens.length);
    expect(top.length).toBe(probs.length);
    const ids = inputBatch(r, input).input;
    top.forEach((pos, t) => {
      const sorted = (probs[t] as number[])
        .map((p, id) => ({ p, id }))
        .sort((a, b) => b.p - a.p || a.id - b.id)
        .slice(0, 3);
      // Each candidate reads as it would after the input so far (a byte that starts a character is marked as cut off);
      // the input's own next token reads as its column does.
      expect(pos.top.map((x) => x.token)).toEqual(
        sorted.map((s) =>
          s.id === ids[t + 1] ? lens.tokens[t + 1] : nextTokenLabel(r.tok, ids.subarray(0, t + 1), s.id),
        ),
      );
      pos.top.forEach((x, i) => expect(Math.abs(x.prob - (sorted[i] as { p: number }).p)).toBeLessThan(1e-6));
    });
    for (const l of lens.layers)
      for (const p of l.positions) {
        expect(p.top.length).toBe(3);
        for (let i = 1; i < p.top.length; i++)
          expect((p.top[i] as { prob: number }).prob).toBeLessThanOrEqual((p.top[i - 1] as { prob: number }).prob);
      }
  });
});

describe('topTokens', () => {
  it('gives what probsAt and topIds give, row by row, without their vocabulary-sized arrays', () => {
    const batch = inputBatch(lm, { prompt: 'the cat sat' });
    lm.model.forward(batch, { train: false, labelSmoothing: 0 });
    const logits = Float32Array.from(lm.model.logits());
    for (let t = 0; t < batch.T; t++) {
      for (const k of [1, 5, 50]) {
        const p = probsAt(lm, logits, t);
        const ctx = batch.input.subarray(0, t + 1);
        expect(topTokens(lm, logits, t, k, ctx)).toEqual(
          topIds(p, k).map((id) => ({ token: nextTokenLabel(lm.tok, ctx, id), prob: p[id] })),
        );
      }
    }
  });
});

describe("a prompt out of the run's vocabulary", () => {
  it('is said by the lens, the attention and a decode, naming the characters; a prompt in it says nothing', () => {
    const note =
      '2 characters of the prompt ("é") are not in the run\'s vocabulary: the model reads them as bytes it never trained on.';
    expect(logitLens(lm, { prompt: 'é the cat é' }, { topK: 1 }).truncation).toBe(note);
    expect(attendText(lm, 'é the cat é').snapshot.truncation).toBe(note.replace('the prompt', 'the text'));
    const d = decodeText(lm, {
      input: 'é the cat é',
      strategy: 'greedy',
      beam: 1,
      lengthPenalty: 0,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: 3,
      seed: 1,
    });
    expect(d.output.contextNote).toBe(note);
    expect(logitLens(lm, { prompt: 'the cat' }, { topK: 1 }).truncation).toBeUndefined();
    expect(attendText(lm, 'the cat').snapshot.truncation).toBeUndefined();
  });
});

describe('logitLens input', () => {
  it('shows the source tokens of an encoder-decoder and BOS first', () => {
    const lens = logitLens(mt, { src: 'abc', tgt: 'cba' }, { topK: 1 });
    expect(lens.src?.length).toBe(4);
    expect(lens.tokens.length).toBe(4);
  });

  it("with fit, cuts a long input as the attention view does (one rule, one sentence): BOS and the first tokens, a source's first tokens and EOS", () => {
    const L = lm.model.config.maxLen;
    const prompt = 'the cat sat on the mat. '.repeat(3);
    const lens = logitLens(lm, { prompt }, { topK: 2, fit: true });
    expect(lens.tokens).toHaveLength(L);
    expect(lens.tokens[0]).toBe('<bos>');
    expect(lens.tokens.slice(1).join('')).toBe(
      Array.from(prompt.slice(0, L - 1), (c) => lm.tok.tokenText(lm.tok.encode(c)[0] as number)).join(''),
    );
    expect(lens.truncation).toBe(
      `Showing the first ${L - 1} of ${prompt.length} text tokens — the model's context is ${L}.`,
    );
    expect(lens.truncation).toBe(attendText(lm, prompt).snapshot.truncation);
    expect(lens.tokens).toEqual(attendText(lm, prompt).snapshot.tgtTokens);
    const S = mt.model.maxSrcLen;
    const src = 'abcdefghij'.repeat(4);
    const cut = logitLens(mt, { src, tgt: 'ab' }, { topK: 1, fit: true });
    expect(cut.src).toHaveLength(S);
    expect(cut.src?.at(-1)).toBe('<eos>');
    expect(cut.truncation).toBe(
      `Showing the first ${S - 1} of ${src.length} source tokens — the model's context is ${S}.`,
    );
    expect(logitLens(lm, { prompt: 'the cat' }, { topK: 1, fit: true }).truncation).toBeUndefined();
  });

  it('refuses a prompt longer than the context, the wrong input kind and a bad top-k', () => {
    expect(() => logitLens(lm, { prompt: 'x'.repeat(lm.model.maxLen) }, { topK: 5 })).toThrow(/exceeds the context/);
    expect(() => logitLens(lm, { src: 'abc' }, { topK: 5 })).toThrow(EngineError);
    expect(() => logitLens(mt, { prompt: 'abc' }, { topK: 5 })).toThrow(/encoder-decoder/);
    expect(() => logitLens(lm, { prompt: 'the' }, { topK: 0 })).toThrow(/top-k/);
  });
});
