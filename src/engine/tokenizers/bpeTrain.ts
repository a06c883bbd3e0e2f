/**
 * Learning byte-level BPE merges (Sennrich et al. 2016, "Neural Machine Translation of Rare
 * Words with Subword Units", Algorithm 1; on bytes as in GPT-2, Radford et al. 2019 §2.2).
 *
 * The corpus is pre-tokenized into chunks (pretokenize.ts) whose frequencies are counted, so
 * each distinct chunk is one "word" with a weight. Each step merges the most frequent adjacent
 * pair everywhere it occurs, left to right; ties go to the lexicographically smallest pair
 * (a, then b). Training stops at the target size or when no pair occurs twice.
 *
 * Efficiency: pair counts are kept up to date incrementally. An index pair → words tells
 * which words to rewrite, and only the pair counts of those words change (by the difference
 * between their old and new pairs). The most frequent pair comes from a heap with lazy
 * deletion (a popped entry whose count no longer matches is stale and dropped). Each step
 * therefore costs time in proportion to the words that contain the merged pair, not the corpus.
 * A word is rewritten whole, so a chunk longer than {@link MAX_TRAIN_WORD_BYTES} (a line of
 * minified code, base64, unspaced script: one pre-tokenizer chunk of megabytes) is learned
 * from as consecutive words of at most that many bytes. Otherwise every merge rewrote the
 * whole chunk: a 1 MB chunk cost minutes for a thousand merges (11 s per MB of such text).
 * The merges learned differ only in pairs that would straddle those cuts; encoding is
 * unaffected (it applies merges to whole chunks).
 *
 * Leaves out: encoding with the merges (bpeTokenizer.ts); merges across chunk boundaries
 * (never happen, by design).
 */

import { BASE_VOCAB, MAX_VOCAB, byteId } from './special';
import { PairHeap } from './pairHeap';
import { forEachChunk } from './pretokenize';
import { encodeWtf8 } from './wtf8';

/** Key of the ordered pair (a, b) of ids; ordering keys orders pairs lexicographically. */
export function pairKey(a: number, b: number): number {
  return a * MAX_VOCAB + b;
}

/** Longest word BPE learns from (bytes); longer chunks are learned from in pieces this long (see the file comment). */
export const MAX_TRAIN_WORD_BYTES = 128;

/** Distinct chunks of the corpus as byte-id sequences, with how often each occurs. */
interface Words {
  readonly symbols: number[][];
  readonly freqs: number[];
}

/**
 * Pre-tokenized chunk frequencies, fed piece by piece (a large corpus, or a sample of one, is
 * never held whole). Pieces must be cut where the pre-tokenizer cuts anyway (textPieces.ts),
 * so that feeding a text in pieces counts the same chunks as feeding it whole.
 */
export class ChunkCounts {
  /** Chunk → occurrences; Map order is first-occurrence order, so training is deterministic. */
  readonly freq = new Map<string, number>();

  /** Counts the chunks of `text`. */
  add(text: string): void {
    const freq = this.freq;
    forEachChunk(text, (c) => freq.set(c, (freq.get(c) ?? 0) + 1));
  }
}

/**
 * The words BPE learns from: each distinct chunk's bytes with its count, a chunk longer than
 * {@link MAX_TRAIN_WORD_BYTES} as its consecutive pieces of that many bytes (equal pieces
 * merged, in first-occurrence order, so training stays deterministic).
 */
export function trainingWords(counts: ChunkCounts): Words {
  const symbols: number[][] = [];
  const freqs: number[] = [];
  const pieces = new Map<string, number>(); // a long chunk's piece (its bytes as latin1) → its word
  for (const [chunk, f] of counts.freq) {
    const bytes = encodeWtf8(chunk);
    if (bytes.length < 2) continue; // no pair to merge
    if (bytes.length <= MAX_TRAIN_WORD_BYTES) {
      symbols.push(Array.from(bytes, byteId));
      freqs.push(f);
      continue;
    }
    for (let at = 0; at + 1 < bytes.length; at += MAX_TRAIN_WORD_BYTES) {
      const piece = bytes.subarray(at, at + MAX_TRAIN_WORD_BYTES);
      if (piece.length < 2) continue;
      const key = String.fromCharCode(...piece);
      const w = pieces.get(key);
      if (w !== undefined) {
        freqs[w] = (freqs[w] as number) + f;
        continue;
      }
      pieces.set(key, symbols.length);
      symbols.push(Array.from(piece, byteId));
      freqs.push(f);
    }
  }
  return { symbols, freqs };
}

