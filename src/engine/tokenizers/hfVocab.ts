/**
 * A Hugging Face `tokenizer.json` (as the `tokenizers` library defines it) checked and read
 * as a vocabulary: which ids exist, which bytes each stands for, which are special, and the
 * roles (BOS, EOS, PAD, UNK) that `tokenizer_config.json` names. Everything a lab job needs of
 * a tokenizer except encoding, which src/lab/runs/hfTokenizer.ts runs with Hugging Face's own
 * Tokenizers.js (the engine imports no package).
 *
 * Supported, and checked before use (anything else is refused naming the field and its
 * value): a BPE model (byte-level as GPT-2, Llama 3, Qwen2, SmolLM2, Pythia/GPT-NeoX; or
 * SentencePiece-style with ▁ for a space and `byte_fallback` as Llama 2, TinyLlama, Mistral,
 * Gemma 3), `ignore_merges`, normalizers NFC/NFD/NFKC/NFKD, Replace, Prepend, Lowercase, Strip
 * and Sequence; pre-tokenizers ByteLevel, Split, Metaspace, Digits and Sequence; post-processors
 * ByteLevel, TemplateProcessing and Sequence; decoders ByteLevel, Metaspace, Replace,
 * ByteFallback, Fuse, Strip and Sequence; added tokens with their lstrip/rstrip/single_word/
 * normalized flags. A Split whose behavior is MergedWithPrevious/MergedWithNext/Contiguous is
 * refused (Tokenizers.js treats it as Isolated) unless its pattern is a string that a Replace
 * normalizer has already removed from the text, as in Gemma 3's file, where it never matches.
 *
 * Bytes of a token: byte-level vocabularies write each byte as one character (GPT-2's
 * bytes_to_unicode, gpt2Files.ts); SentencePiece-style ones write a space as ▁ and, with byte
 * fallback, a byte as `<0xNN>`; an added token that is not special is read the same way; a
 * special one stands for no bytes (its text is its name). `decode` joins the bytes, so the
 * text of ids a + b is the text of a followed by that of b, which every lab job relies on (a decode's continuation, a
 * score's offsets). Hugging Face's own decode differs in one place: a tokenizer that prepends
 * ▁ to the text (Llama 2, TinyLlama, Mistral; not Gemma 3) strips one leading space from the
 * whole decode (its Strip decoder), where ours keeps the space the encoder added.
 *
 * Leaves out: encoding (the lab's HfTokenizer), WordPiece/Unigram/WordLevel models (refused),
 * BPE dropout, truncation and padding settings (refused), and the chat template's rendering
 * (src/lab/inference/chatTemplate.ts; it is only carried here).
 */

import { EngineError } from '../errors';
import { bytesToUnicode } from './gpt2Files';
import { TOKENIZER_FORMAT, TOKENIZER_VERSION, checkId } from './special';
import type { DecodeOptions, HfTokenizerConfig, HfTokenizerJSON, SpecialIds } from './special';
import { byteTokenText, decodeWtf8, displayBytes, encodeWtf8 } from './wtf8';

const FIX = "use the model's tokenizer.json as Hugging Face publishes it, or pass --tokenizer with another";

function refuse(what: string): never {
  throw new EngineError('tokenizer/invalid', `tokenizer.json: ${what}; ${FIX}.`);
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}

/** Types supported per component (see the file comment). */
const SUPPORTED = {
  normalizer: ['Sequence', 'NFC', 'NFD', 'NFKC', 'NFKD', 'Replace', 'Prepend', 'Lowercase', 'Strip'],
  pre_tokenizer: ['Sequence', 'ByteLevel', 'Split', 'Metaspace', 'Digits'],
  post_processor: ['Sequence', 'ByteLevel', 'TemplateProcessing'],
  decoder: ['Sequence', 'ByteLevel', 'Metaspace', 'Replace', 'ByteFallback', 'Fuse', 'Strip'],
} as const;

/** The list a Sequence of this component holds. */
const SEQUENCE_KEY = {
  normalizer: 'normalizers',
  pre_tokenizer: 'pretokenizers',
  post_processor: 'processors',
  decoder: 'decoders',
} as const;

type Component = keyof typeof SUPPORTED;

