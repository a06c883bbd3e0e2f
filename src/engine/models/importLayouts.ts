/**
 * Which model a foreign checkpoint holds, from its tensor names and shapes alone (plus a
 * `config.json` when one sits beside it): the layouts people bring, each mapped onto our
 * Transformer, whose parameters already carry nanoGPT's and the seed notebook's names
 * (pytorchNames.ts). Pure: the caller (src/lab/interop/importCheckpoint.ts) reads the file.
 *
 * | layout | names | weights | activation |
 * |---|---|---|---|
 * | attention-lab | ours (export --format pytorch), our config in the metadata | as ours | as saved |
 * | nanogpt | `transformer.h.{i}.attn.c_attn…` | nn.Linear [out, in] | exact GELU |
 * | hf-gpt2 | `h.{i}.attn.c_attn…` with or without `transformer.` | Conv1D [in, out] | `gelu_new` (tanh) |
 * | seed-transformer | `encoder_layers.{i}.self_attn.W_q…` | nn.Linear [out, in] | from config.json |
 * | hf-llama | `model.layers.{i}.self_attn.q_proj…` (hfLlama.ts), config.json required | nn.Linear [out, in] | SwiGLU |
 * | hf-qwen2, -qwen3, -mistral, -gpt-neox | the family's (hfFamilies.ts), config.json required | nn.Linear | its own |
 *
 * A prefix that every name carries because of a wrapper around the saved model (nn.DataParallel's
 * and DistributedDataParallel's `module.`, torch.compile's `_orig_mod.`, or both) is dropped
 * before the layout is detected ({@link wrapperPrefix}); one on only some names is kept.
 *
 * Sizes come from shapes: vocabulary and width from the token embedding, layers from the
 * highest block index, the context from the position table, d_ff from the first MLP, bias
 * and final norm from their presence. Heads cannot be read off any shape, so they come from
 * config.json or the caller (`--heads N`). Every tensor the model needs is then checked by
 * name and shape before anything is read, and any mismatch is one line naming the tensor,
 * the expected and the found shape.
 *
 * Leaves out: reading the file, deciding whether a separate `lm_head.weight` equals the
 * embedding (tied) — that needs the values — and tokenizers.
 */

import type { Activation, ModelConfig } from '../config';
import { CONFIG_LIMITS, kvHeads, validateConfig } from '../config';
import { EngineError } from '../errors';
import type { HfFamily, RowSplit } from './hfFamilies';
import { configFromHfJson, familyLabel, HF_IGNORED, hfFamilyOf, hfFamilyTensors, sourceShape } from './hfFamilies';
import { configFromLlamaJson, hfLlamaNames, isLlamaJson, LLAMA_ARCHITECTURE } from './hfLlama';
import type { TorchTensor } from './pytorchNames';
import { torchTensors } from './pytorchNames';
import { Transformer } from './transformer';

/** The layouts {@link planImport} recognizes. */
export const IMPORT_LAYOUTS = {
  'attention-lab': "Attention Lab's own export (nanoGPT or seed-notebook names, its config in the metadata)",
  nanogpt: "nanoGPT's GPT (nn.Linear weights [out, in])",
  'hf-gpt2': 'Hugging Face GPT-2 (Conv1D weights [in, out], gelu_new)',
  'seed-transformer': "the seed notebook's encoder-decoder Transformer",
  'hf-llama': "Hugging Face LlamaForCausalLM (model.layers.{i}.self_attn.q_proj…, config.json's Llama fields)",
  'hf-qwen2': 'Hugging Face Qwen2ForCausalLM (Qwen2, Qwen2.5: q/k/v biases)',
  'hf-qwen3': 'Hugging Face Qwen3ForCausalLM (QK-norm)',
  'hf-mistral': 'Hugging Face MistralForCausalLM (sliding window)',
  'hf-gpt-neox': 'Hugging Face GPTNeoXForCausalLM (Pythia: fused query_key_value, partial rotary, parallel residual)',
  'hf-gemma3': 'Hugging Face Gemma3ForCausalLM (sandwich norms, local and global layers, norms as 1 + w)',
} as const;

/** The layout of each Hugging Face family (hfFamilies.ts). */
export const HF_FAMILY_LAYOUTS: { readonly [F in HfFamily]: ImportLayout } = {
  llama: 'hf-llama',
  qwen2: 'hf-qwen2',
  qwen3: 'hf-qwen3',
  mistral: 'hf-mistral',
  gpt_neox: 'hf-gpt-neox',
  gemma3_text: 'hf-gemma3',
};

