/**
 * Character-level tokenizer: one id per code point seen in training, with byte fallback.
 *
 * Vocabulary: the specials (0..3), the 256 byte tokens (4..259), then the corpus's code
 * points from id 260, most frequent first, ties broken by smaller code point, capped so
 * the total stays within `maxVocab`. A code point outside the vocabulary is written as its
 * WTF-8 bytes (SentencePiece's `byte_fallback`, Kudo & Richardson 2018), so every string —
 * unseen characters and lone surrogates included — round-trips exactly and UNK is never
 * produced. Lone surrogates are never vocabulary entries: they always take the byte path.
 *
 * Leaves out: normalization and merging of characters (that is BPE, bpeTokenizer.ts), and
 * JSON validation (tokenizerJson.ts checks a file before it reaches the constructor).
 */

import { EngineError } from '../errors';
import {
  BASE_VOCAB,
  BYTE_OFFSET,
  MAX_VOCAB,
  NUM_SPECIAL,
  OWN_SPECIAL_IDS,
  SPECIAL_TOKENS,
  TOKENIZER_FORMAT,
  TOKENIZER_VERSION,
  byteId,
  checkId,
  wrapSpecials,
} from './special';
import type { CharTokenizerJSON, DecodeOptions, EncodeOptions, Tokenizer } from './special';
import { byteTokenText, codePointAt, decodeWtf8, displayText, encodeWtf8, pushCodePointBytes } from './wtf8';

/** Options of {@link trainCharTokenizer}. */
export interface CharTrainOptions {
  /** Cap on the total vocabulary (specials + 256 bytes + characters); at least 260. Default: no cap. */
  readonly maxVocab?: number;
}

/** A character tokenizer; build one with {@link trainCharTokenizer} or `tokenizerFromJSON`. */
export class CharTokenizer implements Tokenizer {
  readonly type = 'char' as const;
  readonly vocabSize: number;
  readonly specialIds = OWN_SPECIAL_IDS;
  /** Learned characters; `chars[i]` has id 260 + i. */
  private readonly chars: readonly string[];
  /** Code point → id for the learned characters. */
  private readonly idOf: ReadonlyMap<number, number>;

  /**
   * `chars` must be distinct single code points, none a surrogate (tokenizerJson.ts and
   * training guarantee it); the constructor trusts its caller.
   */
  constructor(chars: readonly string[]) {
    this.chars = chars.slice();
    this.vocabSize = BASE_VOCAB + chars.length;
    const idOf = new Map<number, number>();
    chars.forEach((c, i) => idOf.set(c.codePointAt(0) as number, BASE_VOCAB + i));
    this.idOf = idOf;
  }

  encode(text: string, opts?: EncodeOptions): Int32Array {
    const ids: number[] = [];
    const bytes: number[] = [];
    for (let i = 0; i < text.length;) {
      const cp = codePointAt(text, i);
      i += cp > 0xffff ? 2 : 1;
      const id = this.idOf.get(cp);
      if (id !== undefined) {
        ids.push(id);
        continue;
      }
      bytes.length = 0;
      pushCodePointBytes(cp, bytes);
      for (const b of bytes) ids.push(byteId(b));
    }
    return wrapSpecials(ids, opts);
  }

  decode(ids: ArrayLike<number>, opts?: DecodeOptions): string {
    const skipSpecial = opts?.skipSpecial === true;
    const parts: string[] = [];
    const pending: number[] = []; // bytes of consecutive byte tokens, decoded together
    const flush = (): void => {
      if (pending.length > 0) parts.push(decodeWtf8(pending));
      pending.length = 0;
    };
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      checkId(id, this.vocabSize);
      if (id >= BASE_VOCAB) {
        flush();
        parts.push(this.chars[id - BASE_VOCAB] as string);
      } else if (id >= BYTE_OFFSET) {
        pending.push(id - BYTE_OFFSET);
      } else {
        flush();
        if (!skipSpecial) parts.push(SPECIAL_TOKENS[id] as string);
      }
    }
    flush();
    return parts.join('');
  }

  byteLength(id: number): number {
    checkId(id, this.vocabSize);
    if (id < NUM_SPECIAL) return 0;
    if (id < BASE_VOCAB) return 1;
    const cp = (this.chars[id - BASE_VOCAB] as string).codePointAt(0) as number;
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }

  tokenText(id: number): string {
    checkId(id, this.vocabSize);
    if (id < NUM_SPECIAL) return SPECIAL_TOKENS[id] as string;
    if (id < BASE_VOCAB) return byteTokenText(id - BYTE_OFFSET);
    return displayText(this.chars[id - BASE_VOCAB] as string);
  }

  tokenBytes(id: number): Uint8Array | null {
    checkId(id, this.vocabSize);
    if (id < NUM_SPECIAL) return null;
    if (id < BASE_VOCAB) return Uint8Array.of(id - BYTE_OFFSET);
    return encodeWtf8(this.chars[id - BASE_VOCAB] as string);
  }

  toJSON(): CharTokenizerJSON {
    return {
      format: TOKENIZER_FORMAT,
      version: TOKENIZER_VERSION,
      type: 'char',
      vocabSize: this.vocabSize,
      chars: this.chars.slice(),
    };
  }
}

/**
 * Trains a character tokenizer on `corpus` (each item a document). Deterministic: the same
 * corpus and options give the same vocabulary. Throws EngineError('config/invalid') when
 * `maxVocab` is not an integer in 260..2^20.
 */
export function trainCharTokenizer(corpus: Iterable<string>, opts: CharTrainOptions = {}): CharTokenizer {
  const maxVocab = opts.maxVocab ?? MAX_VOCAB;
  if (!Number.isInteger(maxVocab) || maxVocab < BASE_VOCAB || maxVocab > MAX_VOCAB) {
    throw new EngineError(
      'config/invalid',
      `maxVocab ${String(opts.maxVocab)} is invalid: a character tokenizer needs at least ${BASE_VOCAB} ids ` +
        `(4 specials + 256 byte tokens) and at most ${MAX_VOCAB}; set maxVocab to ${BASE_VOCAB} or more ` +
        `(e.g. ${BASE_VOCAB + 100}), or leave it out for no cap.`,
    );
  }
  const counts = new CharCounts();
  for (const doc of corpus) counts.add(doc);
  return counts.tokenizer(maxVocab);
}

/**
 * Code point frequencies, fed piece by piece (a large corpus is never held whole), from
 * which {@link trainCharTokenizer} builds its vocabulary. Feeding a text in any number of
 * pieces gives the same counts, provided no piece boundary splits a surrogate pair.
 */
export class CharCounts {
  private readonly counts = new Map<number, number>();

  /** Counts the code points of `text` (lone surrogates are skipped: they always take the byte path). */
  add(text: string): void {
    const counts = this.counts;
    for (let i = 0; i < text.length;) {
      const cp = codePointAt(text, i);
      i += cp > 0xffff ? 2 : 1;
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      counts.set(cp, (counts.get(cp) ?? 0) + 1);
    }
  }

  /** The vocabulary: most frequent first, ties by smaller code point, within `maxVocab` ids in all. */
  tokenizer(maxVocab: number = MAX_VOCAB): CharTokenizer {
    const ranked = [...this.counts.entries()].sort((x, y) => y[1] - x[1] || x[0] - y[0]);
    const kept = ranked.slice(0, maxVocab - BASE_VOCAB);
    return new CharTokenizer(kept.map(([cp]) => String.fromCodePoint(cp)));
  }
}