/** The component and its Sequence members, flattened, each checked for a supported type. */
function flatten(json: Obj, component: Component): Obj[] {
  const out: Obj[] = [];
  const walk = (v: unknown, where: string): void => {
    if (v === null || v === undefined) return;
    if (!isObj(v)) refuse(`${where} must be an object, found ${show(v)}`);
    const type = v['type'];
    if (!(SUPPORTED[component] as readonly string[]).includes(type as string))
      refuse(`${where}.type ${show(type)} is not supported (supported: ${SUPPORTED[component].join(', ')})`);
    if (type === 'Sequence') {
      const list = v[SEQUENCE_KEY[component]];
      if (!Array.isArray(list)) refuse(`${where}.${SEQUENCE_KEY[component]} must be an array`);
      list.forEach((m, i) => walk(m, `${where}.${SEQUENCE_KEY[component]}[${i}]`));
    } else out.push(v);
  };
  walk(json[component], component);
  return out;
}

/** Refuses what would change the ids in ways this build does not reproduce. */
function checkComponents(json: Obj): { decoders: Obj[]; preTokenizers: Obj[] } {
  for (const key of ['truncation', 'padding'] as const) {
    const v = json[key];
    if (v !== null && v !== undefined) refuse(`"${key}" is set (${show(v)}); only null is supported`);
  }
  const normalizers = flatten(json, 'normalizer');
  const removed = new Set<string>();
  for (const n of normalizers) {
    const p = n['pattern'];
    if (n['type'] === 'Replace' && isObj(p) && typeof p['String'] === 'string' && typeof n['content'] === 'string') {
      if (!(n['content'] as string).includes(p['String'] as string)) removed.add(p['String'] as string);
    }
  }
  const preTokenizers = flatten(json, 'pre_tokenizer');
  for (const p of preTokenizers) {
    if (p['type'] !== 'Split') continue;
    const behavior = p['behavior'];
    if (p['invert'] === true) refuse(`pre_tokenizer Split with "invert": true is not supported`);
    if (behavior === 'Isolated' || behavior === 'Removed') continue;
    const pat = p['pattern'];
    const never = isObj(pat) && typeof pat['String'] === 'string' && removed.has(pat['String'] as string);
    if (!never)
      refuse(`pre_tokenizer Split behavior ${show(behavior)} is not supported (supported: Isolated, Removed)`);
  }
  flatten(json, 'post_processor');
  return { decoders: flatten(json, 'decoder'), preTokenizers };
}

function checkModel(model: unknown): Obj {
  if (!isObj(model)) refuse(`"model" must be an object, found ${show(model)}`);
  const type = model['type'] ?? (model['merges'] !== undefined ? 'BPE' : undefined);
  if (type !== 'BPE') refuse(`model.type ${show(type)} is not supported (only BPE)`);
  const dropout = model['dropout'];
  if (dropout !== null && dropout !== undefined && dropout !== 0)
    refuse(`model.dropout is ${show(dropout)}; only null is supported (BPE dropout samples segmentations)`);
  for (const k of ['continuing_subword_prefix', 'end_of_word_suffix'] as const) {
    const v = model[k];
    if (v !== null && v !== undefined && v !== '') refuse(`model.${k} is ${show(v)}; only null or "" is supported`);
  }
  if (!isObj(model['vocab'])) refuse('model.vocab must be an object {token: id}');
  const merges = model['merges'];
  if (!Array.isArray(merges)) refuse('model.merges must be an array');
  merges.forEach((m: unknown, i) => {
    const ok =
      typeof m === 'string'
        ? /^[^ ]+ [^ ]+$/u.test(m)
        : Array.isArray(m) && m.length === 2 && m.every((x) => typeof x === 'string' && x !== '');
    if (!ok) refuse(`model.merges[${i}] must be "a b" or ["a", "b"], found ${show(m)}`);
  });
  return model;
}

/** How the tokens' strings stand for bytes (see the file comment). */
export type HfByteScheme = 'byte-level' | 'metaspace';