/** One of {@link IMPORT_LAYOUTS}. */
export type ImportLayout = keyof typeof IMPORT_LAYOUTS;

/** Each layout's short name, as a run's header says where its model came from. */
export const IMPORT_LAYOUT_NAMES: { readonly [L in ImportLayout]: string } = {
  'attention-lab': 'Attention Lab export',
  nanogpt: 'nanoGPT',
  'hf-gpt2': 'Hugging Face GPT-2',
  'seed-transformer': 'seed-notebook Transformer',
  'hf-llama': 'Hugging Face Llama',
  'hf-qwen2': 'Hugging Face Qwen2',
  'hf-qwen3': 'Hugging Face Qwen3',
  'hf-mistral': 'Hugging Face Mistral',
  'hf-gpt-neox': 'Hugging Face GPT-NeoX',
  'hf-gemma3': 'Hugging Face Gemma 3',
};

/** A tensor as the file's header lists it. */
export interface SourceTensor {
  readonly name: string;
  readonly shape: readonly number[];
}

/** Where one of our PyTorch tensors comes from. */
export interface TensorSource {
  /** Our tensor (pytorchNames.ts), with the shape our model needs. */
  readonly target: TorchTensor;
  /** Its name in the file (with any wrapper prefix, {@link wrapperPrefix}). */
  readonly source: string;
  /** Stored [in, out] (Conv1D): transpose on reading. */
  readonly transpose: boolean;
  /**
   * The file's tensor has more rows (vocabulary padding, {@link ImportOptions.vocabRows}): keep this many, the first.
   */
  readonly keepRows?: number;
  /** Some rows of a fused tensor (GPT-NeoX's query_key_value): read it whole, keep these (hfFamilies.ts). */
  readonly split?: RowSplit;
  /** Added to every value as it is read (Gemma's norms, 1 + w; hfFamilies.ts). */
  readonly add?: number;
}

/** What a checkpoint is and how to load it. */
export interface ImportPlan {
  readonly layout: ImportLayout;
  /** The config, with `tieEmbeddings` false when the file has its own output projection. */
  readonly config: ModelConfig;
  /**
   * The model, planned for one position and not bound: `tensors` target its parameters,
   * which the caller gives memory (and values) before using it.
   */
  readonly model: Transformer;
  /** Every tensor of the model (tied aliases excluded), in parameter order. */
  readonly tensors: readonly TensorSource[];
  /** The file's separate output projection when it has one (tied if it equals the embedding), else null. */
  readonly lmHead: string | null;
  /** Tensors in the file the model does not use (attention-mask buffers, tables it recomputes). */
  readonly ignored: readonly string[];
  /** For people: where each size came from. */
  readonly notes: readonly string[];
  /** A Hugging Face family's file: which family (hfFamilies.ts). */
  readonly family?: HfFamily;
}

/** Options the caller may give. */
export interface ImportOptions {
  /** Attention heads, when config.json does not say. */
  readonly heads?: number;
  /**
   * The file's `lm_head.weight` holds the same values as the token embedding (the caller
   * compared them): the model is tied and that tensor is a copy, not a parameter.
   */
  readonly tiedHead?: boolean;
  /**
   * Keep only the first `vocabRows` rows of the token embedding and the output projection of
   * a GPT-layout file (decoder-only, not our own export): the caller checked that the rows
   * past them are vocabulary padding no token uses (nanoGPT pads 50257 to 50304).
   */
  readonly vocabRows?: number;
}

/** nanoGPT rounds its vocabulary up to a multiple of this ("for efficiency"): 50257 → 50304. */
export const VOCAB_PAD_MULTIPLE = 64;

/**
 * Whether an embedding of `rows` rows is a tokenizer of `ids` ids padded as nanoGPT pads it:
 * `rows` is the next multiple of {@link VOCAB_PAD_MULTIPLE} at or above `ids` (and more than `ids`).
 */
export function isPaddedVocab(rows: number, ids: number): boolean {
  return ids > 0 && rows > ids && rows === Math.ceil(ids / VOCAB_PAD_MULTIPLE) * VOCAB_PAD_MULTIPLE;
}

/** Wrappers whose prefix PyTorch puts on every state_dict name: DataParallel/DDP's `module.`, torch.compile's. */
const WRAPPERS: ReadonlyMap<string, string> = new Map([
  ['module.', 'nn.DataParallel or DistributedDataParallel'],
  ['_orig_mod.', 'torch.compile'],
]);

