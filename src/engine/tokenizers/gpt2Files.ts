/**
 * GPT-2's tokenizer files ⇄ our byte-level BPE, with GPT-2's ids kept as they are.
 *
 * GPT-2 (Radford et al. 2019; `encoder.py` of openai/gpt-2) stores its vocabulary as
 * `encoder.json` / `vocab.json` ({token: id}) and its merges as `vocab.bpe` / `merges.txt`
 * (a `#version` line, then one "left right" pair per line in rank order). Tokens are byte
 * strings written through `bytes_to_unicode`: the 188 bytes that are printable Latin-1
 * stand for themselves, the other 68 become U+0100.. in byte order (so a space is "Ġ" and a
 * newline "Ċ"). Its pre-tokenizer is our `pretokenize.ts` (the same regular expression), and
 * its merge rule is ours (lowest rank first), so loading the files is a matter of ids:
 *
 * - byte b → vocab[bytes_to_unicode(b)]; merge i → vocab[left + right];
 * - every other vocabulary entry is a special token, never made from text, whose text is its
 *   key: GPT-2 has one, `<|endoftext|>` = 50256, the document separator, which takes the
 *   BOS and EOS roles; GPT-2 has no PAD and no UNK (roles -1);
 * - our own files written by {@link gpt2FilesOf} list `<pad> <bos> <eos> <unk>` at 0..3, and
 *   read back as exactly our layout (no `layout` in the tokenizer's JSON).
 *
 * Hugging Face's `tokenizer.json` (GPT-2's and every other model's) is read by hfVocab.ts and
 * the lab's HfTokenizer, which encodes with Hugging Face's own Tokenizers.js.
 *
 * Every problem is one EngineError('tokenizer/invalid') line naming the file, the entry and
 * the fix. Pure: callers pass the parsed JSON and the text.
 *
 * Leaves out: `<|endoftext|>` typed in text (encoded as its characters, as encoder.py does;
 * Hugging Face's tokenizer would map it to 50256), and vocabularies whose merges make one
 * token twice (GPT-2's do not).
 */

import { EngineError } from '../errors';
import { checkBpeLayout } from './bpeLayout';
import { BpeTokenizer } from './bpeTokenizer';
import { BASE_VOCAB, NUM_SPECIAL, OWN_SPECIAL_IDS, SPECIAL_TOKENS } from './special';
import type { BpeLayoutJSON, BpeSpecialToken, SpecialIds } from './special';

/** The line merges.txt starts with (Hugging Face writes it; encoder.py skips the first line). */
export const MERGES_VERSION_LINE = '#version: 0.2';

/** GPT-2's `bytes_to_unicode`: the printable character that stands for byte b in its files. */
export function bytesToUnicode(): string[] {
  const table = new Array<string>(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[b] = String.fromCharCode(printable ? b : next++);
  }
  return table;
}

function bad(what: string): EngineError {
  return new EngineError(
    'tokenizer/invalid',
    `${what}; use the vocab.json and merges.txt (or tokenizer.json) of one and the same model.`,
  );
}

function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

/** {token: id} as a map, with ids 0..n-1 each used once. */
function vocabMap(vocab: unknown, file: string): Map<string, number> {
  if (typeof vocab !== 'object' || vocab === null || Array.isArray(vocab))
    throw bad(`${file} must be a JSON object {token: id}`);
  const obj = vocab as Record<string, unknown>;
  const n = Object.keys(obj).length;
  const map = new Map<string, number>();
  const used = new Uint8Array(n);
  for (const token in obj) {
    const id = obj[token];
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0)
      throw bad(`${file}: token ${quote(token)} has id ${JSON.stringify(id)}, expected a non-negative integer`);
    if (id >= n)
      throw bad(
        `${file}: token ${quote(token)} has id ${id}, but ${n} tokens need ids 0..${n - 1} (a gap or a missing token)`,
      );
    if (used[id]) {
      const other = [...map].find(([, v]) => v === id)?.[0] ?? '';
      throw bad(`${file}: tokens ${quote(other)} and ${quote(token)} both have id ${id}`);
    }
    used[id] = 1;
    map.set(token, id);
  }
  return map;
}

/** merges.txt's pairs in rank order, with their line numbers (the `#version` line and blank lines skipped). */
export interface MergeLines {
  readonly left: string[];
  readonly right: string[];
  readonly lines: number[];
}

