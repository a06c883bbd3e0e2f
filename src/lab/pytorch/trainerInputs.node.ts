/**
 * What the lab writes into a run folder for the PyTorch trainer (python/attention_lab_trainer/),
 * beside the run's own files, under `pytorch/`:
 *
 *   manifest.json   {format: "attention-lab-pytorch", version: 3, config, padId, tokenBytes,
 *                    params, optimizer, training, data, validation} — everything the trainer
 *                    needs, resolved here once so it never re-derives a rule of ours:
 *     tokenBytes    {file: token-bytes.i32, count}: the UTF-8 bytes each token id stands for
 *                   (Tokenizer.byteLength; 0 for special tokens), so the trainer logs the bytes
 *                   of each step's targets and the validation's bits per byte exactly as
 *                   bitsPerByte.ts counts them;
 *     params        our parameters in flat order [{name, shape, hidden}] (Adam's flat moments in
 *                   optimizer.safetensors follow it; hidden: a hidden matrix, which Muon updates);
 *     optimizer     the OptimizerConfig with its (segmented) schedule, as our engine steps it;
 *     training      steps (planned total), stopAt (--until, or null), seed, evalEvery,
 *                   checkpointEvery, snapshotEvery, segmentEnds (evaluated like ours);
 *     data          what the training sampler draws from (dataset.ts SamplerInputs):
 *                   documents {rows, T, train: {file, dtype: u16|i32, length}},
 *                   pairs {rows (the fewest a batch has), maxBatch, budget, bos, eos, src,
 *                   tgt, lengths} (examples in sampler order), induction {rows, Lmax, ids,
 *                   bos} (bos and eos: the run's tokenizer's ids);
 *     validation    {file: val.i32, batches: [{B, T, S}]}: the fixed validation batches;
 *     probe         {file: probe.i32, B, T, S}: the batch attention snapshots show, and
 *     plan          {maxBatch, maxLen, maxSrcLen}: the shape the lab's model of the run is
 *                   planned for — the lab draws snapshots from the trainer's weights with
 *                   them (follow.node.ts), the same snapshots our engine's session takes;
 *   train.u16|i32   documents: the training token stream, raw little-endian (u16 when every
 *                   id fits, as tokenBuffer.ts holds it), memory-mapped by every process;
 *   pairs-*.i32     pairs: the examples' source and target ids and their lengths;
 *   val.i32         per validation batch: src (B·S, encoder-decoder), input (B·T), targets (B·T);
 *   probe.i32       the probe batch, laid out as one validation batch;
 *   token-bytes.i32 each token id's UTF-8 byte length (tokenBytes above);
 *   trainer/        a copy of the trainer that ships with this version (the package folder
 *                   attention_lab_trainer/, whole), so the folder trains on any machine with torch, on shared
 *                   storage for a cluster, with the trainer that matches its manifest.
 *
 * The step-0 weights are the run's ordinary model.safetensors (the lab initializes them from
 * the seed), so both engines start from the same numbers; the trainer writes checkpoints,
 * metrics and run.json in our formats (the trainer's files.py). Bump MANIFEST_VERSION with any
 * change here; the trainer refuses a version it does not know.
 *
 * Leaves out: launching (launch.node.ts) and following the run (follow.node.ts).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ModelConfig } from '../../engine/config';
import type { Batch } from '../../engine/models/inputs';
import type { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import type { OptimizerConfig } from '../../engine/optim/optimizerConfig';
import type { RunSegment, TrainSpec } from '../../protocol/data';
import type { Dataset } from '../data/dataset';
import { concatInt32 } from '../data/dataset';
import { EngineError } from '../../engine/errors';
import type { FileIo } from '../files/atomicFile.node';
import { NODE_IO, makeDir, writeFileAtomic } from '../files/atomicFile.node';

export const MANIFEST_FORMAT = 'attention-lab-pytorch';
export const MANIFEST_VERSION = 3;
/** The trainer's folder inside a run folder. */
export const PYTORCH_DIR = 'pytorch';
/**
 * The trainer's Python package: a folder of this name inside the trainer folder (dist/pytorch/
 * in the bundles and the .vsix, python/ in the repository) and inside a run's pytorch/trainer/.
 */
export const TRAINER_PACKAGE = 'attention_lab_trainer';
/** The files of the trainer's package that ship (its modules; no caches). */
export const TRAINER_FILE = /^\w+\.py$/;

/** The sampler inputs as the manifest names them (files relative to `pytorch/`). */
export type ManifestData =
  | {
      readonly kind: 'documents';
      readonly rows: number;
      readonly T: number;
      readonly train: { readonly file: string; readonly dtype: 'u16' | 'i32'; readonly length: number };
    }
  | {
      readonly kind: 'pairs';
      readonly rows: number;
      readonly maxBatch: number;
      readonly budget: number;
      readonly bos: number;
      readonly eos: number;
      readonly src: string;
      readonly tgt: string;
      readonly lengths: string;
      readonly count: number;
    }
  | {
      readonly kind: 'induction';
      readonly rows: number;
      readonly Lmax: number;
      readonly ids: readonly number[];
      readonly bos: number;
    };

