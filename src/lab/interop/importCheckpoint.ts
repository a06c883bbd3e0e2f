/**
 * `import`: a PyTorch checkpoint — safetensors, or torch.save's own `.bin`/`.pt`/`.pth` read
 * without running it (weightFile.ts) — in a layout we know (ours, nanoGPT's, Hugging Face
 * GPT-2's or the seed notebook's — engine/models/importLayouts.ts) becomes an ordinary run folder
 * (run.json, model.safetensors, tokenizer.json) that every other job opens: decode, score,
 * attend, heads, lens, export, and `train --resume`, which fine-tunes it on the documents
 * named at import with a low learning rate the run states ({@link FINE_TUNE_LR}).
 *
 * Everything that can be checked is checked before a weight is read: the files, the layout
 * and every tensor's shape, the heads, the tokenizer and its vocabulary against the model's,
 * and the memory the model needs (engine/models/estimate.ts). Weights are then read one
 * tensor at a time with progress and cancellation, into a model planned for one position (so
 * only the parameters are allocated), and the run folder is written into a temporary folder
 * that is renamed into place at the end: nothing is left behind on failure.
 *
 * The CLI (`src/cli/importCmd.ts`) and the model worker both call {@link importCheckpoint}.
 * A Hugging Face folder's family (hfFamilies.ts) is kept in run.json's `source`: the model's own
 * name, its architecture and family. Sharded checkpoints are read through their index
 * (shardedCheckpoint.ts), shard by shard.
 *
 * Leaves out: sharded .bin sets, GGUF.
 */

