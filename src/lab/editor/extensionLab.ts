/**
 * Everything the extension host needs from the engine and the lab, behind one module that
 * is bundled separately (dist/extensionLab.js) and loaded on first use, so activation
 * never pays for the engine: listing and reading run folders, size estimates before a run
 * exists, finding pairs files, naming new run folders. All of it is file reading or
 * planning (no float is allocated); compute runs in the workers.
 *
 * Leaves out: anything that imports `vscode` (this module must load in plain Node too) or
 * Node (the web's bundle holds it): desktop's additions are in extensionLab.node.ts.
 */

import { EngineError } from '../../engine/errors';
import { estimateModel } from '../../engine/models/estimate';
import { BASE_VOCAB } from '../../engine/tokenizers/special';
import { formatCount } from '../../common/format';
import type { CorpusLimits } from '../data/corpus';
import type { LabFs } from '../files/labFs';
import { exists } from '../files/labFs';
import type { CorpusPreview, PreviewBudget } from '../data/corpusPreview';
import { previewCorpus } from '../data/corpusPreview';
import { detectPairsFiles, trainingFirst } from '../data/pairs';
import type { PairsCandidate } from '../data/pairs';
import { INDUCTION_ALPHABET } from '../data/inductionTask';
import { resolveConfig, stateOptimizer } from '../runs/specModel';
import { MODULAR_P, dataDefaults } from '../runs/runSpec';
import { RUN_FILES, newRunDir, readRunJson } from '../runs/runFolder';
export { runNameProblem, setFineTuneData, setRunLabel } from '../runs/runFolder';
import { loadRunState, loadRunStateCounted, runSummary, skippedNote } from '../runs/runState';
import type { TrainSpec } from '../../protocol/data';
import type { RunState, RunSummary } from '../../protocol/webview';

/** One folder under the runs root: a readable run, or why it is not one. */
export type RunListing =
  | { readonly ok: true; readonly summary: RunSummary; readonly hasModel: boolean; readonly updatedAt: string }
  | { readonly ok: false; readonly runDir: string; readonly error: string };

/** Sizes of a configuration before anything exists. */
export interface SpecEstimate {
  readonly params: number;
  readonly memoryBytes: number;
  readonly flopsPerToken: number;
  readonly vocabSize: number;
  /** The vocabulary the estimate assumes, for people: "a 1,000-token BPE vocabulary". */
  readonly vocabNote: string;
  readonly config: Readonly<Record<string, unknown>>;
}

/** Every run folder directly under `root`, newest first (folders without run.json are not runs and are skipped). */
export async function listRuns(fs: LabFs, root: string): Promise<RunListing[]> {
  let names: string[];
  try {
    names = (await fs.list(root)).filter((e) => e.kind === 'directory').map((e) => e.name);
  } catch {
    return [];
  }
  const dirs = names.map((name) => fs.join(root, name));
  const runs = await Promise.all(
    dirs.map(async (runDir) => ((await isRunFolder(fs, runDir)) ? readListing(fs, runDir) : null)),
  );
  const out = runs.filter((r): r is RunListing => r !== null);
  const key = (r: RunListing): string => (r.ok ? r.updatedAt : '');
  return out.sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0));
}

/** One run folder as a listing. */
export async function readListing(fs: LabFs, runDir: string): Promise<RunListing> {
  try {
    const run = await readRunJson(fs, runDir);
    return {
      ok: true,
      summary: runSummary(fs, runDir, run),
      hasModel: await exists(fs, fs.join(runDir, RUN_FILES.model)),
      updatedAt: run.updatedAt,
    };
  } catch (e) {
    return { ok: false, runDir: fs.resolve(runDir), error: (e as Error).message };
  }
}

/** True when `dir` holds a run.json. */
export function isRunFolder(fs: LabFs, dir: string): Promise<boolean> {
  return exists(fs, fs.join(dir, RUN_FILES.run));
}

/** The TrainSpec saved in a run folder. */
export async function readSpec(fs: LabFs, runDir: string): Promise<TrainSpec> {
  return (await readRunJson(fs, runDir)).spec;
}