/** Contents of `pytorch/manifest.json`. */
export interface TrainerManifest {
  readonly format: typeof MANIFEST_FORMAT;
  readonly version: typeof MANIFEST_VERSION;
  readonly config: ModelConfig;
  /** The id the loss ignores and padding masks: PAD (0), or −1 for a vocabulary without one. */
  readonly padId: number;
  /** UTF-8 bytes of each token id's text (0 for special tokens), one int32 per id, for bits per byte. */
  readonly tokenBytes: { readonly file: string; readonly count: number };
  readonly params: readonly { readonly name: string; readonly shape: readonly number[]; readonly hidden: boolean }[];
  readonly optimizer: OptimizerConfig;
  readonly training: {
    readonly steps: number;
    readonly stopAt: number | null;
    readonly seed: number;
    readonly evalEvery: number;
    readonly checkpointEvery: number;
    readonly snapshotEvery: number;
    readonly segmentEnds: readonly number[];
  };
  readonly data: ManifestData;
  readonly validation: { readonly file: string; readonly batches: readonly BatchShape[] };
  readonly probe: { readonly file: string } & BatchShape;
  readonly plan: { readonly maxBatch: number; readonly maxLen: number; readonly maxSrcLen: number };
}

/** The shape of a batch in a file: B rows, T decoder positions, S source positions (0: none). */
export interface BatchShape {
  readonly B: number;
  readonly T: number;
  readonly S: number;
}

/** What the trainer inputs are made from. */
export interface TrainerInputSource {
  readonly model: Transformer;
  readonly tok: Tokenizer;
  readonly dataset: Dataset;
  readonly spec: TrainSpec;
  readonly segments: readonly RunSegment[];
  readonly optimizer: OptimizerConfig;
  readonly stopAt: number | null;
}

