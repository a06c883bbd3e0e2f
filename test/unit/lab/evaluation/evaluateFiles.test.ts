/**
 * Evaluation on test files (src/lab/evaluation/evaluateFiles.ts) with tiny runs trained in-process:
 * the windows each token is scored in, the loss against `evaluate` and against per-window
 * log-probabilities, hand-computed loss, exact match and BLEU of a model whose weights are
 * set so its outputs are known, and every refusal.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { trainBpeTokenizer } from '../../../../src/engine/tokenizers/bpeTokenizer';
import { documentDataset, tokenStream } from '../../../../src/lab/data/dataset';
import { createHash } from 'node:crypto';
import { evaluate } from '../../../../src/lab/evaluation/evaluate';
import { corpusBleu } from '../../../../src/lab/evaluation/bleu';
import { corpusChrf } from '../../../../src/lab/evaluation/chrf';
import { readEvaluations } from '../../../../src/lab/runs/evaluations';
import { decodeTarget } from '../../../../src/lab/inference/decode';
import { failingIo } from '../fullDisk';
import { collectDocuments } from '../../../../src/lab/data/globFiles.node';
import type { EvaluateFilesOptions } from '../../../../src/lab/evaluation/evaluateFiles';
import {
  EvaluationCancelled,
  evaluateFiles as evaluateOn,
  scoringWindows,
} from '../../../../src/lab/evaluation/evaluateFiles';
import { NODE_FS, NodeFs } from '../../../../src/lab/files/fs.node';
import { MemoryFs } from '../../../../src/lab/files/memoryFs';
import { writeFile } from '../../../../src/lab/files/labFs';
import type { FileIo } from '../../../../src/lab/files/atomicFile.node';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { openRun } from '../../../../src/lab/inference/openRun';
import { windowLogprobs } from '../../../../src/lab/inference/score';
import { countUnseenChars, refuseUnseenChars } from '../../../../src/lab/inference/unseenChars';
import type { EvalFilesData } from '../../../../src/protocol/modelWorker';
import { tinySpec, trainTiny } from '../tinyRuns';

/** The CLI's evaluation: Node's files (through `io` when given: a disk that fills up), globs expanded. */
const evaluateFiles = (
  r: OpenRun,
  data: EvalFilesData,
  opts: EvaluateFilesOptions & { readonly io?: FileIo },
): ReturnType<typeof evaluateOn> =>
  evaluateOn(opts.io ? new NodeFs(opts.io) : NODE_FS, r, data, { collectGlobs: collectDocuments, ...opts });

let lm: OpenRun; // decoder-only, char tokenizer, context 16, batches of 2
let mt: OpenRun; // encoder-decoder on pairs of a, b, '!' and spaces, context 12
let dir: string;

/** Writes `files` (name → text or bytes) into the test folder; returns their absolute paths. */
function write(files: Record<string, string | Buffer>): string[] {
  return Object.entries(files).map(([name, body]) => {
    const p = path.join(dir, name);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, body);
    return p;
  });
}

function docs(paths: readonly string[]): EvalFilesData {
  return { kind: 'documents', paths, cwd: dir, glob: true };
}

/**
 * Sets every weight of `r` to zero and the output bias of `hot` to 1. Every LayerNorm gain is
 * then 0, so each layer's output is 0 and the logits are the output bias at every position:
 * greedy decoding emits `hot` until the context is full, and the loss is known in closed form.
 */
function constantModel(r: OpenRun, hot: number | null): OpenRun {
  for (const p of r.model.paramList) p.data.fill(0);
  if (hot !== null) (r.model.param('fc.bias').data as Float32Array)[hot] = 1;
  return r;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-evalfiles-'));
  // The tokenizer learns the training split's characters only, so both documents hold them all.
  const text = 'the cat sat on the mat. the dog sat on the log. a bird in the hand is worth two in the bush. ';
  const files = write({ 'train/a.txt': text.repeat(3), 'train/b.txt': text.repeat(2) });
  lm = await trainTiny(tinySpec({ kind: 'documents', files, root: path.join(dir, 'train') }));
  const [train] = write({
    'train.tsv': Array.from({ length: 20 }, (_, i) => `${i % 2 ? 'a b' : 'b a'} !\t! ${i % 3 ? 'a' : 'b'}`).join('\n'),
  });
  mt = await trainTiny(tinySpec({ kind: 'pairs', source: train as string, target: null }, 1, 12));
});

