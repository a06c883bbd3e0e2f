/**
 * BLEU (every tokenizer) and chrF of the shipped English, German, Japanese and Chinese
 * hypothesis/reference files against sacreBLEU's own numbers and signatures, and the
 * tokenizers against sacreBLEU's tokenization of hard lines — all computed once by
 * scripts/sacrebleu/make_bleu_golden.py into test/golden/bleu/sacrebleu.json.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bleuSignature, corpusBleu } from '../../../../src/lab/evaluation/bleu';
import { bleuTokens, chooseBleuTokenizer } from '../../../../src/lab/evaluation/bleuTokenizers';
import { chrfSignature, corpusChrf } from '../../../../src/lab/evaluation/chrf';
import type { BleuTokenize } from '../../../../src/protocol/evaluation';
import { BLEU_TOKENIZE } from '../../../../src/protocol/evaluation';

const DIR = path.resolve(__dirname, '../../../golden/bleu');

interface GoldenBleu {
  readonly score: number;
  readonly counts: number[];
  readonly totals: number[];
  readonly sys_len: number;
  readonly ref_len: number;
  readonly bp: number;
  readonly signature: string;
}

interface Golden {
  readonly sacrebleu: string;
  readonly languages: Record<
    string,
    { lines: number; bleu: Record<BleuTokenize, GoldenBleu>; chrf: { score: number; signature: string } }
  >;
  readonly edge: { lines: string[]; tokens: Record<BleuTokenize, string[][]> };
}

const golden = JSON.parse(fs.readFileSync(path.join(DIR, 'sacrebleu.json'), 'utf8')) as Golden;

/** The lines of a shipped file, as the script reads them (one per newline). */
function lines(name: string): string[] {
  return fs.readFileSync(path.join(DIR, name), 'utf8').split('\n').slice(0, -1);
}

describe('BLEU and chrF against sacreBLEU', () => {
  it('covers every tokenizer we offer, in four languages', () => {
    expect(Object.keys(golden.languages).sort()).toEqual(['de', 'en', 'ja', 'zh']);
    for (const lang of Object.values(golden.languages))
      expect(Object.keys(lang.bleu).sort()).toEqual([...BLEU_TOKENIZE].sort());
  });

  for (const [lang, g] of Object.entries(golden.languages)) {
    const hyps = lines(`${lang}.hyp`);
    const refs = lines(`${lang}.ref`);
    for (const tok of BLEU_TOKENIZE) {
      it(`${lang}: BLEU with ${tok} equals sacreBLEU's to 0.01, with its signature`, () => {
        const want = g.bleu[tok];
        const got = corpusBleu(hyps, refs, tok);
        expect(hyps.length).toBe(g.lines);
        expect(got.counts).toEqual(want.counts);
        expect(got.totals).toEqual(want.totals);
        expect([got.sysLen, got.refLen]).toEqual([want.sys_len, want.ref_len]);
        expect(Math.abs(got.score - want.score)).toBeLessThan(0.01);
        expect(got.score).toBeCloseTo(want.score, 9);
        expect(bleuSignature(tok)).toBe(want.signature);
      });
    }
    it(`${lang}: chrF equals sacreBLEU's to 0.01, with its signature`, () => {
      const got = corpusChrf(hyps, refs);
      expect(Math.abs(got - g.chrf.score)).toBeLessThan(0.01);
      expect(got).toBeCloseTo(g.chrf.score, 9);
      expect(chrfSignature()).toBe(g.chrf.signature);
    });
  }

  for (const tok of BLEU_TOKENIZE) {
    it(`${tok} splits hard lines exactly as sacreBLEU does`, () => {
      golden.edge.lines.forEach((line, i) =>
        expect(bleuTokens(line, tok), JSON.stringify(line)).toEqual(golden.edge.tokens[tok][i]),
      );
    });
  }
});

describe('chooseBleuTokenizer', () => {
  it('picks what sacreBLEU users pick for the target language', () => {
    expect(chooseBleuTokenizer(lines('en.ref')).tokenize).toBe('13a');
    expect(chooseBleuTokenizer(lines('de.ref')).tokenize).toBe('13a');
    expect(chooseBleuTokenizer(lines('ja.ref')).tokenize).toBe('char');
    expect(chooseBleuTokenizer(lines('zh.ref')).tokenize).toBe('zh');
    // Kanji-only Japanese lines still have kana somewhere in a real test set; Chinese has none.
    expect(chooseBleuTokenizer(['東京は大きい都市です。']).tokenize).toBe('char');
    expect(chooseBleuTokenizer(['北京是一个大城市。']).tokenize).toBe('zh');
    expect(chooseBleuTokenizer(['']).tokenize).toBe('13a');
  });
});