function bytesOf(a: Uint16Array | Int32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Writes the sampler's files and returns their manifest entry. */
function writeData(dir: string, d: Dataset['sampler'], io: FileIo): ManifestData {
  switch (d.kind) {
    case 'documents': {
      const dtype = d.stream instanceof Uint16Array ? 'u16' : 'i32';
      const file = `train.${dtype}`;
      writeFileAtomic(path.join(dir, file), bytesOf(d.stream), io);
      return { kind: 'documents', rows: d.rows, T: d.T, train: { file, dtype, length: d.stream.length } };
    }
    case 'pairs': {
      writeFileAtomic(path.join(dir, 'pairs-src.i32'), bytesOf(concatInt32(d.sorted.map((e) => e.src))), io);
      writeFileAtomic(path.join(dir, 'pairs-tgt.i32'), bytesOf(concatInt32(d.sorted.map((e) => e.tgt))), io);
      writeFileAtomic(
        path.join(dir, 'pairs-lengths.i32'),
        bytesOf(concatInt32(d.sorted.map((e) => [e.src.length, e.tgt.length]))),
        io,
      );
      return {
        kind: 'pairs',
        rows: Math.min(d.rows, d.sorted.length),
        maxBatch: d.maxBatch,
        budget: d.budget,
        bos: d.bos,
        eos: d.eos,
        src: 'pairs-src.i32',
        tgt: 'pairs-tgt.i32',
        lengths: 'pairs-lengths.i32',
        count: d.sorted.length,
      };
    }
    case 'induction':
      return { kind: 'induction', rows: d.rows, Lmax: d.Lmax, ids: d.ids, bos: d.bos };
    case 'modular-addition':
      // The trainer has no port of this sampler (nor of the progress measures each validation adds).
      throw new EngineError(
        'input/invalid',
        'The PyTorch engine does not train the modular-addition task; train it with --engine builtin.',
      );
    default:
      return d satisfies never;
  }
}

/** Writes token-bytes.i32 (each id's UTF-8 byte length) and returns its manifest entry. */
function writeTokenBytes(dir: string, tok: Tokenizer, io: FileIo): TrainerManifest['tokenBytes'] {
  const file = 'token-bytes.i32';
  writeFileAtomic(
    path.join(dir, file),
    bytesOf(Int32Array.from({ length: tok.vocabSize }, (_, id) => tok.byteLength(id))),
    io,
  );
  return { file, count: tok.vocabSize };
}

const shapeOf = (b: Batch): BatchShape => ({ B: b.B, T: b.T, S: b.S ?? 0 });

function batchParts(b: Batch): Int32Array[] {
  const S = b.S ?? 0;
  return [
    ...(S > 0 && b.src ? [b.src.subarray(0, b.B * S)] : []),
    b.input.subarray(0, b.B * b.T),
    b.targets.subarray(0, b.B * b.T),
  ];
}

/** The modules of the trainer package in `trainerDir` (the shipped ones only). */
export function trainerFiles(trainerDir: string): string[] {
  const pkg = path.join(trainerDir, TRAINER_PACKAGE);
  if (!fs.existsSync(pkg))
    throw new EngineError(
      'config/invalid',
      `The PyTorch trainer is missing: ${pkg} does not exist; reinstall Attention Lab (or run \`npm ` +
        `run build\` in its repository).`,
    );
  return fs
    .readdirSync(pkg)
    .filter((n) => TRAINER_FILE.test(n))
    .sort();
}

/** Reads a run folder's manifest (checked for format and version). */
export function readManifest(runDir: string): TrainerManifest {
  const file = path.join(runDir, PYTORCH_DIR, 'manifest.json');
  let m: Partial<TrainerManifest>;
  try {
    m = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<TrainerManifest>;
  } catch (e) {
    throw new EngineError(
      'checkpoint/invalid',
      `${file} cannot be read (${(e as Error).message}); prepare the run again (attention-lab train ` +
        `--resume DIR --engine pytorch).`,
    );
  }
  if (m.format !== MANIFEST_FORMAT || m.version !== MANIFEST_VERSION) {
    throw new EngineError(
      'checkpoint/invalid',
      `${file} is ${m.format === MANIFEST_FORMAT ? `version ${String(m.version)}` : 'not a trainer manifest'}; ` +
        `this Attention Lab reads version ${MANIFEST_VERSION}: prepare the run again with it.`,
    );
  }
  return m as TrainerManifest;
}

/** A batch of `shape` read back from its ids (laid out as {@link writeTrainerInputs} writes one). */
export function batchFromIds(ids: Int32Array, shape: BatchShape): Batch {
  const { B, T, S } = shape;
  const src = S > 0 ? ids.slice(0, B * S) : undefined;
  const at = S > 0 ? B * S : 0;
  return {
    B,
    T,
    ...(src ? { S, src } : {}),
    input: ids.slice(at, at + B * T),
    targets: ids.slice(at + B * T, at + 2 * B * T),
  };
}

/**
 * Writes `pytorch/` into `runDir` for the trainer in `trainerDir`: data, validation batches,
 * manifest and a copy of the trainer, every file atomically through `io` (a full disk:
 * atomicFile.node.ts's DiskFullError, nothing half-written). Stale stop and pause requests are
 * removed. Returns the manifest.
 */
export function writeTrainerInputs(
  runDir: string,
  src: TrainerInputSource,
  trainerDir: string,
  io: FileIo = NODE_IO,
): TrainerManifest {
  const dir = path.join(runDir, PYTORCH_DIR);
  const pkg = path.join(dir, 'trainer', TRAINER_PACKAGE);
  makeDir(pkg, io);
  for (const f of ['stop', 'pause']) fs.rmSync(path.join(dir, f), { force: true });
  // A folder prepared by an older version holds its trainer as loose files beside the package.
  for (const n of fs.readdirSync(path.join(dir, 'trainer')))
    if (/\.py$/.test(n)) fs.rmSync(path.join(dir, 'trainer', n), { force: true });
  for (const f of trainerFiles(trainerDir))
    writeFileAtomic(path.join(pkg, f), fs.readFileSync(path.join(trainerDir, TRAINER_PACKAGE, f)), io);
  const val = src.dataset.valBatches();
  writeFileAtomic(path.join(dir, 'val.i32'), bytesOf(concatInt32(val.flatMap(batchParts))), io);
  const probe = src.dataset.probe();
  writeFileAtomic(path.join(dir, 'probe.i32'), bytesOf(concatInt32(batchParts(probe))), io);
  const m = src.model;
  const t = src.spec.training;
  const manifest: TrainerManifest = {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    config: src.model.config,
    padId: src.model.padId,
    tokenBytes: writeTokenBytes(dir, src.tok, io),
    params: src.model.paramList.map((p) => ({ name: p.name, shape: p.shape, hidden: p.hidden })),
    optimizer: src.optimizer,
    training: {
      steps: t.steps,
      stopAt: src.stopAt,
      seed: t.seed,
      evalEvery: t.evalEvery,
      checkpointEvery: t.checkpointEvery,
      snapshotEvery: t.snapshotEvery,
      segmentEnds: src.segments.map((s) => s.toStep),
    },
    data: writeData(dir, src.dataset.sampler, io),
    validation: { file: 'val.i32', batches: val.map(shapeOf) },
    probe: { file: 'probe.i32', ...shapeOf(probe) },
    plan: { maxBatch: m.maxBatch, maxLen: m.maxLen, maxSrcLen: m.config.kind === 'encoder-decoder' ? m.maxSrcLen : 0 },
  };
  writeFileAtomic(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, io);
  return manifest;
}
