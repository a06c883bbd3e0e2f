/**
 * The tokenizers sacreBLEU's BLEU offers (Post, 2018, "A Call for Clarity in Reporting BLEU
 * Scores"), written from sacreBLEU 2.6.0's source so that every line splits into exactly its
 * tokens (test/golden/bleu/ holds sacreBLEU's own output to compare with):
 * - `13a`: mteval-v13a.pl's rules, WMT's default for languages written with spaces;
 * - `zh`: every Chinese character its own token, the rest as `13a` (sacreBLEU's default for
 *   Chinese). Its character ranges are sacreBLEU's as Python actually evaluates them: two of
 *   its entries are written `'\u20000'` and `'\u2f800'`, which Python reads as two-character
 *   strings, so they cover U+2001–U+2A6D (general punctuation, arrows, maths symbols…) and
 *   U+2F81–U+2FA1, and no character outside the Basic Multilingual Plane;
 * - `char`: every character its own token — what we score Japanese with, because sacreBLEU's
 *   `ja-mecab` needs the MeCab analyser and its IPADic dictionary; the signature says `char`,
 *   so the number is never mistaken for a `ja-mecab` BLEU;
 * - `intl`: mteval-v14's international tokenization: punctuation (Unicode category P) split
 *   off unless between digits, symbols (category S) always.
 * Then {@link chooseBleuTokenizer}: the tokenizer sacreBLEU's users pick for a target text.
 *
 * Leaves out: `ja-mecab`, `ko-mecab`, `spm`/`flores*` (external models), `none`, lowercasing.
 */

import type { BleuTokenize } from '../../protocol/evaluation';

/** The characters Python's `str.split()` / `str.strip()` treat as whitespace. */
const PY_SPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const SPLIT_RE = new RegExp(`[${PY_SPACE}]+`, 'u');
const LEADING_RE = new RegExp(`^[${PY_SPACE}]+`, 'u');
const TRAILING_RE = new RegExp(`[${PY_SPACE}]+$`, 'u');

/** Python's `s.split()`: the pieces between runs of whitespace. */
export function pySplit(s: string): string[] {
  return s.split(SPLIT_RE).filter((t) => t !== '');
}

/** Python's `s.rstrip()`. */
export function pyRstrip(s: string): string {
  return s.replace(TRAILING_RE, '');
}

/**
 * mteval-v13a's language-dependent rules, in order, as sacreBLEU's TokenizerRegexp has them.
 * 1. Split off every ASCII symbol except `'`, `-`, `.` and `,`: the ranges { | } ~,
 *    [ \ ] ^ _ `, space ! " # $ % &, ( ) * +, : ; < = > ? @, and /.
 * 2. Split `.` and `,` unless preceded by a digit.  3. … unless followed by a digit.
 * 4. Split `-` when preceded by a digit.
 */
const RULES_13A: readonly (readonly [RegExp, string])[] = [
  [/([\x7b-\x7e\x5b-\x60\x20-\x26\x28-\x2b\x3a-\x40\x2f])/gu, ' $1 '],
  [/([^0-9])([.,])/gu, '$1 $2 '],
  [/([.,])([^0-9])/gu, ' $1 $2'],
  [/([0-9])(-)/gu, '$1 $2 '],
];

/** sacreBLEU's TokenizerRegexp: the 13a rules, then single spaces (here: the tokens). */
function regexpTokens(s: string): string[] {
  let out = s;
  for (const [re, repl] of RULES_13A) out = out.replace(re, repl);
  return pySplit(out);
}

/**
 * Tokens of `line` under `13a`: drops `<skipped>`, joins `-\n` hyphenations, unescapes
 * `&quot; &amp; &lt; &gt;`, pads with spaces, then applies the mteval-v13a rules.
 */
export function tokenize13a(line: string): string[] {
  let s = line.replaceAll('<skipped>', '').replaceAll('-\n', '').replaceAll('\n', ' ');
  if (s.includes('&'))
    s = s.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>');
  return regexpTokens(` ${s} `);
}

