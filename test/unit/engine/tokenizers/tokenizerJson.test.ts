/**
 * Saved tokenizers: a JSON round-trip gives identical encodings and identical JSON, and every
 * malformed file is refused with EngineError('tokenizer/invalid') that names the problem.
 */

import { describe, it, expect } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { Rng } from '../../../../src/engine/rng';
import { trainBpeTokenizer } from '../../../../src/engine/tokenizers/bpeTokenizer';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import type { Tokenizer } from '../../../../src/engine/tokenizers/special';
import { parseTokenizerJSON, tokenizerFromJSON } from '../../../../src/engine/tokenizers/tokenizerJson';
import { randomText } from './randomText';

function thrown(f: () => unknown): EngineError {
  try {
    f();
  } catch (e) {
    if (EngineError.is(e)) return e;
    throw e;
  }
  throw new Error('expected an EngineError, nothing was thrown');
}

const rng = new Rng(51);
const corpus = Array.from({ length: 150 }, () => randomText(rng));
const charTok = trainCharTokenizer(corpus, { maxVocab: 500 });
const bpeTok = trainBpeTokenizer(corpus, { vocabSize: 600 });

/** A plain-data copy of `tok`'s saved form, as a file would give it. */
function saved(tok: Tokenizer): Record<string, unknown> {
  return JSON.parse(JSON.stringify(tok.toJSON())) as Record<string, unknown>;
}

describe('tokenizerFromJSON round-trip', () => {
  for (const tok of [charTok, bpeTok]) {
    it(`${tok.type}: same JSON and same encodings after save and load`, () => {
      const text = JSON.stringify(tok.toJSON());
      const loaded = parseTokenizerJSON(text);
      expect(loaded.type).toBe(tok.type);
      expect(loaded.vocabSize).toBe(tok.vocabSize);
      expect(JSON.stringify(loaded.toJSON())).toBe(text);
      const r = new Rng(52);
      let mismatches = 0;
      for (let n = 0; n < 1000; n++) {
        const s = randomText(r);
        const a = tok.encode(s),
          b = loaded.encode(s);
        if (a.length !== b.length || a.some((x, i) => x !== b[i]) || loaded.decode(b) !== s) mismatches++;
      }
      expect(mismatches).toBe(0);
    });
  }

  it('writes the versioned header', () => {
    for (const tok of [charTok, bpeTok]) {
      const json = tok.toJSON();
      expect(json.format).toBe('attention-lab-tokenizer');
      expect(json.version).toBe(1);
      expect(json.type).toBe(tok.type);
    }
    expect(bpeTok.toJSON().vocabSize).toBe(600);
  });
});

type Case = readonly [name: string, json: unknown, mentions: RegExp];

const char = saved(charTok);
const bpe = saved(bpeTok);
const chars = char['chars'] as string[];
const merges = bpe['merges'] as [number, number][];
const without = (o: Record<string, unknown>, key: string): Record<string, unknown> => {
  const copy = { ...o };
  delete copy[key];
  return copy;
};

