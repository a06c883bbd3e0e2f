/**
 * Reopening a run folder to use its model: run.json, tokenizer.json and model.safetensors,
 * each validated (the checkpoint's config must be run.json's), into a model bound to a backend, planned for what it
 * will be asked (a
 * batch size, or a RunPlan: the shape of its forward passes and the decoding rows, which
 * lab/inference/requestPlan.ts makes from a request), with the buffers its decodes share and
 * what is measured once per model (its heads' induction on the diagnostic sequences).
 */

import type { Backend } from '../../engine/backend';
import { StepperWorkspace } from '../../engine/models/stepper';
import type { ModelShape } from '../../engine/models/inputs';
import { logitChunkRows } from '../../engine/models/inputs';
import { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import type { LabFs } from '../files/labFs';
import { checkCheckpointConfig, loadModelCheckpoint, readCheckpointConfig } from '../runs/checkpoint';
import { checkMemory } from '../runs/memoryCheck';
import type { InductionByLayer } from './headScores';
import { modelPadId } from '../runs/specModel';
import { readTokenizer } from '../runs/tokenizerFile';
import type { RunJson } from '../runs/runFolder';
import { RUN_FILES, readRunJson } from '../runs/runFolder';
import { withoutPromptBos } from './promptIds';

/** A run's trained model, ready to decode or score. */
export interface OpenRun {
  readonly runDir: string;
  readonly run: RunJson;
  readonly tok: Tokenizer;
  readonly model: Transformer;
  readonly step: number;
  /** The buffers every decode stepper of this model reuses (the backend frees nothing). */
  readonly workspace: StepperWorkspace;
  /** Whether the memory check counted gradients (RunPlan.gradients): a job that runs backward needs it. */
  readonly gradients: boolean;
  /** Induction of every head on the run's diagnostic sequences: measured once, on first use (inference/attend.ts). */
  readonly measured: { induction: InductionByLayer | null };
}

/**
 * What a model is opened for: the largest forward pass (`shape`; lengths default to the
 * context), the key/value-cache rows decodes and attention use, and what the person can
 * lower when it does not fit (the memory check's advice).
 */
export interface RunPlan {
  readonly shape: Omit<ModelShape, 'padId'>;
  readonly decodeRows?: number;
  /** The most positions those decodes and attention feed (default the context): what the memory check counts. */
  readonly decodePositions?: number;
  /** The longest prompt they prefill (default decodePositions). */
  readonly decodePrompt?: number;
  readonly lower?: string;
  /** Whether the job runs backward (attribution patching): the memory check counts the gradients. */
  readonly gradients?: boolean;
}

/**
 * Opens `runDir` with a model planned for `plan`: a RunPlan, or a number of sequences of up to the context length
 * (their loss computed over chunks of logits, ModelShape.logitRows).
 */
export async function openRun(
  fs: LabFs,
  runDir: string,
  backend: Backend,
  plan: number | RunPlan = 1,
): Promise<OpenRun> {
  const run = await readRunJson(fs, runDir);
  const read = await readTokenizer(fs, runDir);
  // The modular-addition task trains "a b =" without BOS; its jobs read prompts the same way.
  const data = run.spec.data;
  const tok = data.kind === 'task' && data.task === 'modular-addition' ? withoutPromptBos(read) : read;
  const { config } = await readCheckpointConfig(fs, runDir);
  // a model copied in from another run is refused here
  checkCheckpointConfig(fs.join(runDir, RUN_FILES.model), config, run.config);
  // A number of sequences: a loss over the whole context (evaluation), whose logits are taken in chunks.
  const p: RunPlan =
    typeof plan === 'number'
      ? { shape: { maxBatch: plan, logitRows: logitChunkRows(config, plan * config.maxLen) } }
      : plan;
  const shape = { ...p.shape, padId: modelPadId(tok) };
  checkMemory(config, shape, backend, 'inference', {
    ...(p.decodeRows === undefined ? {} : { decodeRows: p.decodeRows }),
    ...(p.decodePositions === undefined ? {} : { decodePositions: p.decodePositions }),
    ...(p.decodePrompt === undefined ? {} : { decodePrompt: p.decodePrompt }),
    ...(p.lower === undefined ? {} : { lower: p.lower }),
    ...(p.gradients ? { gradients: true } : {}),
  });
  const model = new Transformer(config, shape).bind(backend);
  const step = await loadModelCheckpoint(fs, runDir, model);
  // A backend on a device (WebGPU) holds the weights there: copied up once, now that they are loaded.
  (backend as { uploadAll?: () => void }).uploadAll?.();
  const workspace = new StepperWorkspace(backend);
  return { runDir, run, tok, model, step, workspace, gradients: p.gradients === true, measured: { induction: null } };
}
