/**
 * A run folder as the dashboard sees it: its summary, every logged step and validation, its
 * evaluations on test data, and every attention snapshot — what `report` embeds and what the extension sends when
 * the dashboard opens or restores.
 */

import type { RunState, RunSummary } from '../../protocol/webview';
import { readMetrics, readRunJson } from './runFolder';
import { readSnapshots } from '../training/snapshots';
import { readEvaluations } from '../evaluation/evaluations';
import type { RunJson } from './runFolder';
import { estimateModel } from '../../engine/models/estimate';
import type { LabFs } from '../files/labFs';
import { IMPORT_LAYOUT_NAMES } from '../../engine/models/importLayouts';
import { wasmSimdThreadsAvailable } from '../../engine/backends/wasm/wasmModule';

/** The summary of a run from its run.json. */
export function runSummary(fs: LabFs, runDir: string, run: RunJson): RunSummary {
  const est = estimateModel(run.config, { maxBatch: Math.max(1, run.spec.training.batchSize) });
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
      ...(run.threadsUsed !== undefined ? { threads: run.threadsUsed } : {}),
    },
    data: run.data,
    ...(run.note !== undefined ? { note: run.note } : {}),
    training: run.spec.training,
    tokenizer: { type: run.spec.tokenizer.type, vocabSize: run.config.vocabSize },
    ...(run.imported ? { imported: { layout: IMPORT_LAYOUT_NAMES[run.imported.layout], from: run.imported.from } } : {}),
  };
}

/** The backend a run that has not trained yet will run on: "auto" is WebAssembly where this runtime has it. */
function backendThatWillRun(kind: RunJson['spec']['backend']): string {
  return kind === 'auto' ? (wasmSimdThreadsAvailable() ? 'wasm' : 'reference') : kind;
}

/** Summary, metrics and snapshots of one run folder. */
export async function loadRunState(fs: LabFs, runDir: string): Promise<RunState> {
  const run = await readRunJson(fs, runDir);
  const { steps, evals } = await readMetrics(fs, runDir);
  return { run: runSummary(fs, runDir, run), steps, evals, snapshots: await readSnapshots(fs, runDir), evaluations: (await readEvaluations(fs, runDir)).evaluations };
}
