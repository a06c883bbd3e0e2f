/**
 * A growable array of token ids in the narrowest type that holds the vocabulary: two bytes
 * per token when every id fits in 16 bits (any vocabulary up to 65,536, which is every char
 * and BPE vocabulary people train here), four otherwise. A 100 MB corpus then costs about
 * 200 MB of ids and no copy of its text.
 *
 * Leaves out: windowing and batching (dataset.ts).
 */

/** Token ids of a stream: 16-bit when the vocabulary fits, else 32-bit. */
export type TokenIds = Uint16Array | Int32Array;

/** Appends ids; `ids()` hands out the filled part. */
export class TokenBuffer {
  private buf: TokenIds;
  private n = 0;

  constructor(
    readonly vocabSize: number,
    initialCapacity = 1 << 16,
  ) {
    this.buf = vocabSize <= 1 << 16 ? new Uint16Array(initialCapacity) : new Int32Array(initialCapacity);
  }

  /** Number of ids held. */
  get length(): number {
    return this.n;
  }

  private reserve(extra: number): void {
    const need = this.n + extra;
    if (need <= this.buf.length) return;
    const next =
      this.buf instanceof Uint16Array
        ? new Uint16Array(Math.max(need, Math.ceil(this.buf.length * 1.5)))
        : new Int32Array(Math.max(need, Math.ceil(this.buf.length * 1.5)));
    next.set(this.buf.subarray(0, this.n));
    this.buf = next;
  }

  /** Appends one id. */
  pushId(id: number): void {
    this.reserve(1);
    this.buf[this.n++] = id;
  }

  /** Appends ids (each must be in [0, vocabSize)). */
  push(ids: Int32Array): void {
    this.reserve(ids.length);
    this.buf.set(ids, this.n);
    this.n += ids.length;
  }

  /** The ids, in an array of exactly their length (the buffer's spare room is released). */
  ids(): TokenIds {
    return this.buf.slice(0, this.n);
  }
}