/**
 * The wrapper prefix every one of `names` starts with: `module.`, `_orig_mod.`, or several of them in a row
 * (`module._orig_mod.` …), each on ALL names; '' when none is (a prefix on only some names is not a wrapper's).
 */
export function wrapperPrefix(names: readonly string[]): string {
  let pre = '';
  for (;;) {
    const next = [...WRAPPERS.keys()].find(
      (w) => names.length > 0 && names.every((n) => n.startsWith(pre + w) && n.length > pre.length + w.length),
    );
    if (next === undefined) return pre;
    pre += next;
  }
}

/** For people: which wrapper(s) the dropped prefix `pre` comes from. */
function wrapperNote(pre: string): string {
  const by = [...WRAPPERS].filter(([w]) => pre.includes(w)).map(([, who]) => who);
  return `every tensor name starts with \`${pre}\` (saved through ${by.join(' and ')}), which is dropped`;
}

/** Buffers a PyTorch model saves that are not parameters (HF GPT-2's causal masks; the notebook's sinusoidal table). */
const IGNORED = /(^|\.)attn\.(bias|masked_bias)$|^positional_encoding\.pe$/;
const CONV1D = /\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight$/;
/** The tensors with a row per token id: the token embedding and the output projection. */
const VOCAB_ROWS = /(^|\.)wte\.weight$|^lm_head\.weight$/;

type Json = Readonly<Record<string, unknown>>;

function bad(msg: string): never {
  throw new EngineError('checkpoint/invalid', msg);
}

const fmt = (s: readonly number[] | undefined): string => (s ? `[${s.join(', ')}]` : 'nothing');

/**
 * Detects the layout of `tensors` and plans loading them. `configJson` is the parsed
 * config.json beside the file (null when there is none); `metadata` the file's
 * `__metadata__`. Throws EngineError('checkpoint/invalid') in one line naming what is wrong.
 */
