/**
 * What every tokenizer shares: the fixed special ids, the 256 byte tokens that follow them,
 * the `Tokenizer` interface and the versioned JSON shapes.
 *
 * Id layout, the same for both kinds (so a model never confuses them):
 *   0 PAD, 1 BOS, 2 EOS, 3 UNK, then 4..259 the bytes 0x00..0xFF, then learned tokens
 *   (characters for `char`, merges for `bpe`) from 260 on.
 * Byte tokens make every string encodable (SentencePiece's `byte_fallback`, GPT-2's byte-level
 * BPE), so UNK is never produced for text; it stays reserved for callers that need it.
 *
 * Leaves out: the tokenizers themselves (charTokenizer.ts, bpeTokenizer.ts) and loading
 * (tokenizerJson.ts).
 */

import { EngineError } from '../errors';

/** Padding id: fills batches to a common length; masked out of attention and loss. */
export const PAD = 0;
/** Beginning-of-sequence id. */
export const BOS = 1;
/** End-of-sequence id. */
export const EOS = 2;
/** Unknown-token id: reserved; encode never produces it (byte fallback covers every string). */
export const UNK = 3;

/**
 * Ids a vocabulary gives the four roles; -1 where it has none. Ours are 0..3 (below); a
 * loaded GPT-2 vocabulary has one special token, `<|endoftext|>` (50256), which GPT-2 puts
 * between documents, so it is both BOS and EOS there, and it has no PAD and no UNK.
 */
export interface SpecialIds {
  readonly pad: number;
  readonly bos: number;
  readonly eos: number;
  readonly unk: number;
}

/** The roles' ids in Attention Lab's own layout. */
export const OWN_SPECIAL_IDS: SpecialIds = { pad: 0, bos: 1, eos: 2, unk: 3 };

/** Display text of the special tokens, indexed by id. */
export const SPECIAL_TOKENS: readonly string[] = ['<pad>', '<bos>', '<eos>', '<unk>'];

/** Number of special ids (0..3). */
export const NUM_SPECIAL = 4;
/** Id of byte 0x00; byte b has id `BYTE_OFFSET + b`. */
export const BYTE_OFFSET = NUM_SPECIAL;
/** Smallest vocabulary of either kind: the specials plus the 256 byte tokens. */
export const BASE_VOCAB = NUM_SPECIAL + 256;
/** Largest vocabulary accepted (training and loading), far above anything useful here. */
export const MAX_VOCAB = 1 << 20;

/** The `format` field of every tokenizer file. */
export const TOKENIZER_FORMAT = 'attention-lab-tokenizer';
/** The file version this build writes and reads. */
export const TOKENIZER_VERSION = 1;

/** Options of {@link Tokenizer.encode}. */
export interface EncodeOptions {
  /** Prepend BOS. */
  readonly bos?: boolean;
  /** Append EOS. */
  readonly eos?: boolean;
}

/** Options of {@link Tokenizer.decode}. */
export interface DecodeOptions {
  /** Drop special ids instead of writing their text (`<pad>`, `<bos>`, …). Default false. */
  readonly skipSpecial?: boolean;
}

/** Saved form of a character tokenizer: the learned characters, ids 260, 261, … in order. */
export interface CharTokenizerJSON {
  readonly format: typeof TOKENIZER_FORMAT;
  readonly version: typeof TOKENIZER_VERSION;
  readonly type: 'char';
  /** Total ids: 260 + chars.length (a check against truncated files). */
  readonly vocabSize: number;
  /** One code point per entry (never a surrogate), most frequent first. */
  readonly chars: readonly string[];
}

/** A special token of a BPE vocabulary laid out otherwise than ours: never made by encode. */
export interface BpeSpecialToken {
  readonly id: number;
  /** What decode writes for it (unless skipSpecial), e.g. `<|endoftext|>`. */
  readonly text: string;
}

/**
 * Where each token of a BPE vocabulary sits when it is not our layout (specials 0..3, byte b
 * at 4 + b, merge i at 260 + i): a vocabulary loaded from GPT-2's files keeps GPT-2's ids,
 * so its model's embedding rows need no reordering. Every id below the tokenizer's vocabSize
 * is exactly one byte, merge result or special.
 */
export interface BpeLayoutJSON {
  /** Id of byte b, for b = 0..255. */
  readonly byteIds: readonly number[];
  /** Id of the token merge i makes. */
  readonly mergeIds: readonly number[];
  readonly specials: readonly BpeSpecialToken[];
  readonly roles: SpecialIds;
}

/** Saved form of a byte-level BPE tokenizer: the merges in rank order. */
export interface BpeTokenizerJSON {
  readonly format: typeof TOKENIZER_FORMAT;
  readonly version: typeof TOKENIZER_VERSION;
  readonly type: 'bpe';
  /** Total ids: 260 + merges.length in our layout; with `layout`, the ids it assigns. */
  readonly vocabSize: number;
  /** The pre-tokenizer that splits text into chunks before merging (pretokenize.ts). */
  readonly pretokenizer: 'gpt2';
  /**
   * Merge i joins ids [a, b] into id 260 + i (with `layout`: into `layout.mergeIds[i]`);
   * a and b are byte or earlier merge ids.
   */
  readonly merges: readonly (readonly [number, number])[];
  /** Present only for a vocabulary not in our layout (one loaded from GPT-2's files). */
  readonly layout?: BpeLayoutJSON;
}

