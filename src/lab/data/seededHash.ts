/**
 * Every seeded hash of the lab, in one place: the choices that must depend only on the seed
 * and on where something is — which documents and pairs are held out, which pieces of a large
 * corpus a BPE sample takes, which random stream a training step draws from — never on
 * iteration order or on how many random numbers were drawn before.
 *
 * Mixing: numbers are folded in with multiplies by odd constants and rotations, strings with
 * FNV-1a (Fowler, Noll, Vo), and results finalized with murmur3's fmix32 (Appleby,
 * MurmurHash3), which spreads every input bit over the output.
 *
 * Existing run folders resume with exactly the data split and batches they started with, so
 * these outputs are pinned (test/unit/lab/data/seededHash.test.ts). Two of the mixers below
 * cannot be written through {@link hashSeed} without changing their numbers; they keep their
 * own arithmetic, named and documented, rather than move a run's validation set.
 *
 * Leaves out: streams of random numbers (engine/rng.ts `Rng`; dataset.ts `stepRng` seeds one
 * from {@link stepSeed}).
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

/** An unsigned 32-bit hash of a string (FNV-1a over its UTF-8 bytes) and `seed`, finalized with fmix32. */
export function hashString(s: string, seed: number): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) h = Math.imul(h ^ b, 0x01000193);
  return fmix32(h ^ Math.imul(seed | 0, 0x9e3779b1));
}

/** A hash as a number uniform in [0, 1). */
export function unitInterval(hash: number): number {
  return (hash >>> 0) / 4294967296;
}

/**
 * The seed of the random stream of one (run seed, stream, step): batches, dropout masks and
 * initial weights draw from `new Rng(stepSeed(…))`, so a resumed run sees exactly the numbers
 * the uninterrupted one would have. Its own mix of the three numbers, not {@link hashSeed}:
 * it seeded every run folder before that existed, and their batches must not move.
 */
export function stepSeed(seed: number, stream: number, step: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b);
  h ^= Math.imul(stream + 0x632be5ab, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) ^ Math.imul(step ^ 0x7f4a7c15, 0x297a2d39);
  return (h ^ (h >>> 13)) >>> 0;
}

/**
 * A seeded permutation of 0 … n − 1 (Fisher–Yates). The swap index comes from its own
 * multiply-add stream of the seed, not from `Rng.shuffle`: this is the order that has split
 * every pairs run into training and validation, and resuming one must hold out the same pairs.
 * New shuffles should use `Rng.shuffle` on a stream of {@link stepSeed}.
 */
export function seededPermutation(n: number, seed: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  let h = (seed ^ 0x5bd1e995) >>> 0;
  for (let i = n - 1; i > 0; i--) {
    h = (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + 0x6a09e667) >>> 0;
    const j = h % (i + 1);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}
