/**
 * Byte-level BPE tokenizer (Sennrich et al. 2016; byte-level as in GPT-2, Radford et al. 2019
 * §2.2): text → WTF-8 bytes per pre-tokenized chunk → merges applied by rank.
 *
 * Ids: specials 0..3, bytes 4..259, merge i → id 260 + i. Because every byte has a token,
 * every string encodes (UNK is never produced) and decoding the bytes back is exact
 * (wtf8.ts covers lone surrogates). A vocabulary loaded from GPT-2's files keeps GPT-2's
 * ids instead (a `BpeLayoutJSON`: where each byte, merge result and special token sits; see
 * gpt2Files.ts); the algorithm is the same, only the numbering differs. Special tokens are
 * never made from text: "<|endoftext|>" in a string encodes as its characters, as in
 * GPT-2's own encoder.py.
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
  MAX_VOCAB,
  OWN_SPECIAL_IDS,
  SPECIAL_TOKENS,
  TOKENIZER_FORMAT,
  TOKENIZER_VERSION,
  byteId,
  checkId,
  wrapSpecials,
} from './special';
import type { BpeLayoutJSON, BpeTokenizerJSON, DecodeOptions, EncodeOptions, SpecialIds, Tokenizer } from './special';
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
  readonly specialIds: SpecialIds;
  private readonly merges: readonly (readonly [number, number])[];
  private readonly layout: BpeLayoutJSON | undefined;
  /** pairKey(a, b) → merge rank. */
  private readonly ranks: ReadonlyMap<number, number>;
  /** Id of byte b; id of the token merge r makes. */
  private readonly byteIds: Int32Array;
  private readonly mergeIds: Int32Array;
  /**
   * Bytes of every id, in one buffer: id's are bytes[start[id] .. start[id + 1]) (empty for
   * specials). One buffer, not a typed array per token: GPT-2's 50k tokens then load fast.
   */
  private readonly bytes: Uint8Array;
  private readonly start: Int32Array;
  /** The byte a single-byte token stands for, else -1; the text of a special, else undefined. */
  private readonly byteOf: Int16Array;
  private readonly specialText: readonly (string | undefined)[];
  private readonly cache = new Map<string, Int32Array>();

  /**
   * `merges[i]` must join two ids below 260 + i that are not specials, with no pair repeated
   * (tokenizerJson.ts and training guarantee it); with `layout`, two byte or earlier merge
   * ids of that layout, which assigns every id below its size once (checkBpeLayout checks
   * it). The constructor trusts its caller.
   */
  constructor(merges: readonly (readonly [number, number])[], layout?: BpeLayoutJSON) {
    this.merges = merges.map(([a, b]) => [a, b] as const);
    this.layout = layout;
    this.byteIds = Int32Array.from(layout?.byteIds ?? Array.from({ length: 256 }, (_, b) => byteId(b)));
    this.mergeIds = Int32Array.from(layout?.mergeIds ?? merges.map((_, i) => BASE_VOCAB + i));
    this.specialIds = layout?.roles ?? OWN_SPECIAL_IDS;
    const specials = layout?.specials ?? SPECIAL_TOKENS.map((text, id) => ({ id, text }));
    this.vocabSize = 256 + merges.length + specials.length;
    const V = this.vocabSize;
    const specialText: (string | undefined)[] = new Array<string | undefined>(V);
    const byteOf = new Int16Array(V).fill(-1);
    for (const sp of specials) specialText[sp.id] = sp.text;
    const len = new Int32Array(V);
    for (let b = 0; b < 256; b++) {
      const id = this.byteIds[b] as number;
      len[id] = 1;
      byteOf[id] = b;
    }
    merges.forEach(([a, b], i) => (len[this.mergeIds[i] as number] = (len[a] as number) + (len[b] as number)));
    const start = new Int32Array(V + 1);
    for (let id = 0; id < V; id++) start[id + 1] = (start[id] as number) + (len[id] as number);
    const bytes = new Uint8Array(start[V] as number);
    for (let b = 0; b < 256; b++) bytes[start[this.byteIds[b] as number] as number] = b;
    const ranks = new Map<number, number>();
    merges.forEach(([a, b], i) => {
      ranks.set(pairKey(a, b), i);
      const at = start[this.mergeIds[i] as number] as number;
      bytes.copyWithin(at, start[a] as number, start[a + 1] as number);
      bytes.copyWithin(at + (len[a] as number), start[b] as number, start[b + 1] as number);
    });
    this.ranks = ranks;
    this.bytes = bytes;
    this.start = start;
    this.byteOf = byteOf;
    this.specialText = specialText;
  }

  /** Bytes of token `id` (empty for a special token). */
  bytesOf(id: number): Uint8Array {
    checkId(id, this.vocabSize);
    return this.bytes.subarray(this.start[id], this.start[id + 1]);
  }

  byteLength(id: number): number {
    return this.bytesOf(id).length;
  }

  /** The merges in rank order, as [a, b] ids, and the id each makes. */
  mergeList(): { readonly pairs: readonly (readonly [number, number])[]; readonly ids: Int32Array } {
    return { pairs: this.merges, ids: this.mergeIds.slice() };
  }

  /** Text of special token `id`, or undefined when `id` is not a special token. */
  specialTextOf(id: number): string | undefined {
    return this.specialText[id];
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
    return wrapSpecials(ids, opts, this.specialIds);
  }

  /** Ids of one chunk: its bytes with merges applied lowest rank first, leftmost first. */
  private encodeChunk(chunk: string): Int32Array {
    const bytes = encodeWtf8(chunk);
    const n = bytes.length;
    const ids = Int32Array.from(bytes, (b) => this.byteIds[b] as number);
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
      ids[i] = this.mergeIds[r] as number;
      ids[j] = -1; // absorbed by its left neighbour
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
      const special = this.specialText[id];
      if (special !== undefined) {
        flush();
        if (!skipSpecial) parts.push(special);
        continue;
      }
      for (let k = this.start[id] as number; k < (this.start[id + 1] as number); k++)
        pending.push(this.bytes[k] as number);
    }
    flush();
    return parts.join('');
  }

  tokenText(id: number): string {
    checkId(id, this.vocabSize);
    const special = this.specialText[id];
    if (special !== undefined) return special;
    const b = this.byteOf[id] as number;
    if (b >= 0) return byteTokenText(b);
    return displayBytes(this.bytes.subarray(this.start[id], this.start[id + 1]));
  }

  tokenBytes(id: number): Uint8Array | null {
    checkId(id, this.vocabSize);
    if (this.specialText[id] !== undefined) return null;
    return this.bytes.slice(this.start[id], this.start[id + 1]);
  }

  toJSON(): BpeTokenizerJSON {
    return {
      format: TOKENIZER_FORMAT,
      version: TOKENIZER_VERSION,
      type: 'bpe',
      vocabSize: this.vocabSize,
      pretokenizer: PRETOKENIZER_NAME,
      merges: this.merges.map(([a, b]) => [a, b] as const),
      ...(this.layout ? { layout: this.layout } : {}),
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
