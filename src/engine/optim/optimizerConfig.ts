/**
 * Optimizer hyper-parameters: the config type, the two presets people learn from (the
 * paper's Adam + warm-up, nanoGPT's AdamW + cosine), and validation whose errors say what
 * to change. Type `muon` is Muon (Jordan et al. 2024; as modded-nanogpt and nanochat use it)
 * for the hidden 2-D matrices with AdamW, on these same fields, for every other parameter
 * (optimizer.ts has the update).
 *
 * - Paper (Vaswani et al. 2017, §5.3): Adam with β1 0.9, β2 0.98, ε 1e-9 and the `noam`
 *   schedule, warm-up 4000 steps; no weight decay and no clipping.
 * - nanoGPT (Karpathy, `config/train_shakespeare_char.py` and `train.py`): AdamW
 *   (Loshchilov & Hutter 2019) with lr 1e-3, β (0.9, 0.99) — the small-model setting;
 *   GPT-2 runs use β2 0.95 — ε 1e-8 (PyTorch's default), weight decay 0.1 on matrices only,
 *   gradient clipping at norm 1.0, cosine decay to lr / 10 after a linear warm-up.
 *
 * Leaves out: the update itself (`optimizer.ts`) and the schedule formulas (`schedule.ts`).
 */

import { EngineError } from '../errors';
import { peakLearningRate, validateSchedule } from './schedule';
import type { ScheduleConfig } from './schedule';

/** Everything the optimizer needs besides the parameters. */
export interface OptimizerConfig {
  /**
   * 'adam' never decays weights; 'adamw' decays segments marked `decay` (decoupled); 'muon'
   * updates the segments marked `hidden` with Muon and the rest with AdamW.
   */
  readonly type: 'adam' | 'adamw' | 'muon';
  /** Peak learning rate for `cosine` and `constant`; ignored by `noam` (see schedule.ts). */
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  /** Decoupled weight decay λ (AdamW): p ← p − lr·λ·p. Must be 0 for 'adam'. */
  readonly weightDecay: number;
  /** Largest global gradient L2 norm; larger gradients are scaled down to it. 0 = off. */
  readonly clipGradNorm: number;
  readonly schedule: ScheduleConfig;
  /**
   * Muon's peak learning rate (type 'muon' only; required there): the hidden matrices step with
   * muonLr · (the schedule's rate / lr), so one schedule shapes both rates. 0.02 (nanochat).
   */
  readonly muonLr?: number;
  /** Muon's momentum β (type 'muon' only; required there): 0.95 (Nesterov). */
  readonly muonMomentum?: number;
}

/** Muon's peak learning rate by default (nanochat's matrix_lr). */
export const DEFAULT_MUON_LR = 0.02;
/** Muon's momentum by default (modded-nanogpt, nanochat). */
export const DEFAULT_MUON_MOMENTUM = 0.95;

/** Warm-up of the paper's schedule (§5.3). */
export const PAPER_WARMUP = 4000;

/**
 * The paper's optimizer for a model of width `dModel`: Adam (0.9, 0.98, 1e-9), `noam`
 * schedule with warm-up 4000 and factor 1. `lr` holds the schedule's peak,
 * d_model^−0.5 · 4000^−0.5, for display only.
 */
export function paperOptimizer(dModel: number): OptimizerConfig {
  if (!Number.isInteger(dModel) || dModel <= 0) {
    throw new EngineError(
      'config/invalid',
      `paperOptimizer needs the model's dModel (a positive integer), got ${String(dModel)}.`,
    );
  }
  const schedule: ScheduleConfig = { type: 'noam', warmup: PAPER_WARMUP, dModel, factor: 1 };
  return validateOptimizerConfig({
    type: 'adam',
    lr: Math.pow(dModel, -0.5) * Math.pow(PAPER_WARMUP, -0.5),
    beta1: 0.9,
    beta2: 0.98,
    eps: 1e-9,
    weightDecay: 0,
    clipGradNorm: 0,
    schedule,
  });
}

