/**
 * Byte-level BPE tokenizer (Sennrich et al. 2016; byte-level as in GPT-2, Radford et al. 2019
 * §2.2): text → WTF-8 bytes per pre-tokenized chunk → merges applied by rank.
 *
 * Ids: specials 0..3, bytes 4..259, merge i → id 260 + i. Because every byte has a token,
 * every string encodes (UNK is never produced) and decoding the bytes back is exact
 * (wtf8.ts covers lone surrogates).
 *
 * Encoding a chunk applies the lowest-ranked pair present first, leftmost first among equal
 * ranks — the same result as replaying the training merges in order — using a linked list of
 * symbols and a heap of (rank, position), O(n log n) in the chunk length so a long run
 * (a minified line) stays fast. Results are cached per chunk string; the cache is per
 * instance and is cleared when it grows past a bound.
 *
 * Leaves out: training (bpeTrain.ts), JSON validation (tokenizerJson.ts), dropout/sampling of
 * segmentations.
 */

import { EngineError } from '../errors';
import type { ChunkCounts } from './bpeTrain';
import { pairKey, trainBpeMerges } from './bpeTrain';
import { PairHeap } from './pairHeap';
import { PRETOKENIZER_NAME, forEachChunk } from './pretokenize';
import {
  BASE_VOCAB,
  BYTE_OFFSET,
  MAX_VOCAB,
  NUM_SPECIAL,
  SPECIAL_TOKENS,
  TOKENIZER_FORMAT,
  TOKENIZER_VERSION,
  byteId,
  checkId,
  wrapSpecials,
} from './special';
import type { BpeTokenizerJSON, DecodeOptions, EncodeOptions, Tokenizer } from './special';
import { byteTokenText, decodeWtf8, displayBytes, encodeWtf8 } from './wtf8';

/** Options of {@link trainBpeTokenizer}. */
export interface BpeTrainOptions {
  /** Target total vocabulary (specials + 256 bytes + merges); at least 260. */
  readonly vocabSize: number;
}

/** Chunks cached per tokenizer before the cache is cleared (bounds memory on huge inputs). */
const CACHE_LIMIT = 65536;

/** A byte-level BPE tokenizer; build one with {@link trainBpeTokenizer} or `tokenizerFromJSON`. */
export class BpeTokenizer implements Tokenizer {
  readonly type = 'bpe' as const;
  readonly vocabSize: number;
  private readonly merges: readonly (readonly [number, number])[];
  /** pairKey(a, b) → merge rank. */
  private readonly ranks: ReadonlyMap<number, number>;
  /** Bytes of each id (empty for specials). */
  private readonly tokenBytes: readonly Uint8Array[];
  private readonly cache = new Map<string, Int32Array>();

  /**
   * `merges[i]` must join two ids below 260 + i that are not specials, with no pair repeated
   * (tokenizerJson.ts and training guarantee it); the constructor trusts its caller.
   */
  constructor(merges: readonly (readonly [number, number])[]) {
    this.merges = merges.map(([a, b]) => [a, b] as const);
    this.vocabSize = BASE_VOCAB + merges.length;
    const ranks = new Map<number, number>();
    const tokenBytes: Uint8Array[] = [];
    for (let id = 0; id < NUM_SPECIAL; id++) tokenBytes.push(new Uint8Array(0));
    for (let b = 0; b < 256; b++) tokenBytes.push(Uint8Array.of(b));
    merges.forEach(([a, b], i) => {
      ranks.set(pairKey(a, b), i);
      const x = tokenBytes[a] as Uint8Array, y = tokenBytes[b] as Uint8Array;
      const joined = new Uint8Array(x.length + y.length);
      joined.set(x, 0);
      joined.set(y, x.length);
      tokenBytes.push(joined);
    });
    this.ranks = ranks;
    this.tokenBytes = tokenBytes;
  }

  encode(text: string, opts?: EncodeOptions): Int32Array {
    const ids: number[] = [];
    forEachChunk(text, (chunk) => {
      let got = this.cache.get(chunk);
      if (got === undefined) {
        got = this.encodeChunk(chunk);
        if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
        this.cache.set(chunk, got);
      }
      for (let i = 0; i < got.length; i++) ids.push(got[i] as number);
    });
    return wrapSpecials(ids, opts);
  }