describe('scoringWindows', () => {
  it('cuts the stream into non-overlapping windows of the context, the last one shorter', () => {
    expect(scoringWindows(40, 16, 2)).toEqual([
      { starts: [0, 16], length: 16 },
      { starts: [32], length: 7 },
    ]);
    expect(scoringWindows(33, 16, 2)).toEqual([{ starts: [0, 16], length: 16 }]);
    expect(scoringWindows(50, 16, 2)).toEqual([
      { starts: [0, 16], length: 16 },
      { starts: [32], length: 16 },
      { starts: [48], length: 1 },
    ]);
    expect(scoringWindows(2, 16, 4)).toEqual([{ starts: [0], length: 1 }]);
  });

  it('scores every target (tokens 1 … n − 1) exactly once', () => {
    for (const [n, T, rows] of [
      [1000, 16, 3],
      [17, 16, 1],
      [64, 7, 5],
    ] as const) {
      const hits = new Array<number>(n).fill(0);
      for (const g of scoringWindows(n, T, rows))
        for (const s of g.starts) for (let t = s + 1; t <= s + g.length; t++) hits[t] = (hits[t] as number) + 1;
      expect(hits[0]).toBe(0);
      expect(hits.slice(1).every((h) => h === 1)).toBe(true);
    }
  });
});