export function planImport(
  tensors: readonly SourceTensor[],
  metadata: Readonly<Record<string, string>>,
  configJson: Json | null,
  opts: ImportOptions = {},
): ImportPlan {
  const pre = wrapperPrefix(tensors.map((t) => t.name));
  const shapes = new Map(tensors.map((t) => [t.name.slice(pre.length), t.shape]));
  const notes: string[] = pre ? [wrapperNote(pre)] : [];
  const ownLlama = configJson !== null && configJson['attention_lab'] !== undefined && isLlamaJson(configJson);
  const family = ownLlama || parseOwnConfig(metadata) ? null : hfFamilyOf(configJson);
  if (family !== null) return planHfFamily(family, shapes, configJson as Json, pre);
  if (shapes.has('model.embed_tokens.weight')) return planLlama(shapes, configJson, pre);
  const ours = parseOwnConfig(metadata);
  let layout: ImportLayout;
  let config: ModelConfig;
  let prefix = '';
  if (shapes.has('decoder_embedding.weight') || shapes.has('encoder_embedding.weight')) {
    layout = ours ? 'attention-lab' : 'seed-transformer';
    config = ours ?? sized(configJson, () => seedConfig(shapes, configJson, opts, notes));
  } else {
    prefix = shapes.has('transformer.wte.weight')
      ? 'transformer.'
      : shapes.has('wte.weight')
        ? ''
        : unknownLayout(shapes);
    countBlocks(shapes, `${prefix}h`); // a missing block is named before the first block's shapes are read
    if (ours) {
      // Our own export: its config says the shapes (c_attn is [(H + 2·Hkv)·D, C] under grouped-query attention).
      layout = 'attention-lab';
      config = ours;
    } else {
      const gpt = gptShapes(shapes, prefix);
      layout = gpt.conv1d ? 'hf-gpt2' : 'nanogpt';
      config = sized(configJson, () => gptConfig(shapes, prefix, gpt.conv1d, configJson, opts, notes));
    }
  }
  const fileVocab = config.vocabSize;
  const keepRows =
    !ours && config.kind === 'decoder-only' && opts.vocabRows !== undefined && opts.vocabRows < fileVocab
      ? opts.vocabRows
      : null;
  if (keepRows !== null) {
    config = validateConfig({ ...config, vocabSize: keepRows });
    notes.push(
      `the embedding has ${fileVocab} rows for a tokenizer of ${keepRows} ids: the last ` +
        `${fileVocab - keepRows} are vocabulary padding (nanoGPT rounds up to a multiple of ` +
        `${VOCAB_PAD_MULTIPLE}) that no token uses, and are dropped`,
    );
  }
  const hasHead = config.kind === 'decoder-only' && shapes.has('lm_head.weight');
  const lmHead = hasHead && !ours && !opts.tiedHead ? `${pre}lm_head.weight` : null;
  if (config.kind === 'decoder-only' && !ours) config = validateConfig({ ...config, tieEmbeddings: lmHead === null });
  const conv1d = layout === 'hf-gpt2';
  const model = new Transformer(config, { maxBatch: 1, maxLen: 1, maxSrcLen: 1 });
  const planned = torchTensors(model).filter((t) => !t.alias);
  const wanted = new Set<string>();
  const sources = planned.map((target): TensorSource => {
    const source = target.name.startsWith('transformer.')
      ? prefix + target.name.slice('transformer.'.length)
      : target.name;
    const transpose = conv1d && CONV1D.test(source);
    const expected = transpose ? [...target.shape].reverse() : [...target.shape];
    const found = shapes.get(source);
    const shown = pre + source;
    // A padded vocabulary: the file's rows are fileVocab, the model keeps the first keepRows.
    const padded =
      keepRows !== null &&
      !transpose &&
      VOCAB_ROWS.test(source) &&
      found?.length === 2 &&
      found[0] === fileVocab &&
      found[1] === expected[1];
    if (padded) {
      wanted.add(source);
      return { target, source: shown, transpose, keepRows };
    }
    if (!found)
      bad(
        `The checkpoint has no tensor ${shown} (${IMPORT_LAYOUTS[layout]} with ${describe(config)} ` +
          `needs it, shape ${fmt(expected)}); it was saved from a different model, or with a different config.json.`,
      );
    if (found.length !== expected.length || found.some((d, i) => d !== expected[i])) {
      bad(
        `Tensor ${shown}: expected shape ${fmt(expected)} (${IMPORT_LAYOUTS[layout]}, ` +
          `${describe(config)}), found ${fmt(found)}; check ` +
          `config.json${opts.heads ? ' and --heads' : ''} against the checkpoint.`,
      );
    }
    wanted.add(source);
    return { target, source: shown, transpose };
  });
  const ignored: string[] = [];
  for (const name of shapes.keys()) {
    if (wanted.has(name)) continue;
    const tiedCopy =
      name === 'lm_head.weight' &&
      config.tieEmbeddings &&
      sameShape(shapes.get(name), shapes.get(`${prefix}wte.weight`));
    if (IGNORED.test(name) || tiedCopy) ignored.push(pre + name);
    else
      bad(
        `Tensor ${pre}${name} ${fmt(shapes.get(name))} ` +
          `has no place in ${IMPORT_LAYOUTS[layout]} with ${describe(config)}; ` +
          `the checkpoint holds a model with parts Attention Lab's Transformer ` +
          `does not have.`,
      );
  }
  return { layout, config, model, tensors: sources, lmHead, ignored, notes };
}

/**
 * A Hugging Face Llama: the config from config.json's Llama fields (hfLlama.ts; shapes cannot
 * give heads, RoPE θ or ε), every tensor checked by name and shape. A tied model's file has no
 * `lm_head.weight` (save_pretrained drops it); one that is there anyway is ignored, as
 * transformers ignores it.
 */
