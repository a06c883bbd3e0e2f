/**
 * A Hugging Face tokenizer (its `tokenizer.json` and `tokenizer_config.json`) as a run's
 * tokenizer: ids from Hugging Face's own Tokenizers.js (npm `@huggingface/tokenizers`),
 * everything else from the checked vocabulary (src/engine/tokenizers/hfVocab.ts).
 *
 * Why Tokenizers.js and not a fifth BPE of our own: it is the field's implementation of
 * `tokenizers` in JavaScript (the one transformers.js runs), pure JavaScript with no
 * dependencies (about 100 kB, Apache-2.0), loads in Node 20 and in a Web Worker (an ES module
 * with no Node built-ins, so the web bundles take it), and it already has what today's files
 * use that ours lacks: the models' own pre-tokenizer regexes translated from Oniguruma,
 * normalizers (NFC, Prepend, Replace), Metaspace, byte fallback, `ignore_merges`, added
 * tokens with lstrip/rstrip/single_word and special tokens matched in the text. Its ids were
 * checked against Python's `tokenizers` on the real Llama 2, Llama 3, Qwen, Gemma 3 and GPT-2
 * files (test/unit/lab/runs/hfTokenizer.test.ts, goldens from
 * scripts/tokenizers/make_golden.py) and agreed on every id. What Tokenizers.js does not
 * reproduce is refused by hfVocab.ts before it runs. The engine stays free of packages: it
 * keeps the vocabulary; only this file imports the library.
 *
 * Speed: a SentencePiece-style file without a pre-tokenizer (Llama 2), or with a Metaspace one
 * that does not split (legacy=false conversions), hands Tokenizers.js the whole text as one
 * word, whose BPE takes minutes for a megabyte. When no multi-character token of the
 * vocabulary holds a newline, no merge can cross one, so splitting the text at newlines (an
 * Isolated Split after the file's own pre-tokenizer, after the normalizers as in `tokenizers`)
 * gives the same ids; it is added only then.
 *
 * Leaves out: the chat template's rendering (src/lab/inference/chatTemplate.ts) and reading
 * the files (src/lab/interop/importTokenizer.ts, src/lab/runs/tokenizerFile.ts).
 */

import { Tokenizer as HfJsTokenizer } from '@huggingface/tokenizers';
import { EngineError } from '../../engine/errors';
import { HfVocab, hfTokenizerConfig } from '../../engine/tokenizers/hfVocab';
import type { HfByteScheme } from '../../engine/tokenizers/hfVocab';
import type {
  DecodeOptions,
  EncodeOptions,
  HfTokenizerConfig,
  HfTokenizerJSON,
  SpecialIds,
  Tokenizer,
} from '../../engine/tokenizers/special';
import { wrapSpecials } from '../../engine/tokenizers/special';

type Obj = Record<string, unknown>;

/** tokenizer.json as handed to Tokenizers.js: with the newline split of the file comment where it is exact. */
function forLibrary(file: Obj, scheme: HfByteScheme): Obj {
  // Tokenizers.js wants every component's key; a file may leave out those it has none of.
  const json: Obj = { normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, added_tokens: [] };
  for (const key in file) if (file[key] !== undefined) json[key] = file[key];
  // A byte-level file's pre-tokenizer already cuts its text into words.
  if (scheme !== 'metaspace') return json;
  const vocab = (json['model'] as Obj)['vocab'] as Obj;
  for (const token in vocab) {
    if (token.length > 1 && token.includes('\n')) return json;
  }
  const split = { type: 'Split', pattern: { String: '\n' }, behavior: 'Isolated', invert: false };
  const pre = json['pre_tokenizer'];
  return { ...json, pre_tokenizer: pre === null ? split : { type: 'Sequence', pretokenizers: [pre, split] } };
}

/** A run's tokenizer from Hugging Face's files (see the file comment). */
export class HfTokenizer implements Tokenizer {
  readonly type = 'bpe' as const;
  readonly vocabSize: number;
  readonly specialIds: SpecialIds;
  /**
   * Whether prompts start with BOS, as `tokenizer(text)` does in transformers: tokenizer_config.json's
   * `add_bos_token` where it says, else whether tokenizer.json's post-processor puts BOS first.
   */
  readonly promptBos: boolean;
  private readonly lib: HfJsTokenizer;

  /** Throws EngineError('tokenizer/invalid') for a file this build does not support, naming what. */
  constructor(readonly vocab: HfVocab) {
    this.vocabSize = vocab.vocabSize;
    this.specialIds = vocab.specialIds;
    try {
      // No config: it would only bring decode's clean-up of spaces, which decode here never does.
      this.lib = new HfJsTokenizer(forLibrary(vocab.json, vocab.scheme), {});
    } catch (e) {
      throw new EngineError(
        'tokenizer/invalid',
        `tokenizer.json could not be loaded (${(e as Error).message}); use the model's own tokenizer.json.`,
        { cause: e },
      );
    }
    const asked = vocab.config.addBosToken;
    this.promptBos = asked ?? this.lib.encode('a', { add_special_tokens: true }).ids[0] === this.specialIds.bos;
  }

  /** The chat template of tokenizer_config.json (or chat_template.jinja), or null. */
  get chatTemplate(): string | null {
    return this.vocab.config.chatTemplate;
  }