/** Characters a character tokenizer is assumed to learn when the data has not been looked at. */
export const ASSUMED_CHARS = 100;

/**
 * Letters of a task that brings its own character tokenizer (induction's; modular addition's p numbers and '='),
 * else null.
 */
function taskLetters(spec: TrainSpec): number | null {
  if (spec.data.kind !== 'task' || !dataDefaults(spec.data).ownTokenizer) return null;
  return spec.data.task === 'modular-addition' ? MODULAR_P + 1 : INDUCTION_ALPHABET.length;
}

/**
 * Guess of a tokenizer's size before it is trained: BPE is what was asked; characters are
 * the 260 byte and special ids plus `charsSeen` (the distinct characters of the data, when
 * Configure has read it) or {@link ASSUMED_CHARS}. A task with its own letters (induction) is exact.
 */
export function expectedVocab(spec: TrainSpec, charsSeen: number | null = null): number {
  const letters = taskLetters(spec);
  if (letters !== null) return BASE_VOCAB + letters;
  return spec.tokenizer.type === 'bpe' ? spec.tokenizer.vocabSize : BASE_VOCAB + (charsSeen ?? ASSUMED_CHARS);
}

/** What {@link expectedVocab} assumed, for people (the 260 byte and special ids are always there). */
export function vocabNote(spec: TrainSpec, charsSeen: number | null = null): string {
  const n = expectedVocab(spec, charsSeen);
  const letters = taskLetters(spec);
  if (letters !== null) return `${formatCount(n)} tokens (the task's ${letters} letters)`;
  if (spec.tokenizer.type === 'bpe') return `a ${formatCount(n)}-token BPE vocabulary`;
  return charsSeen === null
    ? `≈${formatCount(n)} tokens (~${ASSUMED_CHARS} characters assumed)`
    : `${formatCount(n)} tokens (${formatCount(charsSeen)} characters in the files)`;
}

/**
 * Parameters, memory and FLOPs of `spec`'s model (throws EngineError('config/invalid') with
 * the fix) — the one estimate Configure's preset list, its review, the Configuration view and
 * Train all show. `charsSeen`: see {@link expectedVocab}.
 */
export function estimateSpec(spec: TrainSpec, charsSeen: number | null = null): SpecEstimate {
  const vocabSize = expectedVocab(spec, charsSeen);
  const config = resolveConfig(spec, vocabSize);
  const len = Math.min(spec.training.seqLen, config.maxLen);
  const est = estimateModel(
    config,
    {
      maxBatch: spec.training.batchSize,
      maxLen: len,
      ...(config.kind === 'encoder-decoder' ? { maxSrcLen: len } : {}),
    },
    stateOptimizer(spec.training.optimizer),
  );
  return {
    params: est.params,
    memoryBytes: est.totalBytes,
    flopsPerToken: est.trainFlopsPerToken,
    vocabSize,
    vocabNote: vocabNote(spec, charsSeen),
    config: { ...config },
  };
}

/** Configure's live look at a documents glob: the corpus plan training makes, plus content checks within a budget. */
export function previewDocuments(
  fs: LabFs,
  files: readonly string[],
  root: string,
  limits: CorpusLimits,
  budget: PreviewBudget,
  signal?: AbortSignal,
): Promise<CorpusPreview> {
  return previewCorpus(fs, files, root, limits, budget, signal);
}

/** Likely pairs files directly inside each folder. */
export async function detectPairs(fs: LabFs, dirs: readonly string[]): Promise<PairsCandidate[]> {
  const all = await Promise.all([...new Set(dirs)].map((d) => detectPairsFiles(fs, d)));
  return all.flat().sort(trainingFirst);
}

/** Message of an error, keeping EngineError's advice. */
export function errorMessage(e: unknown): string {
  return EngineError.is(e) || e instanceof Error ? e.message : String(e);
}

export { loadRunState, loadRunStateCounted, newRunDir, skippedNote };
export type { PairsCandidate, RunState };
