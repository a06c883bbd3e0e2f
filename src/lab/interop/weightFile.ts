/**
 * One view of the checkpoint files `import` opens, whatever their format: a `.safetensors`
 * file (runs/safetensorsReader.ts), a sharded one through its index (shardedCheckpoint.ts), or a
 * `torch.save` file — `pytorch_model.bin`, `.pt`,
 * `.pth` — read without running it (torchCheckpoint.ts). The format is told by the file's
 * first bytes, not its name. The import plans from the tensors' names and shapes and reads
 * each tensor as float32 on request.
 *
 * Leaves out: sharded torch.save sets, GGUF.
 */

import { EngineError } from '../../engine/errors';
import type { SourceTensor } from '../../engine/models/importLayouts';
import type { LabFs } from '../files/labFs';
import type { ReadHooks } from '../runs/safetensorsReader';
import { SafetensorsReader } from '../runs/safetensorsReader';
import type { CheckpointReader } from './shardedCheckpoint';
import { SHARD_INDEX, ShardedReader } from './shardedCheckpoint';
import { looksLikeTorchSave, TorchCheckpointReader } from './torchCheckpoint';

/** File names PyTorch checkpoints are saved under. */
const TORCH_EXTENSIONS = /\.(bin|pt|pth|ckpt)$/i;

/** True for a name torch.save files are saved under (`pytorch_model.bin`, `ckpt.pt`, `model.pth` …). */
export function isTorchName(file: string): boolean {
  return TORCH_EXTENSIONS.test(file);
}

/** An open checkpoint file, its weights read one tensor at a time. */
export interface WeightFile {
  readonly file: string;
  /** Every tensor's name and shape, in the file's order. */
  readonly tensors: readonly SourceTensor[];
  /** The safetensors `__metadata__` (Attention Lab's export keeps its config there); empty for torch files. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Hyperparameters the file holds beside its state dict (nanoGPT's `model_args`), with their key; else null. */
  readonly config: { readonly key: string; readonly values: Record<string, unknown> } | null;
  /** For people: how the file was read (the state dict's key in a torch checkpoint). */
  readonly notes: readonly string[];
  /** Bytes of the tensors' data. */
  readonly dataBytes: number;
  /** Bytes tensor `name` takes in the file (progress). */
  bytesOf(name: string): number;
  /** Whether tensors `a` and `b` are one view of one storage (so hold the same values); false when unknown. */
  sameTensor(a: string, b: string): boolean;
  /** Where tensor `name` lies (file, then byte): reading in this order reads each file front to back once. */
  orderOf(name: string): readonly [number, number];
  /** Tensor `name` as float32, row-major; integer tensors and non-finite values refused. */
  readF32(name: string, hooks?: ReadHooks): Promise<Float32Array>;
}

/** Opens `file` as a shard index (by its name), safetensors or a torch.save checkpoint (by its first bytes). */
export async function openWeightFile(fs: LabFs, file: string): Promise<WeightFile> {
  if (file.endsWith(SHARD_INDEX)) return safetensorsWeights(await ShardedReader.open(fs, file));
  const st = await fs.stat(file);
  if (st?.kind !== 'file') throw new EngineError('input/invalid', `${file} is not a file; pass a checkpoint file.`);
  const first = await fs.readRange(file, 0, Math.min(9, st.size));
  if (looksLikeTorchSave(first)) return torchWeights(await TorchCheckpointReader.open(fs, file));
  return safetensorsWeights(await SafetensorsReader.open(fs, file));
}

function safetensorsWeights(r: CheckpointReader & { readonly file: string }): WeightFile {
  return {
    file: r.file,
    tensors: r.header.entries,
    metadata: r.header.metadata,
    config: null,
    notes: [],
    dataBytes: r.dataBytes,
    bytesOf: (name) => {
      const e = r.entry(name);
      return e ? e.end - e.begin : 0;
    },
    sameTensor: () => false, // safetensors refuses shared tensors: a copy is compared by its values
    orderOf: (name) => [r.shardOf?.(name) ?? 0, r.entry(name)?.begin ?? 0],
    readF32: (name, hooks) => r.readF32(name, hooks),
  };
}

function torchWeights(r: TorchCheckpointReader): WeightFile {
  const where = r.stateDictKey === null ? 'the file is the state dict' : `the state dict under "${r.stateDictKey}"`;
  const notes = [`read ${r.format === 'zip' ? 'a torch.save zip' : "torch.save's legacy format"}: ${where}`];
  return {
    file: r.file,
    tensors: r.tensors,
    metadata: {},
    config: r.config,
    notes,
    dataBytes: r.dataBytes,
    bytesOf: (name) => r.bytesOf(name),
    sameTensor: (a, b) => r.sameTensor(a, b),
    orderOf: (name) => [0, r.offsetOf(name)],
    readF32: (name, hooks) => r.readF32(name, hooks),
  };
}