/** From the decoder, or (a file without one) the pre-tokenizer: ByteLevel or Metaspace. */
function byteScheme(decoders: readonly Obj[], preTokenizers: readonly Obj[]): HfByteScheme {
  const types = decoders.map((d) => d['type']);
  const pre = preTokenizers.map((p) => p['type']);
  if (decoders.length === 0 && pre.includes('ByteLevel')) return 'byte-level';
  if (decoders.length === 0 && pre.includes('Metaspace')) return 'metaspace';
  if (types.includes('ByteLevel')) return 'byte-level';
  const replacesMeta = decoders.some((d) => {
    const p = d['pattern'];
    return d['type'] === 'Replace' && isObj(p) && p['String'] === '\u2581' && d['content'] === ' ';
  });
  if (types.includes('Metaspace') || replacesMeta) return 'metaspace';
  return refuse(
    `decoder ${show(types)} does not say how tokens stand for bytes (a ByteLevel decoder, or a Metaspace/` +
      `Replace "▁" → " " one, or without a decoder a ByteLevel or Metaspace pre-tokenizer, is supported)`,
  );
}

/** An added token as tokenizer.json lists it. */
export interface HfAddedToken {
  readonly id: number;
  readonly content: string;
  readonly special: boolean;
}

function addedTokens(json: Obj): HfAddedToken[] {
  const added = json['added_tokens'] ?? [];
  if (!Array.isArray(added)) refuse('"added_tokens" must be an array');
  return added.map((t: unknown, i) => {
    if (!isObj(t) || !Number.isInteger(t['id']) || (t['id'] as number) < 0 || typeof t['content'] !== 'string')
      refuse(`added_tokens[${i}] needs a non-negative integer "id" and a string "content", found ${show(t)}`);
    return { id: t['id'] as number, content: t['content'] as string, special: t['special'] === true };
  });
}

/** The token string of every model id, by id (undefined where only an added token is). */
function vocabById(vocab: Obj, n: number): (string | undefined)[] {
  const out = new Array<string | undefined>(n);
  for (const token in vocab) {
    const id = vocab[token];
    if (!Number.isInteger(id) || (id as number) < 0)
      refuse(`model.vocab: token ${show(token)} has id ${show(id)}, expected a non-negative integer`);
    if (out[id as number] !== undefined)
      refuse(`model.vocab: tokens ${show(out[id as number])} and ${show(token)} both have id ${String(id)}`);
    out[id as number] = token;
  }
  return out;
}

/** Bytes a model token's string stands for under `scheme`. */
function tokenStringBytes(token: string, scheme: HfByteScheme, unicodeToByte: ReadonlyMap<string, number>): number[] {
  if (scheme === 'byte-level') {
    const out: number[] = [];
    for (const ch of token) {
      const b = unicodeToByte.get(ch);
      if (b === undefined) return Array.from(encodeWtf8(token)); // as the ByteLevel decoder does
      out.push(b);
    }
    return out;
  }
  const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(token);
  if (m) return [parseInt(m[1] as string, 16)];
  return Array.from(encodeWtf8(token.replaceAll('\u2581', ' ')));
}

/** A token value of tokenizer_config.json: a string, an AddedToken object {content}, or null. */
function tokenValue(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (isObj(v) && typeof v['content'] === 'string') return v['content'];
  return null;
}

/**
 * The parts of `tokenizer_config.json` a run keeps (parsed; null or undefined when the folder
 * has none), with `chat_template.jinja`'s text when that file is there (it wins, as in
 * transformers). A template given as a list of named templates keeps the one named "default".
 */
export function hfTokenizerConfig(config: unknown, chatTemplateFile: string | null = null): HfTokenizerConfig {
  const c = isObj(config) ? config : {};
  let chat: unknown = chatTemplateFile ?? c['chat_template'] ?? null;
  if (Array.isArray(chat)) chat = chat.find((t) => isObj(t) && t['name'] === 'default')?.['template'] ?? null;
  const bool = (k: string): boolean | null => (typeof c[k] === 'boolean' ? (c[k] as boolean) : null);
  return {
    bosToken: tokenValue(c['bos_token']),
    eosToken: tokenValue(c['eos_token']),
    padToken: tokenValue(c['pad_token']),
    unkToken: tokenValue(c['unk_token']),
    addBosToken: bool('add_bos_token'),
    addEosToken: bool('add_eos_token'),
    chatTemplate: typeof chat === 'string' ? chat : null,
  };
}

