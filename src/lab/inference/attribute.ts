/**
 * `attribute`: direct logit attribution, the accumulated residual stream and attribution
 * patching of a run's model on a clean and a corrupted prompt — the one implementation the CLI
 * (`attention-lab attribute`) and the model worker (`model/attribute`) call. Prompts read as the
 * lens reads them (BOS + the prompt's tokens, refused past the context); the answer and the
 * wrong token must each be one token; the metric is read at the last position (issue 32's
 * shared terms: logit-diff or logprob, on the logits after any soft-cap; DLA on the logits
 * before it). Attribution patching's estimates are normalised as full patching's recovery:
 * (patched − corrupted) / (clean − corrupted), so 1 means the patch alone restores the clean
 * metric.
 *
 * With `withPatching`, the full activation patching sweeps of the same prompts (the `patch`
 * job's one implementation, lab/inference/patch.ts) come back beside the estimates.
 *
 * Leaves out: the math (engine/analysis/directLogit.ts, attributionPatching.ts).
 */

import { EngineError } from '../../engine/errors';
import { attributionPatching } from '../../engine/analysis/attributionPatching';
import { directLogitAttribution } from '../../engine/analysis/directLogit';
import type { LogitMetric } from '../../engine/analysis/logitMetric';
import { tokenLabels } from '../../engine/tokenizers/tokenDisplay';
import type {
  AttributionMetricData,
  AttributionOutputData,
  AttributionParamsData,
  DlaComponentData,
} from '../../protocol/attribution';
import { CancelledError } from '../base/cancelled';
import { inputBatch } from './lens';
import { patchPlan, patchRun } from './patch';
import type { OpenRun, RunPlan } from './openRun';
import type { ModelConfig } from '../../engine/config';
import { logitChunkRows } from '../../engine/models/inputs';

/**
 * How a run is opened for `attribute` on a clean prompt of T tokens (with BOS): as `patch` opens it with
 * `withPatching`; for attribution patching, one sequence with its whole logits [T, V] and the gradients its backward
 * needs, counted by the memory check; for DLA and the accumulated residual, one sequence whose logits are read in
 * chunks.
 */
export function attributePlan(
  config: ModelConfig,
  T: number,
  what: AttributionParamsData['what'],
  withPatching: boolean,
): RunPlan {
  const L = Math.min(T, config.maxLen);
  const lower = `shorten the prompts (${L} tokens with BOS)`;
  if (withPatching) return patchPlan(config, L, what === 'attribution');
  if (what === 'attribution') return { shape: { maxBatch: 1, maxLen: L, logitRows: L }, gradients: true, lower };
  return { shape: { maxBatch: 1, maxLen: L, logitRows: logitChunkRows(config, L) }, lower };
}

/** Progress (passes done of total) and cancelling, checked between passes. */
export interface AttributeHooks {
  readonly onProgress?: (done: number, total: number) => void;
  readonly isCancelled?: () => boolean;
}

/** The one token `text` encodes to in `r`'s tokenizer; refuses text of more or fewer tokens. */
function oneToken(r: OpenRun, text: string, what: string): number {
  const ids = r.tok.encode(text);
  if (ids.length !== 1)
    throw new EngineError(
      'input/invalid',
      `The ${what} ${JSON.stringify(text)} is ${ids.length} tokens of this run's tokenizer; ` +
        'give text that is one token.',
    );
  return ids[0] as number;
}

/** The engine's metric of the request's, its tokens resolved. */
function metricOf(r: OpenRun, m: AttributionMetricData, needsWrong: boolean): LogitMetric {
  const answer = oneToken(r, m.answer, 'answer');
  if (m.kind === 'logprob' && !needsWrong) return { kind: 'logprob', answer, wrong: answer };
  if (m.wrong === undefined)
    throw new EngineError(
      'input/invalid',
      'The logit difference needs a wrong token besides the answer; give one (--wrong TEXT).',
    );
  return { kind: m.kind, answer, wrong: oneToken(r, m.wrong, 'wrong token') };
}

/** A flat [rows · n] array as rows of n, scaled (−0 as 0: JSON has no −0, and the CLI's --json must equal this). */
function rows(a: Float64Array, n: number, scale = 1): number[][] {
  return Array.from({ length: a.length / n }, (_, i) =>
    Array.from(a.subarray(i * n, (i + 1) * n), (x) => x * scale + 0),
  );
}

/** A float64 array as numbers (−0 as 0, as in {@link rows}). */
function plain(a: Float64Array): number[] {
  return Array.from(a, (x) => x + 0);
}