/** Code point ranges (inclusive) sacreBLEU's `zh` tokenizer treats as Chinese; see the file comment. */
const ZH_RANGES: readonly (readonly [number, number])[] = [
  [0x3400, 0x4db5],
  [0x4e00, 0x9fa5],
  [0x9fa6, 0x9fbb],
  [0xf900, 0xfa2d],
  [0xfa30, 0xfa6a],
  [0xfa70, 0xfad9],
  [0x2001, 0x2a6d], // written '\u20000'–'\u2a6d6' (meant: Extension B)
  [0x2f81, 0x2fa1], // written '\u2f800'–'\u2fa1d' (meant: the Compatibility Supplement)
  [0xff00, 0xffef],
  [0x2e80, 0x2eff],
  [0x3000, 0x303f],
  [0x31c0, 0x31ef],
  [0x2f00, 0x2fdf],
  [0x2ff0, 0x2fff],
  [0x3100, 0x312f],
  [0x31a0, 0x31bf],
  [0xfe10, 0xfe1f],
  [0xfe30, 0xfe4f],
  [0x2600, 0x26ff],
  [0x2700, 0x27bf],
  [0x3200, 0x32ff],
  [0x3300, 0x33ff],
];

function isChineseChar(cp: number): boolean {
  return ZH_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi);
}

/** Tokens of `line` under `zh`: strip, space out every Chinese character, then the 13a rules (unpadded). */
export function tokenizeZh(line: string): string[] {
  let spaced = '';
  for (const ch of line.replace(LEADING_RE, '').replace(TRAILING_RE, '')) {
    spaced += isChineseChar(ch.codePointAt(0) as number) ? ` ${ch} ` : ch;
  }
  return regexpTokens(spaced);
}

/** Tokens of `line` under `char`: every character (code point) that is not whitespace. */
export function tokenizeChar(line: string): string[] {
  return pySplit(Array.from(line).join(' '));
}

const RULES_INTL: readonly (readonly [RegExp, string])[] = [
  [/(\P{N})(\p{P})/gu, '$1 $2 '],
  [/(\p{P})(\P{N})/gu, ' $1 $2'],
  [/(\p{S})/gu, ' $1 '],
];

/** Tokens of `line` under `intl` (mteval-v14 `--international-tokenization`). */
export function tokenizeIntl(line: string): string[] {
  let s = line;
  for (const [re, repl] of RULES_INTL) s = s.replace(re, repl);
  return pySplit(s);
}

const TOKENIZERS: { readonly [K in BleuTokenize]: (line: string) => string[] } = {
  '13a': tokenize13a,
  zh: tokenizeZh,
  char: tokenizeChar,
  intl: tokenizeIntl,
};

/** Tokens BLEU counts for one hypothesis or reference: trailing whitespace stripped, then `name`'s rules. */
export function bleuTokens(line: string, name: BleuTokenize): string[] {
  return TOKENIZERS[name](pyRstrip(line));
}

/** The tokenizer chosen for some target text, and why (for people). */
export interface BleuTokenizerChoice {
  readonly tokenize: BleuTokenize;
  readonly reason: string;
}

const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HAN = /\p{Script=Han}/u;

/**
 * The tokenizer sacreBLEU's users pick for references `refs`, as its `trg_lang` defaults do:
 * `zh` for Chinese, `char` for Japanese (in place of `ja-mecab`), `13a` otherwise. The
 * language is read off the script: Japanese when at least 2% of the letters are kana,
 * Chinese when at least 30% are Han characters and there is next to no kana.
 */
export function chooseBleuTokenizer(refs: readonly string[]): BleuTokenizerChoice {
  let letters = 0;
  let kana = 0;
  let han = 0;
  for (const line of refs) {
    for (const ch of line) {
      if (!/\p{L}/u.test(ch)) continue;
      letters++;
      if (KANA.test(ch)) kana++;
      else if (HAN.test(ch)) han++;
    }
  }
  if (letters > 0 && kana / letters >= 0.02)
    return {
      tokenize: 'char',
      reason: 'the references are Japanese: one token per character (sacreBLEU’s ja-mecab needs MeCab)',
    };
  if (letters > 0 && han / letters >= 0.3)
    return { tokenize: 'zh', reason: 'the references are Chinese: sacreBLEU’s zh tokenizer' };
  return { tokenize: '13a', reason: 'sacreBLEU’s default' };
}