/** `config` as a tokenizer_config.json again (for an export): the fields it came from, nulls left out. */
export function hfTokenizerConfigJson(config: HfTokenizerConfig): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  const put = (key: string, v: string | boolean | null): void => {
    if (v !== null) out[key] = v;
  };
  put('bos_token', config.bosToken);
  put('eos_token', config.eosToken);
  put('pad_token', config.padToken);
  put('unk_token', config.unkToken);
  put('add_bos_token', config.addBosToken);
  put('add_eos_token', config.addEosToken);
  put('chat_template', config.chatTemplate);
  return out;
}

/**
 * A checked Hugging Face tokenizer.json and its config, as a vocabulary (see the file comment).
 * Throws EngineError('tokenizer/invalid') naming what is not supported.
 */
export class HfVocab {
  readonly type = 'bpe' as const;
  readonly vocabSize: number;
  readonly specialIds: SpecialIds;
  readonly scheme: HfByteScheme;
  /** tokenizer.json as given (less added tokens past `rows`); saved in the run folder so. */
  readonly json: Obj;
  /** The model's embedding rows when given (see the constructor), else null. */
  readonly rows: number | null;
  readonly config: HfTokenizerConfig;
  /** Bytes of every id in one buffer: id's are bytes[start[id] .. start[id + 1]). */
  private readonly bytes: Uint8Array;
  private readonly start: Int32Array;
  /** The name of a special token, by id. */
  private readonly specialText: (string | undefined)[];

  /**
   * `rows`: the model's embedding rows, when they differ from the file's ids. Ids the file does
   * not reach (Qwen2's 151,936 rows for 151,669 tokens) become unnamed special ids written
   * `<unused N>`, never made by encode; special added tokens past the rows (Gemma 3's
   * `<image_soft_token>` = 262144 beside a text model's 262,144 rows) are left out, so their
   * text encodes as text. A model token past the rows is refused.
   */
  constructor(tokenizerJson: unknown, config: HfTokenizerConfig, rows?: number) {
    if (!isObj(tokenizerJson)) refuse(`expected an object, found ${show(tokenizerJson)}`);
    this.config = config;
    const { decoders, preTokenizers } = checkComponents(tokenizerJson);
    const model = checkModel(tokenizerJson['model']);
    this.scheme = byteScheme(decoders, preTokenizers);
    let added = addedTokens(tokenizerJson);
    const vocab = model['vocab'] as Obj;
    let n = 0;
    for (const k in vocab) n = Math.max(n, (vocab[k] as number) + 1);
    if (rows !== undefined) {
      if (n > rows) refuse(`model.vocab has ids up to ${n - 1}, but the model's embedding has ${rows} rows`);
      const beyond = added.filter((t) => t.id >= rows);
      const text = beyond.find((t) => !t.special);
      if (text) refuse(`added token ${show(text.content)} has id ${text.id}, past the model's ${rows} rows`);
      if (beyond.length > 0) {
        added = added.filter((t) => t.id < rows);
        const keep = new Set(added.map((t) => t.id));
        const list = tokenizerJson['added_tokens'] as Obj[];
        tokenizerJson = { ...tokenizerJson, added_tokens: list.filter((t) => keep.has(t['id'] as number)) };
      }
    }
    this.json = tokenizerJson as Obj;
    this.rows = rows ?? null;
    for (const t of added) n = Math.max(n, t.id + 1);
    if (n > 1 << 22) refuse(`ids reach ${n}, past the ${1 << 22} this build accepts`);
    const tokens = vocabById(vocab, n);
    for (const t of added) tokens[t.id] = t.content;
    const missing = tokens.findIndex((t) => t === undefined);
    if (missing >= 0) refuse(`no token has id ${missing} (ids must run 0..${n - 1} without gaps)`);
    const V = Math.max(n, rows ?? 0);
    this.vocabSize = V;
    const table = bytesToUnicode();
    const unicodeToByte = new Map(table.map((ch, b) => [ch, b]));
    const specialText = new Array<string | undefined>(V);
    for (let id = n; id < V; id++) specialText[id] = `<unused ${id}>`;
    const isAdded = new Map(added.map((t) => [t.id, t]));
    const pieces: number[][] = [];
    for (let id = 0; id < n; id++) {
      const a = isAdded.get(id);
      if (a?.special) specialText[id] = a.content;
      // An added token that is not special is text, written as the model's tokens are
      // (Gemma 3's "▁▁▁" is three spaces): Hugging Face's decoder reads both alike.
      pieces.push(a?.special ? [] : tokenStringBytes(tokens[id] as string, this.scheme, unicodeToByte));
    }
    for (let id = n; id < V; id++) pieces.push([]);
    const start = new Int32Array(V + 1);
    for (let id = 0; id < V; id++) start[id + 1] = (start[id] as number) + (pieces[id] as number[]).length;
    const bytes = new Uint8Array(start[V] as number);
    for (let id = 0; id < n; id++) bytes.set(pieces[id] as number[], start[id] as number);
    this.bytes = bytes;
    this.start = start;
    this.specialText = specialText;
    this.specialIds = this.roles(tokens, model);
  }

