/**
 * A seeded hash of a few whole numbers, for choices that must depend only on the seed and
 * on where something is (which pieces of a large corpus a BPE sample takes), never on
 * iteration order or on how many random numbers were drawn before.
 *
 * Mixing: each number is folded in with a multiply by an odd constant and a rotation, then
 * the result is finalized with murmur3's fmix32 (Appleby, MurmurHash3), which spreads every
 * input bit over the output.
 *
 * Leaves out: streams of random numbers (engine/rng.ts `Rng`).
 */

/** murmur3's 32-bit finalizer. */
export function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** An unsigned 32-bit hash of `seed` and `parts` (each taken as a 32-bit integer). */
export function hashSeed(seed: number, ...parts: readonly number[]): number {
  let h = Math.imul(seed | 0, 0x9e3779b1) ^ 0x632be5ab;
  for (const p of parts) {
    h = Math.imul(h ^ (p | 0), 0xcc9e2d51);
    h = (h << 15) | (h >>> 17);
    h = Math.imul(h, 0x1b873593);
  }
  return fmix32(h);
}