/** Parses merges.txt (`vocab.bpe`): one "left right" pair per line, after a `#version` line. */
export function parseMergesText(text: string, file = 'merges.txt'): MergeLines {
  const out: MergeLines = { left: [], right: [], lines: [] };
  let line = 0;
  for (let pos = 0; pos < text.length;) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = text.length;
    const stop = end > pos && text.charCodeAt(end - 1) === 13 ? end - 1 : end; // "\r\n"
    line++;
    const sp = text.indexOf(' ', pos);
    const blank = stop === pos;
    const version = line === 1 && text.startsWith('#version', pos);
    if (!blank && !version) {
      const sp2 = sp < 0 ? -1 : text.indexOf(' ', sp + 1);
      if (sp <= pos || sp >= stop - 1 || (sp2 !== -1 && sp2 < stop)) {
        throw bad(
          `${file} line ${line}: expected two tokens separated by one space, found ${quote(text.slice(pos, stop))}`,
        );
      }
      out.left.push(text.slice(pos, sp));
      out.right.push(text.slice(sp + 1, stop));
      out.lines.push(line);
    }
    pos = end + 1;
  }
  return out;
}

/** Roles of the leftover (special) tokens: `<|endoftext|>` is GPT-2's BOS and EOS; ours are named. */
function rolesOf(specials: readonly BpeSpecialToken[]): SpecialIds {
  const id = (...texts: string[]): number => specials.find((s) => texts.includes(s.text))?.id ?? -1;
  const endOfText = id('<|endoftext|>');
  return {
    pad: id('<pad>', '<|pad|>'),
    bos: endOfText >= 0 ? endOfText : id('<bos>', '<s>'),
    eos: endOfText >= 0 ? endOfText : id('<eos>', '</s>'),
    unk: id('<unk>'),
  };
}

/** True when the layout is ours (specials 0..3 named as ours, byte b at 4 + b, merge i at 260 + i). */
function isOwnLayout(layout: BpeLayoutJSON): boolean {
  return (
    layout.specials.length === NUM_SPECIAL &&
    layout.specials.every((s) => s.text === SPECIAL_TOKENS[s.id]) &&
    layout.byteIds.every((id, b) => id === NUM_SPECIAL + b) &&
    layout.mergeIds.every((id, i) => id === BASE_VOCAB + i) &&
    (['pad', 'bos', 'eos', 'unk'] as const).every((r) => layout.roles[r] === OWN_SPECIAL_IDS[r])
  );
}

/** Ids a vocabulary and its added tokens span (the largest id + 1). */
function vocabSize(vocab: ReadonlyMap<string, number>, extra: readonly BpeSpecialToken[]): number {
  let n = vocab.size;
  for (const sp of extra) if (Number.isInteger(sp.id) && sp.id >= n && sp.id < 1 << 20) n = sp.id + 1;
  return n;
}

/**
 * The tokenizer of a vocabulary map and merge pairs (strings in bytes_to_unicode form).
 * `where(i)` names merge i's place in its file; `extra` are specials declared elsewhere
 * (tokenizer.json's added_tokens) that may be missing from the vocabulary.
 */