function planLlama(shapes: ReadonlyMap<string, readonly number[]>, configJson: Json | null, pre: string): ImportPlan {
  const layout: ImportLayout = 'hf-llama';
  if (!isLlamaJson(configJson))
    bad(
      "The checkpoint has Llama's tensor names (model.embed_tokens.weight …) but no config.json with " +
        `architectures ["${LLAMA_ARCHITECTURE}"] beside it; put the config.json saved with it there.`,
    );
  const cfg = configJson as Json;
  const own = (cfg['attention_lab'] as Json | undefined)?.['config'];
  const config = sized(configJson, () => configFromLlamaJson(cfg, own));
  const model = new Transformer(config, { maxBatch: 1, maxLen: 1, maxSrcLen: 1 });
  const wanted = new Set<string>();
  const tensors = hfLlamaNames(config).map(([source, ours]): TensorSource => {
    const p = model.param(ours);
    const found = shapes.get(source);
    if (!found)
      bad(
        `The checkpoint has no tensor ${pre}${source} (${IMPORT_LAYOUTS[layout]} with ${describe(config)} ` +
          `needs it, shape ${fmt(p.shape)}); it was saved from a different model, or with a different config.json.`,
      );
    if (!sameShape(found, p.shape))
      bad(
        `Tensor ${pre}${source}: expected shape ${fmt(p.shape)} (${IMPORT_LAYOUTS[layout]}, ${describe(config)}), ` +
          `found ${fmt(found)}; check config.json against the checkpoint.`,
      );
    wanted.add(source);
    return {
      target: { name: p.name, shape: p.shape, parts: [p], alias: false },
      source: pre + source,
      transpose: false,
    };
  });
  const ignored: string[] = [];
  for (const name of shapes.keys()) {
    if (wanted.has(name)) continue;
    const tiedCopy = name === 'lm_head.weight' && config.tieEmbeddings;
    if (tiedCopy || /\.rotary_emb\.inv_freq$/.test(name)) ignored.push(pre + name);
    else
      bad(
        `Tensor ${pre}${name} ${fmt(shapes.get(name))} has no place in ${IMPORT_LAYOUTS[layout]} with ` +
          `${describe(config)}; the checkpoint holds a model with parts Attention Lab's Transformer does not have.`,
      );
  }
  const notes = [
    `${config.nDecoderLayers} layers, ${config.nHeads} heads (${kvHeads(config)} key/value), ` +
      `d_model ${config.dModel}, d_ff ${config.dFF}, vocab ${config.vocabSize}, context ${config.maxLen}, ` +
      `RoPE θ ${config.ropeTheta} ` +
      `from config.json${own !== undefined ? " (and its attention_lab block: Attention Lab's own export)" : ''}`,
  ];
  return { layout, config, model, tensors, lmHead: null, ignored, notes };
}

/**
 * A Hugging Face family's file (hfFamilies.ts): the config from config.json, every tensor checked by name and
 * shape (a fused tensor by its whole shape). As in {@link planLlama}, a tied model's lm_head.weight is ignored.
 */
function planHfFamily(
  family: HfFamily,
  shapes: ReadonlyMap<string, readonly number[]>,
  cfg: Json,
  pre: string,
): ImportPlan {
  const layout = HF_FAMILY_LAYOUTS[family];
  const read = sized(cfg, () => configFromHfJson(cfg, family));
  const config = read.config;
  const model = sized(cfg, () => new Transformer(config, { maxBatch: 1, maxLen: 1, maxSrcLen: 1 }));
  const wanted = new Set<string>();
  const tensors = hfFamilyTensors(family, config).map((t): TensorSource => {
    const p = model.param(t.target);
    const expected = sourceShape(t, p.shape);
    const found = shapes.get(t.source);
    if (!found)
      bad(
        `The checkpoint has no tensor ${pre}${t.source} (${IMPORT_LAYOUTS[layout]} with ${describe(config)} ` +
          `needs it, shape ${fmt(expected)}); it was saved from a different model, or with a different config.json.`,
      );
    if (!sameShape(found, expected))
      bad(
        `Tensor ${pre}${t.source}: expected shape ${fmt(expected)} (${IMPORT_LAYOUTS[layout]}, ${describe(config)}), ` +
          `found ${fmt(found)}; check config.json against the checkpoint.`,
      );
    wanted.add(t.source);
    return {
      target: { name: p.name, shape: p.shape, parts: [p], alias: false },
      source: pre + t.source,
      transpose: false,
      ...(t.split ? { split: t.split } : {}),
      ...(t.add ? { add: t.add } : {}),
    };
  });
  const head = family === 'gpt_neox' ? 'embed_out.weight' : 'lm_head.weight';
  const ignored: string[] = [];
  for (const name of shapes.keys()) {
    if (wanted.has(name)) continue;
    if ((name === head && config.tieEmbeddings) || HF_IGNORED.test(name)) ignored.push(pre + name);
    else
      bad(
        `Tensor ${pre}${name} ${fmt(shapes.get(name))} has no place in ${IMPORT_LAYOUTS[layout]} with ` +
          `${describe(config)}; the checkpoint holds a model with parts Attention Lab's Transformer does not have.`,
      );
  }
  const notes = [
    `${familyLabel(family)}: ${config.nDecoderLayers} layers, ${config.nHeads} heads (${kvHeads(config)} key/value` +
      `${config.headDim > 0 ? `, ${config.headDim} wide` : ''}), d_model ${config.dModel}, d_ff ${config.dFF}, ` +
      `vocab ${config.vocabSize}, context ${config.maxLen}, RoPE θ ${config.ropeTheta}` +
      `${config.rotaryFraction < 1 ? ` on ${config.rotaryFraction} of each head` : ''}` +
      `${config.slidingWindow > 0 ? `, sliding window ${config.slidingWindow}` : ''} from config.json`,
    ...read.notes,
  ];
  return { layout, config, model, tensors, lmHead: null, ignored, notes, family };
}

