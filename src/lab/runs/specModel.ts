/**
 * The model a TrainSpec describes: its config (preset, context, overrides), the bound model
 * with its padding id, the backend it names and the optimizer with its schedule over the
 * run's segments. Shared by training, calibration, reopening a run and the extension's
 * size estimates.
 *
 * Leaves out: the data and tokenizer of a run (data/runData.ts) and its checkpoints
 * (checkpoint.ts).
 */

import type { Backend } from '../../engine/backend';
import { createBackend } from '../../engine/backends/select';
import type { ParallelRunner } from '../../engine/backends/wasm/parallel';
import type { ModelConfig } from '../../engine/config';
import { applyOverrides, presetConfig } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import type { EstimateOptimizer } from '../../engine/models/estimate';
import type { ModelShape } from '../../engine/models/inputs';
import { Transformer } from '../../engine/models/transformer';
import { Optimizer } from '../../engine/optim/optimizer';
import type { OptimizerConfig } from '../../engine/optim/optimizerConfig';
import { DEFAULT_MUON_LR, DEFAULT_MUON_MOMENTUM } from '../../engine/optim/optimizerConfig';
import type { SegmentSchedule } from '../../engine/optim/schedule';
import { WSD_DECAY_FRACTION } from '../../engine/optim/schedule';
import { HfVocab } from '../../engine/tokenizers/hfVocab';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { learningRateUsed } from '../../common/learningRate';
import type { OptimizerPreset, RunSegment, TrainSpec } from '../../protocol/data';
import { checkMemory } from './memoryCheck';
import { TASK_RUNS } from './runSpec';
import { planSegments, plannedWarmup, restartWarmup, segmentedSchedule } from './segments';

/** The model config of a spec for a tokenizer of `vocab` ids: preset, then context, then overrides. */
export function resolveConfig(spec: TrainSpec, vocab: number): ModelConfig {
  const kind = spec.model.kind;
  const preset = presetConfig(kind, spec.model.preset, vocab, kind === 'encoder-decoder' ? vocab : 0);
  return applyOverrides({ ...preset, maxLen: spec.training.seqLen }, spec.model.overrides);
}

/**
 * The optimizer a spec asks for. 'paper' = Adam (0.9, 0.98, 1e-9) with warm-up; 'adamw' =
 * nanoGPT's AdamW + cosine (or WSD); 'muon' = Muon (lr 0.02, momentum 0.95) for the hidden
 * matrices with that AdamW, at the spec's lr, for the rest. A run extended with more steps
 * passes its `segments`: the first keeps the schedule it was planned with, each later one
 * continues it (segments.ts).
 */
export function optimizerConfig(
  spec: TrainSpec,
  cfg: ModelConfig,
  segments: readonly RunSegment[] = planSegments(spec),
): OptimizerConfig {
  const t = spec.training;
  // Planned from the first segment, so extending a run never changes the rates it trained with.
  const planned = (segments[0] as RunSegment).toStep;
  const warmup = plannedWarmup(spec, planned);
  if (t.optimizer === 'paper') {
    if (t.schedule === 'wsd')
      throw new EngineError(
        'config/invalid',
        'The paper optimizer follows its own schedule (noam), not wsd; leave the schedule at cosine or ' +
          'choose the adamw or muon optimizer.',
      );
    const factor = learningRateUsed(t);
    // `lr` is not used by the noam schedule; it holds the schedule's peak for display.
    const peak = factor * Math.pow(cfg.dModel, -0.5) * Math.pow(warmup, -0.5);
    const noam = { type: 'noam', warmup, dModel: cfg.dModel, factor } as const;
    return {
      type: 'adam',
      lr: peak,
      beta1: 0.9,
      beta2: 0.98,
      eps: 1e-9,
      weightDecay: 0,
      clipGradNorm: 0,
      schedule: segmentedSchedule(segments, () => noam),
    };
  }
  const lr = learningRateUsed(t);
  const minLr = lr / 10;
  const scheduleOf = (s: RunSegment): SegmentSchedule => {
    switch (s.schedule) {
      case 'cosine':
        return { type: 'cosine', warmup, maxSteps: s.toStep, minLr };
      case 'constant':
        return { type: 'constant', warmup: Math.min(warmup, planned - 1) };
      case 'restart':
        return { type: 'restart', start: s.fromStep, warmup: restartWarmup(warmup, s), maxSteps: s.toStep, minLr };
      case 'wsd':
        return {
          type: 'wsd',
          start: s.fromStep,
          warmup: s.fromStep === 0 ? warmup : restartWarmup(warmup, s),
          maxSteps: s.toStep,
          minLr,
          decayFraction: WSD_DECAY_FRACTION,
        };
      case 'noam':
        throw new EngineError(
          'config/invalid',
          `A noam schedule segment needs the paper optimizer; this run uses ${t.optimizer}.`,
        );
      default:
        return s.schedule satisfies never;
    }
  };
  // A task may set AdamW's β2, decay and clipping (the grokking task: 0.98, 1 and none, as published).
  const own = spec.data.kind === 'task' ? TASK_RUNS[spec.data.task].adamw : undefined;
  const adamw: OptimizerConfig = {
    type: 'adamw',
    lr,
    beta1: 0.9,
    beta2: own?.beta2 ?? 0.99,
    eps: 1e-8,
    weightDecay: own?.weightDecay ?? 0.1,
    clipGradNorm: own?.clipGradNorm ?? 1,
    schedule: segmentedSchedule(segments, scheduleOf),
  };
  if (t.optimizer === 'muon')
    return { ...adamw, type: 'muon', muonLr: DEFAULT_MUON_LR, muonMomentum: DEFAULT_MUON_MOMENTUM };
  return adamw;
}

