/**
 * The model worker's patching (`model/patch`) on tiny real models: the same numbers as `attention-lab
 * patch --json` (one implementation, lab/inference/patch.ts; each run's top tokens included), progress
 * streamed in patched runs up to the total, a cancel flag set before the work or mid-sweep (in process)
 * answered as cancelled with the work stopped, one-line refusals for prompts of different lengths and a
 * cross-attention receiver of a decoder-only run, and an encoder-decoder's sweeps (path patching through
 * a cross-attention's keys too) answered as the CLI's `patch --target`.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import type { PatchOutputData, PatchRequestData } from '../../../../src/protocol/patching';
import type { FromModelWorker } from '../../../../src/protocol/modelWorker';
import type { WorkerChannel } from '../../../../src/lab/platform/platform';
import { NODE_PLATFORM } from '../../../../src/lab/platform/platform.node';
import { serveModelRequests } from '../../../../src/lab/workers/modelService';
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

const REQUEST: PatchRequestData = {
  clean: 'the cat',
  corrupted: 'the mat',
  answer: ' ',
  wrong: 's',
  metric: 'logit-diff',
  what: ['resid', 'heads', 'path'],
  receivers: [{ layer: 1, head: 0 }],
  input: 'v',
  top: 3,
};

async function patchOf(r: OpenRun, request: PatchRequestData, cancel?: Int32Array): Promise<FromModelWorker[]> {
  return worker.request({ type: 'model/patch', runDir: r.runDir, request, ...(cancel ? { cancel } : {}) });
}

describe('model worker: patching', () => {
  it('answers `attention-lab patch --json` number for number, with progress up to the total', async () => {
    const fromCli = cliJson<PatchOutputData>([
      'patch',
      lm.runDir,
      '--clean',
      REQUEST.clean,
      '--corrupted',
      REQUEST.corrupted,
      '--answer',
      REQUEST.answer,
      '--wrong',
      's',
      '--what',
      'resid,heads,path',
      '--receivers',
      'L2H1',
      '--input',
      'v',
      '--top',
      '3',
      '--backend',
      'reference',
    ]);
    const replies = await patchOf(lm, REQUEST);
    const last = replies.at(-1);
    if (last?.type !== 'model/didPatch') throw new Error(JSON.stringify(last));
    expect(JSON.parse(JSON.stringify(last.output))).toEqual(fromCli); // JSON writes −0 as 0
    expect(last.output.top?.clean).toHaveLength(3); // each run's top tokens, as the CLI's --top
    expect(last.output.maps.every((m) => m.top?.length === m.values.length)).toBe(true);
    const L = lm.model.config.nDecoderLayers;
    const H = lm.model.config.nHeads;
    const T = fromCli.tokens.clean.length;
    const progress = replies.filter((m) => m.type === 'model/didProgress');
    expect(progress.length).toBeGreaterThan(0);
    const total = L * T + L * H + 2 * H; // resid, heads, path's two passes over the layer-1 senders
    expect(progress.at(-1)).toMatchObject({ done: total, total });
  });

  it('stops when its cancel flag is set, saying so', async () => {
    const cancel = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(cancel, 0, 1);
    const last = (await patchOf(lm, REQUEST, cancel)).at(-1);
    expect(last).toMatchObject({ type: 'model/didFail', error: { code: 'cancelled' } });
  });

  it("stops mid-sweep when its flag is set between forwards (the Patching tab's Cancel), then serves the next", async () => {
    // In process, so the flag is set while the sweep runs: the service posts progress synchronously.
    const posted: FromModelWorker[] = [];
    const cancel = new Int32Array(new SharedArrayBuffer(4));
    let listener: (msg: unknown) => void = () => undefined;
    let answered: (() => void) | null = null;
    const channel: WorkerChannel<FromModelWorker> = {
      post: (msg) => {
        posted.push(msg);
        if (msg.type === 'model/didProgress') Atomics.store(cancel, 0, 1);
        if (msg.type === 'model/didFail' || msg.type === 'model/didPatch') answered?.();
      },
      onMessage: (l) => {
        listener = l;
      },
    };
    serveModelRequests(NODE_PLATFORM, channel);
    const ask = (id: number, flag?: Int32Array): Promise<void> =>
      new Promise((resolve) => {
        answered = resolve;
        const request = { ...REQUEST, what: ['resid', 'heads-pos'], receivers: undefined, input: undefined };
        listener({ type: 'model/patch', id, runDir: lm.runDir, request, ...(flag ? { cancel: flag } : {}) });
      });
    await ask(1, cancel);
    const mine = posted.filter((m) => m.type !== 'worker/ready' && m.id === 1);
    const L = lm.model.config.nDecoderLayers;
    const T = 8; // BOS + "the cat"
    const total = L * T + L * lm.model.config.nHeads * T;
    // One forward (the resid sweep's L·T runs) reported, then the flag stopped the heads × position sweep.
    expect(mine.map((m) => m.type)).toEqual(['model/didProgress', 'model/didFail']);
    expect(mine[0]).toMatchObject({ done: L * T, total });
    expect(mine[1]).toMatchObject({ error: { code: 'cancelled' } });
    await ask(2);
    expect(posted.at(-1)).toMatchObject({ type: 'model/didPatch', id: 2 });
  });

  it('refuses prompts of different lengths and a cross-attention receiver of a decoder-only run in one line', async () => {
    const diff = (await patchOf(lm, { ...REQUEST, corrupted: 'the mats' })).at(-1);
    expect(diff).toMatchObject({ type: 'model/didFail', error: { code: 'input/invalid' } });
    if (diff?.type !== 'model/didFail') throw new Error('expected a failure');
    expect(diff.error.message).toMatch(
      /clean prompt is 7 tokens and the corrupted 8; they differ at 5: "c" vs "m", 8: "" vs "s"/,
    );
    const receivers = [{ layer: 1, head: 0, attention: 'cross' as const }];
    const cross = (await patchOf(lm, { ...REQUEST, receivers })).at(-1);
    if (cross?.type !== 'model/didFail') throw new Error(JSON.stringify(cross));
    expect(cross.error.message).toBe(
      'Encoder and cross-attention receivers are for an encoder-decoder run; this run is decoder-only.',
    );
  });

  it("patches an encoder-decoder's sources under a target prefix as `patch --target --json` does", async () => {
    const request: PatchRequestData = {
      clean: 'abcd',
      corrupted: 'abxd',
      target: 'd',
      answer: 'c',
      wrong: 'x',
      metric: 'logit-diff',
      what: ['resid', 'attn', 'heads-pos', 'path'],
      receivers: [{ layer: 1, head: 0, attention: 'cross' }],
      input: 'k',
    };
    const replies = await patchOf(mt, request);
    const last = replies.at(-1);
    if (last?.type !== 'model/didPatch') throw new Error(JSON.stringify(last));
    const fromCli = cliJson<PatchOutputData>([
      'patch',
      mt.runDir,
      ...['--clean', 'abcd', '--corrupted', 'abxd', '--target', 'd', '--answer', 'c', '--wrong', 'x'],
      ...['--what', 'resid,attn,heads-pos,path', '--receivers', 'cross:L2H1', '--input', 'k', '--backend', 'reference'],
    ]);
    expect(JSON.parse(JSON.stringify(last.output))).toEqual(fromCli);
    const out = last.output;
    const H = mt.model.config.nHeads;
    expect(out.tokens.clean).toHaveLength(5); // the source + EOS
    expect(out.tokens.target).toHaveLength(2); // BOS + "d"
    expect(out.maps.map((m) => [m.what, m.stack, m.rows[0], m.cols.length])).toEqual([
      ['resid', 'encoder', 'enc L1', 5],
      ['resid', 'decoder', 'dec L1', 2],
      ['attn', 'encoder', 'enc L1', 5],
      ['attn', 'decoder', 'dec L1 self', 2],
      ['heads-pos', 'encoder', 'enc L1 H1', 5],
      ['heads-pos', 'decoder', 'dec L1 self H1', 2],
      ['path', undefined, 'enc L1', H],
    ]);
    const { nEncoderLayers: Le, nDecoderLayers: L } = mt.model.config;
    const senders = (Le + 3) * H; // the encoder's layers, dec L1 self and cross, dec L2 self: before dec L2 cross
    expect(out.maps.at(-1)?.rows).toHaveLength(Le + 3);
    const total = Le * 5 + L * 2 + Le * 5 + 2 * L * 2 + H * (Le * 5 + 2 * L * 2) + 2 * senders;
    expect(replies.filter((m) => m.type === 'model/didProgress').at(-1)).toMatchObject({ done: total, total });
    // patching the encoder's stream before the changed letter changes nothing; at it, something
    const enc = out.maps[0];
    expect(enc?.normalised.slice(0, 2).map((x) => Math.abs(x) < 1e-6)).toEqual([true, true]);
    expect(Math.abs(enc?.normalised[2] as number)).toBeGreaterThan(1e-3);
  });
});
