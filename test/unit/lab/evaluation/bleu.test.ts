import { describe, expect, it } from 'vitest';
import { corpusBleu } from '../../../../src/lab/evaluation/bleu';
import { bleuTokens } from '../../../../src/lab/evaluation/bleuTokenizers';

const tokenize13a = (line: string): string[] => bleuTokens(line, '13a');

/** Geometric mean of precisions given on the 0–100 scale. */
function geo(...p: number[]): number {
  return Math.exp(p.reduce((s, x) => s + Math.log(x), 0) / p.length);
}

describe('13a tokenization', () => {
  it('splits punctuation the mteval-v13a way', () => {
    expect(tokenize13a('Hello, world!')).toEqual(['Hello', ',', 'world', '!']);
    // '$' splits; '.' and ',' between digits stay; ',' before a space and a final '.' split.
    expect(tokenize13a('It costs $3.50, ok.')).toEqual(['It', 'costs', '$', '3.50', ',', 'ok', '.']);
    expect(tokenize13a('1,000 people')).toEqual(['1,000', 'people']);
    expect(tokenize13a('a.b')).toEqual(['a', '.', 'b']);
    expect(tokenize13a('x (y) [z] {w} a/b "q" #1 50% @me')).toEqual([
      'x',
      '(',
      'y',
      ')',
      '[',
      'z',
      ']',
      '{',
      'w',
      '}',
      'a',
      '/',
      'b',
      '"',
      'q',
      '"',
      '#',
      '1',
      '50',
      '%',
      '@',
      'me',
    ]);
  });

  it('keeps apostrophes and hyphens inside words, splits a dash after a digit', () => {
    expect(tokenize13a("don't well-known")).toEqual(["don't", 'well-known']);
    expect(tokenize13a('pages 10-20')).toEqual(['pages', '10', '-', '20']);
  });

  it('unescapes &quot; &amp; &lt; &gt; before splitting', () => {
    expect(tokenize13a('&quot;Hi&quot; &amp; bye &lt;3&gt;')).toEqual(['"', 'Hi', '"', '&', 'bye', '<', '3', '>']);
    // Replacements run in order, so "&amp;quot;" becomes "&quot;" and stays that way; ';' then splits off.
    expect(tokenize13a('&amp;quot;')).toEqual(['&', 'quot', ';']);
  });

  it('drops <skipped>, joins "-\\n" hyphenation, strips trailing whitespace, splits on Python whitespace', () => {
    expect(tokenize13a('co-\noperate <skipped>now\n')).toEqual(['cooperate', 'now']);
    expect(tokenize13a('end-\n')).toEqual(['end-']); // the strip runs first, so the hyphen survives
    expect(tokenize13a('a\u00a0b\tc\u3000d')).toEqual(['a', 'b', 'c', 'd']);
    expect(tokenize13a('a\u200bb')).toEqual(['a\u200bb']); // zero-width space is not whitespace
    expect(tokenize13a('   ')).toEqual([]);
  });
});

