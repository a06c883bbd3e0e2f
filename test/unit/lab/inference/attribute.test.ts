/**
 * The `attribute` job (lab/inference/attribute.ts) on tiny trained runs: DLA's components add
 * up to the logit difference at every position, the accumulated residual ends there, attribution
 * patching's per-head total is the sum of its positions, progress and cancel between passes,
 * the refusals in one line each, and the model worker's answer equals `attention-lab attribute
 * --json` number for number; and an encoder-decoder's DLA (cross-attention heads) and attribution
 * patching (decoder, cross-attention, encoder), with full patching beside it.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../../../src/lab/base/cancelled';
import { attribute } from '../../../../src/lab/inference/attribute';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import type { AttributionOutputData, AttributionParamsData } from '../../../../src/protocol/attribution';
import type { WorkerDoor } from './frontDoors';
import { cliJson, startModelWorker } from './frontDoors';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

let lm: OpenRun;
let post: OpenRun;
let capped: OpenRun;
let mt: OpenRun;
let mtPre: OpenRun;
let worker: WorkerDoor;

beforeAll(async () => {
  const docs = await tinyDocuments();
  lm = await trainTiny(tinySpec(docs, 4));
  const spec = tinySpec(docs, 2);
  post = await trainTiny({ ...spec, model: { ...spec.model, overrides: { ...spec.model.overrides, norm: 'post' } } });
  const cap = { ...spec.model.overrides, logitSoftCap: 2, normType: 'rmsnorm' as const };
  capped = await trainTiny({ ...spec, model: { ...spec.model, overrides: cap } });
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
  const mtSpec = tinySpec({ kind: 'task', task: 'reverse' }, 2, 24);
  mtPre = await trainTiny({
    ...mtSpec,
    model: { ...mtSpec.model, overrides: { ...mtSpec.model.overrides, norm: 'pre' } },
  });
  worker = await startModelWorker();
}, 180_000);
afterAll(() => worker?.close());

const params = (
  what: AttributionParamsData['what'],
  more: Partial<AttributionParamsData> = {},
): AttributionParamsData => ({
  clean: 'the cat sat',
  corrupted: 'the dog sat',
  metric: { kind: 'logit-diff', answer: ' ', wrong: 'e' },
  what,
  ...more,
});

function only<W extends AttributionOutputData['what']>(
  out: AttributionOutputData,
  what: W,
): Extract<AttributionOutputData, { what: W }> {
  if (out.what !== what) throw new Error(`expected ${what}, got ${out.what}`);
  return out as Extract<AttributionOutputData, { what: W }>;
}

describe('attribute: direct logit attribution and the accumulated residual', () => {
  it('the components plus the excluded biases are the logit difference at every position', () => {
    const d = only(attribute(lm, params('dla')), 'dla');
    const { nDecoderLayers: L, nHeads: H, attnOutBias } = lm.model.config;
    expect(d.components).toHaveLength(1 + L * (H + (attnOutBias ? 1 : 0) + 1));
    expect(d.tokens).toHaveLength(12); // BOS + 11 characters
    expect(d.note).toMatch(/clean run's scale/);
    let moved = 0;
    d.logitDiff.forEach((want, p) => {
      const sum = d.components.reduce((s, c) => s + (c.values[p] as number), d.excluded[p] as number);
      expect(Math.abs(sum - want), `position ${p}`).toBeLessThan(1e-4);
      moved = Math.max(moved, Math.abs(want));
    });
    expect(moved).toBeGreaterThan(1e-3); // a logit difference that is not 0 everywhere
  });

  it('the accumulated residual starts at the embeddings and ends at the logit difference', () => {
    const a = only(attribute(lm, params('resid-accum')), 'resid-accum');
    const d = only(attribute(lm, params('dla')), 'dla');
    expect(a.layers.map((l) => l.layer)).toEqual([0, 1, 2]);
    const embed = d.components.find((c) => c.kind === 'embed');
    a.layers[0]?.values.forEach((v, p) => expect(v).toBeCloseTo(embed?.values[p] as number, 9));
    a.layers[2]?.values.forEach((v, p) =>
      expect(v + (a.excluded[p] as number)).toBeCloseTo(a.logitDiff[p] as number, 4),
    );
  });

  it('with a logit soft-cap and RMSNorm: the identity holds before the cap, and the note says so', () => {
    const d = only(attribute(capped, params('dla')), 'dla');
    expect(d.note).toMatch(/before the logit soft-cap \(2\)/);
    expect(d.note).toMatch(/RMS/);
    d.logitDiff.forEach((want, p) => {
      const sum = d.components.reduce((s, c) => s + (c.values[p] as number), d.excluded[p] as number);
      expect(Math.abs(sum - want), `position ${p}`).toBeLessThan(1e-3);
    });
  });

  it('refuses a post-norm model in one line that says why', () => {
    expect(() => attribute(post, params('dla'))).toThrow(/pre-norm model.*--what attribution/);
    // Attribution patching needs no decomposition: a post-norm model has it.
    const a = only(attribute(post, params('attribution')), 'attribution');
    expect(a.resid.flat().every(Number.isFinite)).toBe(true);
  });
});

describe('attribute: an encoder-decoder (two sources, one target prefix)', () => {
  const mtParams = (what: AttributionParamsData['what'], more: Partial<AttributionParamsData> = {}) =>
    params(what, {
      clean: 'abcd',
      corrupted: 'abxd',
      target: 'd',
      metric: { kind: 'logit-diff', answer: 'c', wrong: 'x' },
      ...more,
    });

  it("DLA has each decoder layer's cross-attention heads, and the components add up", () => {
    expect(() => attribute(mt, mtParams('dla'))).toThrow(/needs a pre-norm model/);
    const d = only(attribute(mtPre, mtParams('dla')), 'dla');
    const { nDecoderLayers: L, nHeads: H, attnOutBias } = mtPre.model.config;
    const bias = attnOutBias ? 2 : 0;
    expect(d.components).toHaveLength(1 + L * (2 * H + bias + 1));
    expect(d.components.filter((c) => c.kind === 'cross-head')).toHaveLength(L * H);
    expect(d.tokens).toHaveLength(2); // the target: BOS + "d"
    expect(d.note).toMatch(/encoder reaches the logits only through the cross-attention heads/);
    d.logitDiff.forEach((want, p) => {
      const sum = d.components.reduce((s, c) => s + (c.values[p] as number), d.excluded[p] as number);
      expect(Math.abs(sum - want), `position ${p}`).toBeLessThan(1e-4);
    });
  });

  it('attribution patching estimates the decoder, the cross-attention and the encoder per source position', () => {
    const a = only(attribute(mt, mtParams('attribution')), 'attribution');
    const { nEncoderLayers: Le, nDecoderLayers: L, nHeads: H } = mt.model.config;
    expect(a.source?.clean).toHaveLength(5); // "abcd" + EOS
    expect(a.tokens).toHaveLength(2);
    expect(a.encoder?.resid).toHaveLength(Le);
    expect(a.encoder?.resid[0]).toHaveLength(5);
    expect(a.encoder?.headPos[0]).toHaveLength(H);
    expect(a.cross?.out).toHaveLength(L);
    expect(a.cross?.headPos[0]?.[0]).toHaveLength(2);
    // The sources differ at position 2 only: the encoder's embeddings differ there alone.
    expect(a.encoder?.resid[0]?.map((x, p) => (p === 2 ? x !== 0 : x === 0))).toEqual([true, true, true, true, true]);
    // The decoder's embeddings are the same target in both runs: nothing to patch there.
    expect(a.resid[0]).toEqual([0, 0]);
    a.cross?.head.forEach((hs, l) =>
      hs.forEach((v, h) => expect(v).toBeCloseTo(a.cross?.headPos[l]?.[h]?.reduce((s, x) => s + x, 0) as number, 9)),
    );
  });

  it('refuses a target prefix on a decoder-only run', () => {
    expect(() => attribute(lm, params('dla', { target: 'x' }))).toThrow(/target prefix is for an encoder-decoder run/);
  });

  it('the worker with full patching answers what `attribute --json --target` prints', async () => {
    const p = mtParams('attribution', { withPatching: true });
    const last = (await worker.request({ type: 'model/attribute', runDir: mt.runDir, params: p })).at(-1);
    if (last?.type !== 'model/didAttribute' || last.output.what !== 'attribution')
      throw new Error(JSON.stringify(last));
    expect(last.output.patching?.maps.map((m) => `${m.what}.${m.stack ?? ''}`)).toEqual([
      'resid.encoder',
      'resid.decoder',
      'attn.encoder',
      'attn.decoder',
      'mlp.encoder',
      'mlp.decoder',
      'heads.',
      'heads-pos.encoder',
      'heads-pos.decoder',
    ]);
    const fromCli = cliJson<AttributionOutputData>([
      'attribute',
      mt.runDir,
      ...['--clean', 'abcd', '--corrupted', 'abxd', '--target', 'd', '--answer', 'c', '--wrong', 'x'],
      ...['--what', 'attribution', '--with-patching', '--backend', 'reference'],
    ]);
    expect(JSON.parse(JSON.stringify(last.output))).toEqual(fromCli);
  });
});

describe('attribute: attribution patching', () => {
  it('per head is the sum over positions; progress counts the three passes', () => {
    const seen: [number, number][] = [];
    const a = only(attribute(lm, params('attribution'), { onProgress: (d, t) => seen.push([d, t]) }), 'attribution');
    expect(seen).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    const { nDecoderLayers: L, nHeads: H } = lm.model.config;
    expect(a.resid).toHaveLength(L);
    expect(a.head).toHaveLength(L);
    expect(a.headPos[0]).toHaveLength(H);
    expect(a.clean).not.toBe(a.corrupted);
    a.head.forEach((hs, l) =>
      hs.forEach((v, h) => expect(v).toBeCloseTo(a.headPos[l]?.[h]?.reduce((s, x) => s + x, 0) as number, 9)),
    );
    // Positions before the first difference ("the " of both) carry nothing to patch.
    for (const grid of [a.resid, a.attnOut, a.mlpOut])
      for (const row of grid) expect(row.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(a.resid.flat().some((x) => x !== 0)).toBe(true);
  });

  it('logprob needs no wrong token; a cancel stops it between passes', () => {
    const metric = { kind: 'logprob', answer: ' ' } as const;
    const a = only(attribute(lm, params('attribution', { metric })), 'attribution');
    expect(a.clean).toBeLessThanOrEqual(0);
    expect(() => attribute(lm, params('attribution'), { isCancelled: () => true })).toThrow(CancelledError);
  });

  it.each([
    [params('attribution', { corrupted: 'the dog sat!' }), /same token length/],
    [params('attribution', { metric: { kind: 'logit-diff', answer: 'ab', wrong: 'e' } }), /"ab" is 2 tokens/],
    [params('dla', { metric: { kind: 'logit-diff', answer: 'a' } }), /needs a wrong token/],
    [params('attribution', { corrupted: 'the cat sat' }), /same metric/],
  ])('refuses %j', (p, message) => {
    expect(() => attribute(lm, p)).toThrow(message);
  });
});

describe('attribute: the model worker and the CLI', () => {
  it('the worker streams progress and answers what `attribute --json` prints', async () => {
    const p = params('attribution');
    const replies = await worker.request({ type: 'model/attribute', runDir: lm.runDir, params: p });
    const last = replies.at(-1);
    if (last?.type !== 'model/didAttribute') throw new Error(JSON.stringify(last));
    expect(replies.filter((r) => r.type === 'model/didProgress').length).toBeGreaterThanOrEqual(3);
    const fromCli = cliJson<AttributionOutputData>([
      'attribute',
      lm.runDir,
      '--clean',
      p.clean,
      '--corrupted',
      p.corrupted,
      '--answer',
      ' ',
      '--wrong',
      'e',
      '--what',
      'attribution',
      '--backend',
      'reference',
    ]);
    expect(last.output).toEqual(fromCli);
  });

  it('with full patching beside it, the worker plans the model as `patch` does and answers as the CLI', async () => {
    const p = params('attribution', { withPatching: true });
    const last = (await worker.request({ type: 'model/attribute', runDir: lm.runDir, params: p })).at(-1);
    if (last?.type !== 'model/didAttribute' || last.output.what !== 'attribution')
      throw new Error(JSON.stringify(last));
    expect(last.output.patching?.maps).toHaveLength(5);
    const args = ['--clean', p.clean, '--corrupted', p.corrupted, '--answer', ' ', '--wrong', 'e'];
    const fromCli = cliJson<AttributionOutputData>([
      'attribute',
      lm.runDir,
      ...args,
      '--what',
      'attribution',
      '--with-patching',
      '--backend',
      'reference',
    ]);
    // patching's maps may hold −0 where JSON (the CLI) has 0
    expect(JSON.parse(JSON.stringify(last.output))).toEqual(fromCli);
  });
});