  /** Ids of one chunk: its bytes with merges applied lowest rank first, leftmost first. */
  private encodeChunk(chunk: string): Int32Array {
    const bytes = encodeWtf8(chunk);
    const n = bytes.length;
    const ids = Int32Array.from(bytes, byteId); // -1 marks a symbol absorbed by its left neighbour
    const prev = new Int32Array(n); // linked list of live symbols; -1 and n are the ends
    const next = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      prev[i] = i - 1;
      next[i] = i + 1;
    }
    const rankAt = (i: number): number | undefined =>
      next[i] < n ? this.ranks.get(pairKey(ids[i], ids[next[i]])) : undefined;
    const heap = new PairHeap(false); // (rank, position of the pair's left symbol)
    for (let i = 0; i + 1 < n; i++) {
      const r = rankAt(i);
      if (r !== undefined) heap.push(r, i);
    }
    while (heap.size > 0) {
      const r = heap.peekPrimary() as number;
      const i = heap.peekSecondary() as number;
      heap.pop();
      if (ids[i] < 0 || rankAt(i) !== r) continue; // stale: this pair changed since the push
      const j = next[i];
      ids[i] = BASE_VOCAB + r;
      ids[j] = -1;
      next[i] = next[j];
      if (next[i] < n) prev[next[i]] = i;
      // Only the pairs on either side of the new symbol are new.
      const p = prev[i];
      const left = p >= 0 ? rankAt(p) : undefined;
      if (left !== undefined) heap.push(left, p);
      const right = rankAt(i);
      if (right !== undefined) heap.push(right, i);
    }
    const out: number[] = [];
    for (let i = 0; i < n; i = next[i]) out.push(ids[i]);
    return Int32Array.from(out);
  }

  decode(ids: ArrayLike<number>, opts?: DecodeOptions): string {
    const skipSpecial = opts?.skipSpecial === true;
    const parts: string[] = [];
    const pending: number[] = [];
    const flush = (): void => {
      if (pending.length > 0) parts.push(decodeWtf8(pending));
      pending.length = 0;
    };
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      checkId(id, this.vocabSize);
      if (id < NUM_SPECIAL) {
        flush();
        if (!skipSpecial) parts.push(SPECIAL_TOKENS[id] as string);
        continue;
      }
      const b = this.tokenBytes[id] as Uint8Array;
      for (let k = 0; k < b.length; k++) pending.push(b[k] as number);
    }
    flush();
    return parts.join('');
  }

  tokenText(id: number): string {
    checkId(id, this.vocabSize);
    if (id < NUM_SPECIAL) return SPECIAL_TOKENS[id] as string;
    if (id < BASE_VOCAB) return byteTokenText(id - BYTE_OFFSET);
    return displayBytes(this.tokenBytes[id] as Uint8Array);
  }

  toJSON(): BpeTokenizerJSON {
    return {
      format: TOKENIZER_FORMAT,
      version: TOKENIZER_VERSION,
      type: 'bpe',
      vocabSize: this.vocabSize,
      pretokenizer: PRETOKENIZER_NAME,
      merges: this.merges.map(([a, b]) => [a, b] as const),
    };
  }
}

/**
 * Trains a byte-level BPE tokenizer on `corpus` (each item a document, or chunk counts fed
 * piece by piece) to `vocabSize` ids, or
 * fewer when no pair occurs twice any more. Deterministic: same corpus and options, same
 * merges. Throws EngineError('config/invalid') when `vocabSize` is not an integer in 260..2^20.
 */
export function trainBpeTokenizer(corpus: Iterable<string> | ChunkCounts, opts: BpeTrainOptions): BpeTokenizer {
  const { vocabSize } = opts;
  if (!Number.isInteger(vocabSize) || vocabSize < BASE_VOCAB || vocabSize > MAX_VOCAB) {
    throw new EngineError(
      'config/invalid',
      `BPE vocabSize ${String(vocabSize)} is invalid: byte-level BPE needs at least ${BASE_VOCAB} ids ` +
        `(4 specials + 256 byte tokens) and at most ${MAX_VOCAB}; set vocabSize to ${BASE_VOCAB} or more ` +
        `(e.g. 1000 for a small corpus).`,
    );
  }
  return new BpeTokenizer(trainBpeMerges(corpus, vocabSize));
}
