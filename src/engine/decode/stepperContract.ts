/**
 * The contract between the decoding algorithms (greedy, sampling, beam search) and a model:
 * a `DecodeStepper` feeds one token per row at the next position, keeping its own
 * key/value cache, and can rearrange its rows when beams are reordered. Also the option and
 * result types every decoder shares, and the layout of the attention maps a decode returns.
 *
 * Leaves out: the models' implementation of the stepper (models/stepper.ts), and any batching of
 * several independent prompts (a row is a beam of one prompt, never a second prompt).
 *
 * Legend: rows = live hypotheses fed together (1, or up to the beam width), H heads,
 * P positions fed so far, S source length, V vocabulary, T recorded query rows,
 * K self-attention keys.
 */

/** Attention of each row's newest token, per decoder layer. */
export interface StepAttention {
  /** per decoder layer: [rows, H, P] where P = number of positions fed so far (incl. this one). */
  readonly self: readonly Float32Array[];
  /** per decoder layer: [rows, H, S] over the source (encoder-decoder), empty array for decoder-only. */
  readonly cross: readonly Float32Array[];
}

/** What one `DecodeStepper.step` returns. */
export interface StepOutput {
  /** [rows, V] logits (unnormalized). */
  readonly logits: Float32Array;
  /** The newest token's attention, when `capture` was true; otherwise null. */
  readonly attention: StepAttention | null;
}

/** The model side of incremental decoding. A fresh stepper starts with an empty cache and `rows` = 1. */
export interface DecodeStepper {
  readonly vocabSize: number;
  readonly nHeads: number;
  /** The most positions that can be fed (the model context). */
  readonly maxPositions: number;
  /** Most rows (beam width) this stepper was built for. */
  readonly maxRows: number;
  /** Feed one token per row (tokens.length = rows) at the next position; logits [rows, vocabSize]. The
   * returned arrays may be reused by the next call: copy what you keep. */
  step(tokens: Int32Array, capture: boolean): StepOutput;
  /**
   * Optional: feeds `tokens` at positions 0..n − 1 of a fresh or reset stepper (rows = 1) in
   * one pass, as n calls of `step` would, and returns the last call's output (its attention
   * when `capture`). A stepper without it is fed one token per step.
   */
  prefill?(tokens: Int32Array, capture: boolean): StepOutput;
  /**
   * True when the model's memory lives on a device (WebGPU): what `step` and `prefill` return is
   * filled only by `settle`, so only a decode run by {@link runStepsAsync} can read it.
   */
  readonly deferred?: boolean;
  /** Reads back what the last `step` or `prefill` returned (a device's); absent or at once on a host. */
  settle?(): Promise<void>;
  /** Rearrange cache rows: new row i continues old row parents[i] (duplicates allowed); rows = parents.length. */
  reorder(parents: Int32Array): void;
  /**
   * Empties the key/value cache (the next step feeds position 0, rows = 1), keeping an
   * encoder-decoder's source: how a sliding-window decode re-primes the model.
   */
  reset(): void;
}

/**
 * Attention maps of one decoded hypothesis, laid out so a dashboard can draw one [H, T, K]
 * (self) and one [H, T, S] (cross) heatmap per decoder layer.
 *
 * Row t is the query at position `queryStart + t`: the token fed there is
 * `context[queryStart + t]` (context = prompt followed by the generated tokens) and its
 * output predicted `context[queryStart + t + 1]`. So, without the prompt
 * (`queryStart = prompt.length - 1`), row t is the attention used to choose generated token
 * t and T = tokens.length; with the prompt (`queryStart = 0`), T = prompt.length - 1 +
 * tokens.length. Keys of self-attention are positions 0..K-1 with K = queryStart + T, that
 * is `context[0..K)`; row t only attends to keys 0..queryStart+t (causal), and the cells
 * after that are 0. Cross-attention keys are the S source positions.
 */
export interface DecodeAttention {
  readonly nLayers: number;
  readonly nHeads: number;
  /** Position of the query of row 0 (0 when the prompt is included, else prompt.length - 1). */
  readonly queryStart: number;
  /** T, the number of query rows. */
  readonly queries: number;
  /** K = queryStart + T, the number of self-attention key positions. */
  readonly selfKeys: number;
  /** Per decoder layer: [H, T, K] row-major; cells after a row's own position are 0. */
  readonly self: Float32Array[];
  /** S, the source length (0 for decoder-only). */
  readonly sourceLength: number;
  /** Per decoder layer: [H, T, S] row-major; empty for decoder-only. */
  readonly cross: Float32Array[];
}

