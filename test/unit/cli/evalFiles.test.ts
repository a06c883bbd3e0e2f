/**
 * `attention-lab eval --data / --pairs` on test files, through the built CLI: the JSON
 * object, the table, BLEU against a hand computation, and every bad input exiting 2 with
 * exactly one line on stderr.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../src/lab/files/fs.node';
import { createReferenceBackend } from '../../../src/engine/backends/reference';
import { saveCheckpoint } from '../../../src/lab/runs/checkpoint';
import { openRun } from '../../../src/lab/inference/openRun';
import { corpusBleu } from '../../../src/lab/evaluation/bleu';
import { corpusChrf } from '../../../src/lab/evaluation/chrf';
import { readEvaluations } from '../../../src/lab/runs/evaluations';
import type { BleuTokenize } from '../../../src/protocol/evaluation';
import { FAST, FAST_DEC, cli, tempDir } from './cliHarness';

const tmp = tempDir();
const pairsRun = path.join(tmp.dir, 'pairs-run');
const bangRun = path.join(tmp.dir, 'bang-run');
const docsRun = path.join(tmp.dir, 'docs-run');
const TEXT = 'the cat sat on the mat. the dog sat on the log. ';

function put(name: string, body: string | Buffer): void {
  const p = path.join(tmp.dir, name);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, body);
}

beforeAll(async () => {
  put(
    'train.tsv',
    Array.from({ length: 30 }, (_, i) => `${i % 2 ? 'a b' : 'b a'} !\t! ${i % 3 ? 'a' : 'b'}`).join('\n'),
  );
  put('notes/a.md', TEXT.repeat(10));
  put('notes/b.md', TEXT.repeat(8));
  for (const [args, out] of [
    [['--pairs', 'train.tsv', ...FAST, '--seq', '12'], pairsRun],
    [['--data', 'notes', ...FAST_DEC], docsRun],
  ] as const) {
    const r = cli(['train', ...args, '--steps', '2', '--out', out, '--json'], tmp.dir);
    if (r.code !== 0) throw new Error(`setup failed: ${r.stderr}`);
  }
  // A copy whose weights are all zero but the output bias of "!": every layer then outputs
  // zero (LayerNorm gains are 0), the logits are that bias, and greedy decoding writes "!"
  // until the context (12) is full: 11 of them.
  fs.cpSync(pairsRun, bangRun, { recursive: true });
  const r = await openRun(NODE_FS, bangRun, createReferenceBackend());
  for (const p of r.model.paramList) p.data.fill(0);
  (r.model.param('fc.bias').data as Float32Array)[r.tok.encode('!')[0] as number] = 1;
  await saveCheckpoint(NODE_FS, bangRun, r.model, null, r.step);
  put('test/bang.tsv', ['a b\t!!!!!!!!!!!', 'b a\ta ! ! b', 'a a\t! ! ! ! ! !', 'b b\t!!!!!!!!!!!!'].join('\n'));
  put('test/bang.src', 'a b\nb a\na a\nb b\n');
  put('test/bang.tgt', '!!!!!!!!!!!\na ! ! b\n! ! ! ! ! !\n!!!!!!!!!!!!\n');
  put('test/docs/a.txt', 'the dog sat on the mat. ');
  put('test/docs/b.txt', 'the cat sat on the log. ');
  put('test/docs/c.bin', Buffer.from([0, 1, 2, 0]));
});
afterAll(tmp.cleanup);

function json(args: string[]): Record<string, unknown> {
  const r = cli(args, tmp.dir);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('eval on test files', () => {
  it('--pairs FILE.tsv and --pairs SRC TGT give hand-computed loss, exact match and BLEU', () => {
    const tsv = json(['eval', '--run', bangRun, '--pairs', 'test/bang.tsv', '--json']);
    expect(Object.keys(tsv).sort()).toEqual([
      'bleu',
      'bleu_signature',
      'bleu_tokenize_reason',
      'bpb',
      'bytes',
      'characters',
      'chrf',
      'chrf_signature',
      'context',
      'data_hash',
      'decoded',
      'decoding',
      'exact_match',
      'loss',
      'pairs',
      'pairs_too_long',
      'ppl',
      'source',
      'sources_cut',
      'step',
      'tokens',
      'unseen_chars',
      'unseen_examples',
    ]);
    expect(tsv).toMatchObject({
      bleu_signature: 'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0',
      decoding: { strategy: 'greedy' },
    });
    // Hypothesis 11 × "!" for every source. 13a n-gram matches / hypothesis n-grams:
    //   "!!!!!!!!!!!" (11 × "!")  11/11 10/10 9/9 8/8   (also the one exact match)
    //   "a ! ! b"                   2/11  1/10 0/9 0/8
    //   "! ! ! ! ! !"               6/11  5/10 4/9 3/8
    //   "!!!!!!!!!!!!" (12 × "!") 11/11 10/10 9/9 8/8   (too long for the loss, decoded all the same)
    //   Corpus: 30/44, 26/40, 22/36, 19/32; lengths 44 ≥ 33, so no brevity penalty:
    //   BLEU = 100 · (30/44 · 26/40 · 22/36 · 19/32)^(1/4) ≈ 63.33.
    expect(tsv.bleu as number).toBeCloseTo(63.33, 2);
    expect(tsv.exact_match as number).toBeCloseTo(1 / 4, 10);
    expect(tsv).toMatchObject({ pairs: 3, pairs_too_long: 1, decoded: 4, tokens: 32, context: 12, unseen_chars: 0 });
    // Each target costs ln(V − 1 + e), minus 1 for "!": 19 of the 32 targets.
    const V = JSON.parse(fs.readFileSync(path.join(bangRun, 'tokenizer.json'), 'utf8')).vocabSize as number;
    expect(tsv.loss as number).toBeCloseTo(Math.log(V - 1 + Math.E) - 19 / 32, 5);
    const lines = json(['eval', '--run', bangRun, '--pairs', 'test/bang.src', 'test/bang.tgt', '--json']);
    expect({ ...lines, source: '', data_hash: '' }).toEqual({ ...tsv, source: '', data_hash: '' });
    expect(lines.source).toMatch(/bang\.src → .*bang\.tgt \(4 pairs\)$/);
  });

  it('--max-pairs caps the decodes and says so; the table names every number', () => {
    const r = cli(['eval', '--run', bangRun, '--pairs', 'test/bang.tsv', '--max-pairs', '2'], tmp.dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^test data +.*bang\.tsv \(4 pairs\)$/m);
    expect(r.stdout).toMatch(/^exact match +50% of 2 decoded$/m);
    expect(r.stdout).toMatch(/^bits\/byte +\d+\.\d{4} \(29 bytes of text\)$/m);
    expect(r.stdout).toMatch(/^pairs +3 \(1 longer than the context, left out\)$/m);
    expect(r.stderr).toMatch(/exact match, BLEU and chrF cover the first 2 of the 4 pairs \(--max-pairs 2\)/);
    expect(r.stdout).toMatch(/^decoding +greedy \(the default; --strategy beam for beam search\)$/m);
    expect(r.stdout).toMatch(
      /^BLEU +\d+\.\d{2} +nrefs:1\|case:mixed\|eff:no\|tok:13a\|smooth:exp\|version:2\.6\.0 \(sacreBLEU’s default\)$/m,
    );
    expect(r.stdout).toMatch(
      /^chrF +\d+\.\d{2} +nrefs:1\|case:mixed\|eff:yes\|nc:6\|nw:0\|space:no\|version:2\.6\.0$/m,
    );
    expect(r.stderr).toMatch(/^Recorded in .*bang-run.evaluations\.jsonl\.$/m);
    expect(r.stderr).toMatch(/left out 1 pair longer than the context of 12 tokens/);
  });

  it('--data GLOB…: loss over every token of the documents, skipped files listed', () => {
    const d = json(['eval', '--run', docsRun, '--data', 'test/docs', '--json']);
    expect(Object.keys(d).sort()).toEqual([
      'bpb',
      'bytes',
      'characters',
      'context',
      'data_hash',
      'documents',
      'loss',
      'ppl',
      'skipped',
      'source',
      'step',
      'tokens',
      'unseen_chars',
      'unseen_examples',
    ]);
    expect(d.bytes).toBe(48); // the two 24-byte documents; BOS and EOS stand for no text
    expect(d.bpb as number).toBeCloseTo(((d.loss as number) * (d.tokens as number)) / (48 * Math.LN2), 12);
    expect(d).toMatchObject({
      documents: 2,
      tokens: 2 * 26 - 1,
      context: 16,
      unseen_chars: 0,
      skipped: [{ path: 'test/docs/c.bin', reason: 'binary' }],
    });
    expect(d.ppl as number).toBeCloseTo(Math.exp(d.loss as number), 6);
    const glob = json(['eval', '--run', docsRun, '--data', 'test/docs/*.txt', '--json']);
    expect(glob.loss).toBe(d.loss);
    const table = cli(['eval', '--run', docsRun, '--data', 'test/docs/a.txt', 'test/docs/b.txt'], tmp.dir);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^perplexity +\d+\.\d{2}$/m);
    expect(table.stdout).toMatch(/^documents +2$/m);
  });

  it("--out FILE writes the decodes in test order; BLEU on that file with the signature's tokenizer is the BLEU printed; the run records it", async () => {
    const before = (await readEvaluations(NODE_FS, pairsRun)).evaluations.length;
    const hyps = path.join(tmp.dir, 'out', 'hyps.txt');
    put('test/mixed.tsv', ['a b\t! a', 'b a\tb ! a', 'a a\ta', 'b b\t! b !'].join('\n'));
    const r = json([
      'eval',
      '--run',
      pairsRun,
      '--pairs',
      'test/mixed.tsv',
      '--out',
      'out/hyps.txt',
      '--strategy',
      'beam',
      '--beam',
      '3',
      '--length-penalty',
      '1',
      '--bleu-tokenize',
      'intl',
      '--json',
    ]);
    const written = fs.readFileSync(hyps, 'utf8').split('\n').slice(0, -1);
    expect(written).toHaveLength(4);
    expect(r).toMatchObject({
      decoding: { strategy: 'beam', beam: 3, length_penalty: 1 },
      hypotheses_file: hyps,
      bleu_signature: 'nrefs:1|case:mixed|eff:no|tok:intl|smooth:exp|version:2.6.0',
    });
    const tok = /tok:([^|]+)/.exec(r.bleu_signature as string)?.[1] as BleuTokenize;
    expect(r.bleu).toBe(corpusBleu(written, ['! a', 'b ! a', 'a', '! b !'], tok).score);
    expect(r.chrf).toBe(corpusChrf(written, ['! a', 'b ! a', 'a', '! b !']));
    const { evaluations } = await readEvaluations(NODE_FS, pairsRun);
    expect(evaluations).toHaveLength(before + 1);
    expect(evaluations.at(-1)).toMatchObject({
      data: 'pairs',
      hypothesesFile: hyps,
      bpb: r.bpb,
      dataHash: r.data_hash,
      items: 4,
      translation: { bleu: r.bleu, chrf: r.chrf, decoding: { strategy: 'beam', beam: 3, lengthPenalty: 1 } },
    });
  });

  it('warns about a few unseen characters but evaluates', () => {
    put('test/accent/a.txt', `${TEXT.repeat(2)}é`);
    const r = cli(['eval', '--run', docsRun, '--data', 'test/accent', '--json'], tmp.dir);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ unseen_chars: 1, unseen_examples: ['é'] });
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^warning: 1 of 97 characters \(1%\) never occur in the run's training data \(e\.g\. "é"\)/,
      ),
    ]);
  });
});

describe('eval on test files: bad input', () => {
  function expectOneLine(args: string[], pattern: RegExp): void {
    const r = cli(args, tmp.dir);
    expect(r.code, r.stderr).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^attention-lab: /);
    expect(lines[0]).toMatch(pattern);
    expect(r.stdout).toBe('');
  }

  it.each<[string, () => string[], RegExp]>([
    [
      'unequal pair files',
      () => (put('u.src', 'a\nb\na\n'), put('u.tgt', 'a\nb\n'), ['--run', pairsRun, '--pairs', 'u.src', 'u.tgt']),
      /different line counts: .*u\.src has 3, .*u\.tgt has 2/,
    ],
    [
      'pairs for a decoder-only run',
      () => ['--run', docsRun, '--pairs', 'test/bang.tsv'],
      /decoder-only language model: evaluate it on text files with --data GLOB…, not --pairs/,
    ],
    [
      'documents for an encoder-decoder run',
      () => ['--run', pairsRun, '--data', 'test/docs'],
      /encoder-decoder: evaluate it on test pairs with --pairs SRC TGT or --pairs FILE\.tsv\|\.jsonl, not --data/,
    ],
    [
      'both kinds of test data',
      () => ['--run', docsRun, '--data', 'test/docs', '--pairs', 'x.tsv'],
      /Use one kind of test data/,
    ],
    [
      'no matching files',
      () => ['--run', docsRun, '--data', 'nowhere/**/*.md'],
      /No files match "nowhere\/\*\*\/\*\.md"/,
    ],
    [
      'files over the size limit',
      () => (put('big/a.txt', TEXT.repeat(25_000)), ['--run', docsRun, '--data', 'big', '--max-file-mb', '0.5']),
      /The only file .* was skipped \(1 too large; big\/a\.txt is [\d.]+ [KM]B, over the 512 KB limit per file: raise it with --max-file-mb/,
    ],
    [
      'unseen vocabulary',
      () => (put('greek/a.txt', 'η γάτα κάθεται'), ['--run', docsRun, '--data', 'greek']),
      /^attention-lab: 85\.7% of the test text's characters \(12 of 14, e\.g\. .*\) never occur in the run's training data.*retrain with these files in the data\.$/,
    ],
    [
      'all pairs too long',
      () => (put('long.tsv', `a\t${'a '.repeat(8)}\n${'b '.repeat(8)}\tb`), ['--run', pairsRun, '--pairs', 'long.tsv']),
      /All 2 test pairs are too long for the model's context of 12 tokens/,
    ],
    [
      'a pairs file that is neither .tsv nor .jsonl',
      () => ['--run', pairsRun, '--pairs', 'test/bang.src'],
      /must end in \.tsv .* or \.jsonl/,
    ],
    [
      'three pairs files',
      () => ['--run', pairsRun, '--pairs', 'a', 'b', 'c'],
      /--pairs takes SRC TGT or one FILE; got extra "c"/,
    ],
    [
      'a stray argument without test data',
      () => ['--run', pairsRun, 'test/bang.tsv'],
      /unexpected argument "test\/bang\.tsv"; pass test documents with --data/,
    ],
    [
      'beam flags without --strategy beam',
      () => ['--run', pairsRun, '--pairs', 'test/bang.tsv', '--beam', '3'],
      /--beam and --length-penalty are for beam search: add --strategy beam/,
    ],
    [
      'an unknown BLEU tokenizer',
      () => ['--run', pairsRun, '--pairs', 'test/bang.tsv', '--bleu-tokenize', 'ja-mecab'],
      /--bleu-tokenize must be one of 13a, zh, char, intl, got "ja-mecab"/,
    ],
    [
      '--out for documents',
      () => ['--run', docsRun, '--data', 'test/docs', '--out', 'x.txt'],
      /--out, --strategy and --bleu-tokenize are for test pairs/,
    ],
  ])('%s', (_name, args, pattern) => expectOneLine(['eval', ...args()], pattern));
});