  /** Ids of the roles: the config's tokens, else the usual names (see {@link SpecialIds}). */
  private roles(tokens: readonly (string | undefined)[], model: Obj): SpecialIds {
    const idOf = new Map<string, number>();
    tokens.forEach((t, id) => t !== undefined && !idOf.has(t) && idOf.set(t, id));
    // A role the config names may be any token; a usual name counts only as a special token
    // (Qwen's vocabulary holds "<s>" as ordinary text).
    const find = (named: string | null, ...usual: string[]): number => {
      if (named !== null) return idOf.get(named) ?? -1;
      for (const t of usual) {
        const id = idOf.get(t);
        if (id !== undefined && this.specialText[id] !== undefined) return id;
      }
      return -1;
    };
    const c = this.config;
    const unk = find(c.unkToken ?? tokenValue(model['unk_token']));
    const eos = find(c.eosToken, '</s>', '<eos>', '<|endoftext|>', '<|end_of_text|>');
    // Every lab job starts a sequence with BOS; a vocabulary without one (Qwen2) starts with
    // its document separator, as GPT-2's runs start with <|endoftext|>.
    let bos = find(c.bosToken, '<s>', '<bos>', '<|begin_of_text|>');
    if (bos < 0) bos = find(null, '<|endoftext|>');
    if (bos < 0) bos = eos;
    return { pad: find(c.padToken), bos, eos, unk };
  }

  bytesOf(id: number): Uint8Array {
    checkId(id, this.vocabSize);
    return this.bytes.subarray(this.start[id], this.start[id + 1]);
  }

  byteLength(id: number): number {
    return this.bytesOf(id).length;
  }

  /** Name of special token `id`, or undefined. */
  specialTextOf(id: number): string | undefined {
    return this.specialText[id];
  }

  /** Text of `ids`: their bytes joined (see the file comment), special tokens as their names unless skipped. */
  decode(ids: ArrayLike<number>, opts?: DecodeOptions): string {
    const parts: string[] = [];
    const pending: number[] = [];
    const flush = (): void => {
      if (pending.length > 0) parts.push(decodeWtf8(pending));
      pending.length = 0;
    };
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      checkId(id, this.vocabSize);
      const special = this.specialText[id];
      if (special !== undefined) {
        flush();
        if (opts?.skipSpecial !== true) parts.push(special);
        continue;
      }
      for (let k = this.start[id] as number; k < (this.start[id + 1] as number); k++)
        pending.push(this.bytes[k] as number);
    }
    flush();
    return parts.join('');
  }

  tokenText(id: number): string {
    checkId(id, this.vocabSize);
    const special = this.specialText[id];
    if (special !== undefined) return special;
    const b = this.bytesOf(id);
    return b.length === 1 ? byteTokenText(b[0] as number) : displayBytes(b);
  }

  tokenBytes(id: number): Uint8Array | null {
    checkId(id, this.vocabSize);
    return this.specialText[id] !== undefined ? null : this.bytesOf(id).slice();
  }

  toJSON(): HfTokenizerJSON {
    return {
      format: TOKENIZER_FORMAT,
      version: TOKENIZER_VERSION,
      type: 'bpe',
      vocabSize: this.vocabSize,
      huggingface: { tokenizer: this.json, config: this.config, ...(this.rows !== null ? { rows: this.rows } : {}) },
    };
  }
}