function dlaNote(r: OpenRun): string {
  const cfg = r.model.config;
  const scale =
    cfg.normType === 'rmsnorm'
      ? 'divided by the clean run’s RMS and multiplied by the final norm’s weight'
      : 'centred, divided by the clean run’s standard deviation and multiplied by the final norm’s weight';
  const cap = cfg.logitSoftCap > 0 ? ` Logits before the logit soft-cap (${cfg.logitSoftCap}).` : '';
  return (
    `Each component is read at each position through the final norm with the clean run's scale (${scale}) ` +
    `onto W_U[answer] − W_U[wrong]; the norm's and the unembedding's biases are excluded (the excluded row).${cap}`
  );
}

/** Runs the attribution `p` asks for on `r`'s model (see the file comment). */
export function attribute(r: OpenRun, p: AttributionParamsData, hooks: AttributeHooks = {}): AttributionOutputData {
  const clean = inputBatch(r, { prompt: p.clean });
  const tokens = tokenLabels(r.tok, clean.input);
  if (p.what === 'attribution') {
    const metric = metricOf(r, p.metric, false);
    const corrupted = inputBatch(r, { prompt: p.corrupted });
    let done = 0;
    const res = attributionPatching(r.model, clean, corrupted, metric, () => {
      if (hooks.isCancelled?.()) throw new CancelledError('attributing');
      hooks.onProgress?.(done++, 3);
    });
    hooks.onProgress?.(3, 3);
    const range = res.clean - res.corrupted;
    if (range === 0 || !Number.isFinite(range))
      throw new EngineError(
        'input/invalid',
        `The clean and corrupted prompts give the same metric (${res.clean}); pick prompts the model tells apart.`,
      );
    const n = 1 / range;
    const patching = p.withPatching
      ? patchRun(
          r,
          {
            clean: p.clean,
            corrupted: p.corrupted,
            answer: p.metric.answer,
            wrong: p.metric.wrong ?? null,
            metric: p.metric.kind,
            what: ['resid', 'attn', 'mlp', 'heads', 'heads-pos'],
          },
          hooks,
        )
      : null;
    return {
      what: 'attribution',
      tokens,
      corruptedTokens: tokenLabels(r.tok, corrupted.input),
      metric: p.metric,
      note:
        'First-order estimates (attribution patching): (A_clean − A_corrupted) · ∂metric/∂A on the corrupted run, ' +
        'divided by the clean − corrupted metric (0 = corrupted, 1 = clean).',
      clean: res.clean,
      corrupted: res.corrupted,
      resid: rows(res.resid, res.T, n),
      attnOut: rows(res.attnOut, res.T, n),
      mlpOut: rows(res.mlpOut, res.T, n),
      head: rows(res.head, res.H, n),
      headPos: rows(res.headPos, res.H * res.T, n).map((layer) =>
        Array.from({ length: res.H }, (_, h) => layer.slice(h * res.T, (h + 1) * res.T)),
      ),
      ...(patching ? { patching } : {}),
    };
  }
  const metric = metricOf(r, p.metric, true);
  if (hooks.isCancelled?.()) throw new CancelledError('attributing');
  const d = directLogitAttribution(r.model, clean, metric.answer, metric.wrong);
  hooks.onProgress?.(1, 1);
  const common = {
    tokens,
    answer: p.metric.answer,
    wrong: p.metric.wrong ?? '',
    note: dlaNote(r),
    excluded: plain(d.excluded),
    logitDiff: plain(d.logitDiff),
  };
  if (p.what === 'resid-accum')
    return {
      what: 'resid-accum',
      ...common,
      layers: rows(d.accumulated, d.T).map((values, layer) => ({ layer, values })),
    };
  const components: DlaComponentData[] = [{ kind: 'embed', layer: null, head: null, values: plain(d.embed) }];
  for (let l = 0; l < d.L; l++) {
    for (let h = 0; h < d.H; h++)
      components.push({
        kind: 'head',
        layer: l,
        head: h,
        values: plain(d.heads.subarray((l * d.H + h) * d.T, (l * d.H + h + 1) * d.T)),
      });
    if (d.attnBias)
      components.push({
        kind: 'attn-bias',
        layer: l,
        head: null,
        values: plain(d.attnBias.subarray(l * d.T, (l + 1) * d.T)),
      });
    components.push({ kind: 'mlp', layer: l, head: null, values: plain(d.mlp.subarray(l * d.T, (l + 1) * d.T)) });
  }
  return { what: 'dla', ...common, components };
}