/** A config read from the tensors and config.json; an invalid one is refused naming where its sizes came from. */
function sized<T>(configJson: Json | null, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (!EngineError.is(e, 'config/invalid')) throw e;
    return bad(
      `${configJson ? "config.json and the checkpoint's tensors give" : "The checkpoint's tensors give"}` +
        ` an invalid model: ${e.message}`,
    );
  }
}

function sameShape(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  return !!a && !!b && a.length === b.length && a.every((d, i) => d === b[i]);
}

function describe(c: ModelConfig): string {
  const layers =
    c.kind === 'decoder-only' ? `${c.nDecoderLayers} layers` : `${c.nEncoderLayers}+${c.nDecoderLayers} layers`;
  return (
    `${layers}, d_model ${c.dModel}, ${c.nHeads} heads, d_ff ${c.dFF}, vocab ${c.vocabSize}, ` +
    `context ${c.maxLen}, ${c.bias ? 'biases' : 'no biases'}`
  );
}

function unknownLayout(shapes: ReadonlyMap<string, readonly number[]>): never {
  const some = [...shapes.keys()].slice(0, 3).join(', ');
  return bad(
    `Unknown checkpoint layout (tensors such as ${some || 'none'}): Attention Lab imports ` +
      `${Object.values(IMPORT_LAYOUTS).join('; ')} — save the model with one of these state_dict layouts.`,
  );
}

/** Our ModelConfig from the metadata our export writes, or null. */
function parseOwnConfig(metadata: Readonly<Record<string, string>>): ModelConfig | null {
  const raw = metadata.attention_lab_config;
  if (raw === undefined) return null;
  try {
    return validateConfig(JSON.parse(raw) as ModelConfig);
  } catch (e) {
    return bad(
      `The checkpoint's attention_lab_config metadata is not a valid config ` +
        `(${(e as Error).message}); re-export it, or remove that metadata to import it by its shapes.`,
    );
  }
}

/**
 * The first of `keys` config.json gives; a key that is there but not a finite number (or
 * null, as Hugging Face writes an unset n_inner) is refused rather than silently skipped.
 */
function num(cfg: Json | null, ...keys: string[]): number | undefined {
  for (const k of keys) {
    const v = cfg?.[k];
    if (v === undefined || v === null) continue;
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    return bad(
      `config.json's ${k} is ${JSON.stringify(v) ?? String(v)}, not a number; fix it or remove it ` +
        `to size the model from its tensors.`,
    );
  }
  return undefined;
}

/** Refuses a config.json size that contradicts the one the weights' shapes give. */
function agrees(cfg: Json | null, found: number, from: string, ...keys: string[]): void {
  for (const k of keys) {
    const v = num(cfg, k);
    if (v !== undefined && v !== found)
      bad(
        `config.json says ${k} ${v} but ${from} gives ${found}; use the config.json saved with this ` +
          `checkpoint, or remove it.`,
      );
  }
}

function need(shapes: ReadonlyMap<string, readonly number[]>, name: string, dims: number): readonly number[] {
  const s = shapes.get(name);
  if (!s) return bad(`The checkpoint has no tensor ${name}; it is not a complete model of its layout.`);
  if (s.length !== dims) return bad(`Tensor ${name}: expected a ${dims}-D shape, found ${fmt(s)}.`);
  return s;
}

/** Highest `<stack>.{i}.` index + 1, checking that no block is missing. */
function countBlocks(shapes: ReadonlyMap<string, readonly number[]>, stack: string): number {
  const re = new RegExp(`^${stack.replace(/\./g, '\\.')}\\.(\\d+)\\.`);
  const seen = new Set<number>();
  for (const n of shapes.keys()) {
    const m = re.exec(n);
    if (m) seen.add(Number(m[1]));
  }
  let n = 0;
  for (const i of seen) n = Math.max(n, i + 1); // not Math.max(...seen): a header may name a million blocks
  if (n > CONFIG_LIMITS.nDecoderLayers)
    bad(
      `The checkpoint has blocks up to ${stack}.${n - 1}, more than the ` +
        `${CONFIG_LIMITS.nDecoderLayers} layers Attention Lab holds; it is damaged or too deep to import.`,
    );
  for (let i = 0; i < n; i++)
    if (!seen.has(i))
      bad(`The checkpoint has blocks up to ${stack}.${n - 1} but none named ${stack}.${i}; it is incomplete.`);
  return n;
}