describe('corpusBleu', () => {
  it('matches a hand computation with exp smoothing of a zero 4-gram order', () => {
    // hyp: the cat sat on the mat   ref: the cat is on the mat   (6 tokens each, BP = 1)
    // 1-grams 5/6 (sat misses), 2-grams 3/5 (the cat, on the, the mat), 3-grams 1/4 (on the mat),
    // 4-grams 0/3 → exp smoothing: 100 / (2 · 3).
    const r = corpusBleu(['the cat sat on the mat'], ['the cat is on the mat']);
    expect(r.counts).toEqual([5, 3, 1, 0]);
    expect(r.totals).toEqual([6, 5, 4, 3]);
    expect(r.precisions[0]).toBeCloseTo(500 / 6, 10);
    expect(r.precisions[1]).toBeCloseTo(60, 10);
    expect(r.precisions[2]).toBeCloseTo(25, 10);
    expect(r.precisions[3]).toBeCloseTo(100 / 6, 10);
    expect(r.bp).toBe(1);
    expect(r.score).toBeCloseTo(geo(500 / 6, 60, 25, 100 / 6), 10); // ≈ 37.99
    expect(r.score).toBeCloseTo(37.99, 2);
  });

  it('doubles the smoothing factor for each further order without matches', () => {
    // hyp: a b c d   ref: a c b d → 1-grams 4/4; 2-grams 0/3 → 100/(2·3); 3-grams 0/2 → 100/(4·2); 4-grams 0/1 → 100/(8·1)
    const r = corpusBleu(['a b c d'], ['a c b d']);
    expect(r.precisions.map((p) => +p.toFixed(6))).toEqual([100, +(100 / 6).toFixed(6), 12.5, 12.5]);
    expect(r.score).toBeCloseTo(geo(100, 100 / 6, 12.5, 12.5), 10); // ≈ 22.59
  });

  it('applies the brevity penalty exp(1 − r/c) when the hypothesis is shorter', () => {
    // 5 hyp tokens, all n-grams match; reference has 6 tokens → BP = exp(1 − 6/5).
    const r = corpusBleu(['the cat sat on the'], ['the cat sat on the mat']);
    expect(r.sysLen).toBe(5);
    expect(r.refLen).toBe(6);
    expect(r.bp).toBeCloseTo(Math.exp(-0.2), 12);
    expect(r.score).toBeCloseTo(100 * Math.exp(-0.2), 10); // ≈ 81.87
    // A longer hypothesis gets no penalty.
    expect(corpusBleu(['the cat sat on the mat today'], ['the cat sat on the mat']).bp).toBe(1);
  });

  it('sums clipped counts over the corpus before dividing (not a mean of sentence scores)', () => {
    // sentence 1 as above: counts 5,3,1,0 of 6,5,4,3; sentence 2 "a b c d" vs "a b c d e": 4,3,2,1 of 4,3,2,1.
    // totals: 9/10, 6/8, 3/6, 1/4; lengths 10 vs 11 → BP = exp(1 − 11/10).
    const r = corpusBleu(['the cat sat on the mat', 'a b c d'], ['the cat is on the mat', 'a b c d e']);
    expect(r.counts).toEqual([9, 6, 3, 1]);
    expect(r.totals).toEqual([10, 8, 6, 4]);
    expect(r.score).toBeCloseTo(Math.exp(-0.1) * geo(90, 75, 50, 25), 10); // ≈ 48.77
  });

  it('clips a repeated hypothesis word at its reference count', () => {
    // hyp "the the the the" vs ref "the cat on the mat": unigram "the" clipped to 2 → 2/4;
    // "the the" never occurs in the ref → 2-, 3-, 4-grams 0/3, 0/2, 0/1. BP: c = 4 < r = 5.
    const r = corpusBleu(['the the the the'], ['the cat on the mat']);
    expect(r.counts).toEqual([2, 0, 0, 0]);
    expect(r.score).toBeCloseTo(Math.exp(1 - 5 / 4) * geo(50, 100 / 6, 100 / 8, 100 / 8), 10);
  });

  it('gives 100 for identical corpora and 0 for empty hypotheses', () => {
    const refs = ['A man rides a bike down the street.', 'Two dogs play in the snow, happily!'];
    const same = corpusBleu(refs, refs);
    expect(same.score).toBeCloseTo(100, 10);
    expect(same.bp).toBe(1);
    const empty = corpusBleu(['', ''], refs);
    expect(empty.score).toBe(0);
    expect(empty.sysLen).toBe(0);
    expect(empty.bp).toBe(0);
  });

  it('is 0 without any match, and 0 when no hypothesis has four tokens (as sacreBLEU)', () => {
    const none = corpusBleu(['x y z w'], ['a b c d']);
    expect(none.score).toBe(0);
    expect(none.precisions).toEqual([0, 0, 0, 0]);
    const short = corpusBleu(['a b c'], ['a b c']);
    expect(short.score).toBe(0);
    expect(short.precisions.slice(0, 3)).toEqual([100, 100, 100]);
    expect(short.precisions[3]).toBe(0);
  });

  it('scores tokenized punctuation: a missing comma costs n-grams', () => {
    // hyp tokens: Hello world ! (3) vs ref: Hello , world ! (4) → no 4-grams in the hypothesis → 0.
    expect(corpusBleu(['Hello world!'], ['Hello, world!']).score).toBe(0);
    // With more words: hyp "Yes Hello world ! now" (5), ref "Yes Hello , world ! now" (6):
    // 1-grams 5/5; 2-grams 3/4 (Yes Hello, world !, ! now); 3-grams 1/3 (world ! now); 4-grams 0/2 → 100/(2·2).
    const r = corpusBleu(['Yes Hello world! now'], ['Yes Hello, world! now']);
    expect(r.counts).toEqual([5, 3, 1, 0]);
    expect(r.score).toBeCloseTo(Math.exp(1 - 6 / 5) * geo(100, 75, 100 / 3, 25), 10);
  });

  it('rejects lists of different lengths', () => {
    expect(() => corpusBleu(['a'], ['a', 'b'])).toThrow(/1 hypotheses and 2 references/);
  });
});
