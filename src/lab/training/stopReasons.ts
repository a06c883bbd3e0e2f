/**
 * What a training run says when it stops without finishing: which checkpoint is kept (the
 * step in model.safetensors, where a resume starts), and the one line a full disk stops it
 * with — what was being written, at which step, in which folder, what is kept, what to do — or
 * a lost GPU device (what was lost, after which step, what is kept, the command that resumes on WebAssembly).
 *
 * Leaves out: the training loop (session.ts) and the writes themselves (files/atomicFile.node.ts).
 */

import type { LabFs } from '../files/labFs';
import { readCheckpointConfig } from '../runs/checkpoint';
import { RUN_FILES } from '../runs/runFolder';

/** The step of the run's model.safetensors (the checkpoint a resume starts from), or null when it has none. */
export async function lastCheckpointStep(fs: LabFs, runDir: string): Promise<number | null> {
  try {
    return (await readCheckpointConfig(fs, runDir)).step;
  } catch {
    return null;
  }
}

/** What the run was writing when the disk filled, by the file it was writing. */
function writingWhat(fs: LabFs, runDir: string, file: string, step: number): string {
  const rel = fs.relative(runDir, file) ?? file;
  const name = fs.basename(file);
  if (name === RUN_FILES.model || name === RUN_FILES.optimizer) return `saving the checkpoint at step ${step}`;
  if (name === RUN_FILES.metrics) return `logging the metrics of step ${step}`;
  if (rel.startsWith(RUN_FILES.snapshots)) return `saving the attention snapshot of step ${step}`;
  if (name === RUN_FILES.tokenizer) return 'saving the tokenizer';
  if (name === RUN_FILES.run) return `updating run.json at step ${step}`;
  return `writing ${rel}`;
}

/**
 * The one line a full disk stops a run with: what was being written, at which step, in which
 * folder, which checkpoint is kept (`kept`: its step; null when there is none yet) and what to do.
 */
export function diskFullMessage(fs: LabFs, runDir: string, file: string, step: number, kept: number | null): string {
  const what = `Disk full while ${writingWhat(fs, runDir, file, step)} in ${runDir}`;
  if (kept === null) return `${what}; nothing was kept — free space and train again.`;
  return `${what}; the checkpoint of step ${kept} is kept — free space and \`train --resume ${runDir}\`.`;
}

/**
 * The one line a lost GPU device stops a run with: `lost` (the backend's "The GPU device was lost (…)"),
 * after which step, the checkpoint kept (`kept`; null: none yet) and the command that resumes it on WebAssembly.
 */
export function gpuLostMessage(lost: string, runDir: string, step: number, kept: number | null): string {
  const what = `${lost} after step ${step}; training stopped`;
  if (kept === null)
    return `${what} before its first checkpoint, so nothing was kept — train again with --backend wasm.`;
  return (
    `${what} and the checkpoint of step ${kept} is kept — resume on WebAssembly: ` +
    `attention-lab train --resume ${runDir} --backend wasm`
  );
}
