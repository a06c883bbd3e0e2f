import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { BOS, EOS } from '../../../../src/engine/tokenizers/special';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { logSoftmaxAt, scoreText, tokenOffsets } from '../../../../src/lab/inference/score';
import type { ScoreOutput } from '../../../../src/protocol/modelWorker';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';
import type { WorkerDoor } from './frontDoors';
import { cliJson, startModelWorker } from './frontDoors';

/** log p(ids[t+1] | ids[0..t]) for every t, from one forward pass, with a plain (unshifted) log-softmax in float64. */
function naiveLogprobs(r: OpenRun, ids: Int32Array, src?: Int32Array): number[] {
  const T = ids.length - 1;
  r.model.forward(
    { B: 1, T, input: ids.slice(0, T), targets: ids.slice(1), ...(src ? { S: src.length, src } : {}) },
    { train: false, labelSmoothing: 0 },
  );
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
  lm = await trainTiny(tinySpec(await tinyDocuments()));
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
});

describe('logSoftmaxAt', () => {
  it('matches log(softmax) and stays finite for huge logits', () => {
    const row = [1, 2, 3, 0.5];
    const z = row.reduce((a, x) => a + Math.exp(x), 0);
    for (let i = 0; i < 4; i++)
      expect(logSoftmaxAt(row, 0, 4, i)).toBeCloseTo(Math.log(Math.exp(row[i] as number) / z), 12);
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
  it('scores a short text in one pass, as a continuation of BOS, with no EOS appended', () => {
    const text = 'the dog sat';
    const { output: out, ids, src } = scoreText(lm, null, text);
    expect(Array.from(ids)).toEqual([BOS, ...lm.tok.encode(text)]);
    expect(src).toBeNull();
    const want = naiveLogprobs(lm, ids);
    expect(out.tokens).toEqual(Array.from(ids.subarray(1), (id) => lm.tok.tokenText(id)));
    expect(out.tokens[3]).toBe('·');
    expect(out.truncated).toBe(0);
    out.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(want[i] as number, 5));
  });

  it('scores text past the context with a sliding window', () => {
    const L = lm.model.maxLen; // 16
    const text = 'the cat sat on the mat. the dog sat on the log.'; // 47 characters
    const { output: out } = scoreText(lm, null, text);
    expect(out.logprobs).toHaveLength(text.length);
    expect(out.ends.at(-1)).toBe(text.length);
    expect(out.truncated).toBe(0);
    for (const lp of out.logprobs) expect(lp <= 0 && Number.isFinite(lp)).toBe(true);
    const ids = Int32Array.of(BOS, ...lm.tok.encode(text));
    // First window: BOS + 15 characters, scored at once.
    naiveLogprobs(lm, ids.slice(0, L + 1)).forEach((lp, i) => expect(out.logprobs[i]).toBeCloseTo(lp, 5));
    // Second window: the next L/2 tokens, each with the L positions before it as context.
    const end = L + L / 2;
    const second = naiveLogprobs(lm, ids.slice(end - L, end + 1)).slice(L / 2);
    second.forEach((lp, i) => expect(out.logprobs[L + i]).toBeCloseTo(lp, 5));
  });

  // The target's EOS is scored, as training scores it: a translation cut short must not
  // score better than the whole one.
  it('scores an encoder-decoder target given its source, EOS included, and needs that source', () => {
    expect(() => scoreText(mt, null, 'cba')).toThrow(/encoder-decoder: select a line/);
    const { output: out, ids, src } = scoreText(mt, 'abc', 'cba');
    expect(out.tokens).toEqual(['c', 'b', 'a', '<eos>']);
    expect(out.logprobs.every((x) => x < 0)).toBe(true);
    expect(Array.from(ids)).toEqual([BOS, ...mt.tok.encode('cba'), EOS]);
    expect(Array.from(src ?? [])).toEqual(Array.from(mt.tok.encode('abc', { eos: true })));
    naiveLogprobs(mt, ids, src ?? undefined).forEach((lp, i) => expect(out.logprobs[i]).toBeCloseTo(lp, 5));
    expect([out.starts.at(-1), out.ends.at(-1)]).toEqual([3, 3]); // EOS covers no characters
    expect(() => scoreText(lm, null, '')).toThrow(EngineError);
  });

  it('slides windows over an encoder-decoder target longer than the context, and refuses a source that does not fit', () => {
    const L = mt.model.maxLen; // 24
    const target = 'abcdefghij'.repeat(4); // 40 characters
    const { output: out, ids, src } = scoreText(mt, 'abc', target);
    expect(out.logprobs).toHaveLength(target.length + 1);
    expect(out.truncated).toBe(0);
    const s = src ?? undefined;
    naiveLogprobs(mt, ids.slice(0, L + 1), s).forEach((lp, i) => expect(out.logprobs[i]).toBeCloseTo(lp, 5));
    const end = L + L / 2;
    naiveLogprobs(mt, ids.slice(end - L, end + 1), s)
      .slice(L / 2)
      .forEach((lp, i) => expect(out.logprobs[L + i]).toBeCloseTo(lp, 5));
    expect(() => scoreText(mt, 'a'.repeat(L), 'cba')).toThrow(
      /Source of 25 tokens exceeds the context of 24; shorten it or retrain with a longer context/,
    );
  });
});

describe('one scoring rule at both front doors', () => {
  let worker: WorkerDoor;
  beforeAll(async () => {
    worker = await startModelWorker();
  });
  afterAll(() => worker?.close());

  const editor = async (r: OpenRun, source: string | null, text: string): Promise<ScoreOutput> => {
    const reply = (await worker.request({ type: 'model/score', runDir: r.runDir, source, text })).at(-1);
    if (reply?.type !== 'model/didScore') throw new Error(JSON.stringify(reply));
    return reply.output;
  };

  it.each([
    ['shorter than the context', 'the hand'],
    ['longer than the context', 'the cat sat on the mat. the dog sat on the log.'],
  ])('decoder-only, %s: `score --text` and Score Selection give identical numbers', async (_, text) => {
    const fromCli = cliJson<{ ids: number[]; logprobs: number[] }>([
      'score',
      '--run',
      lm.runDir,
      '--text',
      text,
      '--backend',
      'reference',
    ]);
    const fromEditor = await editor(lm, null, text);
    expect(fromCli.logprobs).toEqual(fromEditor.logprobs);
    expect(fromCli.ids.slice(1).map((id) => lm.tok.tokenText(id))).toEqual(fromEditor.tokens);
    expect(fromCli.logprobs.length).toBe(text.length);
  });

  it.each([
    ['shorter than the context', 'cba'],
    ['longer than the context', 'abcdefghij'.repeat(4)],
  ])('encoder-decoder, %s: `score --src --tgt` and Score Selection give identical numbers', async (_, target) => {
    const fromCli = cliJson<{ tgt_ids: number[]; logprobs: number[] }>([
      'score',
      '--run',
      mt.runDir,
      '--src',
      'abc',
      '--tgt',
      target,
      '--backend',
      'reference',
    ]);
    const fromEditor = await editor(mt, 'abc', target);
    expect(fromCli.logprobs).toEqual(fromEditor.logprobs);
    expect(fromCli.tgt_ids.slice(1).map((id) => mt.tok.tokenText(id))).toEqual(fromEditor.tokens);
    expect(fromEditor.tokens.at(-1)).toBe('<eos>');
  });
});