  /** What the run keeps of tokenizer_config.json. */
  get config(): HfTokenizerConfig {
    return this.vocab.config;
  }

  /**
   * Ids of `text` as `tokenizers` gives them with add_special_tokens=False (special tokens
   * written in the text become their ids), with BOS/EOS around them when asked.
   */
  encode(text: string, opts?: EncodeOptions): Int32Array {
    const ids = this.lib.encode(text, { add_special_tokens: false }).ids;
    return wrapSpecials(ids, opts, this.specialIds);
  }

  /**
   * The ids `tokenizers` gives with add_special_tokens=True: its post-processor's BOS/EOS
   * (TemplateProcessing), as Python's `tokenizer.encode(text)` does.
   */
  encodeWithSpecials(text: string): Int32Array {
    return Int32Array.from(this.lib.encode(text, { add_special_tokens: true }).ids);
  }

  decode(ids: ArrayLike<number>, opts?: DecodeOptions): string {
    return this.vocab.decode(ids, opts);
  }

  /** Hugging Face's decode (its decoder pipeline, spaces not cleaned up); see hfVocab.ts for how it differs. */
  hfDecode(ids: ArrayLike<number>, skipSpecial = false): string {
    for (let i = 0; i < ids.length; i++) this.vocab.bytesOf(ids[i] as number); // range check
    if (ids.length === 0) return ''; // Tokenizers.js refuses an empty list
    return this.lib.decode(Array.from(ids), { skip_special_tokens: skipSpecial, clean_up_tokenization_spaces: false });
  }

  byteLength(id: number): number {
    return this.vocab.byteLength(id);
  }

  tokenText(id: number): string {
    return this.vocab.tokenText(id);
  }

  tokenBytes(id: number): Uint8Array | null {
    return this.vocab.tokenBytes(id);
  }

  toJSON(): HfTokenizerJSON {
    return this.vocab.toJSON();
  }
}

/**
 * The tokenizer of Hugging Face's files, parsed: tokenizer.json, tokenizer_config.json (null
 * when absent) and chat_template.jinja's text (null when absent); `rows`, the model's
 * embedding rows where they differ from the file's ids (see HfVocab). Throws
 * EngineError('tokenizer/invalid') naming what is not supported.
 */
export function hfTokenizerFromFiles(
  tokenizerJson: unknown,
  tokenizerConfig: unknown,
  chatTemplateFile: string | null = null,
  rows?: number,
): HfTokenizer {
  return new HfTokenizer(new HfVocab(tokenizerJson, hfTokenizerConfig(tokenizerConfig, chatTemplateFile), rows));
}

/** True when a parsed tokenizer file is our saved form of a Hugging Face tokenizer. */
export function isHfTokenizerJSON(json: unknown): json is HfTokenizerJSON {
  return typeof json === 'object' && json !== null && 'huggingface' in json;
}

function checkConfig(c: unknown): HfTokenizerConfig {
  const ok =
    typeof c === 'object' &&
    c !== null &&
    (['bosToken', 'eosToken', 'padToken', 'unkToken', 'chatTemplate'] as const).every((k) => {
      const v = (c as Obj)[k];
      return v === null || typeof v === 'string';
    }) &&
    (['addBosToken', 'addEosToken'] as const).every((k) => {
      const v = (c as Obj)[k];
      return v === null || typeof v === 'boolean';
    });
  if (!ok)
    throw new EngineError(
      'tokenizer/invalid',
      'Invalid tokenizer JSON: "huggingface.config" must hold bosToken, eosToken, padToken, unkToken, ' +
        'chatTemplate (string or null) and addBosToken, addEosToken (boolean or null); restore the ' +
        'tokenizer.json saved with the run.',
    );
  return c as HfTokenizerConfig;
}

/** A saved Hugging Face tokenizer (what {@link HfTokenizer.toJSON} wrote), checked as on import. */
export function hfTokenizerFromJSON(json: HfTokenizerJSON): HfTokenizer {
  const hf = json.huggingface as unknown;
  if (typeof hf !== 'object' || hf === null)
    throw new EngineError(
      'tokenizer/invalid',
      'Invalid tokenizer JSON: "huggingface" must be an object; restore the tokenizer.json saved with the run.',
    );
  const rows = (hf as Obj)['rows'];
  if (rows !== undefined && !(Number.isInteger(rows) && (rows as number) > 0))
    throw new EngineError(
      'tokenizer/invalid',
      'Invalid tokenizer JSON: "huggingface.rows" must be a positive integer; restore the tokenizer.json saved with ' +
        'the run.',
    );
  const vocab = new HfVocab((hf as Obj)['tokenizer'], checkConfig((hf as Obj)['config']), rows as number | undefined);
  const tok = new HfTokenizer(vocab);
  if (json.vocabSize !== tok.vocabSize)
    throw new EngineError(
      'tokenizer/invalid',
      `Invalid tokenizer JSON: "vocabSize" is ${String(json.vocabSize)} but the Hugging Face tokenizer it holds has ` +
        `${tok.vocabSize} ids; the file may be truncated or edited — restore the tokenizer.json saved with the run.`,
    );
  return tok;
}
