/**
 * Checks a BPE vocabulary laid out otherwise than ours (a `BpeLayoutJSON`: GPT-2's ids kept
 * as they are) before a BpeTokenizer trusts it: every id below the vocabulary size is exactly
 * one byte, merge result or special token; each merge joins ids defined before it (bytes or
 * earlier merges); no pair is merged twice; the roles (BOS, EOS, …) name special tokens.
 *
 * Leaves out: reading GPT-2's files (gpt2Files.ts) and the JSON envelope (tokenizerJson.ts).
 */

import { pairKey } from './bpeTrain';
import { MAX_VOCAB } from './special';
import type { BpeLayoutJSON } from './special';

function isId(x: unknown, size: number): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= 0 && x < size;
}

/**
 * The first problem of `layout` with `merges` for a vocabulary of `vocabSize` ids, as a
 * phrase naming the field ("layout.byteIds[3] …"), or null when it is consistent.
 */
export function checkBpeLayout(
  merges: readonly (readonly [number, number])[],
  layout: BpeLayoutJSON,
  vocabSize: number,
): string | null {
  if (!Number.isInteger(vocabSize) || vocabSize < 257 || vocabSize > MAX_VOCAB)
    return `vocabSize must be an integer in 257..${MAX_VOCAB}, found ${String(vocabSize)}`;
  const { byteIds, mergeIds, specials, roles } = layout;
  if (!Array.isArray(byteIds) || byteIds.length !== 256) return 'layout.byteIds must list the ids of the 256 bytes';
  if (!Array.isArray(mergeIds) || mergeIds.length !== merges.length)
    return `layout.mergeIds must list one id per merge (${merges.length})`;
  if (!Array.isArray(specials)) return 'layout.specials must be an array of {id, text}';
  if (256 + merges.length + specials.length !== vocabSize) {
    return (
      `vocabSize is ${vocabSize} but 256 bytes + ${merges.length} merges + ${specials.length} ` +
      `special tokens make ${256 + merges.length + specials.length}`
    );
  }
  // Who holds each id, as a field path made only when a message needs it (50k merges load in
  // well under a second only if the happy path allocates no strings).
  const what: ((() => string) | undefined)[] = new Array<(() => string) | undefined>(vocabSize);
  const claim = (id: unknown, name: () => string): string | null => {
    if (!isId(id, vocabSize)) return `${name()} must be an id in 0..${vocabSize - 1}, found ${JSON.stringify(id)}`;
    const before = what[id];
    if (before !== undefined) return `${name()} gives id ${id}, which ${before()} already has`;
    what[id] = name;
    return null;
  };
  for (let b = 0; b < 256; b++) {
    const p = claim(byteIds[b], () => `layout.byteIds[${b}]`);
    if (p) return p;
  }
  for (let i = 0; i < specials.length; i++) {
    const sp = specials[i];
    if (typeof sp !== 'object' || sp === null || typeof sp.text !== 'string' || sp.text === '')
      return `layout.specials[${i}] must be {id, text} with a non-empty text`;
    const p = claim(sp.id, () => `layout.specials[${i}] (${JSON.stringify(sp.text)})`);
    if (p) return p;
  }
  const defined = new Uint8Array(vocabSize);
  for (const id of byteIds) defined[id] = 1;
  const seen = new Set<number>();
  for (let i = 0; i < merges.length; i++) {
    const [a, b] = merges[i] as readonly [number, number];
    if (!isId(a, vocabSize) || !isId(b, vocabSize) || !defined[a] || !defined[b]) {
      return (
        `merges[${i}] joins [${String(a)}, ${String(b)}], but a merge may only join byte ids ` +
        `or ids made by earlier merges`
      );
    }
    const key = pairKey(a, b);
    if (seen.has(key)) return `merges[${i}] repeats the pair [${a}, ${b}]; each pair may be merged once`;
    seen.add(key);
    const p = claim(mergeIds[i], () => `layout.mergeIds[${i}]`);
    if (p) return p;
    defined[mergeIds[i] as number] = 1;
  }
  for (const role of ['pad', 'bos', 'eos', 'unk'] as const) {
    const id: unknown = roles?.[role];
    if (id === -1) continue;
    if (!isId(id, vocabSize) || !specials.some((sp) => sp.id === id))
      return `layout.roles.${role} must be -1 or the id of a special token, found ${JSON.stringify(id)}`;
  }
  return null;
}
