import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EOS } from '../../../../src/engine/tokenizers/special';
import { MAX_DECODE_TOKENS, decodeInput, decodeText, withoutEos } from '../../../../src/lab/inference/decode';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import type { DecodeOutput, DecodeParams } from '../../../../src/protocol/model';
import { cli } from '../../cli/cliHarness';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';
import type { WorkerDoor } from './frontDoors';
import { cliJson, startModelWorker } from './frontDoors';

let lm: OpenRun;
let mt: OpenRun;
beforeAll(async () => {
  lm = await trainTiny(tinySpec(await tinyDocuments()));
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
});

const params: DecodeParams = {
  input: 'abc',
  strategy: 'greedy',
  beam: 1,
  lengthPenalty: 0.6,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxTokens: 5,
  seed: 1,
};

describe('decodeText', () => {
  it('returns text, tokens, log-probabilities and per-layer attention; streams greedy tokens', () => {
    const streamed: string[] = [];
    const { output: out } = decodeText(mt, params, { attention: true, onToken: (t) => streamed.push(t) });
    expect(out.tokens).toEqual(streamed);
    expect(out.tokens.length).toBe(out.logprobs.length);
    expect(out.promptTokens).toEqual(['a', 'b', 'c', '<eos>']);
    expect(out.attention?.self.length).toBe(mt.model.config.nDecoderLayers);
    expect(out.attention?.cross[0]?.length).toBe((out.attention?.nHeads ?? 0) * (out.attention?.queries ?? 0) * 4);
    const { output: beam } = decodeText(mt, { ...params, strategy: 'beam', beam: 3 });
    expect(beam.beams.length).toBeGreaterThan(0);
    expect(beam.beams[0]?.text).toBe(beam.text);
    expect(beam.attention).toBeNull(); // only when asked
    const s1 = decodeText(mt, { ...params, strategy: 'sample', temperature: 2, seed: 9 }).output;
    const s2 = decodeText(mt, { ...params, strategy: 'sample', temperature: 2, seed: 9 }).output;
    expect(s1.ids).toEqual(s2.ids);
  });

  it('refuses more than MAX_DECODE_TOKENS before a step (greedy would slide on for a billion)', () => {
    expect(() => decodeText(lm, { ...params, maxTokens: 1e9 })).toThrow(
      /^A decode generates at most 4096 tokens; asked for 1000000000\. Ask for fewer/,
    );
    expect(MAX_DECODE_TOKENS).toBe(4096);
  });

  it('says why it stopped, and keeps a chosen EOS in the ids but not in the text', () => {
    const d = decodeText(lm, { ...params, input: 'the ', maxTokens: 3 });
    expect(['eos', 'maxTokens']).toContain(d.output.stopReason);
    if (d.output.stopReason === 'maxTokens') expect(d.output.ids).toHaveLength(3);
    const full = decodeText(lm, { ...params, input: 'the ', maxTokens: 1000 });
    expect(['eos', 'maxTokens']).toContain(full.output.stopReason); // greedy slides past the context
    expect(full.output.text).not.toContain('<eos>');
    const beam = decodeText(mt, { ...params, strategy: 'beam', beam: 2, maxTokens: 1000 });
    if (beam.output.stopReason === 'context') {
      expect(beam.output.contextNote).toBe(
        `Stopped at the model's context of 24 tokens after ${beam.output.ids.length} of 1000 token(s); beam search does not slide; use greedy or sampling to generate more.`,
      );
    }
    expect(withoutEos([5, 6, EOS], EOS)).toEqual([5, 6]);
    expect(withoutEos([5, 6], EOS)).toEqual([5, 6]);
    // The tokenizer's EOS, whatever its id: GPT-2's <|endoftext|> is 50256, and id 2 is then an ordinary token.
    expect(withoutEos([5, EOS, 50256], 50256)).toEqual([5, EOS]);
    expect(withoutEos([5, 6, EOS], 50256)).toEqual([5, 6, EOS]);
  });

  it('a 200-token sample from a 64-context model returns 200 tokens, and says the window slid', async () => {
    const long = await trainTiny(tinySpec(await tinyDocuments(), 1, 64));
    expect(long.model.config.maxLen).toBe(64);
    const p: DecodeParams = { ...params, input: 'the ', strategy: 'sample', temperature: 1, seed: 4, maxTokens: 200 };
    const streamed: string[] = [];
    const d = decodeText(long, p, { attention: true, onToken: (t) => streamed.push(t) });
    if (d.output.stopReason === 'maxTokens') {
      expect(d.output.ids).toHaveLength(200);
      expect(streamed).toHaveLength(200);
      expect(d.output.contextNote).toBe(
        "Generated 200 tokens past the model's context of 64 with a sliding window: each token was chosen from the last 32–64 tokens before it.",
      );
      expect(d.output.attention?.queries).toBe(200);
    } else {
      expect(d.output.stopReason).toBe('eos'); // the model may end a document; it never stops at the context
    }
    const within = decodeText(long, { ...p, maxTokens: 20 });
    expect(within.output.contextNote).toBeUndefined();
    const r = cli(
      [
        'decode',
        '--run',
        long.runDir,
        '--prompt',
        'the ',
        '--strategy',
        'sample',
        '--seed',
        '4',
        '--max-tokens',
        '200',
        '--backend',
        'reference',
      ],
      long.runDir,
    );
    expect(r.code).toBe(0);
    if (d.output.stopReason === 'maxTokens')
      expect(r.stderr).toContain("past the model's context of 64 with a sliding window");
  });

  it('fits a prompt or a source longer than the context, and says how (CLI too)', () => {
    const L = lm.model.config.maxLen; // 16
    expect(decodeInput(lm, 'x'.repeat(L - 1)).prompt).toHaveLength(L);
    const long = 'the cat sat on the mat. '.repeat(7); // 168 characters: 10× the context
    const cut = decodeInput(lm, long);
    expect(cut.prompt).toEqual(lm.tok.encode(long).slice(long.length - L));
    const d = decodeText(lm, { ...params, input: long, maxTokens: 5 });
    expect(d.output.ids.length).toBeGreaterThan(0);
    expect(d.output.promptTokens).toHaveLength(L);
    expect(d.output.contextNote).toMatch(
      new RegExp(
        `^The prompt of ${long.length} tokens is longer than the model's context of ${L}: continued from its last ${L}\\.`,
      ),
    );
    const beam = decodeText(lm, { ...params, input: long, strategy: 'beam', beam: 2, maxTokens: 4 });
    expect(beam.output.promptTokens).toHaveLength(L - 4); // room left for beam search, which stops at the context
    expect(beam.output.contextNote).toMatch(/continued from its last 12\./);
    const src = decodeText(mt, { ...params, input: 'x'.repeat(40), maxTokens: 3 });
    expect(src.output.promptTokens).toHaveLength(24);
    expect(src.output.contextNote).toMatch(
      /^The source of 40 tokens is longer than the model's context of 24: translated its first 23 \(and EOS\)\./,
    );
    const r = cli(
      ['decode', '--run', lm.runDir, '--prompt', long, '--max-tokens', '5', '--json', '--backend', 'reference'],
      lm.runDir,
    );
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { tokens: number[]; context_note: string };
    expect(j.tokens.length).toBeGreaterThan(0);
    expect(j.context_note).toMatch(/continued from its last 16/);
    expect(r.stderr).toMatch(/continued from its last 16/);
  });
});