function heads(cfg: Json | null, opts: ImportOptions, C: number, notes: string[], ...keys: string[]): number {
  const fromCfg = num(cfg, ...keys);
  if (opts.heads !== undefined && fromCfg !== undefined && opts.heads !== fromCfg) {
    bad(`--heads ${opts.heads} disagrees with config.json's ${keys[0]} ${fromCfg}; drop --heads or fix config.json.`);
  }
  const h = opts.heads ?? fromCfg;
  if (h === undefined)
    return bad(
      `The number of attention heads cannot be read from the tensor shapes (d_model ${C}) and there ` +
        `is no config.json with ${keys[0]} beside the checkpoint; pass --heads N (a divisor of ` +
        `${C}, e.g. ${C % 64 === 0 ? C / 64 : C % 12 === 0 ? 12 : 4}).`,
    );
  notes.push(`${h} heads from ${opts.heads !== undefined ? '--heads' : `config.json ${keys[0]}`}`);
  return h;
}

/** Whether the GPT's weights are Conv1D [in, out] (c_attn [C, 3C]) or nn.Linear [out, in] ([3C, C]). */
function gptShapes(shapes: ReadonlyMap<string, readonly number[]>, p: string): { conv1d: boolean } {
  const [, C] = need(shapes, `${p}wte.weight`, 2) as [number, number];
  const qkv = need(shapes, `${p}h.0.attn.c_attn.weight`, 2);
  if (qkv[0] === 3 * C && qkv[1] === C) return { conv1d: false };
  if (qkv[0] === C && qkv[1] === 3 * C) return { conv1d: true };
  return bad(
    `Tensor ${p}h.0.attn.c_attn.weight: expected shape [${3 * C}, ${C}] (nn.Linear) or [${C}, ` +
      `${3 * C}] (Conv1D) for d_model ${C}, found ${fmt(qkv)}.`,
  );
}

const HF_ACTIVATIONS: Readonly<Record<string, Activation>> = {
  gelu_new: 'geluTanh',
  gelu_pytorch_tanh: 'geluTanh',
  gelu_fast: 'geluTanh',
  gelu: 'gelu',
  relu: 'relu',
};

function gptConfig(
  shapes: ReadonlyMap<string, readonly number[]>,
  p: string,
  conv1d: boolean,
  cfg: Json | null,
  opts: ImportOptions,
  notes: string[],
): ModelConfig {
  const [V, C] = need(shapes, `${p}wte.weight`, 2) as [number, number];
  const wpe = shapes.get(`${p}wpe.weight`);
  const nLayer = countBlocks(shapes, `${p}h`);
  const layersCfg = num(cfg, 'n_layer');
  if (layersCfg !== undefined && layersCfg !== nLayer)
    bad(
      `config.json says n_layer ${layersCfg} but the checkpoint has blocks ${p}h.0 … ` +
        `${p}h.${nLayer - 1}; use the config.json saved with this checkpoint.`,
    );
  const fc = need(shapes, `${p}h.0.mlp.c_fc.weight`, 2);
  const dFF = (conv1d ? fc[1] : fc[0]) as number;
  agrees(cfg, C, `${p}wte.weight`, 'n_embd', 'hidden_size');
  agrees(cfg, V, `${p}wte.weight`, 'vocab_size');
  agrees(cfg, dFF, `${p}h.0.mlp.c_fc.weight`, 'n_inner');
  if (wpe) agrees(cfg, wpe[0] as number, `${p}wpe.weight`, 'block_size', 'n_positions', 'n_ctx');
  const maxLen = wpe ? (wpe[0] as number) : num(cfg, 'block_size', 'n_positions', 'n_ctx');
  if (maxLen === undefined)
    return bad(
      `The checkpoint has no ${p}wpe.weight and config.json gives no block_size, so its context ` +
        `length is unknown; add block_size to config.json.`,
    );
  let activation: Activation = 'gelu';
  if (conv1d) {
    const name = cfg?.activation_function;
    if (name !== undefined && (typeof name !== 'string' || !Object.hasOwn(HF_ACTIVATIONS, name))) {
      bad(
        `config.json's activation_function ${JSON.stringify(name)} is not one Attention Lab has; it ` +
          `has ${Object.keys(HF_ACTIVATIONS).join(', ')}.`,
      );
    }
    activation = HF_ACTIVATIONS[(name as string | undefined) ?? 'gelu_new'] as Activation;
  }
  notes.push(
    `${nLayer} layers from ${p}h.{0…${nLayer - 1}}, vocab ${V} and d_model ` +
      `${C} from ${p}wte.weight, d_ff ${dFF} from ${p}h.0.mlp.c_fc.weight` +
      `${wpe ? `, context ${maxLen} from ${p}wpe.weight` : ''}, activation ` +
      `${activation}`,
  );
  return validateConfig({
    kind: 'decoder-only',
    srcVocabSize: 0,
    vocabSize: V,
    dModel: C,
    nHeads: heads(cfg, opts, C, notes, 'n_head', 'num_attention_heads'),
    dFF,
    nEncoderLayers: 0,
    nDecoderLayers: nLayer,
    maxLen,
    dropout: 0,
    norm: shapes.has(`${p}ln_f.weight`) ? 'pre' : 'post',
    positional: wpe ? 'learned' : 'sinusoidal',
    activation,
    tieEmbeddings: true,
    bias: shapes.has(`${p}h.0.attn.c_attn.bias`),
    layerNormEps: num(cfg, 'layer_norm_epsilon', 'layer_norm_eps') ?? 1e-5,
    embedScale: false,
    labelSmoothing: 0,
  });
}