describe('evaluateFiles on documents', () => {
  it('gives the loss `evaluate` gives on the same validation windows', async () => {
    const text = 'the cat sat on the mat. the dog'; // 31 characters: BOS + 31 + EOS = 33 tokens, two windows of 16
    const [file] = write({ 'same/a.txt': text });
    const out = await evaluateFiles(lm, docs([file as string]), { maxPairs: 1 });
    const stream = tokenStream([text], lm.tok);
    expect(stream.length).toBe(33);
    const val = evaluate(lm.model, documentDataset(stream, stream, 1, 2, 16), lm.tok, { maxPairs: 1 });
    expect(out.loss).toBeCloseTo(val.loss, 10);
    expect(out.ppl).toBeCloseTo(Math.exp(val.loss), 8);
    expect(out).toMatchObject({
      kind: 'documents',
      tokens: 32,
      documents: 1,
      context: 16,
      step: lm.step,
      unseenChars: 0,
      characters: 31,
      translation: null,
      skipped: [],
    });
    expect(out.bpb).toBeCloseTo(val.bpb as number, 10);
  });

  it('gives bits per byte = loss × tokens / (UTF-8 bytes of the text × ln 2), BOS and EOS standing for no text', async () => {
    const texts = ['the cat sat on the log. the end', 'a bird in the hand — é is unseen'];
    const paths = write({ 'bytes/a.txt': texts[0] as string, 'bytes/b.txt': texts[1] as string });
    const out = await evaluateFiles(lm, { kind: 'documents', paths, cwd: dir, glob: false }, { maxPairs: 1 });
    const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t, 'utf8'), 0);
    expect(out.bytes).toBe(bytes);
    expect(out.bpb).toBeCloseTo((out.loss * out.tokens) / (bytes * Math.LN2), 12);
    expect(out.record).toMatchObject({ bytes, bpb: out.bpb, tokens: out.tokens, loss: out.loss });
  });

  it('records a file outside the folder it is shown under by its own path and bytes', async () => {
    const [outside] = write({ 'elsewhere/held-out.txt': 'the cat sat on the log. ' });
    const cwd = path.join(dir, 'bytes'); // holds other files, not this one
    const out = await evaluateFiles(
      lm,
      { kind: 'documents', paths: [outside as string], cwd, glob: false },
      { maxPairs: 1 },
    );
    expect(out.record.files).toEqual([expect.objectContaining({ path: outside, bytes: 24 })]);
  });

  it('scores each token once, from the tokens before it in its window, across documents', async () => {
    const texts = ['the cat sat on the log.', 'a bird in the hand is worth two in the bush. the end'];
    const paths = write({ 'two/a.txt': texts[0] as string, 'two/b.txt': texts[1] as string });
    const out = await evaluateFiles(lm, { kind: 'documents', paths, cwd: dir, glob: false }, { maxPairs: 1 });
    const stream = Int32Array.from(tokenStream(texts, lm.tok));
    let nll = 0;
    for (let s = 0; s < stream.length - 1; s += 16)
      nll -= windowLogprobs(lm, stream, s, Math.min(s + 16, stream.length - 1)).reduce((a, b) => a + b, 0);
    expect(out.tokens).toBe(stream.length - 1);
    expect(out.documents).toBe(2);
    expect(out.loss).toBeCloseTo(nll / (stream.length - 1), 5);
  });

  it('gives ln V for a model whose logits are all zero', async () => {
    const zero = constantModel(await openRun(NODE_FS, lm.runDir, createReferenceBackend(), 2), null);
    const [file] = write({ 'zero/a.txt': 'the cat sat on the mat. '.repeat(3) });
    const out = await evaluateFiles(zero, docs([file as string]), { maxPairs: 1 });
    // Every target has probability 1/V, so the mean NLL is ln V and the perplexity V.
    expect(out.loss).toBeCloseTo(Math.log(lm.tok.vocabSize), 6);
    expect(out.ppl).toBeCloseTo(lm.tok.vocabSize, 3);
  });

  it('reports skipped files and counts a few unseen characters', async () => {
    write({
      'mixed/a.md': 'the cat sat on the mat. the dog sat on the log. é',
      'mixed/b.bin': Buffer.from([0, 1, 2, 0]),
    });
    const out = await evaluateFiles(lm, docs(['mixed']), { maxPairs: 1 });
    expect(out.documents).toBe(1);
    expect(out.skipped).toEqual([{ path: 'mixed/b.bin', reason: 'binary' }]);
    expect(out.source).toBe(`1 document under ${dir}`);
    expect([out.unseenChars, out.characters, out.unseenExamples]).toEqual([1, 49, ['é']]);
  });

  it('refuses text whose characters are more than 5% unseen, naming them', async () => {
    write({ 'foreign/a.txt': 'the cat ßß €€ sat' });
    await expect(evaluateFiles(lm, docs(['foreign']), { maxPairs: 1 })).rejects.toThrow(
      /^23\.5% of the test text's characters \(4 of 17, e\.g\. "ß", "€"\) never occur in the run's training data.*retrain with these files in the data\.$/,
    );
  });

  it('refuses pairs for a decoder-only run, no matching files and a non-positive maxPairs', async () => {
    await expect(evaluateFiles(lm, { kind: 'pairs', source: 'x.tsv', target: null }, { maxPairs: 1 })).rejects.toThrow(
      /decoder-only language model.*--data GLOB/,
    );
    await expect(evaluateFiles(lm, docs(['nothing/**/*.txt']), { maxPairs: 1 })).rejects.toThrow(/No files match/);
    await expect(evaluateFiles(lm, docs(['same']), { maxPairs: 0 })).rejects.toThrow(/whole number ≥ 1/);
  });

  it('reports progress per batch and stops when cancelled', async () => {
    const [file] = write({ 'long/a.txt': 'the cat sat on the mat. '.repeat(10) }); // 242 tokens: 15 windows of 16 + 1 → 8 + 1 batches
    const seen: [number, number][] = [];
    await evaluateFiles(lm, docs([file as string]), { maxPairs: 1, onProgress: (d, t) => seen.push([d, t]) });
    expect(seen).toEqual(Array.from({ length: 9 }, (_, i) => [i + 1, 9]));
    let calls = 0;
    const stop = evaluateFiles(lm, docs([file as string]), { maxPairs: 1, cancelled: () => ++calls > 3 });
    await expect(stop).rejects.toBeInstanceOf(EvaluationCancelled);
    expect(calls).toBe(4);
  });
});