/** Why a hypothesis ended: it chose EOS, hit `maxTokens`, or filled the model's context. */
export type StopReason = 'eos' | 'maxTokens' | 'context';

/** How a sliding-window decode went past the context (absent when it stayed within it). */
export interface SlideInfo {
  /** Times the window slid (the stepper was re-primed). */
  readonly slides: number;
  /** Tokens the model saw when it chose the last token (≤ the context). */
  readonly window: number;
}

/** One decoded hypothesis. */
export interface DecodeResult {
  /** The generated tokens only (not the prompt); EOS is included when it was chosen. */
  readonly tokens: number[];
  /** log p of each generated token under the model's untempered distribution. */
  readonly logprobs: number[];
  /**
   * Greedy and sampling: the sum of `logprobs`. Beam search: the ranking score, that sum
   * divided by the GNMT length penalty lp(|tokens|) (equal to the sum when α = 0).
   */
  readonly score: number;
  readonly stopReason: StopReason;
  /** Present when a sliding-window decode (`slide`) went past the model's context. */
  readonly slid?: SlideInfo;
  /** Present when `captureAttention` was set. */
  readonly attention?: DecodeAttention;
}

/** Options every decoder takes. */
export interface DecodeOptions {
  /** Most tokens to generate (≥ 1). Generation also stops when the model's context is full. */
  readonly maxTokens: number;
  /** End-of-sequence id, in [0, vocabSize); -1 never stops on a token. */
  readonly eos: number;
  /** Return the attention maps of the result (see {@link DecodeAttention}). */
  readonly captureAttention?: boolean;
  /** With `captureAttention`, also keep the rows of the prompt's tokens (queryStart = 0). */
  readonly attentionIncludesPrompt?: boolean;
  /**
   * Whether the generated tokens end on a whole unit of text — a character, where a byte-level
   * vocabulary splits one across tokens. When `maxTokens` stops a decode (in beam search, a
   * hypothesis) mid-character, it goes on for up to {@link MAX_FINISHING_TOKENS} more tokens
   * until this holds, so a decode never ends in part of a character (EOS and the context still
   * stop it where they do).
   */
  readonly complete?: (tokens: readonly number[]) => boolean;
}

/** Options of the decoders that pick one token at a time and can stream it. */
export interface StreamingOptions extends DecodeOptions {
  /** Called with each token as soon as it is chosen, with its untempered log-probability. */
  readonly onToken?: (token: number, logprob: number) => void;
  /**
   * Generate past the model's context over a sliding window, as nanoGPT's `generate` crops
   * its input to `block_size`: when the cache is full, the stepper is reset and re-primed
   * with the last {@link slideKeep}(context) tokens (the newest included), and decoding goes
   * on. Without it a decode stops at the context (stop reason 'context').
   */
  readonly slide?: boolean;
}

/**
 * Most tokens past `maxTokens` that finish a character (UTF-8 writes one in at most 4 bytes, each token holds at least
 * one).
 */
export const MAX_FINISHING_TOKENS = 3;

/**
 * Tokens a sliding-window decode re-primes with when the context of `maxPositions` is full:
 * the last half of the context (rounded up). Re-priming costs that many steps once per
 * ⌊maxPositions/2⌋ generated tokens (about one extra step per token), where re-priming with
 * the last maxPositions tokens at every token (nanoGPT's exact crop) would cost maxPositions
 * steps per token; the model always sees at least half a context.
 */
export function slideKeep(maxPositions: number): number {
  return Math.max(1, Math.ceil(maxPositions / 2));
}

/**
 * A decode written as steps: it yields after each stepper call, before it reads what the call
 * returned, so the same loop runs on a host stepper (nothing to wait for) and on a device's
 * (whose outputs are read back in between).
 */
export type DecodeSteps<T> = Generator<void, T, void>;

/** Runs `steps` on a host stepper; a deferred (device) stepper is refused: use {@link runStepsAsync}. */
export function runSteps<T>(stepper: DecodeStepper, steps: DecodeSteps<T>): T {
  if (stepper.deferred === true)
    throw new Error('This stepper reads its outputs back from a device: decode with runStepsAsync.');
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

/** Runs `steps`, letting `stepper` settle (read its outputs back) after each call it makes. */
export async function runStepsAsync<T>(stepper: DecodeStepper, steps: DecodeSteps<T>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    await stepper.settle?.();
  }
}

/** Options of `greedyDecode`. */
export type GreedyOptions = StreamingOptions;
