/**
 * The diagnostic sequences that induction is measured on (src/lab/inference/headScores.ts): drawn from
 * the tokens the run trained, never from byte ids whose embeddings are still random, with
 * periods and starts that differ, so a head attending a fixed offset or position cannot
 * score high on their mean.
 */
import { describe, expect, it } from 'vitest';
import { inductionScore } from '../../../../src/engine/analysis/headScores';
import { Transformer } from '../../../../src/engine/models/transformer';
import type { SpecialIds } from '../../../../src/engine/tokenizers/special';
import { BASE_VOCAB, BOS, NUM_SPECIAL, OWN_SPECIAL_IDS } from '../../../../src/engine/tokenizers/special';
import type { DiagnosticRow } from '../../../../src/lab/inference/headScores';
import {
  DIAGNOSTIC_MAX_LEN,
  diagnosticRows,
  measureInduction,
  scoreHeads,
} from '../../../../src/lab/inference/headScores';
import { tinyConfig } from '../../engine/models/fixtures';

/** The special ids of a GPT-2 vocabulary of `V` ids: <|endoftext|> last, as both BOS and EOS; no PAD, no UNK. */
const gpt2Ids = (V: number): SpecialIds => ({ pad: -1, bos: V - 1, eos: V - 1, unk: -1 });

function rows(vocabSize: number, maxLen: number, ids: SpecialIds = OWN_SPECIAL_IDS): DiagnosticRow[] {
  const r = diagnosticRows(new Transformer(tinyConfig('decoder-only', { vocabSize, maxLen }), { maxBatch: 1 }), ids, 3);
  expect(r).not.toBeNull();
  return r ?? [];
}

/** A one-head [1, T, T] map whose row t puts all its weight on key(t) (clamped into the causal range). */
function pointMap(T: number, key: (t: number) => number): Float32Array {
  const a = new Float32Array(T * T);
  for (let t = 0; t < T; t++) a[t * T + Math.min(t, Math.max(0, key(t)))] = 1;
  return a;
}

describe('the diagnostic sequences', () => {
  it('are BOS, filler, a segment and its repeat, of learned tokens, distinct within a sequence', () => {
    const rs = rows(BASE_VOCAB + 26, 64);
    expect(rs).toHaveLength(8);
    for (const { batch, repeat } of rs) {
      const ids = Array.from(batch.input);
      const { period: L, from, to } = repeat;
      const P = from - L - 1;
      expect(batch.T).toBe(to);
      expect(ids[0]).toBe(BOS);
      const first = ids.slice(1, 1 + P + L);
      expect(first.every((t) => t >= BASE_VOCAB && t < BASE_VOCAB + 26)).toBe(true);
      expect(new Set(first).size).toBe(P + L); // capped at the 26 learned entries
      expect(ids.slice(1 + P + L)).toEqual(first.slice(P, P + L - 1));
      expect(L).toBeGreaterThanOrEqual(3);
      expect(to).toBeLessThanOrEqual(64);
    }
    expect(new Set(rs.map((r) => r.repeat.period)).size).toBe(8);
    expect(new Set(rs.map((r) => r.repeat.from - r.repeat.period)).size).toBeGreaterThan(1);
  });

  it("start from the tokenizer's BOS and never draw its special tokens (a GPT-2 vocabulary: <|endoftext|> last)", () => {
    const V = BASE_VOCAB + 26;
    for (const { batch } of rows(V, 64, gpt2Ids(V))) {
      const ids = Array.from(batch.input);
      expect(ids[0]).toBe(V - 1);
      expect(ids.slice(1).every((t) => t >= BASE_VOCAB && t < V - 1)).toBe(true);
    }
  });

  it('stay within DIAGNOSTIC_MAX_LEN positions however long the context, their fillers still varied', () => {
    const long = rows(BASE_VOCAB + 2000, 1024);
    for (const { batch } of long) expect(batch.T).toBeLessThanOrEqual(DIAGNOSTIC_MAX_LEN);
    expect(new Set(long.map((r) => r.repeat.from - r.repeat.period)).size).toBeGreaterThan(4);
  });

  it('takes periods up to 32 where the vocabulary has the tokens, and byte ids only when it has almost none', () => {
    expect(Math.max(...rows(BASE_VOCAB + 100, 128).map((r) => r.repeat.period))).toBe(32);
    const bytes = rows(BASE_VOCAB + 2, 16);
    for (const { batch } of bytes) {
      const ids = Array.from(batch.input).slice(1);
      expect(ids.every((t) => t >= NUM_SPECIAL)).toBe(true);
    }
    expect(
      bytes.some(({ batch }) =>
        Array.from(batch.input)
          .slice(1)
          .some((t) => t < BASE_VOCAB),
      ),
    ).toBe(true);
  });

  it('an induction head scores 1 on their mean; a head at any fixed offset scores at most 1/4', () => {
    const rs = rows(BASE_VOCAB + 26, 32);
    const score = (key: (t: number, period: number) => number): number => {
      const mapOf = ({ batch, repeat }: DiagnosticRow): Float32Array => pointMap(batch.T, (t) => key(t, repeat.period));
      const induction = measureInduction(rs, (batch, sink) => {
        const row = rs.find((r) => r.batch === batch) as DiagnosticRow;
        sink('decoder.self', 0, mapOf(row), [1, batch.T, batch.T]);
      });
      const probe = rs[0] as DiagnosticRow;
      const heads = scoreHeads(
        {
          batch: probe.batch,
          maps: [{ stack: 'decoder.self', layer: 0, shape: [1, probe.batch.T, probe.batch.T], data: mapOf(probe) }],
        },
        induction,
        OWN_SPECIAL_IDS,
      );
      const s = heads[0]?.scores;
      return s && 'induction' in s ? s.induction : NaN;
    };
    expect(score((t, period) => t - period + 1)).toBe(1);
    for (let k = 0; k < 32; k++) expect(score((t) => t - k)).toBeLessThanOrEqual(0.25);
    // The engine's definition on one of them, for reference: the same target key.
    const r0 = rs[0] as DiagnosticRow;
    const T = r0.batch.T;
    expect(
      inductionScore({ probs: pointMap(T, (t) => t - r0.repeat.period + 1), shape: [1, T, T] }, 0, r0.repeat),
    ).toBe(1);
  });

  it('count the probe\'s real tokens up to the tokenizer\'s PAD: in a GPT-2 vocabulary (no PAD) id 0 is "!", a real token', () => {
    // Row 1 looks at key 0, rows 2 and 3 at themselves: firstToken = mean of A[t, 0] over the real rows t ≥ 1.
    const T = 4;
    const data = new Float32Array(T * T);
    [0, 0, 2, 3].forEach((k, t) => (data[t * T + k] = 1));
    const batch = { B: 1, T, input: Int32Array.of(269, 5, 0, 7), targets: Int32Array.of(5, 0, 7, 9) };
    const first = (ids: SpecialIds): number => {
      const s = scoreHeads({ batch, maps: [{ stack: 'decoder.self', layer: 0, shape: [1, T, T], data }] }, null, ids)[0]
        ?.scores;
      return s && 'firstToken' in s ? s.firstToken : NaN;
    };
    expect(first(gpt2Ids(270))).toBeCloseTo(1 / 3, 6);
    expect(first(OWN_SPECIAL_IDS)).toBe(1); // our PAD is 0: the text ends before it
  });
});
