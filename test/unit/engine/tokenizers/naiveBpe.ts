/**
 * Test helper (not a test file): byte-level BPE written straight from its definition
 * (Sennrich et al. 2016, Algorithm 1) with no incremental bookkeeping — recount every pair at
 * every step — as the oracle for the fast trainer and encoder. Leaves out: speed.
 */

import type { Rng } from '../../../../src/engine/rng';
import { pretokenize } from '../../../../src/engine/tokenizers/pretokenize';
import { byteId } from '../../../../src/engine/tokenizers/special';
import { MAX_TRAIN_WORD_BYTES } from '../../../../src/engine/tokenizers/bpeTrain';
import { encodeWtf8 } from '../../../../src/engine/tokenizers/wtf8';

/** Replaces every non-overlapping (a, b), left to right, with `id`. */
export function replacePair(word: number[], a: number, b: number, id: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < word.length; i++) {
    if (i + 1 < word.length && word[i] === a && word[i + 1] === b) {
      out.push(id);
      i++;
    } else {
      out.push(word[i] as number);
    }
  }
  return out;
}

/** Reference trainer: recount all pairs of all chunk occurrences at every step. */
export function naiveMerges(corpus: string[], vocabSize: number): [number, number][] {
  // Chunks longer than MAX_TRAIN_WORD_BYTES are learned from as pieces that long (bpeTrain.ts).
  const words = corpus
    .flatMap((doc) => pretokenize(doc))
    .flatMap((c) => {
      const bytes = Array.from(encodeWtf8(c), byteId);
      const out: number[][] = [];
      for (let at = 0; at < bytes.length; at += MAX_TRAIN_WORD_BYTES)
        out.push(bytes.slice(at, at + MAX_TRAIN_WORD_BYTES));
      return out;
    });
  const merges: [number, number][] = [];
  while (260 + merges.length < vocabSize) {
    const counts = new Map<string, number>();
    for (const w of words) {
      for (let i = 0; i + 1 < w.length; i++) {
        const k = `${w[i]},${w[i + 1]}`;
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
    }
    let best: [number, number] | null = null,
      bestCount = 1;
    for (const [k, c] of counts) {
      const [a, b] = k.split(',').map(Number) as [number, number];
      if (c > bestCount || (c === bestCount && best !== null && (a < best[0] || (a === best[0] && b < best[1])))) {
        best = [a, b];
        bestCount = c;
      }
    }
    if (best === null) break;
    const id = 260 + merges.length;
    merges.push(best);
    for (let w = 0; w < words.length; w++) words[w] = replacePair(words[w] as number[], best[0], best[1], id);
  }
  return merges;
}

/** Reference encoder: per chunk, merge the lowest-ranked pair present (all occurrences) until none. */
export function naiveEncode(text: string, merges: readonly (readonly [number, number])[]): number[] {
  const rank = new Map(merges.map(([a, b], i) => [`${a},${b}`, i]));
  return pretokenize(text).flatMap((chunk) => {
    let w = Array.from(encodeWtf8(chunk), byteId);
    for (;;) {
      let best = -1;
      for (let i = 0; i + 1 < w.length; i++) {
        const r = rank.get(`${w[i]},${w[i + 1]}`);
        if (r !== undefined && (best < 0 || r < best)) best = r;
      }
      if (best < 0) return w;
      const [a, b] = merges[best] as readonly [number, number];
      w = replacePair(w, a, b, 260 + best);
    }
  });
}

/** Random text over a tiny alphabet: many ties and long runs such as "aaaa". */
export function tinyAlphabetText(rng: Rng, length: number): string {
  const alphabet = ['a', 'a', 'b', 'c', ' ', 'é', '\n'];
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[rng.int(alphabet.length)];
  return s;
}