function buildTokenizer(
  vocab: Map<string, number>,
  pairs: MergeLines,
  files: { vocab: string; merges: string },
  where: (i: number) => string,
  extra: readonly BpeSpecialToken[] = [],
): BpeTokenizer {
  const table = bytesToUnicode();
  const byteIds = table.map((ch, b) => {
    const id = vocab.get(ch);
    if (id === undefined)
      throw bad(
        `${files.vocab} has no token for byte 0x${b.toString(16).toUpperCase().padStart(2, '0')} ` +
          `(${quote(ch)}); a byte-level BPE vocabulary needs all 256 bytes`,
      );
    return id;
  });
  // What makes each id: -1 a byte, i ≥ 0 merge i, -2 nothing (yet). No strings on the happy path.
  const made = new Int32Array(vocabSize(vocab, extra)).fill(-2);
  byteIds.forEach((id) => (made[id] = -1));
  const maker = (id: number): string => (made[id] === -1 ? 'a byte' : where(made[id] as number));
  const merges: [number, number][] = [];
  const mergeIds: number[] = [];
  const idOf = (t: string, i: number, l: string, r: string): number => {
    const id = vocab.get(t);
    if (id === undefined)
      throw bad(`${where(i)}: ${quote(l)} + ${quote(r)} needs ${quote(t)}, which is not in ${files.vocab}`);
    return id;
  };
  for (let i = 0; i < pairs.left.length; i++) {
    const l = pairs.left[i] as string,
      r = pairs.right[i] as string;
    const a = idOf(l, i, l, r),
      b = idOf(r, i, l, r),
      c = idOf(l + r, i, l, r);
    if (made[a] === -2) throw bad(`${where(i)} uses ${quote(l)} before any earlier merge makes it`);
    if (made[b] === -2) throw bad(`${where(i)} uses ${quote(r)} before any earlier merge makes it`);
    if (made[c] !== -2)
      throw bad(
        `${where(i)} makes ${quote(l + r)}, which ${maker(c)} already makes (a vocabulary that ` +
          `makes one token twice, or merges a pair twice, is not supported)`,
      );
    made[c] = i;
    merges.push([a, b]);
    mergeIds.push(c);
  }
  const specials: BpeSpecialToken[] = [];
  for (const [text, id] of vocab) if (made[id] === -2) specials.push({ id, text });
  for (const sp of extra) if (!vocab.has(sp.text) && !specials.some((s) => s.id === sp.id)) specials.push(sp);
  specials.sort((a, b) => a.id - b.id);
  const layout: BpeLayoutJSON = { byteIds, mergeIds, specials, roles: rolesOf(specials) };
  const problem = checkBpeLayout(merges, layout, 256 + merges.length + specials.length);
  if (problem !== null) throw bad(`${files.vocab} with ${files.merges}: ${problem}`);
  return isOwnLayout(layout) ? new BpeTokenizer(merges) : new BpeTokenizer(merges, layout);
}

/**
 * Our BPE tokenizer from GPT-2's `vocab.json` (`encoder.json`), parsed, and `merges.txt`
 * (`vocab.bpe`), as text. Ids are the files' ids: GPT-2's text encodes to GPT-2's ids.
 */
export function bpeFromGpt2Files(
  vocabJson: unknown,
  mergesText: string,
  names = { vocab: 'vocab.json', merges: 'merges.txt' },
): BpeTokenizer {
  const vocab = vocabMap(vocabJson, names.vocab);
  const merges = parseMergesText(mergesText, names.merges);
  return buildTokenizer(vocab, merges, names, (i) => `${names.merges} line ${merges.lines[i] as number}`);
}

/** The files GPT-2-style loaders read: vocab.json's text and merges.txt's text. */
export interface Gpt2Files {
  readonly vocabJson: string;
  readonly mergesText: string;
}

/**
 * `tok` as GPT-2's `vocab.json` + `merges.txt`, which Hugging Face's GPT2Tokenizer (and
 * {@link bpeFromGpt2Files}) read with the same ids. Special tokens are listed under their
 * text (`<pad>`, … or `<|endoftext|>`). Throws when two ids would get one key (a special
 * token's text equal to a learned token's, or one token made twice): vocab.json keys
 * tokens by text, so it cannot hold such a vocabulary.
 */
export function gpt2FilesOf(tok: BpeTokenizer): Gpt2Files {
  const table = bytesToUnicode();
  const text = (id: number): string => {
    const special = tok.specialTextOf(id);
    if (special !== undefined) return special;
    let s = '';
    for (const b of tok.bytesOf(id)) s += table[b] as string;
    return s;
  };
  const vocab: Record<string, number> = {};
  const owner = new Map<string, number>();
  for (let id = 0; id < tok.vocabSize; id++) {
    const key = text(id);
    const other = owner.get(key);
    if (other !== undefined) {
      throw new EngineError(
        'tokenizer/invalid',
        `Tokens ${other} and ${id} are both ${quote(key)}, and vocab.json keys tokens by text, so ` +
          `it cannot hold this vocabulary; use tokenizer.json instead.`,
      );
    }
    owner.set(key, id);
    vocab[key] = id;
  }
  const lines = [MERGES_VERSION_LINE];
  for (const [a, b] of tok.mergeList().pairs) lines.push(`${text(a)} ${text(b)}`);
  return { vocabJson: `${JSON.stringify(vocab)}\n`, mergesText: `${lines.join('\n')}\n` };
}