/**
 * nanoGPT's optimizer for a run of `maxSteps` steps: AdamW lr 1e-3, β (0.9, 0.99), ε 1e-8,
 * weight decay 0.1, clip 1.0, cosine to 1e-4 at `maxSteps` after a warm-up of
 * min(100, ⌊maxSteps / 10⌋) steps (100 as in shakespeare_char; shorter for short runs).
 */
export function nanoGptOptimizer(maxSteps: number): OptimizerConfig {
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new EngineError(
      'config/invalid',
      `maxSteps must be a positive integer (the number of training steps), got ${String(maxSteps)}.`,
    );
  }
  const lr = 1e-3;
  return validateOptimizerConfig({
    type: 'adamw',
    lr,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.1,
    clipGradNorm: 1.0,
    schedule: { type: 'cosine', warmup: Math.min(100, Math.floor(maxSteps / 10)), maxSteps, minLr: lr / 10 },
  });
}

/**
 * Checks every field; throws EngineError('config/invalid') naming the field, the value and
 * the fix. Returns the config unchanged.
 */
export function validateOptimizerConfig(cfg: OptimizerConfig): OptimizerConfig {
  const bad = (msg: string): never => {
    throw new EngineError('config/invalid', msg);
  };
  const c = cfg as unknown as Record<string, unknown>;
  if (typeof c !== 'object' || c === null) return bad(`optimizer config must be an object, got ${String(c)}.`);
  if (c['type'] !== 'adam' && c['type'] !== 'adamw' && c['type'] !== 'muon')
    bad(`optimizer type must be adam, adamw or muon, got ${String(c['type'])}.`);
  const num = (key: string): number => {
    const v = c[key];
    if (typeof v !== 'number' || !Number.isFinite(v))
      return bad(`optimizer ${key} must be a finite number, got ${String(v)}.`);
    return v;
  };
  const lr = num('lr');
  if (lr <= 0) bad(`optimizer lr must be greater than 0, got ${lr}; nanoGPT uses 1e-3 for small models.`);
  for (const key of ['beta1', 'beta2']) {
    const b = num(key);
    if (b < 0 || b >= 1) bad(`optimizer ${key} must be in [0, 1), got ${b}; the paper uses β1 0.9, β2 0.98.`);
  }
  const eps = num('eps');
  if (eps <= 0)
    bad(
      `optimizer eps must be greater than 0 (it keeps the update finite when v is 0), got ${eps}; the paper uses 1e-9.`,
    );
  const wd = num('weightDecay');
  if (wd < 0) bad(`optimizer weightDecay must be ≥ 0, got ${wd}.`);
  if (wd > 0 && c['type'] === 'adam') {
    bad(
      `optimizer weightDecay ${wd} has no effect with type adam; set type to adamw (decoupled ` +
        `decay) or weightDecay to 0.`,
    );
  }
  const clip = num('clipGradNorm');
  if (clip < 0) bad(`optimizer clipGradNorm must be ≥ 0 (0 = no clipping), got ${clip}; nanoGPT uses 1.0.`);
  validateSchedule(cfg.schedule, lr);
  let peak = peakLearningRate(cfg);
  if (c['type'] === 'muon') {
    const muonLr = num('muonLr');
    if (muonLr <= 0) bad(`optimizer muonLr must be greater than 0, got ${muonLr}; nanochat uses 0.02.`);
    const mom = num('muonMomentum');
    if (mom < 0 || mom >= 1) bad(`optimizer muonMomentum must be in [0, 1), got ${mom}; Muon uses 0.95.`);
    peak = Math.max(peak, (peak / lr) * muonLr);
  } else if (c['muonLr'] !== undefined || c['muonMomentum'] !== undefined) {
    bad(`optimizer muonLr and muonMomentum apply only to type muon; leave them out for ${String(c['type'])}.`);
  }
  if (wd * peak >= 1) {
    bad(
      `optimizer weightDecay ${wd} × peak learning rate ${peak} ≥ 1 would flip the sign of every ` +
        `decayed weight in one step; lower weightDecay (nanoGPT uses 0.1) or the learning rate.`,
    );
  }
  return cfg;
}
