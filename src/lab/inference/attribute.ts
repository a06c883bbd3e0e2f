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
 * An encoder-decoder: clean and corrupted are sources (the same token length), read under one
 * target prefix (`target`; absent: BOS alone), the metric at its last position. DLA and the
 * accumulated residual read the decoder's stream (its self- and cross-attention heads, MLPs and
 * embeddings; the encoder has no direct path to the logits); attribution patching estimates the
 * decoder's, each cross-attention's and the encoder's activations (patch.ts's semantics).
 *
 * Leaves out: the math (engine/analysis/directLogit.ts, attributionPatching.ts).
 */

import { EngineError } from '../../engine/errors';
import type { ModelConfig } from '../../engine/config';
import type { Batch } from '../../engine/models/inputs';
import type { Tokenizer } from '../../engine/tokenizers/special';
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
import type { LensInput } from './lens';
import { inputBatch } from './lens';
import { patchPlan, patchRun } from './patch';
import type { OpenRun, RunPlan } from './openRun';
import { logitChunkRows } from '../../engine/models/inputs';

/**
 * How a run is opened for `attribute` on a clean prompt of T tokens (with BOS) — an encoder-decoder's: a target
 * prefix of T tokens (with BOS) over a source of S (with EOS): as `patch` opens it with `withPatching`; for
 * attribution patching, one sequence with its whole logits [T, V] and the gradients its backward needs, counted by
 * the memory check; for DLA and the accumulated residual, one sequence whose logits are read in chunks.
 */
export function attributePlan(
  config: ModelConfig,
  T: number,
  what: AttributionParamsData['what'],
  withPatching: boolean,
  S = 0,
): RunPlan {
  const L = Math.min(T, config.maxLen);
  const src = config.kind === 'encoder-decoder' ? { maxSrcLen: Math.min(Math.max(S, 1), config.maxLen) } : {};
  const lower = `shorten the prompts (${Math.max(L, src.maxSrcLen ?? 0)} tokens with BOS)`;
  if (withPatching) return patchPlan(config, Math.max(L, src.maxSrcLen ?? 0), what === 'attribution');
  if (what === 'attribution')
    return { shape: { maxBatch: 1, maxLen: L, logitRows: L, ...src }, gradients: true, lower };
  return { shape: { maxBatch: 1, maxLen: L, logitRows: logitChunkRows(config, L), ...src }, lower };
}

/**
 * {@link attributePlan} for the request `p` on a model of `config` with tokenizer `tok` (the CLI's and the model
 * worker's): the clean prompt with BOS, or an encoder-decoder's target prefix with BOS over the clean source.
 */
export function attributeRequestPlan(config: ModelConfig, tok: Tokenizer, p: AttributionParamsData): RunPlan {
  const withPatching = p.withPatching === true;
  if (config.kind !== 'encoder-decoder')
    return attributePlan(config, 1 + tok.encode(p.clean).length, p.what, withPatching);
  const T = 1 + tok.encode(p.target ?? '').length;
  return attributePlan(config, T, p.what, withPatching, tok.encode(p.clean, { eos: true }).length);
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
  const encdec =
    cfg.kind === 'encoder-decoder'
      ? " The decoder's stream at each target position; the encoder reaches the logits only through the " +
        'cross-attention heads, so it has no component of its own.'
      : '';
  return (
    `Each component is read at each position through the final norm with the clean run's scale (${scale}) ` +
    `onto W_U[answer] − W_U[wrong]; the norm's and the unembedding's biases are excluded (the excluded row).${cap}` +
    encdec
  );
}

/** The lens input of one prompt of `p` (an encoder-decoder's: a source under the request's target prefix). */
export function attributeInput(config: ModelConfig, p: AttributionParamsData, text: string = p.clean): LensInput {
  if (config.kind === 'encoder-decoder') return { src: text, tgt: p.target ?? '' };
  if (p.target !== undefined)
    throw new EngineError(
      'input/invalid',
      'A target prefix is for an encoder-decoder run; this run is decoder-only: give prompts only.',
    );
  return { prompt: text };
}

function batchOf(r: OpenRun, p: AttributionParamsData, text: string): Batch {
  return inputBatch(r, attributeInput(r.model.config, p, text));
}

/** Runs the attribution `p` asks for on `r`'s model (see the file comment). */
export function attribute(r: OpenRun, p: AttributionParamsData, hooks: AttributeHooks = {}): AttributionOutputData {
  const clean = batchOf(r, p, p.clean);
  const tokens = tokenLabels(r.tok, clean.input);
  if (p.what === 'attribution') {
    const metric = metricOf(r, p.metric, false);
    const corrupted = batchOf(r, p, p.corrupted);
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
            ...(p.target !== undefined ? { target: p.target } : {}),
          },
          hooks,
        )
      : null;
    const heads = (a: Float64Array, T: number): number[][][] =>
      rows(a, res.H * T, n).map((layer) => Array.from({ length: res.H }, (_, h) => layer.slice(h * T, (h + 1) * T)));
    const enc = res.encoder;
    const encdec =
      enc && res.cross && clean.src && corrupted.src
        ? {
            source: { clean: tokenLabels(r.tok, clean.src), corrupted: tokenLabels(r.tok, corrupted.src) },
            cross: {
              out: rows(res.cross.out, res.T, n),
              head: rows(res.cross.head, res.H, n),
              headPos: heads(res.cross.headPos, res.T),
            },
            encoder: {
              resid: rows(enc.resid, enc.T, n),
              attnOut: rows(enc.attnOut, enc.T, n),
              mlpOut: rows(enc.mlpOut, enc.T, n),
              head: rows(enc.head, res.H, n),
              headPos: heads(enc.headPos, enc.T),
            },
          }
        : {};
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
      headPos: heads(res.headPos, res.T),
      ...encdec,
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
    if (d.crossHeads)
      for (let h = 0; h < d.H; h++)
        components.push({
          kind: 'cross-head',
          layer: l,
          head: h,
          values: plain(d.crossHeads.subarray((l * d.H + h) * d.T, (l * d.H + h + 1) * d.T)),
        });
    if (d.crossBias)
      components.push({
        kind: 'cross-bias',
        layer: l,
        head: null,
        values: plain(d.crossBias.subarray(l * d.T, (l + 1) * d.T)),
      });
    components.push({ kind: 'mlp', layer: l, head: null, values: plain(d.mlp.subarray(l * d.T, (l + 1) * d.T)) });
  }
  return { what: 'dla', ...common, components };
}
