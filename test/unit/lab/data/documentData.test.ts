/**
 * Documents → token streams: the held-out split (one file, few files, many files, too little
 * text), streamed encoding equal to encoding whole, size limits and their messages,
 * repository clutter skipped with reasons, BPE from a seeded sample, progress and cancel.
 */

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { bpeFromGpt2Files } from '../../../../src/engine/tokenizers/gpt2Files';
import { BOS, EOS } from '../../../../src/engine/tokenizers/special';
import type { DocumentsSpec, LoadOptions, TokenizerSource } from '../../../../src/lab/data/documentData';
import { CancelledError } from '../../../../src/lab/base/cancelled';
import { loadDocumentData as load, tailCut } from '../../../../src/lab/data/documentData';
import type { PrepareProgress } from '../../../../src/protocol/data';
import { FILE_SYSTEMS } from '../files/fileSystems';
import { shownPath } from '../../../../src/lab/files/slashPaths';

const LINE = 'To be, or not to be, that is the question:\nWhether tis nobler in the mind to suffer\n';
const CHAR = { train: 'char', vocabSize: 1000 } as const;

describe.each(FILE_SYSTEMS)('documents on $name', ({ make }) => {
  const t = make();
  let dir = '';
  beforeAll(async () => {
    dir = await t.dir();
  });
  const put = async (rel: string, data: string): Promise<string> => (await t.put(dir, { [rel]: data }))[0] as string;
  const spec = (files: string[], extra: Partial<DocumentsSpec> = {}): DocumentsSpec => ({
    kind: 'documents',
    files,
    root: dir,
    ...extra,
  });
  const loadDocumentData = (sp: DocumentsSpec, source: TokenizerSource, opts: LoadOptions): ReturnType<typeof load> =>
    load(t.fs, sp, source, opts);

  describe('the held-out split', () => {
    it('one file: the last 10% of its text is validation, as nanoGPT splits input.txt', async () => {
      const text = LINE.repeat(200);
      const file = await put('one/input.txt', text);
      const d = await loadDocumentData(spec([file]), CHAR, { seed: 1, pieceChars: 997 });
      const cut = tailCut(text);
      expect(cut / text.length).toBeGreaterThanOrEqual(0.9);
      expect(cut / text.length).toBeLessThan(0.901);
      expect(d.validation.kind).toBe('tail');
      expect(d.validation.text).toBe(
        `last 10% of 1 document, ${(text.length - cut + 1).toLocaleString('en-US')} tokens`,
      );
      // Streamed in pieces, the ids are those of the parts encoded whole: BOS + train | val + EOS.
      expect(Array.from(d.train)).toEqual([BOS, ...d.tok.encode(text.slice(0, cut))]);
      expect(Array.from(d.val)).toEqual([...d.tok.encode(text.slice(cut)), EOS]);
      expect(d.train).toBeInstanceOf(Uint16Array);
      // A URI root (the web host's) is shown as a person reads it: the disk's path.
      expect(d.description).toBe(`1 document (input.txt, 16 KB) in ${shownPath(t.fs.join(dir, 'one'))}`);
      if (t.name === 'remote') expect(d.description).toMatch(/ in \/User\/globalStorage\/t\d+\/one$/);
      expect(d.prompts.length).toBeGreaterThan(0);
      expect(text.slice(cut)).toContain(d.prompts[0]);
      // The tokenizer learned from the training part only.
      expect(d.tok.toJSON()).toEqual(trainCharTokenizer([text.slice(0, cut)]).toJSON());
    });

    it('a few files: the last 10% of each', async () => {
      const files = await Promise.all(
        ['a', 'b', 'c'].map((n, i) => put(`few/${n}.txt`, `${n.toUpperCase()} `.repeat(50 + i) + LINE.repeat(20))),
      );
      const d = await loadDocumentData(spec(files), CHAR, { seed: 1 });
      expect(d.validation.kind).toBe('tail');
      expect(d.validation.text).toMatch(/^last 10% of each of 3 documents, [\d,]+ tokens$/);
      expect(d.documents).toBe(3);
      expect(d.val.length / (d.val.length + d.train.length)).toBeGreaterThan(0.09);
      expect(d.val.length / (d.val.length + d.train.length)).toBeLessThan(0.11);
      expect(d.description).toMatch(/^3 documents \(\d\.\d KB\) in /);
    });

    it('many files: whole documents held out, none of them in the training stream', async () => {
      const files = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          put(`many/doc${String(i).padStart(2, '0')}.md`, `# Doc ${i}\n${LINE.repeat(3)}`),
        ),
      );
      const d = await loadDocumentData(spec(files), CHAR, { seed: 7 });
      expect(d.validation.kind).toBe('documents');
      const m = /^(\d+) of 40 documents held out whole, ([\d,]+) tokens$/.exec(d.validation.text);
      expect(m).not.toBeNull();
      const held = Number(m?.[1]);
      expect(held).toBeGreaterThanOrEqual(1);
      expect(held).toBeLessThan(12);
      // Each held-out document is BOS … EOS in the validation stream; the rest in training.
      const count = (ids: ArrayLike<number>, id: number): number => Array.from(ids).filter((x) => x === id).length;
      expect(count(d.val, BOS)).toBe(held);
      expect(count(d.train, BOS)).toBe(40 - held);
      expect(d.tok.decode(d.val, { skipSpecial: true })).not.toBe('');
    });

    it('too little text: no validation, and the run says so', async () => {
      const file = await put('tiny/t.txt', 'hi there');
      const d = await loadDocumentData(spec([file]), CHAR, { seed: 1 });
      expect(d.validation.kind).toBe('none');
      expect(d.validation.text).toMatch(
        /^none: too little text to hold any out \(10 tokens; 80 or more are needed\) — the validation curve shows training loss$/,
      );
      expect(d.val.length).toBe(0);
      expect(Array.from(d.train)).toEqual([BOS, ...d.tok.encode('hi there'), EOS]);
    });

    it("puts the tokenizer's own BOS and EOS around each document: GPT-2's <|endoftext|>, not our ids 1 and 2", async () => {
      const golden = path.join(__dirname, '../../../golden/import/hf-gpt2');
      const gpt2 = bpeFromGpt2Files(
        JSON.parse(readFileSync(path.join(golden, 'vocab.json'), 'utf8')),
        readFileSync(path.join(golden, 'merges.txt'), 'utf8'),
      );
      const { bos, eos } = gpt2.specialIds;
      expect([bos, eos]).toEqual([gpt2.vocabSize - 1, gpt2.vocabSize - 1]);
      const file = await put('gpt2/t.txt', 'hi there');
      const d = await loadDocumentData(spec([file]), gpt2, { seed: 1 });
      expect(Array.from(d.train)).toEqual([bos, ...gpt2.encode('hi there'), eos]);
    });

    it('eval reads only the held-out part, with the same ids', async () => {
      const file = await put('evalonly/input.txt', LINE.repeat(50));
      const all = await loadDocumentData(spec([file]), CHAR, { seed: 1 });
      const val = await loadDocumentData(spec([file]), all.tok, { seed: 1, need: 'validation' });
      expect(val.train.length).toBe(0);
      expect(Array.from(val.val)).toEqual(Array.from(all.val));
    });
  });

  describe('limits and clutter', () => {
    it('a file over the per-file limit is skipped with its size; if nothing is left the error says how to lift the limit', async () => {
      const big = await put('limits/big.txt', LINE.repeat(2000));
      const small = await put('limits/small.txt', LINE.repeat(20));
      const d = await loadDocumentData(spec([big, small], { maxFileBytes: 10_000 }), CHAR, { seed: 1 });
      expect(d.skipped).toEqual([{ path: 'limits/big.txt', reason: 'too-large', bytes: LINE.length * 2000 }]);
      let err: unknown;
      try {
        await loadDocumentData(spec([big], { maxFileBytes: 10_000 }), CHAR, { seed: 1 });
      } catch (e) {
        err = e;
      }
      expect(EngineError.is(err, 'input/invalid')).toBe(true);
      const msg = (err as Error).message;
      expect(msg).toContain('limits/big.txt is 164 KB, over the 9.8 KB limit per file');
      expect(msg).toContain('--max-file-mb');
      expect(msg).toContain('attentionLab.data.maxFileSizeMB');
      expect(msg.split('\n')).toHaveLength(1);
    });

    it('files past the total limit are skipped in path order, naming the total and its flag', async () => {
      const files = await Promise.all(['x1', 'x2', 'x3'].map((n) => put(`total/${n}.txt`, LINE.repeat(40))));
      const d = await loadDocumentData(spec(files, { maxTotalBytes: LINE.length * 90 }), CHAR, { seed: 1 });
      expect(d.documents).toBe(2);
      expect(d.skipped).toEqual([{ path: 'total/x3.txt', reason: 'over-total', bytes: LINE.length * 40 }]);
    });

    it('skips lockfiles, vendored folders, minified and generated files by default, and keeps them when asked', async () => {
      const files = await Promise.all([
        put('repo/src/main.ts', 'export const answer = 42;\n'.repeat(20)),
        put('repo/package-lock.json', '{"lockfileVersion": 3}\n'),
        put('repo/dist/main.js', 'var a=1;\n'),
        put('repo/.venv/lib/x.py', 'x = 1\n'),
        put('repo/web/app.min.js', 'var a=1;\n'),
        put('repo/web/bundle.js', `${'var a=1,b=2;'.repeat(600)}\n`),
        put('repo/gen/api.ts', '// Code generated by protoc. DO NOT EDIT.\nexport const x = 1;\n'),
      ]);
      const d = await loadDocumentData(spec(files), CHAR, { seed: 1 });
      expect(d.documents).toBe(1);
      expect(d.skipped.map((s) => [s.path, s.reason])).toEqual([
        ['repo/.venv/lib/x.py', 'vendored'],
        ['repo/dist/main.js', 'vendored'],
        ['repo/gen/api.ts', 'generated'],
        ['repo/package-lock.json', 'lockfile'],
        ['repo/web/app.min.js', 'generated'],
        ['repo/web/bundle.js', 'minified'],
      ]);
      const all = await loadDocumentData(spec(files, { skipGenerated: false }), CHAR, { seed: 1 });
      expect(all.documents).toBe(7);
      expect(all.skipped).toEqual([]);
    });
  });

  describe('streaming', () => {
    it('reads a one-file corpus once for every pass (on the web each read crosses the page), several files once a pass', async () => {
      const reads = new Map<string, number>();
      const counting = new Proxy(t.fs, {
        get(target, key) {
          const v = Reflect.get(target, key, target) as unknown;
          if (typeof v !== 'function') return v;
          return (...args: unknown[]) => {
            if (key === 'readFile' || key === 'readRange') {
              const p = args[0] as string;
              reads.set(p, (reads.get(p) ?? 0) + 1);
            }
            return (v as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const one = await put('once/input.txt', LINE.repeat(100));
      const whole = await load(counting, spec([one]), CHAR, { seed: 1, pieceChars: 500 });
      // Counting characters, encoding the training part, encoding the held-out tail: one read.
      expect(reads.get(one)).toBe(1);
      const again = await load(t.fs, spec([one]), CHAR, { seed: 1, pieceChars: 500 });
      expect(Array.from(whole.train)).toEqual(Array.from(again.train));
      expect(Array.from(whole.val)).toEqual(Array.from(again.val));
      // Too little text to hold out: encoded a second time without a split, still from the one read.
      const tiny = await put('once/tiny.txt', 'abcab');
      await load(counting, spec([tiny]), CHAR, { seed: 1 });
      expect(reads.get(tiny)).toBe(1);
      const two = [await put('twice/a.txt', LINE), await put('twice/b.txt', LINE.repeat(2))];
      await load(counting, spec(two), CHAR, { seed: 1 });
      expect(two.map((f) => reads.get(f))).toEqual([2, 2]);
    });

    it('BPE learns from a seeded sample past the sample size, and says so', async () => {
      const files = await Promise.all(
        Array.from({ length: 3 }, (_, i) => put(`bpe/f${i}.txt`, `${LINE}${i} `.repeat(300))),
      );
      const opts = { seed: 3, bpeSampleBytes: 20_000, pieceChars: 2000 };
      const a = await loadDocumentData(spec(files), { train: 'bpe', vocabSize: 300 }, opts);
      const b = await loadDocumentData(spec(files), { train: 'bpe', vocabSize: 300 }, opts);
      expect(a.notes.join(' ')).toMatch(
        /BPE learned its merges from a seeded sample of \d+ KB of the \d+ KB of training text\./,
      );
      expect(a.tok.toJSON()).toEqual(b.tok.toJSON());
      expect(a.tok.vocabSize).toBe(300);
      expect(Array.from(a.train)).toEqual(Array.from(b.train));
    });

    it('reports progress up to the total, and stops with CancelledError when cancelled', async () => {
      const file = await put('progress/input.txt', LINE.repeat(3000));
      const seen: PrepareProgress[] = [];
      await loadDocumentData(spec([file]), CHAR, { seed: 1, pieceChars: 5000, onProgress: (p) => seen.push(p) });
      expect(seen.length).toBeGreaterThan(0);
      expect(new Set(seen.map((p) => p.phase))).toEqual(new Set(['tokenizer', 'encode']));
      for (const p of seen) expect(p.done).toBeLessThanOrEqual(p.total);
      expect(seen[seen.length - 1]).toMatchObject({
        phase: 'encode',
        done: LINE.length * 3000,
        total: LINE.length * 3000,
      });
      let ticks = 0;
      const cancelled = loadDocumentData(spec([file]), CHAR, {
        seed: 1,
        pieceChars: 5000,
        isCancelled: () => ++ticks > 3,
      });
      await expect(cancelled).rejects.toBeInstanceOf(CancelledError);
      await expect(cancelled).rejects.toThrow(/^Cancelled while reading the data; nothing was saved\.$/);
    });
  });
});
