import { describe, it, expect } from 'vitest';
import { beamSearch } from '../../../../src/engine/decode/beam';
import { greedyDecode } from '../../../../src/engine/decode/greedy';
import { sampleDecode } from '../../../../src/engine/decode/sample';
import { EngineError } from '../../../../src/engine/errors';
import { Rng } from '../../../../src/engine/rng';
import { HistoryStepper, spec } from './mockStepper';

type Run = (stepper: HistoryStepper, prompt: Int32Array) => unknown;

function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** Runs `run` on a fresh stepper and checks it throws input/invalid matching `message` before any step. */
function expectInvalid(run: Run, message: RegExp, prompt = Int32Array.of(0), maxPositions = 32): void {
  const stepper = new HistoryStepper(spec({ maxPositions, maxRows: 4 }));
  const e = caught(() => run(stepper, prompt));
  expect(EngineError.is(e, 'input/invalid')).toBe(true);
  expect((e as Error).message).toMatch(message);
  expect(stepper.calls).toHaveLength(0);
}

const base = { maxTokens: 5, eos: 2 };
const sampling = { temperature: 1, topK: 0, topP: 1 };
const decoders: [string, (o: Record<string, unknown>) => Run][] = [
  ['greedy', (o) => (s, p) => greedyDecode(s, p, { ...base, ...o })],
  ['sample', (o) => (s, p) => sampleDecode(s, p, { ...base, ...sampling, rng: new Rng(1), ...o })],
  ['beam', (o) => (s, p) => beamSearch(s, p, { ...base, beamSize: 2, lengthPenalty: 0.6, ...o })],
];

describe('decode option validation', () => {
  describe.each(decoders)('%s', (_name, make) => {
    it('rejects an empty prompt', () => expectInvalid(make({}), /prompt is empty/, new Int32Array(0)));
    it('rejects a prompt longer than the context, saying what to do', () => {
      expectInvalid(
        make({}),
        /^Prompt of 300 tokens exceeds the context of 256; shorten it or retrain with a longer context\.$/,
        new Int32Array(300),
        256,
      );
    });
    it('rejects prompt tokens outside the vocabulary', () =>
      expectInvalid(make({}), /token 6 at index 1 is outside the vocabulary \[0, 6\)/, Int32Array.of(0, 6)));
    it.each([0, -3, 1.5, NaN])('rejects maxTokens %s', (v) =>
      expectInvalid(make({ maxTokens: v }), /maxTokens must be an integer ≥ 1/),
    );
    it.each([6, -2, 0.5])('rejects eos %s', (v) =>
      expectInvalid(make({ eos: v }), /eos must be a token id in \[0, 6\) or -1/),
    );
  });

  describe('sample', () => {
    const run =
      (o: Record<string, unknown>): Run =>
      (s, p) =>
        sampleDecode(s, p, { ...base, ...sampling, rng: new Rng(1), ...o });
    it.each([-0.1, NaN, Infinity])('rejects temperature %s', (v) =>
      expectInvalid(run({ temperature: v }), /temperature must be a number ≥ 0/),
    );
    it.each([-1, 2.5, NaN])('rejects topK %s', (v) => expectInvalid(run({ topK: v }), /topK must be an integer ≥ 0/));
    it.each([0, -0.5, 1.01, NaN])('rejects topP %s', (v) =>
      expectInvalid(run({ topP: v }), /topP must be in \(0, 1\]/),
    );
  });

  describe('beam', () => {
    const run =
      (o: Record<string, unknown>): Run =>
      (s, p) =>
        beamSearch(s, p, { ...base, beamSize: 2, lengthPenalty: 0.6, ...o });
    it.each([0, 5, 1.5, NaN])('rejects beamSize %s (maxRows 4)', (v) =>
      expectInvalid(run({ beamSize: v }), /beamSize must be an integer in \[1, 4\]/),
    );
    it.each([-0.1, NaN, Infinity])('rejects lengthPenalty %s', (v) =>
      expectInvalid(run({ lengthPenalty: v }), /lengthPenalty must be a number ≥ 0/),
    );
  });

  it('accepts the edges of every range', () => {
    const sp = spec({ maxPositions: 4, maxRows: 4 });
    expect(greedyDecode(new HistoryStepper(sp), new Int32Array(4), { maxTokens: 1, eos: -1 }).tokens).toHaveLength(1);
    expect(
      sampleDecode(new HistoryStepper(sp), Int32Array.of(5), {
        maxTokens: 1,
        eos: 5,
        temperature: 0,
        topK: 0,
        topP: 1,
        rng: new Rng(1),
      }).tokens,
    ).toHaveLength(1);
    expect(
      sampleDecode(new HistoryStepper(sp), Int32Array.of(5), {
        maxTokens: 2,
        eos: 0,
        temperature: 3,
        topK: 100,
        topP: 1e-6,
        rng: new Rng(1),
      }).tokens.length,
    ).toBeGreaterThan(0);
    expect(
      beamSearch(new HistoryStepper(sp), Int32Array.of(1), { maxTokens: 2, eos: 0, beamSize: 4, lengthPenalty: 0 })
        .length,
    ).toBeGreaterThan(0);
  });
});