function seedConfig(
  shapes: ReadonlyMap<string, readonly number[]>,
  cfg: Json | null,
  opts: ImportOptions,
  notes: string[],
): ModelConfig {
  const [V, C] = need(shapes, 'decoder_embedding.weight', 2) as [number, number];
  const [srcV] = need(shapes, 'encoder_embedding.weight', 2) as [number, number];
  const nEnc = countBlocks(shapes, 'encoder_layers');
  const nDec = countBlocks(shapes, 'decoder_layers');
  const dFF = need(shapes, 'encoder_layers.0.feed_forward.fc1.weight', 2)[0] as number;
  const pe = shapes.get('positional_encoding.pe');
  const learned = shapes.get('decoder_positions.weight');
  const maxLen = num(cfg, 'max_seq_length') ?? (learned ? learned[0] : pe ? pe[pe.length - 2] : undefined);
  if (maxLen === undefined)
    return bad(
      'The checkpoint has no positional_encoding.pe and config.json gives no max_seq_length, so its ' +
        'context length is unknown; add max_seq_length to config.json.',
    );
  const str = (k: string): string | undefined => (typeof cfg?.[k] === 'string' ? (cfg[k] as string) : undefined);
  const bool = (k: string): boolean | undefined => (typeof cfg?.[k] === 'boolean' ? (cfg[k] as boolean) : undefined);
  const scale = num(cfg, 'embed_scale');
  agrees(cfg, C, 'decoder_embedding.weight', 'd_model');
  agrees(cfg, V, 'decoder_embedding.weight', 'tgt_vocab_size');
  agrees(cfg, srcV, 'encoder_embedding.weight', 'src_vocab_size');
  agrees(cfg, dFF, 'encoder_layers.0.feed_forward.fc1.weight', 'd_ff');
  agrees(cfg, nEnc, 'the encoder_layers blocks', 'num_encoder_layers');
  agrees(cfg, nDec, 'the decoder_layers blocks', 'num_decoder_layers');
  if (learned) agrees(cfg, learned[0] as number, 'decoder_positions.weight', 'max_seq_length');
  notes.push(`${nEnc}+${nDec} layers, vocab ${srcV}→${V}, d_model ${C}, d_ff ${dFF} from the tensor shapes`);
  return validateConfig({
    kind: 'encoder-decoder',
    srcVocabSize: srcV,
    vocabSize: V,
    dModel: C,
    nHeads: heads(cfg, opts, C, notes, 'num_heads'),
    dFF,
    nEncoderLayers: nEnc,
    nDecoderLayers: nDec,
    maxLen,
    dropout: num(cfg, 'dropout') ?? 0.1,
    norm: shapes.has('encoder_norm.weight') ? 'pre' : 'post',
    positional: learned ? 'learned' : 'sinusoidal',
    activation: (str('activation') as Activation | undefined) ?? 'relu',
    tieEmbeddings: bool('tie_embeddings') ?? !shapes.has('fc.weight'),
    bias: shapes.has('encoder_layers.0.self_attn.W_q.bias'),
    layerNormEps: num(cfg, 'layer_norm_eps') ?? 1e-5,
    embedScale: scale === undefined ? true : scale !== 1,
    labelSmoothing: num(cfg, 'label_smoothing') ?? 0.1,
  });
}
