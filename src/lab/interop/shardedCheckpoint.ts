/**
 * A sharded Hugging Face checkpoint (`model.safetensors.index.json` and the shards its
 * `weight_map` names) read as one: every shard's header is opened and checked against the index
 * before anything is planned, so every shape is known before a weight is read; tensors are then
 * read from their own shard, and {@link ShardedReader.shardOf} lets the import read shard by
 * shard, each in file order. bf16/fp16 shards are widened as they stream in (SafetensorsReader).
 *
 * Leaves out: planning (importLayouts.ts), sharded pickles (pytorch_model.bin.index.json).
 */

import { EngineError } from '../../engine/errors';
import type { HeaderEntry } from '../../engine/io/safetensorsHeader';
import type { LabFs } from '../files/labFs';
import { readCappedText } from '../files/fileCaps';
import type { ReadHooks } from '../runs/safetensorsReader';
import { SafetensorsReader } from '../runs/safetensorsReader';

/** What the import reads a checkpoint through: one safetensors file, or the shards of an index. */
export interface CheckpointReader {
  readonly header: { readonly entries: readonly HeaderEntry[]; readonly metadata: Readonly<Record<string, string>> };
  /** Bytes of tensor data, all files together. */
  readonly dataBytes: number;
  entry(name: string): HeaderEntry | undefined;
  readF32(name: string, hooks?: ReadHooks): Promise<Float32Array>;
  /** The shard a tensor is in (0 for a single file), for reading shard by shard. */
  shardOf?(name: string): number;
}

/** The index file of a sharded safetensors checkpoint. */
export const SHARD_INDEX = 'model.safetensors.index.json';

function bad(msg: string): never {
  throw new EngineError('checkpoint/invalid', msg);
}

/** The shards of an index file, as one checkpoint. */
export class ShardedReader implements CheckpointReader {
  readonly header: CheckpointReader['header'];
  readonly dataBytes: number;
  private readonly where = new Map<string, number>();
  private readonly done: number[];

  private constructor(
    /** The index file. */
    readonly file: string,
    private readonly shards: readonly SafetensorsReader[],
  ) {
    const entries: HeaderEntry[] = [];
    shards.forEach((r, i) => {
      for (const e of r.header.entries) {
        this.where.set(e.name, i);
        entries.push(e);
      }
    });
    this.header = { entries, metadata: shards[0]?.header.metadata ?? {} };
    this.dataBytes = shards.reduce((n, r) => n + r.dataBytes, 0);
    this.done = shards.map(() => 0);
  }

  /**
   * Opens `indexFile` and every shard it names (headers only), checking that each tensor of the
   * weight_map is in the shard it names and that no shard holds a tensor the index does not list.
   */
  static async open(fs: LabFs, indexFile: string): Promise<ShardedReader> {
    const dir = fs.dirname(indexFile);
    const name = fs.basename(indexFile);
    let json: unknown;
    try {
      json = JSON.parse(await readCappedText(fs, indexFile, 'shard index'));
    } catch (e) {
      if (EngineError.is(e)) throw e;
      return bad(`${indexFile} is not valid JSON (${(e as Error).message}); restore it from the model's folder.`);
    }
    const map = (json as { weight_map?: unknown } | null)?.weight_map;
    if (typeof map !== 'object' || map === null || Array.isArray(map))
      return bad(`${name} has no weight_map object (tensor name → shard file); restore it from the model's folder.`);
    const files: string[] = [];
    const byFile = new Map<string, string[]>();
    for (const [tensor, file] of Object.entries(map as Record<string, unknown>)) {
      if (typeof file !== 'string' || file.includes('/') || file.includes('\\') || !file.endsWith('.safetensors'))
        bad(`${name} maps ${tensor} to ${JSON.stringify(file)}, not a .safetensors file in the same folder.`);
      if (!byFile.has(file)) {
        byFile.set(file, []);
        files.push(file);
      }
      byFile.get(file)?.push(tensor);
    }
    if (files.length === 0) bad(`${name}'s weight_map is empty; restore it from the model's folder.`);
    files.sort();
    for (const file of files)
      if ((await fs.stat(fs.join(dir, file)))?.kind !== 'file')
        bad(`${name} names the shard ${file}, which is not in ${dir}; download every shard the index lists.`);
    const shards: SafetensorsReader[] = [];
    for (const file of files) {
      const r = await SafetensorsReader.open(fs, fs.join(dir, file));
      const listed = new Set(byFile.get(file));
      for (const t of listed)
        if (!r.entry(t))
          bad(`${name} says ${t} is in ${file}, but that shard has no such tensor; the download is incomplete.`);
      for (const e of r.header.entries)
        if (!listed.has(e.name))
          bad(`${file} holds ${e.name}, which ${name} does not list there; the index and the shards do not match.`);
      shards.push(r);
    }
    return new ShardedReader(indexFile, shards);
  }

  entry(name: string): HeaderEntry | undefined {
    const i = this.where.get(name);
    return i === undefined ? undefined : this.shards[i]?.entry(name);
  }

  shardOf(name: string): number {
    return this.where.get(name) ?? 0;
  }

  /** Tensor `name` from its shard, as float32; progress counts the bytes of every shard together. */
  async readF32(name: string, hooks: ReadHooks = {}): Promise<Float32Array> {
    const i = this.where.get(name);
    const shard = i === undefined ? undefined : this.shards[i];
    if (i === undefined || !shard) return bad(`${this.file} lists no tensor ${JSON.stringify(name)}.`);
    const onBytes = hooks.onBytes;
    return shard.readF32(name, {
      ...hooks,
      ...(onBytes
        ? {
            onBytes: (done: number) => {
              this.done[i] = done;
              onBytes(
                this.done.reduce((a, b) => a + b, 0),
                this.dataBytes,
              );
            },
          }
        : {}),
    });
  }
}
