/**
 * A run folder as the dashboard sees it: its summary, every logged step and validation, its
 * evaluations on test data, and every attention snapshot — what `report` embeds and what the extension sends when
 * the dashboard opens or restores.
 */

import type { RunState, RunSummary } from '../../protocol/webview';
import { readMetrics, readRunJson } from './runFolder';
import { readSnapshotsCounted } from './snapshotFiles';
import { readEvaluations } from './evaluations';
import type { RunJson } from './runFolder';
import { estimateModel } from '../../engine/models/estimate';
import { stateOptimizer } from './specModel';
import type { LabFs } from '../files/labFs';
import { IMPORT_LAYOUT_NAMES } from '../../engine/models/importLayouts';
import { familyLabel } from '../../engine/models/hfFamilies';
import { wasmSimdThreadsAvailable } from '../../engine/backends/wasm/wasmModule';

/** The summary of a run from its run.json. */
export function runSummary(fs: LabFs, runDir: string, run: RunJson): RunSummary {
  const est = estimateModel(
    run.config,
    { maxBatch: Math.max(1, run.spec.training.batchSize) },
    stateOptimizer(run.spec.training.optimizer),
  );
  return {
    id: fs.resolve(runDir),
    name: run.displayName ?? fs.basename(runDir),
    runDir: fs.resolve(runDir),
    status: run.status,
    kind: run.config.kind,
    step: run.step,
    totalSteps: run.spec.training.steps,
    segments: run.segments,
    bestValLoss: run.bestValLoss,
    model: {
      config: { ...run.config },
      params: est.params,
      paramsByModule: est.paramsByModule,
      memoryBytes: est.totalBytes,
      flopsPerToken: est.trainFlopsPerToken,
      backend: run.backendUsed ?? backendThatWillRun(run.spec.backend),
      ...(run.backendChoice !== undefined ? { backendChoice: run.backendChoice } : {}),
      ...(run.threadsUsed !== undefined ? { threads: run.threadsUsed } : {}),
    },
    data: run.data,
    ...(run.note !== undefined ? { note: run.note } : {}),
    training: run.spec.training,
    tokenizer: {
      type: run.spec.tokenizer.type,
      vocabSize: run.config.vocabSize,
      ...(run.spec.tokenizer.chatTemplate === true ? { chatTemplate: true } : {}),
    },
    ...(run.imported ? { imported: { layout: importedName(run), from: run.imported.from } } : {}),
  };
}

/**
 * How an imported run's model is named for people: its own name and family ("SmolLM2-135M, Llama architecture") when
 * run.json keeps its source, else the layout's name ("Hugging Face GPT-2").
 */
export function importedName(run: Pick<RunJson, 'imported' | 'source'>): string {
  if (run.source) return `${run.source.name}, ${familyLabel(run.source.family)} architecture`;
  return run.imported ? IMPORT_LAYOUT_NAMES[run.imported.layout] : '';
}

/** The backend a run that has not trained yet will run on: "auto" is WebAssembly where this runtime has it. */
function backendThatWillRun(kind: RunJson['spec']['backend']): string {
  return kind === 'auto' ? (wasmSimdThreadsAvailable() ? 'wasm' : 'reference') : kind;
}

/** Damaged records left out of a run's state: metrics and evaluation lines, snapshot files. */
export interface SkippedRecords {
  readonly metrics: number;
  readonly evaluations: number;
  readonly snapshots: number;
}

/** Summary, metrics and snapshots of one run folder, and what was damaged and left out. */
export async function loadRunStateCounted(
  fs: LabFs,
  runDir: string,
): Promise<{ state: RunState; skipped: SkippedRecords }> {
  const run = await readRunJson(fs, runDir);
  const { steps, evals, skipped: metrics } = await readMetrics(fs, runDir);
  const { snapshots, skipped: damagedSnapshots } = await readSnapshotsCounted(fs, runDir);
  const { evaluations, skipped: damagedEvaluations } = await readEvaluations(fs, runDir);
  return {
    state: { run: runSummary(fs, runDir, run), steps, evals, snapshots, evaluations },
    skipped: { metrics, evaluations: damagedEvaluations, snapshots: damagedSnapshots },
  };
}

/**
 * Summary, metrics and snapshots of one run folder (damaged records left out: {@link loadRunStateCounted} counts them).
 */
export async function loadRunState(fs: LabFs, runDir: string): Promise<RunState> {
  return (await loadRunStateCounted(fs, runDir)).state;
}

/** The one line that says what was left out of `runDir`'s state, or null when nothing was. */
export function skippedNote(runDir: string, s: SkippedRecords): string | null {
  const parts: string[] = [];
  const n = (k: number, one: string, many: string): void => {
    if (k > 0) parts.push(`${k} ${k === 1 ? one : many}`);
  };
  n(s.metrics, 'damaged metrics line', 'damaged metrics lines');
  n(s.evaluations, 'damaged evaluations line', 'damaged evaluations lines');
  n(s.snapshots, 'unreadable snapshot', 'unreadable snapshots');
  return parts.length ? `Skipped ${parts.join(', ')} in ${runDir}; the rest of the run is shown.` : null;
}