const CASES: readonly Case[] = [
  ['null', null, /found null/],
  ['an array', [], /found an array/],
  ['a string', 'tokenizer.json', /found the string/],
  ['wrong format', { ...char, format: 'huggingface' }, /"format" must be "attention-lab-tokenizer"/],
  ['missing format', without(char, 'format'), /"format"/],
  ['newer version', { ...char, version: 2 }, /"version" must be 1, found number 2.*newer/],
  ['version as a string', { ...bpe, version: '1' }, /"version" must be 1/],
  ['missing version', without(bpe, 'version'), /"version"/],
  ['unknown type', { ...char, type: 'wordpiece' }, /"type" must be "char" or "bpe"/],
  ['missing type', without(char, 'type'), /"type"/],
  ['char: missing chars', without(char, 'chars'), /missing field "chars"/],
  ['char: chars not an array', { ...char, chars: 'abc' }, /"chars" must be an array/],
  ['char: non-string entry', { ...char, chars: [...chars.slice(0, 3), 7] }, /"chars"\[3\].*must be a string/],
  [
    'char: two characters in one entry',
    { ...char, chars: ['ab'], vocabSize: 261 },
    /"chars"\[0\].*exactly one code point/,
  ],
  ['char: empty entry', { ...char, chars: [''], vocabSize: 261 }, /exactly one code point/],
  ['char: lone surrogate entry', { ...char, chars: ['\ud800'], vocabSize: 261 }, /lone surrogate U\+D800/],
  [
    'char: duplicate character',
    { ...char, chars: ['a', 'b', 'a'], vocabSize: 263 },
    /"chars"\[2\].*duplicates "chars"\[0\]/,
  ],
  ['char: vocabSize disagrees', { ...char, vocabSize: 499 }, /"vocabSize" is 499 but/],
  ['char: missing vocabSize', without(char, 'vocabSize'), /missing field "vocabSize"/],
  ['char: unknown field', { ...char, merges: [] }, /unknown field "merges"/],
  ['bpe: missing merges', without(bpe, 'merges'), /missing field "merges"/],
  ['bpe: merges not an array', { ...bpe, merges: {} }, /"merges" must be an array/],
  ['bpe: merge not a pair', { ...bpe, merges: [[4, 5, 6]], vocabSize: 261 }, /"merges"\[0\].*must be a pair/],
  [
    'bpe: merge of a special id',
    { ...bpe, merges: [[2, 100]], vocabSize: 261 },
    /"merges"\[0\].*joins number 2.*special ids/,
  ],
  [
    'bpe: merge of a later id',
    {
      ...bpe,
      merges: [
        [100, 101],
        [261, 100],
      ],
      vocabSize: 262,
    },
    /"merges"\[1\] \(id 261\) joins number 261/,
  ],
  ['bpe: non-integer id', { ...bpe, merges: [[4.5, 100]], vocabSize: 261 }, /joins number 4\.5/],
  ['bpe: id as a string', { ...bpe, merges: [['4', 100]], vocabSize: 261 }, /joins the string "4"/],
  [
    'bpe: duplicate merge',
    {
      ...bpe,
      merges: [
        [100, 101],
        [102, 103],
        [100, 101],
      ],
      vocabSize: 263,
    },
    /"merges"\[2\].*repeats the pair \[100, 101\] of "merges"\[0\]/,
  ],
  ['bpe: vocabSize disagrees', { ...bpe, merges: merges.slice(0, 10) }, /"vocabSize" is 600 but 10 merges give 270/],
  ['bpe: vocabSize not an integer', { ...bpe, vocabSize: 'big' }, /"vocabSize" must be an integer/],
  ['bpe: unknown pretokenizer', { ...bpe, pretokenizer: 'gpt4' }, /"pretokenizer" must be "gpt2"/],
  ['bpe: unknown field', { ...bpe, chars: [] }, /unknown field "chars"/],
];

describe('tokenizerFromJSON refuses malformed files', () => {
  it.each(CASES)('%s', (_name, json, mentions) => {
    const e = thrown(() => tokenizerFromJSON(json));
    expect(e.code).toBe('tokenizer/invalid');
    expect(e.message).toMatch(mentions);
    expect(e.message).toMatch(/retrain the tokenizer/);
  });

  it('accepts the unmodified files the cases were derived from', () => {
    expect(tokenizerFromJSON(char).vocabSize).toBe(charTok.vocabSize);
    expect(tokenizerFromJSON(bpe).vocabSize).toBe(600);
  });

  it('refuses text that is not JSON', () => {
    const e = thrown(() => parseTokenizerJSON('{"format": '));
    expect(e.code).toBe('tokenizer/invalid');
    expect(e.message).toMatch(/not valid JSON.*retrain the tokenizer/);
  });
});
