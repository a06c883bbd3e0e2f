/**
 * Priority queue of (count, pair) for BPE training and of (rank, position) for encoding:
 * a binary heap over two parallel number arrays, ordered by a primary value then a
 * secondary one. Entries are never updated in place; callers push a fresh entry when a
 * value changes and discard stale entries when popped ("lazy deletion"), which keeps every
 * operation O(log n).
 *
 * Leaves out: decrease-key and removal of arbitrary entries (not needed with lazy deletion).
 */

/** A heap popping the entry with the largest (`maxFirst`) or smallest primary, then smallest secondary. */
export class PairHeap {
  private readonly primary: number[] = [];
  private readonly secondary: number[] = [];
  private readonly sign: number;

  /** `maxFirst`: pop the largest primary first (pair counts); otherwise the smallest (merge ranks). */
  constructor(maxFirst: boolean) {
    this.sign = maxFirst ? -1 : 1;
  }

  /** Number of entries, stale ones included. */
  get size(): number {
    return this.primary.length;
  }

  /** Primary value of the top entry (undefined when empty). */
  peekPrimary(): number | undefined {
    return this.primary[0];
  }

  /** Secondary value of the top entry (undefined when empty). */
  peekSecondary(): number | undefined {
    return this.secondary[0];
  }

  /** Adds an entry. */
  push(p: number, s: number): void {
    const P = this.primary,
      S = this.secondary;
    let i = P.length;
    P.push(p);
    S.push(s);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(p, s, P[parent] as number, S[parent] as number)) break;
      P[i] = P[parent] as number;
      S[i] = S[parent] as number;
      i = parent;
    }
    P[i] = p;
    S[i] = s;
  }

  /** Removes the top entry (no-op when empty); read it first with the peek methods. */
  pop(): void {
    const P = this.primary,
      S = this.secondary;
    const lastP = P.pop();
    const lastS = S.pop();
    if (P.length === 0 || lastP === undefined || lastS === undefined) return;
    const n = P.length;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.before(P[r] as number, S[r] as number, P[l] as number, S[l] as number) ? r : l;
      if (!this.before(P[c] as number, S[c] as number, lastP, lastS)) break;
      P[i] = P[c] as number;
      S[i] = S[c] as number;
      i = c;
    }
    P[i] = lastP;
    S[i] = lastS;
  }

  private before(p1: number, s1: number, p2: number, s2: number): boolean {
    if (p1 !== p2) return this.sign * (p1 - p2) < 0;
    return s1 < s2;
  }
}