/** Adds `delta` to the count of every adjacent pair of `word` in `into`. */
function addPairs(word: readonly number[], delta: number, into: Map<number, number>): void {
  for (let i = 0; i + 1 < word.length; i++) {
    const k = pairKey(word[i] as number, word[i + 1] as number);
    into.set(k, (into.get(k) ?? 0) + delta);
  }
}

/** `word` with every non-overlapping (a, b), scanned left to right, replaced by `id`; null if none. */
function mergeWord(word: readonly number[], a: number, b: number, id: number): number[] | null {
  let out: number[] | null = null;
  for (let i = 0; i < word.length;) {
    if (i + 1 < word.length && word[i] === a && word[i + 1] === b) {
      out ??= word.slice(0, i);
      out.push(id);
      i += 2;
    } else {
      out?.push(word[i] as number);
      i++;
    }
  }
  return out;
}

/**
 * Learns up to `vocabSize − 260` merges from `corpus` (each item a document, or chunk counts
 * fed piece by piece). Merge i joins
 * ids [a, b] into id 260 + i. `vocabSize` must already be validated (an integer ≥ 260).
 */
export function trainBpeMerges(corpus: Iterable<string> | ChunkCounts, vocabSize: number): [number, number][] {
  let counts0: ChunkCounts;
  if (corpus instanceof ChunkCounts) counts0 = corpus;
  else {
    counts0 = new ChunkCounts();
    for (const doc of corpus) counts0.add(doc);
  }
  const { symbols, freqs } = trainingWords(counts0);
  const counts = new Map<number, number>();
  const where = new Map<number, Set<number>>(); // pair → words that contain (or once contained) it
  // Indexes the pairs of word w; with `id`, only those holding id (a merge creates no other
  // pair, and the word's older pairs are indexed already: the index is a superset).
  const index = (w: number, id = -1): void => {
    const word = symbols[w] as number[];
    for (let i = 0; i + 1 < word.length; i++) {
      if (id >= 0 && word[i] !== id && word[i + 1] !== id) continue;
      const k = pairKey(word[i] as number, word[i + 1] as number);
      let set = where.get(k);
      if (set === undefined) where.set(k, (set = new Set()));
      set.add(w);
    }
  };
  for (let w = 0; w < symbols.length; w++) {
    addPairs(symbols[w] as number[], freqs[w] as number, counts);
    index(w);
  }
  const heap = new PairHeap(true);
  for (const [k, c] of counts) heap.push(c, k);

  const merges: [number, number][] = [];
  while (BASE_VOCAB + merges.length < vocabSize && heap.size > 0) {
    const c = heap.peekPrimary() as number;
    const k = heap.peekSecondary() as number;
    heap.pop();
    if (counts.get(k) !== c) continue; // stale entry
    if (c < 2) break; // every remaining pair occurs once: merging would only memorize
    const a = Math.floor(k / MAX_VOCAB);
    const b = k - a * MAX_VOCAB;
    const id = BASE_VOCAB + merges.length;
    merges.push([a, b]);

    const delta = new Map<number, number>();
    const ws = where.get(k) ?? new Set<number>();
    where.delete(k);
    for (const w of ws) {
      const merged = mergeWord(symbols[w] as number[], a, b, id);
      if (merged === null) continue; // the index is a superset: this word lost the pair earlier
      const f = freqs[w] as number;
      addPairs(symbols[w] as number[], -f, delta);
      addPairs(merged, f, delta);
      symbols[w] = merged;
      index(w, id);
    }
    for (const [pk, d] of delta) {
      if (d === 0) continue;
      const nc = (counts.get(pk) ?? 0) + d;
      if (nc > 0) {
        counts.set(pk, nc);
        heap.push(nc, pk);
      } else {
        counts.delete(pk);
      }
    }
  }
  return merges;
}
