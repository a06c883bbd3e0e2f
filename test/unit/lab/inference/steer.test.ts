/**
 * Steering (src/lab/inference/steer.ts): α 0 is plain decoding exactly, the vector is the
 * difference of the two prompts' means (swapping them negates it), a strong α changes the
 * decode, an encoder-decoder's decoder steered, refusals, and the CLI's `steer --json` and the
 * model worker's `model/steer` agree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeText } from '../../../../src/lab/inference/decode';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { steerRun, steeringVector } from '../../../../src/lab/inference/steer';
import type { DecodeParams } from '../../../../src/protocol/model';
import type { SteerOutputData, SteerRequestData } from '../../../../src/protocol/steering';
import { cli } from '../../cli/cliHarness';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';
import type { WorkerDoor } from './frontDoors';
import { cliJson, startModelWorker } from './frontDoors';
import * as os from 'node:os';

let lm: OpenRun;
let mt: OpenRun;
beforeAll(async () => {
  lm = await trainTiny(tinySpec(await tinyDocuments()));
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
});

const decode: DecodeParams = {
  input: 'the ',
  strategy: 'greedy',
  beam: 1,
  lengthPenalty: 0.6,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxTokens: 8,
  seed: 1,
};
const vector = { plus: 'abc', minus: 'xyz', layer: 1, alpha: 0 };

describe('steerRun', () => {
  it('with α 0 decodes exactly as plain decoding (greedy, sampled and beam), beside the unsteered', () => {
    const samples: DecodeParams[] = [
      decode,
      { ...decode, strategy: 'sample', temperature: 1.5, seed: 4 },
      { ...decode, strategy: 'beam', beam: 3 },
    ];
    for (const d of samples) {
      const plain = decodeText(lm, d).output;
      const out = steerRun(lm, { vector, decode: d });
      expect(out.steered).toEqual(plain);
      expect(out.unsteered).toEqual(plain);
      expect(out.norm).toBeGreaterThan(0);
    }
  });

  it('v is the difference of the means: the same prompts give 0, swapped prompts −v', () => {
    const v = steeringVector(lm, vector).vector;
    const w = steeringVector(lm, { ...vector, plus: 'xyz', minus: 'abc' }).vector;
    expect(Array.from(w)).toEqual(Array.from(v, (x) => -x + 0));
    expect(steerRun(lm, { vector: { ...vector, minus: 'abc' }, decode }).norm).toBe(0);
    // α·v is α·(plus − minus): α −1 is swapping the prompts
    const a = steerRun(lm, { vector: { ...vector, alpha: -1 }, decode });
    const b = steerRun(lm, { vector: { ...vector, plus: 'xyz', minus: 'abc', alpha: 1 }, decode });
    expect(a.steered).toEqual(b.steered);
  });

  it('a strong α changes the continuation, at every layer the vector can enter', () => {
    const L = lm.model.config.nDecoderLayers;
    for (let layer = 0; layer <= L; layer++) {
      const out = steerRun(lm, { vector: { ...vector, layer, alpha: 40 }, decode });
      expect(out.steered.logprobs).not.toEqual(out.unsteered.logprobs);
    }
  });

  it("steers an encoder-decoder's decoder: α 0 is plain decoding, a strong α moves it, swapping negates v", () => {
    const d = { ...decode, input: 'abcd' };
    const plain = decodeText(mt, d).output;
    const still = steerRun(mt, { vector: { ...vector, plus: 'abcd', minus: 'dcba' }, decode: d });
    expect(still.steered).toEqual(plain);
    expect(still.unsteered).toEqual(plain);
    expect(still.norm).toBeGreaterThan(0);
    const v = steeringVector(mt, { ...vector, plus: 'abcd', minus: 'dcba' }).vector;
    const w = steeringVector(mt, { ...vector, plus: 'dcba', minus: 'abcd' }).vector;
    expect(Array.from(w)).toEqual(Array.from(v, (x) => -x + 0));
    const L = mt.model.config.nDecoderLayers;
    for (let layer = 0; layer <= L; layer++) {
      const out = steerRun(mt, { vector: { plus: 'abcd', minus: 'dcba', layer, alpha: 40 }, decode: d });
      expect(out.steered.logprobs, `layer ${layer}`).not.toEqual(out.unsteered.logprobs);
    }
  });

  it('refuses a layer past the final norm and a non-finite α', () => {
    const L = lm.model.config.nDecoderLayers;
    expect(() => steerRun(lm, { vector: { ...vector, layer: L + 1 }, decode })).toThrow(
      `The layer is 0 to ${L} (the stream entering that layer; ${L}: the final norm's input); got ${L + 1}.`,
    );
    expect(() => steerRun(lm, { vector: { ...vector, alpha: Infinity }, decode })).toThrow(
      'α must be a finite number; got Infinity.',
    );
  });
});

describe('one steering at both front doors', () => {
  let worker: WorkerDoor;
  beforeAll(async () => {
    worker = await startModelWorker();
  });
  afterAll(() => worker?.close());

  it('`attention-lab steer --json` and the playground give the same decodes and norms', async () => {
    const req: SteerRequestData = { vector: { ...vector, alpha: 8 }, decode };
    const fromCli = cliJson<SteerOutputData>([
      'steer',
      lm.runDir,
      '--backend',
      'reference',
      '--layer',
      '1',
      '--plus',
      'abc',
      '--minus',
      'xyz',
      '--alpha',
      '8',
      '--prompt',
      'the ',
      '--tokens',
      '8',
    ]);
    const replies = await worker.request({ type: 'model/steer', runDir: lm.runDir, request: req });
    const last = replies.at(-1);
    if (last?.type !== 'model/didSteer') throw new Error(JSON.stringify(last));
    expect(fromCli).toEqual(JSON.parse(JSON.stringify(last.output)));
    expect(fromCli).toEqual(JSON.parse(JSON.stringify(steerRun(lm, req))));
  });

  it('the CLI prints both continuations, CSV, and refuses missing flags in one line', () => {
    const base = ['steer', lm.runDir, '--backend', 'reference', '--layer', '1', '--plus', 'abc', '--minus', 'xyz'];
    const text = cli([...base, '--alpha', '8', '--prompt', 'the ', '--tokens', '4'], os.tmpdir());
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^v at the stream entering layer 1: ‖v‖ \d/);
    expect(text.stdout).toMatch(/\nsteered: {3}"the /);
    expect(text.stdout).toMatch(/\nunsteered: "the /);
    const csv = cli([...base, '--alpha', '8', '--prompt', 'the ', '--tokens', '4', '--csv'], os.tmpdir());
    expect(csv.stdout.split(/\r?\n/)[0]).toBe('which,text,tokens,score');
    expect(csv.stdout.trim().split(/\r?\n/).length).toBe(3);
    const missing = cli([...base, '--prompt', 'the '], os.tmpdir());
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toBe('attention-lab: `steer` needs --alpha (see `attention-lab steer --help`).');
  });
});