describe('one decode at both front doors', () => {
  let worker: WorkerDoor;
  beforeAll(async () => {
    worker = await startModelWorker();
  });
  afterAll(() => worker?.close());

  type CliDecode = {
    text: string;
    tokens: number[];
    token_text: string[];
    logprobs: number[];
    score: number;
    stop_reason: string;
    beams?: { text: string; score: number }[];
  };

  const cases: [string, () => OpenRun, DecodeParams, string[]][] = [
    ['greedy', () => lm, { ...params, input: 'the ', maxTokens: 8 }, ['--prompt', 'the ', '--max-tokens', '8']],
    [
      'beam',
      () => mt,
      { ...params, strategy: 'beam', beam: 3, maxTokens: 10 },
      ['--src', 'abc', '--strategy', 'beam', '--beam', '3', '--max-tokens', '10'],
    ],
    [
      'sample',
      () => lm,
      { ...params, input: 'the', strategy: 'sample', temperature: 1.5, topK: 5, seed: 3, maxTokens: 10 },
      [
        '--prompt',
        'the',
        '--strategy',
        'sample',
        '--temperature',
        '1.5',
        '--top-k',
        '5',
        '--seed',
        '3',
        '--max-tokens',
        '10',
      ],
    ],
  ];

  it.each(cases)(
    '%s: `attention-lab decode` and the playground give the same tokens, numbers and text',
    async (_, run, p, flags) => {
      const r = run();
      const fromCli = cliJson<CliDecode>(['decode', '--run', r.runDir, '--backend', 'reference', ...flags]);
      const replies = await worker.request({ type: 'model/decode', runDir: r.runDir, params: p });
      const last = replies.at(-1);
      if (last?.type !== 'model/didDecode') throw new Error(JSON.stringify(last));
      const out: DecodeOutput = last.output;
      expect(fromCli.tokens).toEqual(out.ids);
      expect(fromCli.token_text).toEqual(out.tokens);
      expect(fromCli.logprobs).toEqual(out.logprobs);
      expect(fromCli.score).toEqual(out.score);
      expect(fromCli.text).toBe(out.text);
      expect(fromCli.beams ?? []).toEqual(out.beams);
    },
  );
});
