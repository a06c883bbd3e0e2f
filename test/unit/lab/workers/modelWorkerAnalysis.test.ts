/**
 * The model worker's logit lens and ablation (the requests the dashboard's playground sends)
 * on tiny real models: the worker's lens is the CLI's `lens --json` number for number, its
 * ablation is the lab's compareHeadsOff (the job `heads --ablate` lives beside), ablating no
 * head gives the unablated numbers bit for bit, and the unablated next-token top-k is the
 * lens's own output row at the last position.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allHeads } from '../../../../src/engine/models/heads';
import { compareHeadsOff } from '../../../../src/lab/inference/ablate';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import type { AblationOutputData, LensInputData, LensOutputData } from '../../../../src/protocol/analysis';
import type { WorkerDoor } from '../inference/frontDoors';
import { cliJson, startModelWorker } from '../inference/frontDoors';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

let lm: OpenRun;
let mt: OpenRun;
let worker: WorkerDoor;

beforeAll(async () => {
  lm = await trainTiny(tinySpec(await tinyDocuments()));
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
  worker = await startModelWorker();
}, 120_000);
afterAll(() => worker?.close());

async function lensOf(r: OpenRun, input: LensInputData, topK: number, fit = false): Promise<LensOutputData> {
  const reply = (await worker.request({ type: 'model/lens', runDir: r.runDir, input, topK, fit })).at(-1);
  if (reply?.type !== 'model/didLens') throw new Error(JSON.stringify(reply));
  return reply.output;
}

async function ablateOf(
  r: OpenRun,
  input: LensInputData,
  off: AblationOutputData['off'],
  topK: number,
): Promise<AblationOutputData> {
  const reply = (await worker.request({ type: 'model/ablate', runDir: r.runDir, input, off, topK, fit: true })).at(-1);
  if (reply?.type !== 'model/didAblate') throw new Error(JSON.stringify(reply));
  return reply.output;
}

describe('model worker: logit lens and ablation', () => {
  it('decoder-only: the lens equals `attention-lab lens --json`, number for number', async () => {
    const fromCli = cliJson<LensOutputData>([
      'lens',
      '--run',
      lm.runDir,
      '--prompt',
      'the cat',
      '--top-k',
      '4',
      '--backend',
      'reference',
    ]);
    const fromWorker = await lensOf(lm, { kind: 'decoder-only', prompt: 'the cat' }, 4);
    expect(fromWorker).toEqual(fromCli);
    expect(fromWorker.layers).toHaveLength(lm.model.config.nDecoderLayers + 1);
  });

  it('encoder-decoder: the lens equals `lens --src --tgt --json`', async () => {
    const fromCli = cliJson<LensOutputData>([
      'lens',
      '--run',
      mt.runDir,
      '--src',
      'abc',
      '--tgt',
      'cb',
      '--backend',
      'reference',
    ]);
    expect(await lensOf(mt, { kind: 'encoder-decoder', src: 'abc', tgt: 'cb' }, 5)).toEqual(fromCli);
  });

  it('refuses a prompt longer than the context unless asked to fit it, then says what it shows', async () => {
    const long = 'the cat sat on the mat. '.repeat(3);
    const refused = (
      await worker.request({
        type: 'model/lens',
        runDir: lm.runDir,
        input: { kind: 'decoder-only', prompt: long },
        topK: 3,
        fit: false,
      })
    ).at(-1);
    expect(refused).toMatchObject({
      type: 'model/didFail',
      error: { code: 'input/invalid', message: expect.stringMatching(/exceeds the context/) },
    });
    const fitted = await lensOf(lm, { kind: 'decoder-only', prompt: long }, 3, true);
    const L = lm.model.config.maxLen;
    expect(fitted.tokens).toEqual([
      '<bos>',
      ...Array.from(long.slice(0, L - 1), (c) => lm.tok.tokenText(lm.tok.encode(c)[0] as number)),
    ]);
    expect(fitted.truncation).toBe(
      `Showing the first ${L - 1} of ${long.length} text tokens — the model's context is ${L}.`,
    );
  });

  it('ablation: the same numbers as the lab job; none off = unablated bit for bit = the lens output row', async () => {
    const input = { kind: 'encoder-decoder', src: 'abcd', tgt: 'dc' } as const;
    const off = allHeads(mt.model.config).filter((h) => h.stack === 'decoder.cross');
    const ablated = await ablateOf(mt, input, off, 5);
    expect(ablated).toEqual(compareHeadsOff(mt, { src: 'abcd', tgt: 'dc' }, off, { topK: 5, fit: true }));
    expect(ablated.ablated.loss).not.toBe(ablated.base.loss);
    const none = await ablateOf(mt, input, [], 5);
    expect(none.ablated).toEqual(none.base);
    expect(none.base).toEqual(ablated.base);
    for (const c of none.compare) expect(c.ablated).toBe(c.base);
    const lens = await lensOf(mt, input, 5);
    expect(lens.layers.at(-1)?.positions.at(-1)?.top).toEqual(none.base.next);
    const lmNone = await ablateOf(lm, { kind: 'decoder-only', prompt: 'the ca' }, [], 3);
    expect(lmNone.base.next).toEqual(
      (await lensOf(lm, { kind: 'decoder-only', prompt: 'the ca' }, 3)).layers.at(-1)?.positions.at(-1)?.top,
    );
  });

  it('answers a head the model lacks with a one-line input error', async () => {
    const reply = (
      await worker.request({
        type: 'model/ablate',
        runDir: lm.runDir,
        input: { kind: 'decoder-only', prompt: 'the' },
        off: [{ stack: 'decoder.cross', layer: 0, head: 0 }],
        topK: 3,
        fit: true,
      })
    ).at(-1);
    expect(reply).toMatchObject({
      type: 'model/didFail',
      error: {
        code: 'input/invalid',
        message: expect.stringMatching(/^No attention head decoder.cross layer 0 head 0; this model has decoder.self/),
      },
    });
  });
});