/**
 * What a run keeps of a Hugging Face `tokenizer_config.json` (hfVocab.ts reads it): the role
 * tokens by text (null where the config names none), whether the model's files add BOS/EOS
 * (null when the config does not say), and the chat template (Jinja source) or null.
 */
export interface HfTokenizerConfig {
  readonly bosToken: string | null;
  readonly eosToken: string | null;
  readonly padToken: string | null;
  readonly unkToken: string | null;
  readonly addBosToken: boolean | null;
  readonly addEosToken: boolean | null;
  readonly chatTemplate: string | null;
}

/**
 * Saved form of a Hugging Face tokenizer: its tokenizer.json as it came, and what the run
 * keeps of its config. Read back by the lab (src/lab/runs/tokenizerFile.ts), which encodes
 * with Hugging Face's Tokenizers.js.
 */
export interface HfTokenizerJSON {
  readonly format: typeof TOKENIZER_FORMAT;
  readonly version: typeof TOKENIZER_VERSION;
  readonly type: 'bpe';
  readonly vocabSize: number;
  readonly huggingface: {
    readonly tokenizer: unknown;
    readonly config: HfTokenizerConfig;
    /** The model's embedding rows, when they differ from the file's ids (hfVocab.ts). */
    readonly rows?: number;
  };
}

/** Each saved form, discriminated on `type` (and a BPE one on `huggingface`). */
export type TokenizerJSON = CharTokenizerJSON | BpeTokenizerJSON | HfTokenizerJSON;

/** A trained tokenizer: text ⇄ ids, exact for every JavaScript string. */
export interface Tokenizer {
  readonly type: 'char' | 'bpe';
  /** Number of ids; every id produced is in [0, vocabSize). */
  readonly vocabSize: number;
  /** Ids of PAD, BOS, EOS, UNK: 0..3, except in a loaded GPT-2 vocabulary (see SpecialIds). */
  readonly specialIds: SpecialIds;
  /**
   * Whether a prompt the lab's jobs read (decode, score, attention, lens, patching) starts with
   * BOS. Absent means true: our runs train every document from BOS. False for a model whose own
   * tokenizer adds no BOS (SmolLM2, Qwen, Pythia: Hugging Face's post-processor adds nothing) and
   * for a task that trains without it (modular addition), so the model reads what it was trained on.
   */
  readonly promptBos?: boolean;
  /** Ids of `text`; `decode(encode(text)) === text` for every string, lone surrogates included. */
  encode(text: string, opts?: EncodeOptions): Int32Array;
  /**
   * Text of `ids`. Throws EngineError('tokenizer/invalid') for an id outside the vocabulary;
   * bytes that do not form valid WTF-8 decode as U+FFFD (never throws for in-range ids).
   */
  decode(ids: ArrayLike<number>, opts?: DecodeOptions): string;
  /**
   * Bytes of text token `id` stands for, in UTF-8: 1 for a byte token, the character's or
   * merge's length otherwise, 0 for a special token. Summed over the tokens a loss scored, it
   * is the text's size, the denominator of bits per byte.
   */
  byteLength(id: number): number;
  /**
   * Display string of one token on its own ("·the", "↵", "<0xE2>", "<pad>"; see displayText in
   * wtf8.ts). A token of a sequence reads as tokenLabels (tokenDisplay.ts) labels it, in context.
   */
  tokenText(id: number): string;
  /** The bytes (WTF-8) a token stands for, or null for a special token, which stands for none. */
  tokenBytes(id: number): Uint8Array | null;
  /** The versioned, JSON-serializable form; `tokenizerFromJSON` reads it back. */
  toJSON(): TokenizerJSON;
}

/** Id of byte `b` (0..255). */
export function byteId(b: number): number {
  return BYTE_OFFSET + b;
}

/**
 * Checks that `id` is an integer in [0, vocabSize); otherwise throws
 * EngineError('tokenizer/invalid') naming the id and the valid range.
 */
export function checkId(id: number, vocabSize: number): void {
  if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
    throw new EngineError(
      'tokenizer/invalid',
      `Token id ${String(id)} is outside this tokenizer's vocabulary (expected an integer in 0..${vocabSize - 1}); ` +
        'decode ids with the tokenizer that produced them (the run folder’s tokenizer.json).',
    );
  }
}

/**
 * Ids to put around encoded text: BOS first and EOS last when asked. Shared so both
 * tokenizers treat the options the same way. `ids` are the vocabulary's (ours by default).
 */
export function wrapSpecials(
  body: readonly number[],
  opts: EncodeOptions | undefined,
  ids: SpecialIds = OWN_SPECIAL_IDS,
): Int32Array {
  const bos = opts?.bos === true ? 1 : 0;
  const eos = opts?.eos === true ? 1 : 0;
  if ((bos && ids.bos < 0) || (eos && ids.eos < 0)) {
    throw new EngineError(
      'tokenizer/invalid',
      `This vocabulary has no ${bos && ids.bos < 0 ? 'BOS' : 'EOS'} token; encode without it.`,
    );
  }
  const out = new Int32Array(body.length + bos + eos);
  if (bos) out[0] = ids.bos;
  for (let i = 0; i < body.length; i++) out[i + bos] = body[i] as number;
  if (eos) out[out.length - 1] = ids.eos;
  return out;
}
