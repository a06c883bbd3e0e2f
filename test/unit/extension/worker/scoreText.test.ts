import { beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { BOS } from '../../../../src/engine/tokenizers/special';
import type { OpenRun } from '../../../../src/lab/openRun';
import { logSoftmaxAt } from '../../../../src/lab/score';
import { scoreText, tokenOffsets } from '../../../../src/extension/worker/scoreText';
import { tinyDocuments, tinySpec, trainTiny } from '../../lab/tinyRuns';

/** log p(ids[t+1] | ids[0..t]) for every t, from one forward pass, with a plain (unshifted) log-softmax in float64. */
function naiveLogprobs(r: OpenRun, ids: Int32Array): number[] {
  const T = ids.length - 1;
  r.model.forward({ B: 1, T, input: ids.slice(0, T), targets: ids.slice(1) }, { train: false, labelSmoothing: 0 });
  const logits = r.model.logits();
  const V = r.model.config.vocabSize;
  return Array.from({ length: T }, (_, t) => {
    let z = 0;
    for (let v = 0; v < V; v++) z += Math.exp(logits[t * V + v] as number);
    return Math.log(Math.exp(logits[t * V + (ids[t + 1] as number)] as number) / z);
  });
}

let lm: OpenRun;
let mt: OpenRun;
beforeAll(async () => {
  lm = await trainTiny(tinySpec(tinyDocuments()));
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
});

describe('logSoftmaxAt', () => {
  it('matches log(softmax) and stays finite for huge logits', () => {
    const row = [1, 2, 3, 0.5];
    const z = row.reduce((a, x) => a + Math.exp(x), 0);
    for (let i = 0; i < 4; i++) expect(logSoftmaxAt(row, 0, 4, i)).toBeCloseTo(Math.log(Math.exp(row[i] as number) / z), 12);
    expect(logSoftmaxAt([0, 0, 1000, 1000], 1, 2, 0)).toBeCloseTo(-Math.LN2, 12);
  });
});

describe('tokenOffsets', () => {
  it('gives one character per token for known ASCII characters', () => {
    const text = 'the cat';
    const { starts, ends } = tokenOffsets(lm.tok, lm.tok.encode(text), text);
    expect(starts).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(ends).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('gives the byte tokens of an unseen character that character’s whole range', () => {
    const text = 'aé👋b'; // é: 2 UTF-8 bytes, 1 UTF-16 unit; 👋: 4 bytes, 2 units
    const ids = lm.tok.encode(text);
    expect(ids.length).toBe(1 + 2 + 4 + 1);
    const { starts, ends } = tokenOffsets(lm.tok, ids, text);
    expect(starts).toEqual([0, 1, 1, 2, 2, 2, 2, 4]);
    expect(ends).toEqual([1, 2, 2, 4, 4, 4, 4, 5]);
  });
});

describe('scoreText', () => {
  it('scores a short text in one pass, as a continuation of BOS', () => {
    const text = 'the dog sat';
    const out = scoreText(lm, null, text);
    const ids = Int32Array.of(BOS, ...lm.tok.encode(text));
    const want = naiveLogprobs(lm, ids);
    expect(out.tokens).toEqual(Array.from(ids.subarray(1), (id) => lm.tok.tokenText(id)));
    expect(out.tokens[3]).toBe('▁');
    expect(out.truncated).toBe(0);
    out.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(want[i] as number, 5));
  });

  it('scores text past the context with a sliding window', () => {
    const L = lm.model.maxLen; // 16
    const text = 'the cat sat on the mat. the dog sat on the log.'; // 47 characters
    const out = scoreText(lm, null, text);
    expect(out.logprobs).toHaveLength(text.length);
    expect(out.ends.at(-1)).toBe(text.length);
    for (const lp of out.logprobs) expect(lp <= 0 && Number.isFinite(lp)).toBe(true);
    const ids = Int32Array.of(BOS, ...lm.tok.encode(text));
    // First window: BOS + 15 characters, scored at once.
    naiveLogprobs(lm, ids.slice(0, L + 1)).forEach((lp, i) => expect(out.logprobs[i]).toBeCloseTo(lp, 5));
    // Second window: the next L/2 tokens, each with the L positions before it as context.
    const end = L + L / 2;
    const second = naiveLogprobs(lm, ids.slice(end - L, end + 1)).slice(L / 2);
    second.forEach((lp, i) => expect(out.logprobs[L + i]).toBeCloseTo(lp, 5));
  });

  it('scores an encoder-decoder target given its source, and needs that source', () => {
    expect(() => scoreText(mt, null, 'cba')).toThrow(/encoder-decoder: select a line/);
    const out = scoreText(mt, 'abc', 'cba');
    expect(out.tokens).toEqual(['c', 'b', 'a']);
    expect(out.logprobs.every((x) => x < 0)).toBe(true);
    expect(() => scoreText(lm, null, '')).toThrow(EngineError);
  });
});
