/**
 * How large each kind of file the lab reads may be, and the one read that keeps to it: a
 * run.json, a metrics log, a tokenizer or a checkpoint is checked against its cap from its
 * size before a byte is read (and again after, for a file that grew), so a damaged or
 * hostile file is refused in one line naming it and its kind instead of filling memory.
 * A file that is not a regular one (a FIFO, a device such as /dev/zero) is refused by the
 * file system itself (fs.node.ts) before it is read.
 *
 * Leaves out: the training data's own limits (the corpus's maxFileBytes, lab/data/).
 */

import { FileError } from './fileErrors';
import { EngineError } from '../../engine/errors';
import type { LabFs } from './labFs';

const MiB = 2 ** 20;

/** The largest file of each kind, in bytes, and what to do when one is larger. */
export const FILE_CAPS = {
  'run.json': { bytes: 16 * MiB, fix: 'the file is damaged — restore it or start a new run' },
  'metrics log': { bytes: 256 * MiB, fix: 'move it aside to open the run without its curves' },
  'evaluations log': { bytes: 64 * MiB, fix: 'move it aside to open the run without its evaluations' },
  'tokenizer.json': { bytes: 256 * MiB, fix: 'pass the tokenizer the model was trained with' },
  'vocab.json': { bytes: 64 * MiB, fix: 'pass the vocab.json the model was trained with' },
  'merges.txt': { bytes: 64 * MiB, fix: 'pass the merges.txt the model was trained with' },
  'config.json': { bytes: 4 * MiB, fix: 'fix it, or remove it to size the model from its tensors' },
  'shard index': { bytes: 16 * MiB, fix: "restore it from the model's folder" },
  checkpoint: { bytes: 2 ** 31 - 1, fix: 'the file is damaged, or the model is larger than Attention Lab holds' },
  'optimizer state': {
    bytes: 2 ** 31 - 1,
    fix: 'the file is damaged; move it aside to fine-tune with a fresh optimizer',
  },
  snapshot: { bytes: 256 * MiB, fix: 'the file is damaged; remove it from the snapshots folder' },
  'pairs file': { bytes: 256 * MiB, fix: 'split it, or train on part of it' },
  'probe file': { bytes: 64 * MiB, fix: 'the file is damaged; train again' },
} as const satisfies Readonly<Record<string, { readonly bytes: number; readonly fix: string }>>;

/** A kind of file with a cap. */
export type FileKind = keyof typeof FILE_CAPS;

function size(bytes: number): string {
  return bytes >= MiB ? `${(bytes / MiB).toFixed(1)} MB` : `${bytes} bytes`;
}

function tooLarge(file: string, kind: FileKind, bytes: number): EngineError {
  const cap = FILE_CAPS[kind];
  return new EngineError(
    'input/invalid',
    `${file} is ${size(bytes)}, more than the ${size(cap.bytes)} a ${kind} may hold; ${cap.fix}.`,
  );
}

/**
 * The whole of `file`, a `kind` of file: refused with a one-line EngineError('input/invalid')
 * naming the file when it is larger than its cap, or a FileError when it is a folder. A missing file throws
 * what the file system throws (callers check first where missing has a meaning).
 */
export async function readCapped(fs: LabFs, file: string, kind: FileKind): Promise<Uint8Array> {
  const st = await fs.stat(file);
  if (st?.kind === 'directory') throw new FileError(file, 'isFolder');
  const cap = FILE_CAPS[kind].bytes;
  if (st && st.size > cap) throw tooLarge(file, kind, st.size);
  const bytes = await fs.readFile(file);
  if (bytes.length > cap) throw tooLarge(file, kind, bytes.length); // grew since stat
  return bytes;
}

/** {@link readCapped} as UTF-8 text (a leading byte-order mark is kept). */
export async function readCappedText(fs: LabFs, file: string, kind: FileKind): Promise<string> {
  return new TextDecoder('utf-8').decode(await readCapped(fs, file, kind));
}
