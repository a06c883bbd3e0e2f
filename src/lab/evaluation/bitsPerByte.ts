/**
 * Bits per byte: a loss measured per UTF-8 byte of the text scored instead of per token, so
 * that runs with different tokenizers (characters, a BPE vocabulary, GPT-2's) compare on one
 * axis — nanochat reports its validation loss as `bpb` for this reason. For a token-weighted
 * mean loss L (nats per token) over N scored tokens that stand for B bytes of text:
 *
 *     bpb = L · N / (B · ln 2)
 *
 * B is the sum of each scored target token's byte length (Tokenizer.byteLength): a special
 * token (EOS, BOS between documents) stands for no text, so its loss is counted — it is part of
 * what the model predicts — over the bytes of the text around it; for a document or a target
 * sentence scored whole, B is exactly its UTF-8 size.
 *
 * Leaves out: the loss itself (the callers compute it) and per-token breakdowns.
 */

import type { Tokenizer } from '../../engine/tokenizers/special';

/** Bits per byte of `loss` nats per token over `tokens` tokens that stand for `bytes` bytes; null when `bytes` is 0. */
export function bitsPerByte(loss: number, tokens: number, bytes: number): number | null {
  return bytes > 0 ? (loss * tokens) / (bytes * Math.LN2) : null;
}

/** Counts the bytes of text that target tokens stand for, with a table of every id's byte length. */
export class ByteCounter {
  private readonly table: Uint32Array;

  constructor(
    tok: Tokenizer,
    /** The model's padding id: padded targets are not scored, so they count nothing. */
    private readonly padId: number,
  ) {
    this.table = Uint32Array.from({ length: tok.vocabSize }, (_, id) => tok.byteLength(id));
  }

  /** Bytes that the first `count` of `targets` (all of them by default) stand for, padding left out. */
  bytes(targets: ArrayLike<number>, count: number = targets.length): number {
    let n = 0;
    for (let i = 0; i < count; i++) {
      const id = targets[i] as number;
      if (id !== this.padId && id >= 0) n += this.table[id] ?? 0;
    }
    return n;
  }
}
