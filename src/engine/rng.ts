/**
 * Seeded pseudo-random numbers, passed explicitly (no Math.random, no globals).
 *
 * The generator is xoshiro128** (Blackman & Vigna), 32-bit state words so it runs on
 * plain JS integers; seeds are expanded with splitmix32 so nearby seeds give unrelated
 * streams. `split()` derives an independent child stream, so each consumer (weight init,
 * dropout, data order, sampling) gets its own and adding draws to one never shifts another.
 */

function splitmix32(state: number): [number, number] {
  const s = (state + 0x9e3779b9) | 0;
  let z = s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z ^= z >>> 16;
  return [s, z >>> 0];
}

/** Serializable state of an {@link Rng}, for exact resume. */
export type RngState = readonly [number, number, number, number];

/** A seeded stream of random numbers. */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number | RngState) {
    if (typeof seed === 'number') {
      let st = seed | 0;
      const out: number[] = [];
      for (let i = 0; i < 4; i++) {
        const [next, z] = splitmix32(st);
        st = next;
        out.push(z);
      }
      [this.s0, this.s1, this.s2, this.s3] = out as [number, number, number, number];
      if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
    } else {
      [this.s0, this.s1, this.s2, this.s3] = seed;
    }
  }

  /** Next 32-bit unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1) with 32 bits of resolution. */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /**
   * Standard normal (Box–Muller). The second value of each pair is discarded so the
   * whole state is the four words of `state()`: exact resume needs no hidden cache.
   */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** A child stream independent of this one; advances this stream by four draws. */
  split(): Rng {
    return new Rng([this.nextU32() | 1, this.nextU32(), this.nextU32(), this.nextU32()]);
  }

  /** In-place Fisher–Yates shuffle. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }

  /** The state, for checkpoints: `new Rng(rng.state())` continues the same stream. */
  state(): RngState {
    return [this.s0, this.s1, this.s2, this.s3];
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
