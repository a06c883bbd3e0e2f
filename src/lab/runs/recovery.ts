/**
 * Puts a run folder right after its writer was stopped at any instant (a kill, a window
 * reload, a crash), before the run is resumed: whatever the writer left, the folder then holds
 * the newest complete copy of each file it had, and a checkpoint whose two files belong to
 * one step. What a stopped writer can leave (labFs.ts's contract, wholeFileFs.ts):
 * - a kept copy `.NAME.old` (a whole-file file system renames a file aside before its new
 *   contents arrive), also in snapshots/: with NAME missing it is the file, and is renamed
 *   back; beside NAME it is stale, and removed;
 * - temporary files `.NAME.N.tmp`, complete or cut off. A log (metrics.jsonl,
 *   evaluations.jsonl) takes the copy with the most complete lines — every copy is the log as
 *   it was at some instant, so the longest loses nothing; a temporary file is never removed
 *   while it holds more than the log;
 * - a checkpoint pair in the middle of its commit (optimizer.safetensors renamed, the new
 *   model.safetensors still a temporary file, or the other way round): the newest step with a
 *   complete model and optimizer (or a model alone at step 0: an imported or PyTorch-prepared
 *   run) among the files and the temporary files is put in place.
 * - part files `.NAME.at-OFFSET` of a log (a whole-file file system's appends, logParts.ts):
 *   merged into the log, on any file system, before the log's copies are compared;
 * Then every other temporary file (also in snapshots/) and stale kept copy is removed.
 *
 * Leaves out: which step the run resumes from and what it says (lab/training/sessionSetup.ts),
 * and locking (one writer per folder).
 */

import type { LabFs } from '../files/labFs';
import { KEPT_FILE, TEMP_FILE, completeLines, listNames, readText } from '../files/labFs';
import { mergeLogParts } from '../files/logParts';
import { checkpointFileStep } from './checkpoint';
import { RUN_FILES } from './runFolder';

/** What {@link recoverRunFolder} found. */
export interface Recovery {
  /**
   * The step of the checkpoint pair now in place; null when the folder holds no checkpoint
   * file at all (the run stopped before its first), or none that is usable (then the files
   * are left as they are, for the loader to say what is wrong).
   */
  readonly checkpointStep: number | null;
  /** True when some model.safetensors is there (usable or not). */
  readonly hasModel: boolean;
}

/** The file a temporary file `.NAME.N.tmp` was being written for (NAME), or null. */
function tempTarget(name: string): string | null {
  return TEMP_FILE.test(name) ? name.slice(1).replace(/\.\d+\.tmp$/, '') : null;
}

/** Puts `runDir` right (see the file comment). */
export async function recoverRunFolder(fs: LabFs, runDir: string): Promise<Recovery> {
  const at = (name: string): string => fs.join(runDir, name);
  for (const dir of [runDir, at(RUN_FILES.snapshots)]) await restoreKeptCopies(fs, dir);
  await mergeLogParts(fs, runDir);
  const names = await listNames(fs, runDir);
  const tempsOf = (target: string): string[] => names.filter((n) => tempTarget(n) === target);
  for (const log of [RUN_FILES.metrics, RUN_FILES.evaluations])
    await keepLongestLog(fs, runDir, log, tempsOf(log), names.includes(log));
  const recovery = await keepNewestPair(fs, runDir, names, tempsOf);
  for (const dir of [runDir, at(RUN_FILES.snapshots)]) {
    for (const name of await listNames(fs, dir))
      if (TEMP_FILE.test(name) || KEPT_FILE.test(name)) await fs.remove(fs.join(dir, name));
  }
  return recovery;
}

/** Renames each kept copy whose file is missing back to it, and removes the stale ones. */
async function restoreKeptCopies(fs: LabFs, dir: string): Promise<void> {
  const names = await listNames(fs, dir);
  for (const name of names) {
    const m = KEPT_FILE.exec(name);
    if (!m) continue;
    const target = m[1] as string;
    if (names.includes(target)) await fs.remove(fs.join(dir, name));
    else await fs.rename(fs.join(dir, name), fs.join(dir, target));
  }
}

/** Complete lines of a log copy (0 when it cannot be read). */
async function linesIn(fs: LabFs, file: string): Promise<number> {
  try {
    return completeLines(await readText(fs, file)).length;
  } catch {
    return 0;
  }
}

/** Puts the copy of the log `name` with the most complete lines in place. */
async function keepLongestLog(
  fs: LabFs,
  runDir: string,
  name: string,
  temps: readonly string[],
  present: boolean,
): Promise<void> {
  let best: string | null = null;
  let most = present ? await linesIn(fs, fs.join(runDir, name)) : -1;
  for (const t of temps) {
    const n = await linesIn(fs, fs.join(runDir, t));
    if (n > most) [best, most] = [t, n];
  }
  if (best !== null) await fs.rename(fs.join(runDir, best), fs.join(runDir, name));
}

/** Puts the newest complete checkpoint pair in place (see the file comment). */
async function keepNewestPair(
  fs: LabFs,
  runDir: string,
  names: readonly string[],
  tempsOf: (target: string) => string[],
): Promise<Recovery> {
  const copies = async (target: string, kind: 'model' | 'optimizer'): Promise<Map<number, string>> => {
    const byStep = new Map<number, string>();
    // The file in place first, so a temporary file with the same step never replaces it.
    for (const name of [...(names.includes(target) ? [target] : []), ...tempsOf(target)]) {
      const step = await checkpointFileStep(fs, fs.join(runDir, name), kind);
      if (step !== null && !byStep.has(step)) byStep.set(step, name);
    }
    return byStep;
  };
  const models = await copies(RUN_FILES.model, 'model');
  const optimizers = await copies(RUN_FILES.optimizer, 'optimizer');
  const hasModel = names.includes(RUN_FILES.model);
  const steps = [...models.keys()].filter((s) => optimizers.has(s) || s === 0).sort((a, b) => b - a);
  const step = steps[0];
  if (step === undefined) return { checkpointStep: null, hasModel };
  const install = async (name: string | undefined, target: string): Promise<void> => {
    if (name !== undefined && name !== target) await fs.rename(fs.join(runDir, name), fs.join(runDir, target));
  };
  await install(models.get(step), RUN_FILES.model);
  const optimizer = optimizers.get(step);
  // A model of step 0 alone starts from Adam's zero moments; an optimizer of another step is not its.
  if (optimizer === undefined) await fs.remove(fs.join(runDir, RUN_FILES.optimizer));
  else await install(optimizer, RUN_FILES.optimizer);
  return { checkpointStep: step, hasModel: true };
}
