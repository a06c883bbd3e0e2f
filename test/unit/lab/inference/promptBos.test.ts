/**
 * Whether the jobs start a prompt with BOS follows the model: a Hugging Face tokenizer's own
 * post-processor (checked against Python's `tokenizers` goldens), BOS for our runs, none for the
 * modular-addition task; and a run read without BOS is scored, attended and patched on exactly
 * the text's tokens.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { openRun } from '../../../../src/lab/inference/openRun';
import { patchIds } from '../../../../src/lab/inference/patch';
import { promptIds, withoutPromptBos } from '../../../../src/lab/inference/promptIds';
import { scoreText } from '../../../../src/lab/inference/score';
import { decodeInput } from '../../../../src/lab/inference/decode';
import { hfTokenizerFromFiles } from '../../../../src/lab/runs/hfTokenizer';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { nodeTestFs } from '../files/fileSystems';
import { GOLDEN, SPEC, hfFiles } from '../runs/hfTokenizerFiles';
import { tinyDocuments, tinySpec, trainInto, trainTiny } from '../tinyRuns';

const IDS = JSON.parse(readFileSync(join(GOLDEN, 'ids.json'), 'utf8')) as {
  tokenizers: Record<string, { ids: number[]; withSpecial: number[] }[]>;
};

/** log p(ids[t+1] | ids[0..t]) from one forward pass, in float64. */
function naiveLogprobs(r: OpenRun, ids: Int32Array): number[] {
  const T = ids.length - 1;
  r.model.forward({ B: 1, T, input: ids.slice(0, T), targets: ids.slice(1) }, { train: false, labelSmoothing: 0 });
  const logits = r.model.logits();
  const V = r.model.config.vocabSize;
  return Array.from({ length: T }, (_, t) => {
    let z = 0;
    for (let v = 0; v < V; v++) z += Math.exp(logits[t * V + v] as number);
    return (logits[t * V + (ids[t + 1] as number)] as number) - Math.log(z);
  });
}

describe('BOS at the start of a prompt follows the model', () => {
  for (const { name } of SPEC.files) {
    it(`${name}: as Python's tokenizer(text) puts BOS first or not`, () => {
      const f = hfFiles(name);
      const tok = hfTokenizerFromFiles(f.tokenizer, f.config);
      const row = IDS.tokenizers[name]?.[0];
      if (!row) throw new Error(`no golden ids for ${name}`);
      const pythonAddsBos = row.withSpecial.length > row.ids.length && row.withSpecial[0] === tok.specialIds.bos;
      expect(tok.promptBos).toBe(pythonAddsBos);
      const ids = Array.from(promptIds(tok, 'Hi there'));
      expect(ids).toEqual(
        pythonAddsBos ? [tok.specialIds.bos, ...tok.encode('Hi there')] : [...tok.encode('Hi there')],
      );
    });
  }

  it('both kinds occur among the real files (Llama 2 adds BOS, Qwen does not)', () => {
    const adds = (name: string): boolean | undefined => {
      const f = hfFiles(name);
      return hfTokenizerFromFiles(f.tokenizer, f.config).promptBos;
    };
    expect(adds('llama2')).toBe(true);
    expect(adds('qwen')).toBe(false);
  });
});

describe('a run read without BOS', () => {
  let lm: OpenRun;
  let bare: OpenRun;
  beforeAll(async () => {
    lm = await trainTiny(tinySpec(await tinyDocuments()));
    bare = { ...lm, tok: withoutPromptBos(lm.tok) };
  }, 60_000);

  it('our own runs keep BOS', () => {
    expect(lm.tok.promptBos).toBeUndefined();
    expect(Array.from(promptIds(lm.tok, 'ab'))).toEqual([lm.tok.specialIds.bos, ...lm.tok.encode('ab')]);
  });

  it('scores every token after the first, exactly as one forward over the text', () => {
    const text = 'the cat sat';
    const body = bare.tok.encode(text);
    const out = scoreText(bare, null, text).output;
    expect(out.logprobs).toHaveLength(body.length - 1);
    expect(out.tokens).toHaveLength(body.length - 1);
    expect(out.starts[0]).toBe(1); // the second character: the first is read, not scored
    const naive = naiveLogprobs(bare, body);
    out.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(naive[i] as number, 4));
    expect(() => scoreText(bare, null, 't')).toThrow(/at least two tokens/);
  });

  it('decodes and patches the text without BOS, and refuses an empty prompt in one line', () => {
    expect(Array.from(decodeInput(bare, 'the', 32, false).prompt)).toEqual(Array.from(bare.tok.encode('the')));
    const p = patchIds(bare.tok, bare.model.config, {
      clean: 'the cat',
      corrupted: 'the dog',
      answer: ' ',
      wrong: 's',
      metric: 'logit-diff',
      what: ['resid'],
    });
    expect(Array.from(p.clean)).toEqual(Array.from(bare.tok.encode('the cat')));
    expect(() => promptIds(bare.tok, '')).toThrow(EngineError);
  });
});

describe('the modular-addition task', () => {
  it('opens without BOS, so its three-token prompt fits its context of 3', async () => {
    const t = nodeTestFs();
    const runDir = t.fs.join(await t.dir(), 'grok');
    const spec = trainSpecOf(
      { kind: 'task', task: 'modular-addition' },
      {
        overrides: { dModel: 16, nHeads: 2, dFF: 32 },
        steps: 1,
        batchSize: 64,
        evalEvery: 0,
        snapshotEvery: 0,
        checkpointEvery: 0,
        backend: 'reference',
      },
    );
    await trainInto(t, runDir, spec);
    const r = await openRun(t.fs, runDir, createReferenceBackend(), 1);
    expect(r.tok.promptBos).toBe(false);
    const prompt = '\u0103\u0105='; // 3 + 5 =, the numbers as the task's characters
    const ids = patchIds(r.tok, r.model.config, {
      clean: prompt,
      corrupted: '\u0104\u0105=',
      answer: '\u0108',
      wrong: '\u0109',
      metric: 'logit-diff',
      what: ['resid'],
    });
    expect(ids.clean).toHaveLength(3);
    expect(r.model.config.maxLen).toBe(3);
  }, 60_000);
});