describe('evaluateFiles on pairs', () => {
  it('matches hand-computed loss, exact match and BLEU for a model that always says "!"', async () => {
    const bang = mt.tok.encode('!')[0] as number;
    const r = constantModel(await openRun(NODE_FS, mt.runDir, createReferenceBackend(), 2), bang);
    const [tsv] = write({
      'bang.tsv': ['a b\t!!!!!!!!!!!', 'b a\ta ! ! b', 'a a\t! ! ! ! ! !', 'b b\t!!!!!!!!!!!!'].join('\n'),
    });
    const out = await evaluateFiles(r, { kind: 'pairs', source: tsv as string, target: null }, { maxPairs: 100 });
    // Context 12: a target fits with up to 11 tokens (BOS + target, target + EOS), so the
    // last pair (12 '!') is left out of the loss; every pair is decoded (the hypotheses line up
    // with the references), and every greedy decode is 11 '!' (one 13a token each).
    expect(out).toMatchObject({
      kind: 'pairs',
      context: 12,
      pairs: 3,
      pairsTooLong: 1,
      documents: 0,
      skipped: [],
      unseenChars: 0,
    });
    expect(out.hypotheses).toEqual(['!'.repeat(11), '!'.repeat(11), '!'.repeat(11), '!'.repeat(11)]);
    const t = out.translation as NonNullable<typeof out.translation>;
    expect(t.decoded).toBe(4);
    expect(out.sourcesCut).toBe(0);
    expect(t.decoding).toEqual({ strategy: 'greedy' });
    // Loss: the logits are the bias (1 for '!', 0 elsewhere), so each target costs
    // ln(V − 1 + e), minus 1 when it is '!'. Targets: 11 '!' + EOS, "a ! ! b" + EOS (2 '!'),
    // "! ! ! ! ! !" + EOS (6 '!'): 12 + 8 + 12 = 32 tokens, 19 of them '!'.
    const V = mt.tok.vocabSize;
    expect(out.tokens).toBe(32);
    expect(out.loss).toBeCloseTo(Math.log(V - 1 + Math.E) - 19 / 32, 5);
    // Exact match: only the first reference is the 11 '!' the model writes.
    expect(t.exactMatch).toBeCloseTo(1 / 4, 12);
    // BLEU, hypothesis 11 × "!" against each reference (13a tokens):
    //   ref 1: 11 × "!"          → 1-grams 11/11, 2-grams 10/10, 3-grams 9/9, 4-grams 8/8
    //   ref 2: a ! ! b           → 1-grams  2/11 (clipped), 2-grams 1/10, 3-grams 0/9, 4-grams 0/8
    //   ref 3: 6 × "!"           → 1-grams  6/11, 2-grams 5/10, 3-grams 4/9, 4-grams 3/8
    //   ref 4: 12 × "!"          → 1-grams 11/11, 2-grams 10/10, 3-grams 9/9, 4-grams 8/8
    //   corpus: matches 30, 26, 22, 19 of 44, 40, 36, 32; hypothesis length 44 ≥ reference
    //   length 11 + 4 + 6 + 12 = 33, so no brevity penalty.
    //   BLEU = 100 · (30/44 · 26/40 · 22/36 · 19/32)^(1/4) ≈ 63.33
    const hand = 100 * Math.pow((30 / 44) * (26 / 40) * (22 / 36) * (19 / 32), 1 / 4);
    expect(hand).toBeCloseTo(63.33, 2);
    expect(t.bleu).toBeCloseTo(hand, 10);
    expect(t.bleuSignature).toBe('nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0');
    const refs = ['!!!!!!!!!!!', 'a ! ! b', '! ! ! ! ! !', '!!!!!!!!!!!!'];
    expect(t.chrf).toBeCloseTo(corpusChrf(out.hypotheses, refs), 12);
    // Bits per byte over the targets' text (EOS stands for none): 11 + 7 + 11 bytes.
    expect(out.bytes).toBe(29);
    expect(out.bpb).toBeCloseTo((out.loss * 32) / (29 * Math.LN2), 12);
  });

  it('records the evaluation in the run, writes the hypotheses, and decodes by beam search and tokenizes BLEU on request', async () => {
    const [tsv] = write({ 'rec/test.tsv': 'a b\t! a\nb a\tb !\na a\ta\n' });
    const hyps = path.join(dir, 'rec', 'hyps.txt');
    const before = (await readEvaluations(NODE_FS, mt.runDir)).evaluations.length;
    const beam = { strategy: 'beam', beam: 3, lengthPenalty: 0.6 } as const;
    const out = await evaluateFiles(
      mt,
      { kind: 'pairs', source: tsv as string, target: null },
      { maxPairs: 10, decoding: beam, tokenize: 'char', hypothesesFile: hyps },
    );
    expect(fs.readFileSync(hyps, 'utf8')).toBe(out.hypotheses.map((h) => `${h}\n`).join(''));
    const t = out.translation as NonNullable<typeof out.translation>;
    expect(t.decoding).toEqual(beam);
    expect(t.bleuSignature).toBe('nrefs:1|case:mixed|eff:no|tok:char|smooth:exp|version:2.6.0');
    expect(t.bleu).toBeCloseTo(corpusBleu(out.hypotheses, ['! a', 'b !', 'a'], 'char').score, 12);
    // Each hypothesis is the best beam of decodeTarget, in test order.
    const srcs = ['a b', 'b a', 'a a'].map((s) => mt.tok.encode(s, { eos: true }));
    expect(out.hypotheses).toEqual(
      srcs.map((s) => mt.tok.decode(decodeTarget(mt.model, mt.tok.specialIds, s, beam), { skipSpecial: true })),
    );
    const { evaluations, skipped } = await readEvaluations(NODE_FS, mt.runDir);
    expect([evaluations.length, skipped]).toEqual([before + 1, 0]);
    const rec = evaluations.at(-1);
    expect(rec).toEqual(out.record);
    const bytes = fs.readFileSync(tsv as string);
    expect(rec).toMatchObject({
      version: 1,
      step: mt.step,
      data: 'pairs',
      items: 3,
      hypothesesFile: hyps,
      loss: out.loss,
      bpb: out.bpb,
      files: [{ path: tsv, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }],
    });
    expect(Date.parse(rec?.at ?? '')).toBeGreaterThan(Date.now() - 60_000);
    // The same test set elsewhere has the same data hash; other content another.
    const [copy, other] = write({ 'rec/elsewhere/copy.tsv': bytes, 'rec/other.tsv': 'a b\t! a\n' });
    const again = await evaluateFiles(mt, { kind: 'pairs', source: copy as string, target: null }, { maxPairs: 1 });
    const third = await evaluateFiles(mt, { kind: 'pairs', source: other as string, target: null }, { maxPairs: 1 });
    expect(again.record.dataHash).toBe(out.record.dataHash);
    expect(third.record.dataHash).not.toBe(out.record.dataHash);
  });

  it('on a full disk: the record is not appended, no line is torn, and the error says so', async () => {
    const [tsv] = write({ 'full/test.tsv': 'a b\t! a\n' });
    const log = path.join(mt.runDir, 'evaluations.jsonl');
    const before = fs.readFileSync(log, 'utf8');
    const io = failingIo((f) => f === log, 1);
    await expect(
      evaluateFiles(mt, { kind: 'pairs', source: tsv as string, target: null }, { maxPairs: 1, io }),
    ).rejects.toThrow(`Disk full while writing ${log}; nothing was half-written`);
    expect(fs.readFileSync(log, 'utf8')).toBe(before);
  });

  it("names test files as a person reads them, not by the web host's URIs (the record keeps the paths read)", async () => {
    const mem = new MemoryFs();
    const root = 'vscode-remote://127.0.0.1:8080/home/me/notes';
    await mem.mkdir(root);
    await mem.mkdir(lm.runDir);
    await mem.mkdir(mt.runDir);
    await writeFile(mem, `${root}/test.txt`, 'the cat sat on the log. ');
    const out = await evaluateOn(
      mem,
      lm,
      { kind: 'documents', paths: [`${root}/test.txt`], cwd: root, glob: false },
      { maxPairs: 1 },
    );
    expect(out.source).toBe('1 document under /home/me/notes');
    expect(out.record.source).toBe(out.source);
    expect(out.record.files.map((f) => f.path)).toEqual([`${root}/test.txt`]);
    await writeFile(mem, `${root}/p.src`, 'a b\n');
    await writeFile(mem, `${root}/p.tgt`, '! a\n');
    const pairs = await evaluateOn(
      mem,
      mt,
      { kind: 'pairs', source: `${root}/p.src`, target: `${root}/p.tgt` },
      { maxPairs: 1 },
    );
    expect(pairs.source).toBe('/home/me/notes/p.src → /home/me/notes/p.tgt (1 pair)');
  });

  it('reads two line files too, and caps the decodes at maxPairs', async () => {
    const [src, tgt] = write({ 'p.src': 'a b\nb a\na a\n', 'p.tgt': '! a\nb !\na\n' });
    const out = await evaluateFiles(
      mt,
      { kind: 'pairs', source: src as string, target: tgt as string },
      { maxPairs: 2 },
    );
    expect(out).toMatchObject({
      pairs: 3,
      translation: { decoded: 2 },
      pairsTooLong: 0,
      tokens: 4 + 4 + 2,
      source: `${src} → ${tgt} (3 pairs)`,
    });
    expect(out.record.files.map((f) => f.path)).toEqual([src, tgt]);
    expect(Number.isFinite(out.loss)).toBe(true);
  });

  it('decodes a source longer than the context from its first tokens, so every hypothesis lines up with its reference', async () => {
    const [tsv] = write({ 'cut/test.tsv': `a b\t! a\n${'a b '.repeat(10)}\t!\nb a\tb !\n` });
    const out = await evaluateFiles(mt, { kind: 'pairs', source: tsv as string, target: null }, { maxPairs: 10 });
    expect([out.pairs, out.pairsTooLong, out.sourcesCut, out.hypotheses.length]).toEqual([2, 1, 1, 3]);
    const long = mt.tok.encode('a b '.repeat(10), { eos: true });
    const cut = Int32Array.of(...long.subarray(0, mt.model.maxSrcLen - 1), mt.tok.specialIds.eos);
    expect(out.hypotheses[1]).toBe(
      mt.tok.decode(decodeTarget(mt.model, mt.tok.specialIds, cut, { strategy: 'greedy' }), { skipSpecial: true }),
    );
  });

  it('refuses unequal pair files, pairs all longer than the context, and documents', async () => {
    const [src, tgt] = write({ 'u.src': 'a\nb\na\n', 'u.tgt': 'b\na\n' });
    await expect(
      evaluateFiles(mt, { kind: 'pairs', source: src as string, target: tgt as string }, { maxPairs: 1 }),
    ).rejects.toThrow(/different line counts: .*has 3, .*has 2/);
    const [long] = write({ 'long.tsv': `a\t${'a '.repeat(8)}\n${'b '.repeat(8)}\tb` });
    await expect(
      evaluateFiles(mt, { kind: 'pairs', source: long as string, target: null }, { maxPairs: 1 }),
    ).rejects.toThrow(/^All 2 test pairs are too long for the model's context of 12 tokens/);
    await expect(evaluateFiles(mt, docs(['same']), { maxPairs: 1 })).rejects.toThrow(
      /encoder-decoder.*--pairs SRC TGT/,
    );
  });
});

describe('unseen characters', () => {
  it('counts code points, lone surrogates as unseen, most frequent first', () => {
    const u = countUnseenChars(['ab€', '€\ud800x👋'], mt.tok); // x, €, 👋 and the lone surrogate are not in a, b, !, space
    expect(u).toEqual({ characters: 7, unseen: 5, examples: ['€', '\ud800', 'x', '👋'] });
    expect(() => refuseUnseenChars(u)).toThrow(
      /^71\.4% of the test text's characters \(5 of 7, e\.g\. "€", "\\ud800", "x", "👋"\)/,
    );
    expect(() => refuseUnseenChars({ characters: 100, unseen: 5, examples: ['x'] })).not.toThrow(); // exactly 5% passes
  });

  it('never counts or refuses for a BPE tokenizer', () => {
    const bpe = trainBpeTokenizer(['ab ab ab'], { vocabSize: 262 });
    const u = countUnseenChars(['ßßß€€'], bpe);
    expect(u).toEqual({ characters: 5, unseen: null, examples: [] });
    expect(() => refuseUnseenChars(u)).not.toThrow();
  });
});
