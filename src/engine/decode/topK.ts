/**
 * A fixed-capacity "k best so far" list: candidates are offered one at a time and the k
 * largest values are kept sorted, largest first. Used for beam-search candidates (offered
 * as rows × V scores computed on the fly, so nothing of size rows × V is stored) and for
 * top-k sampling. Ties keep the candidate offered first, which makes every decoder's choice
 * deterministic and lets beam search with width 1 pick exactly what greedy picks.
 *
 * Leaves out: heaps. k is small (a beam width, a top-k); insertion into a sorted array does
 * O(1) work for the common candidate that does not enter the list.
 */

/** The k largest of a stream of (value, id) pairs, sorted by value descending. */
export class TopK {
  /** values[0..count), largest first. */
  readonly values: Float64Array;
  /** ids[i] belongs to values[i]. */
  readonly ids: Int32Array;
  /** How many candidates are held (≤ k). */
  count = 0;
  private k = 0;

  /** @param capacity the largest k that `reset` will be given. */
  constructor(capacity: number) {
    this.values = new Float64Array(capacity);
    this.ids = new Int32Array(capacity);
  }

  /** Empties the list and sets k (1 ≤ k ≤ capacity). */
  reset(k: number): void {
    if (k < 1 || k > this.values.length) throw new RangeError(`TopK k ${k} is outside [1, ${this.values.length}]`);
    this.k = k;
    this.count = 0;
  }

  /** Offers one candidate; it is kept if it beats the k-th best (a tie does not). */
  push(value: number, id: number): void {
    const values = this.values;
    const ids = this.ids;
    let n = this.count;
    if (n === this.k) {
      if (!(value > (values[n - 1] as number))) return;
      n--; // the current k-th best falls off
    }
    let i = n;
    while (i > 0 && (values[i - 1] as number) < value) {
      values[i] = values[i - 1] as number;
      ids[i] = ids[i - 1] as number;
      i--;
    }
    values[i] = value;
    ids[i] = id;
    this.count = n + 1;
  }
}
