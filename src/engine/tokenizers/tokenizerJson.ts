/**
 * Loading saved tokenizers: strict validation of the versioned JSON form, then construction.
 *
 * A tokenizer file is
 *   { "format": "attention-lab-tokenizer", "version": 1, "type": "char", "vocabSize": N, "chars": [...] }
 *   { "format": "attention-lab-tokenizer", "version": 1, "type": "bpe", "vocabSize": N,
 *     "pretokenizer": "gpt2", "merges": [[a, b], ...] }
 * and, for a BPE vocabulary that keeps GPT-2's ids (loaded from its files, gpt2Files.ts),
 * a "layout" field too: { "byteIds": [...256], "mergeIds": [...], "specials": [{id, text}],
 * "roles": {pad, bos, eos, unk} } (bpeLayout.ts checks it).
 * Everything is checked before use — unknown or missing fields, a count that disagrees with
 * the lists, duplicate characters or merges, a merge that names an id not defined before it —
 * and each problem throws EngineError('tokenizer/invalid') naming the field and the fix. A model
 * trained with one tokenizer and run with a subtly different one gives garbage silently, so
 * nothing is repaired or guessed.
 *
 * Leaves out: reading files (src/lab owns I/O; it passes the parsed object or the text).
 */

import { EngineError } from '../errors';
import { checkBpeLayout } from './bpeLayout';
import { BpeTokenizer } from './bpeTokenizer';
import { CharTokenizer } from './charTokenizer';
import { PRETOKENIZER_NAME } from './pretokenize';
import { BASE_VOCAB, MAX_VOCAB, NUM_SPECIAL, TOKENIZER_FORMAT, TOKENIZER_VERSION } from './special';
import type { BpeLayoutJSON, Tokenizer } from './special';

const RETRAIN = 'retrain the tokenizer (or restore the tokenizer.json saved with the run)';

function invalid(problem: string): EngineError {
  return new EngineError('tokenizer/invalid', `Invalid tokenizer JSON: ${problem}; ${RETRAIN}.`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

function checkKeys(obj: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of allowed) {
    if (!(key in obj))
      throw invalid(`missing field "${key}" (a ${String(obj['type'])} tokenizer has ${allowed.join(', ')})`);
  }
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) throw invalid(`unknown field "${key}" (expected only ${allowed.join(', ')})`);
  }
}

function checkVocabSize(obj: Record<string, unknown>, learned: number, what: string): void {
  const v = obj['vocabSize'];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < BASE_VOCAB || v > MAX_VOCAB) {
    throw invalid(`"vocabSize" must be an integer in ${BASE_VOCAB}..${MAX_VOCAB}, found ${describe(v)}`);
  }
  if (v !== BASE_VOCAB + learned) {
    throw invalid(
      `"vocabSize" is ${v} but ${learned} ${what} give ${BASE_VOCAB + learned} (${BASE_VOCAB} base ` +
        `ids + ${learned}); the file may be truncated or edited`,
    );
  }
}

function charFromJSON(obj: Record<string, unknown>): CharTokenizer {
  checkKeys(obj, ['format', 'version', 'type', 'vocabSize', 'chars']);
  const chars = obj['chars'];
  if (!Array.isArray(chars))
    throw invalid(`"chars" must be an array of single-character strings, found ${describe(chars)}`);
  const seen = new Map<string, number>();
  for (let i = 0; i < chars.length; i++) {
    const c: unknown = chars[i];
    const where = `"chars"[${i}] (id ${BASE_VOCAB + i})`;
    if (typeof c !== 'string') throw invalid(`${where} must be a string, found ${describe(c)}`);
    const cp = c.codePointAt(0);
    if (cp === undefined || String.fromCodePoint(cp) !== c) {
      throw invalid(`${where} must be exactly one code point, found ${describe(c)} (${c.length} UTF-16 units)`);
    }
    if (cp >= 0xd800 && cp <= 0xdfff)
      throw invalid(
        `${where} is a lone surrogate U+${cp.toString(16).toUpperCase()}, which is always ` +
          `byte-encoded and never a vocabulary entry`,
      );
    const first = seen.get(c);
    if (first !== undefined)
      throw invalid(`${where} duplicates "chars"[${first}] (${JSON.stringify(c)}); each character may appear once`);
    seen.set(c, i);
  }
  checkVocabSize(obj, chars.length, 'characters');
  return new CharTokenizer(chars as string[]);
}