/**
 * The padding id a model of `tok`'s vocabulary masks: PAD (0) in ours; −1 (none) in a
 * vocabulary without PAD, such as GPT-2's, where 0 is a real token, and in a Hugging Face
 * tokenizer.json's: its pad_token is a real token the model reads (Qwen's <|endoftext|>,
 * SmolLM2-Instruct's <|im_end|>, which its chat template writes), never masked by id, as
 * transformers masks by an attention mask (and the engine pads only with 0).
 */
export function modelPadId(tok: Tokenizer): number {
  if ((tok as { readonly vocab?: unknown }).vocab instanceof HfVocab) return -1;
  return tok.specialIds.pad < 0 ? -1 : tok.specialIds.pad;
}

/** The optimizer whose state a memory estimate counts for a preset (the paper's Adam keeps AdamW's). */
export function stateOptimizer(preset: OptimizerPreset): EstimateOptimizer {
  return preset === 'muon' ? 'muon' : 'adamw';
}

/** The sizes a dataset asks of a model of `cfg`: its rows, and its lengths within the context. */
type DatasetSizes = { readonly maxBatch: number; readonly maxLen: number; readonly maxSrcLen: number };

/** The shape of a model of `cfg` for `dataset`'s batches, padding with `padId` (see {@link modelPadId}). */
export function datasetShape(cfg: ModelConfig, dataset: DatasetSizes, padId?: number): ModelShape {
  return {
    maxBatch: dataset.maxBatch,
    maxLen: Math.min(dataset.maxLen, cfg.maxLen),
    ...(cfg.kind === 'encoder-decoder' ? { maxSrcLen: Math.min(dataset.maxSrcLen, cfg.maxLen) } : {}),
    ...(padId === undefined ? {} : { padId }),
  };
}

/**
 * A bound model for a config and dataset shape, padding with `padId` (see {@link modelPadId}),
 * after the memory check counts `optimizer`'s state (default AdamW's).
 */
export function buildModel(
  cfg: ModelConfig,
  dataset: DatasetSizes,
  backend: Backend,
  padId?: number,
  optimizer?: EstimateOptimizer,
): Transformer {
  const shape = datasetShape(cfg, dataset, padId);
  checkMemory(cfg, shape, backend, 'training', optimizer ? { optimizer } : {});
  return new Transformer(cfg, shape).bind(backend);
}

/**
 * The backend the spec names. Training uses the cores the host offers: the wasm backend
 * gets `threads()`'s helpers (results are bit-identical to one thread). A run trained on WebGPU
 * opens on the CPU (auto) here: snapshots, calibration and the jobs not built on the GPU run there;
 * the training session (sessionSetup.ts) and the model worker's GPU jobs (modelService.ts) open the
 * GPU themselves.
 */
export function backendFor(kind: TrainSpec['backend'], threads: () => ParallelRunner | null): Backend {
  if (kind === 'webgpu') kind = 'auto';
  return kind === 'reference' ? createBackend(kind) : createBackend(kind, { runner: threads() });
}

/** Optimizer over a bound model. */
export function buildOptimizer(model: Transformer, cfg: OptimizerConfig): Optimizer {
  return new Optimizer(model.backendOrThrow(), model.params, model.grads, model.segments(), cfg);
}