import type { ModelConfig } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import type { ImportLayout, ImportOptions, ImportPlan } from '../../engine/models/importLayouts';
import { IMPORT_LAYOUTS, isPaddedVocab, planImport } from '../../engine/models/importLayouts';
import type { HfSource } from '../../engine/models/hfFamilies';
import { HF_FAMILIES, hfModelName, splitRows } from '../../engine/models/hfFamilies';
import { setTorchTensor } from '../../engine/models/pytorchNames';
import { memoryProblem } from '../../engine/models/estimate';
import type { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import type { DataSummary, PrepareProgress, TrainSpec } from '../../protocol/data';
import type { LabFs } from '../files/labFs';
import { listNames, scratchFolder } from '../files/labFs';
import { folderError } from '../files/fileErrors';
import { readCappedText } from '../files/fileCaps';
import { layOutModelCheckpoint, saveCheckpoint } from '../runs/checkpoint';
import type { WorkHooks } from '../data/documentData';
import { CancelledError } from '../base/cancelled';
import { loadImportTokenizer } from './importTokenizer';
import { HfTokenizer } from '../runs/hfTokenizer';
import { writeTokenizer } from '../runs/tokenizerFile';
import { RUN_FORMAT, RUN_VERSION, writeRunJson } from '../runs/runFolder';
import type { RunJson } from '../runs/runFolder';
import type { WeightFile } from './weightFile';
import { isTorchName, openWeightFile } from './weightFile';
import { planSegments } from '../runs/segments';
import { SHARD_INDEX } from './shardedCheckpoint';

/** Peak learning rate of fine-tuning an imported model (AdamW, cosine): nanoGPT's finetune_shakespeare uses 3e-5. */
export const FINE_TUNE_LR = 3e-5;
/** Steps `train --resume` fine-tunes for unless the import says otherwise. */
export const FINE_TUNE_STEPS = 200;

/** What to import, and where. */
export interface ImportRequest {
  /**
   * A .safetensors or torch.save (.bin/.pt/.pth) file, or a folder holding one (model.safetensors, the shards of
   * model.safetensors.index.json, the only .safetensors, pytorch_model.bin, or the only torch file).
   */
  readonly from: string;
  /** The run folder to create; must not exist, or be empty. */
  readonly out: string;
  /** Attention heads, when no config.json says. */
  readonly heads?: number;
  /** A tokenizer.json (ours or Hugging Face's), vocab.json (with merges.txt beside it), or a folder of them. */
  readonly tokenizer?: string;
  /** Documents `train --resume` fine-tunes on (absolute paths), and the folder they are shown relative to. */
  readonly data?: { readonly files: readonly string[]; readonly root: string };
  /** Fine-tuning steps (default {@link FINE_TUNE_STEPS}) and peak learning rate (default {@link FINE_TUNE_LR}). */
  readonly steps?: number;
  readonly lr?: number;
}

/** What an import did. */
export interface ImportResult {
  readonly runDir: string;
  readonly layout: ImportLayout;
  /** For people: the layout's description. */
  readonly layoutText: string;
  readonly modelFile: string;
  readonly config: ModelConfig;
  readonly params: number;
  /** Tensors read, and the file's tensors left unused (attention-mask buffers …). */
  readonly tensors: number;
  readonly ignored: readonly string[];
  readonly tokenizer: string;
  /** Where sizes came from, how the output projection was found, and the fine-tuning plan. */
  readonly notes: readonly string[];
  readonly bytesRead: number;
  /** A Hugging Face family's model: its own name, architecture and family (run.json's `source`). */
  readonly source?: HfSource;
}

function badInput(msg: string): never {
  throw new EngineError('input/invalid', msg);
}

/** The checkpoint file `from` names: itself, or the one in the folder. */
export async function locateCheckpoint(fs: LabFs, from: string): Promise<string> {
  const kind = (await fs.stat(from))?.kind;
  if (kind === undefined)
    badInput(`${from} does not exist; pass a .safetensors or .bin/.pt checkpoint, or the folder holding one.`);
  if (kind === 'file') return from;
  const names = await listNames(fs, from);
  if (names.includes('run.json'))
    badInput(`${from} is already an Attention Lab run folder; open it directly (no import needed).`);
  if (names.includes('model.safetensors')) return fs.join(from, 'model.safetensors');
  if (names.includes(SHARD_INDEX)) return fs.join(from, SHARD_INDEX);
  const st = names.filter((n) => n.endsWith('.safetensors')).sort();
  if (st.length === 1) return fs.join(from, st[0] as string);
  if (st.length > 1)
    badInput(
      `${from} holds ${st.length} .safetensors files (${st.slice(0, 3).join(', ')}…) and no ${SHARD_INDEX}; ` +
        `pass the one to import, or put the index saved with the shards beside them.`,
    );
  if (names.includes('pytorch_model.bin')) return fs.join(from, 'pytorch_model.bin');
  const torch = names.filter((n) => isTorchName(n)).sort();
  if (torch.length === 1) return fs.join(from, torch[0] as string);
  if (torch.length > 1)
    badInput(
      `${from} holds ${torch.length} PyTorch checkpoint files (${torch.slice(0, 3).join(', ')}…); pass the one ` +
        `to import (sharded checkpoints must be merged into one file first).`,
    );
  return badInput(`${from} holds no .safetensors or .bin/.pt file; pass the checkpoint file, or the folder it is in.`);
}

async function readConfigJson(fs: LabFs, dir: string): Promise<Record<string, unknown> | null> {
  const file = fs.join(dir, 'config.json');
  if ((await fs.stat(file))?.kind !== 'file') return null;
  const text = await readCappedText(fs, file, 'config.json');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new EngineError(
      'checkpoint/invalid',
      `${file} is not valid JSON (${(e as Error).message}); fix it or remove it to size the model from its tensors.`,
    );
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new EngineError(
      'checkpoint/invalid',
      `${file} must hold a JSON object of config fields; fix it or remove it.`,
    );
  return v as Record<string, unknown>;
}

/** The run folder must not exist yet, or be empty. */
async function checkOut(fs: LabFs, out: string): Promise<void> {
  const kind = (await fs.stat(out))?.kind;
  if (kind === undefined) return;
  if (kind !== 'directory' || (await listNames(fs, out)).length > 0)
    badInput(`${out} already exists and is not empty; choose a new --out folder so nothing in it is overwritten.`);
}

/** A checkpoint opened and planned, its weights not read yet. */
export interface OpenedCheckpoint {
  readonly modelFile: string;
  /** The file's name, for people. */
  readonly name: string;
  readonly reader: WeightFile;
  readonly configJson: Record<string, unknown> | null;
  readonly plan: ImportPlan;
  /** For people: how the file was read (before the plan's notes). */
  readonly notes: readonly string[];
}

/** What the caller may tell the planner: heads (when config.json does not say), and the vocabulary rows to keep. */
export type PlanOptions = Pick<ImportOptions, 'heads' | 'vocabRows'>;

/** Opens the checkpoint `from` names and plans it (layout, config, every shape); reads no weight. */
export async function openCheckpoint(fs: LabFs, from: string, opts: PlanOptions = {}): Promise<OpenedCheckpoint> {
  const modelFile = await locateCheckpoint(fs, fs.resolve(from));
  const reader = await openWeightFile(fs, modelFile);
  const notes = [...reader.notes];
  let configJson = await readConfigJson(fs, fs.dirname(modelFile));
  if (!configJson && reader.config) {
    // nanoGPT's ckpt.pt keeps its GPTConfig (n_head …) beside the weights: it serves as config.json would.
    configJson = reader.config.values;
    notes.push(`no config.json: the checkpoint's "${reader.config.key}" serves as one`);
  }
  const name = fs.basename(modelFile);
  const plan = planNamed(name, reader, configJson, opts);
  return { modelFile, name, reader, configJson, plan, notes };
}

/**
 * planImport of an opened file; a refusal that neither names the file nor is about config.json starts with the file's
 * name.
 */
function planNamed(
  name: string,
  reader: WeightFile,
  configJson: Record<string, unknown> | null,
  opts: ImportOptions,
): ImportPlan {
  try {
    return planImport(reader.tensors, reader.metadata, configJson, opts);
  } catch (e) {
    if (EngineError.is(e) && !e.message.includes(name) && !e.message.startsWith('config.json'))
      throw new EngineError(e.code, `${name}: ${e.message}`, { cause: e });
    throw e;
  }
}

/**
 * Reads the weights of an opened checkpoint, one tensor at a time, into its planned model
 * (unbound: each parameter gets its own array; no gradients or activations). Returns the
 * final plan (a separate lm_head equal to the embedding makes it tied), notes, and the bytes of
 * the run's model.safetensors at step 0 the weights were read into (layOutModelCheckpoint; null on
 * a big-endian host, where each parameter has its own array).
 */
export async function readCheckpointWeights(
  opened: OpenedCheckpoint,
  opts: PlanOptions = {},
  hooks: WorkHooks = {},
): Promise<{ plan: ImportPlan; notes: string[]; laidOut: Uint8Array | null }> {
  const { reader, name } = opened;
  let plan = opened.plan;
  const notes = [...opened.notes, ...plan.notes];
  // A torch.save file of a tied model stores lm_head as the embedding's own storage: tied without reading it.
  const sharedHead = plan.lmHead !== null && reader.sameTensor(embeddingOf(plan).source, plan.lmHead);
  // Progress counts the bytes of the tensors the model takes (not mask buffers it ignores).
  const head = plan.lmHead && !sharedHead ? [plan.lmHead] : [];
  const sources = new Set([...plan.tensors.map((t) => t.source), ...head]);
  let total = 0;
  for (const name of sources) total += reader.bytesOf(name);
  const progress = (done: number): void =>
    hooks.onProgress?.({
      phase: 'read',
      done: Math.min(done, total),
      total,
      message: `Reading ${name}`,
    } satisfies PrepareProgress);
  const readHooks = {
    onBytes: progress,
    ...(hooks.isCancelled ? { isCancelled: hooks.isCancelled } : {}),
    ...(hooks.yieldNow ? { yieldNow: hooks.yieldNow } : {}),
  };
  let wte: Float32Array | null = null;
  if (sharedHead) {
    plan = planNamed(name, reader, opened.configJson, { ...opts, tiedHead: true });
    notes.push('lm_head.weight is the token embedding (one storage in the file): tied');
  } else if (plan.lmHead) {
    // A tied output projection is saved twice by tools that refuse shared tensors: same values, same model.
    wte = await reader.readF32(embeddingOf(plan).source, readHooks);
    const head = await reader.readF32(plan.lmHead, readHooks);
    if (sameValues(wte, head)) {
      plan = planNamed(name, reader, opened.configJson, { ...opts, tiedHead: true });
      notes.push('lm_head.weight equals the token embedding: tied');
    } else notes.push('lm_head.weight differs from the token embedding: an untied output projection');
  }
  // The weights are read straight into the bytes of the run's model.safetensors (held once, written as they are).
  const laidOut = layOutModelCheckpoint(plan.model, 0);
  if (!laidOut) for (const p of plan.model.paramList) p.data = new Float32Array(p.size);
  const embedding = wte ? embeddingOf(plan).source : null;
  // Shard by shard, each in file order: every file is read front to back once.
  const at = (s: string): readonly [number, number] => reader.orderOf(s);
  const ordered = [...plan.tensors].sort((a, b) => {
    const [sa, oa] = at(a.source);
    const [sb, ob] = at(b.source);
    return sa - sb || oa - ob;
  });
  let last: { source: string; data: Float32Array } | null = null; // a fused tensor feeds several of ours
  for (const t of ordered) {
    const data: Float32Array =
      wte && t.source === embedding
        ? wte
        : last?.source === t.source
          ? last.data
          : await reader.readF32(t.source, readHooks);
    last = { source: t.source, data };
    // Vocabulary padding: the rows past the tokenizer's ids are dropped (rows are contiguous).
    const kept = t.keepRows === undefined ? data : data.subarray(0, t.keepRows * (t.target.shape[1] ?? 0));
    const split = t.split ? splitRows(kept, t.split, t.target.shape[1] ?? 1) : kept;
    const rows = t.add ? split.map((v) => v + (t.add as number)) : split; // Gemma's norms: 1 + w (a copy)
    setTorchTensor(t.target, t.transpose ? transpose(rows, t.target.shape) : rows);
  }
  return { plan, notes, laidOut };
}

/** Plans, checks, reads and writes; see the file comment. Progress arrives as 'read' phases in bytes. */
export async function importCheckpoint(fs: LabFs, req: ImportRequest, hooks: WorkHooks = {}): Promise<ImportResult> {
  const out = fs.resolve(req.out);
  await checkOut(fs, out);
  const heads = req.heads === undefined ? {} : { heads: req.heads };
  let opened = await openCheckpoint(fs, req.from, heads);
  // A Hugging Face family's embedding may have more rows than its tokenizer has ids (Qwen2: 151,936 for 151,669)
  // or one fewer (Gemma 3 leaves out <image_soft_token>): the tokenizer is fitted to the model's rows.
  const rows = opened.plan.family ? opened.plan.config.vocabSize : undefined;
  const tok = await loadImportTokenizer(fs, opened.modelFile, req.tokenizer, rows);
  const c = opened.plan.config;
  // nanoGPT's padded vocabulary (50304 rows for GPT-2's 50257 ids): keep the tokenizer's rows.
  const padded =
    opened.plan.layout !== 'attention-lab' &&
    c.kind === 'decoder-only' &&
    isPaddedVocab(c.vocabSize, tok.tokenizer.vocabSize);
  const planOpts: PlanOptions = padded ? { ...heads, vocabRows: tok.tokenizer.vocabSize } : heads;
  if (padded) opened = { ...opened, plan: planNamed(opened.name, opened.reader, opened.configJson, planOpts) };
  checkVocab(opened.plan.config, tok.tokenizer, tok.source);
  // Where it runs (WebAssembly's 4 GiB): its weights and the attention of a short text, before a weight is read.
  const fit = { decodeRows: 1, decodePositions: Math.min(c.maxLen, 64) };
  const tooLarge = memoryProblem(opened.plan.config, { maxBatch: 1, maxLen: 1 }, 'inference', fit);
  if (tooLarge) throw new EngineError('config/invalid', tooLarge);
  const { plan, notes, laidOut } = await readCheckpointWeights(opened, planOpts, hooks);
  if (hooks.isCancelled?.()) throw new CancelledError(`importing ${fs.basename(opened.modelFile)}`);
  const spec = fineTuneSpec(fs, plan.config, tok.tokenizer, req);
  const source = plan.family ? sourceOf(fs, opened, plan.family) : undefined;
  const description =
    `Imported from ${opened.modelFile} (${source ? `${source.name}, ` : ''}${IMPORT_LAYOUTS[plan.layout]}); not ` +
    `trained here. Tokenizer: ${tok.source}.`;
  await writeRunFolder(
    fs,
    out,
    plan.model,
    tok.tokenizer,
    spec,
    description,
    { layout: plan.layout, from: opened.modelFile },
    source,
    laidOut,
  );
  notes.push(
    `train --resume fine-tunes for ${spec.training.steps} steps at a peak learning rate of ${spec.training.lr} ` +
      '(AdamW, cosine)' +
      (req.data ? ` on ${req.data.files.length} file(s)` : '; it needs documents: import again with --data'),
  );
  return {
    runDir: out,
    layout: plan.layout,
    layoutText: IMPORT_LAYOUTS[plan.layout],
    modelFile: opened.modelFile,
    config: plan.config,
    params: plan.model.store.count,
    tensors: plan.tensors.length,
    ignored: plan.ignored,
    tokenizer: tok.source,
    notes,
    bytesRead: opened.reader.dataBytes,
    ...(source ? { source } : {}),
  };
}

/** run.json's `source` of a Hugging Face family's checkpoint: the model's own name, architecture, family. */
function sourceOf(fs: LabFs, opened: OpenedCheckpoint, family: NonNullable<ImportPlan['family']>): HfSource {
  const cfg = opened.configJson ?? {};
  const arch = Array.isArray(cfg['architectures']) ? cfg['architectures'][0] : undefined;
  const folder = fs.dirname(opened.modelFile).split(/[\\/]/);
  return {
    name: hfModelName(folder, cfg, family),
    architecture: typeof arch === 'string' ? arch : HF_FAMILIES[family].architecture,
    family,
  };
}

/** The plan's token embedding (the tensor a separate lm_head is compared with). */
function embeddingOf(plan: ImportPlan): ImportPlan['tensors'][number] {
  const t = plan.tensors.find((x) => x.target.name === 'transformer.wte.weight');
  if (!t) throw new Error('a decoder-only plan has transformer.wte.weight');
  return t;
}

/** The tokenizer's ids must be the model's rows. */
function checkVocab(c: ModelConfig, tok: Tokenizer, source: string): void {
  if (tok.vocabSize !== c.vocabSize) {
    throw new EngineError(
      'checkpoint/invalid',
      `The tokenizer (${source}) has ${tok.vocabSize} ids but the model's embedding has ` +
        `${c.vocabSize} rows; pass the tokenizer the model was trained with (--tokenizer PATH).`,
    );
  }
  if (c.kind === 'encoder-decoder' && c.srcVocabSize !== tok.vocabSize) {
    throw new EngineError(
      'checkpoint/invalid',
      `The tokenizer (${source}) has ${tok.vocabSize} ids but the encoder's embedding has ` +
        `${c.srcVocabSize} rows; Attention Lab shares one tokenizer between source and target.`,
    );
  }
}

function sameValues(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** [I, O] (Conv1D) → [O, I]; `shape` is the target's [O, I]. */
function transpose(src: Float32Array, shape: readonly number[]): Float32Array {
  const [O, I] = shape as [number, number];
  const out = new Float32Array(src.length);
  for (let i = 0; i < I; i++) for (let o = 0; o < O; o++) out[o * I + i] = src[i * O + o] as number;
  return out;
}

/** What `train --resume` does with an imported run: fine-tune on the documents named at import. */
function fineTuneSpec(fs: LabFs, c: ModelConfig, tok: Tokenizer, req: ImportRequest): TrainSpec {
  const { kind, ...fields } = c;
  const data: TrainSpec['data'] =
    c.kind === 'encoder-decoder'
      ? { kind: 'pairs', source: '', target: null }
      : {
          kind: 'documents',
          files: req.data ? [...req.data.files] : [],
          root: req.data?.root ?? fs.dirname(fs.resolve(req.out)),
        };
  return {
    model: { kind, preset: 'tiny', overrides: { ...fields } },
    tokenizer: {
      type: tok.type,
      vocabSize: tok.vocabSize,
      ...(tok instanceof HfTokenizer && tok.chatTemplate !== null ? { chatTemplate: true } : {}),
    },
    data,
    training: {
      steps: req.steps ?? FINE_TUNE_STEPS,
      batchSize: 4,
      seqLen: Math.min(c.maxLen, 256),
      evalEvery: 50,
      checkpointEvery: 50,
      snapshotEvery: 50,
      seed: 1337,
      optimizer: 'adamw',
      lr: req.lr ?? FINE_TUNE_LR,
      warmup: 20,
    },
    backend: 'auto',
  };
}

/** run.json, tokenizer.json and model.safetensors (step 0) into a temporary folder, renamed to `out` when complete. */
async function writeRunFolder(
  fs: LabFs,
  out: string,
  model: Transformer,
  tok: Tokenizer,
  spec: TrainSpec,
  description: string,
  imported: NonNullable<RunJson['imported']>,
  source: HfSource | undefined,
  laidOut: Uint8Array | null,
): Promise<void> {
  const tmp = await scratchFolder(fs, out, 'importing');
  try {
    await fs.mkdir(tmp);
    await writeTokenizer(fs, tmp, tok);
    await saveCheckpoint(fs, tmp, model, null, 0, laidOut ? { laidOut } : {});
    const now = new Date().toISOString();
    const data: DataSummary = { description, documents: 0, bytes: 0, trainTokens: 0, valTokens: 0, skipped: [] };
    const run: RunJson = {
      format: RUN_FORMAT,
      version: RUN_VERSION,
      createdAt: now,
      updatedAt: now,
      status: 'stopped',
      spec,
      config: model.config,
      segments: planSegments(spec),
      step: 0,
      bestValLoss: null,
      data,
      error: null,
      imported,
      ...(source ? { source } : {}),
    };
    await writeRunJson(fs, tmp, run);
    await fs.rename(tmp, out); // `out` is missing or empty (checked before)
  } catch (e) {
    await fs.remove(tmp);
    throw folderError(e, out); // a full disk leaves no half run folder, and says so in one line
  }
}