/** A BPE tokenizer in another vocabulary's layout (GPT-2's ids): shapes first, then checkBpeLayout. */
function bpeWithLayout(obj: Record<string, unknown>, merges: unknown[]): BpeTokenizer {
  const layout = obj['layout'];
  if (typeof layout !== 'object' || layout === null || Array.isArray(layout))
    throw invalid(`"layout" must be an object, found ${describe(layout)}`);
  const pairs: [number, number][] = [];
  for (let i = 0; i < merges.length; i++) {
    const m: unknown = merges[i];
    if (!Array.isArray(m) || m.length !== 2)
      throw invalid(`"merges"[${i}] must be a pair [a, b], found ${describe(m)}`);
    pairs.push([m[0] as number, m[1] as number]);
  }
  const problem = checkBpeLayout(pairs, layout as BpeLayoutJSON, obj['vocabSize'] as number);
  if (problem !== null) throw invalid(problem);
  return new BpeTokenizer(pairs, layout as BpeLayoutJSON);
}

function bpeFromJSON(obj: Record<string, unknown>): BpeTokenizer {
  if ('huggingface' in obj)
    throw invalid('a Hugging Face tokenizer is read by the lab (src/lab/runs/tokenizerFile.ts), not by the engine');
  const withLayout = 'layout' in obj;
  checkKeys(obj, [
    'format',
    'version',
    'type',
    'vocabSize',
    'pretokenizer',
    'merges',
    ...(withLayout ? ['layout'] : []),
  ]);
  if (obj['pretokenizer'] !== PRETOKENIZER_NAME) {
    throw invalid(
      `"pretokenizer" must be "${PRETOKENIZER_NAME}" (the only one this build knows), found ` +
        `${describe(obj['pretokenizer'])}`,
    );
  }
  const merges = obj['merges'];
  if (!Array.isArray(merges)) throw invalid(`"merges" must be an array of [a, b] id pairs, found ${describe(merges)}`);
  if (withLayout) return bpeWithLayout(obj, merges);
  const seen = new Map<string, number>();
  const out: [number, number][] = [];
  for (let i = 0; i < merges.length; i++) {
    const m: unknown = merges[i];
    const id = BASE_VOCAB + i;
    const where = `"merges"[${i}] (id ${id})`;
    if (!Array.isArray(m) || m.length !== 2) throw invalid(`${where} must be a pair [a, b], found ${describe(m)}`);
    for (const x of m as unknown[]) {
      if (typeof x !== 'number' || !Number.isInteger(x) || x < NUM_SPECIAL || x >= id) {
        throw invalid(
          `${where} joins ${describe(x)}, but a merge may only join byte ids ` +
            `${NUM_SPECIAL}..${BASE_VOCAB - 1} or ids of earlier merges (below ${id}); special ids ` +
            `0..${NUM_SPECIAL - 1} are never merged`,
        );
      }
    }
    const [a, b] = m as [number, number];
    const key = `${a},${b}`;
    const first = seen.get(key);
    if (first !== undefined)
      throw invalid(`${where} repeats the pair [${a}, ${b}] of "merges"[${first}]; each pair may be merged once`);
    seen.set(key, i);
    out.push([a, b]);
  }
  checkVocabSize(obj, merges.length, 'merges');
  return new BpeTokenizer(out);
}

/**
 * A tokenizer from its parsed JSON form (what `toJSON()` returns, after a JSON round-trip).
 * Throws EngineError('tokenizer/invalid') naming what is wrong and what to do.
 */
export function tokenizerFromJSON(json: unknown): Tokenizer {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw invalid(`expected an object with "format": "${TOKENIZER_FORMAT}", found ${describe(json)}`);
  }
  const obj = json as Record<string, unknown>;
  if (obj['format'] !== TOKENIZER_FORMAT) {
    throw invalid(
      `"format" must be "${TOKENIZER_FORMAT}", found ${describe(obj['format'])} (is this an ` +
        `Attention Lab tokenizer.json?)`,
    );
  }
  if (obj['version'] !== TOKENIZER_VERSION) {
    const v = obj['version'];
    const hint =
      typeof v === 'number' && v > TOKENIZER_VERSION ? ' — it was written by a newer Attention Lab; update, or' : ' —';
    throw new EngineError(
      'tokenizer/invalid',
      `Invalid tokenizer JSON: "version" must be ${TOKENIZER_VERSION}, found ${describe(v)}${hint} ${RETRAIN}.`,
    );
  }
  if (obj['type'] === 'char') return charFromJSON(obj);
  if (obj['type'] === 'bpe') return bpeFromJSON(obj);
  throw invalid(`"type" must be "char" or "bpe", found ${describe(obj['type'])}`);
}

/** {@link tokenizerFromJSON} of JSON text; text that is not JSON also gives 'tokenizer/invalid'. */
export function parseTokenizerJSON(text: string): Tokenizer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch (e) {
    throw new EngineError(
      'tokenizer/invalid',
      `Tokenizer file is not valid JSON (${e instanceof Error ? e.message : String(e)}); ${RETRAIN}.`,
      { cause: e },
    );
  }
  return tokenizerFromJSON(parsed);
}
