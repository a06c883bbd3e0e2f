/**
 * Activation patching and path patching (Meng et al. 2022; Wang et al. 2022, "Interpretability
 * in the Wild", the IOI circuit; ARENA 1.4.1): which activations carry the difference between a
 * clean and a corrupted prompt to the model's answer. One implementation for the CLI (`attention-lab
 * patch`) and the model worker.
 *
 * The two prompts are read as the lens reads a prompt (BOS + the tokens, with the run's
 * tokenizer) and must have the same number of tokens. The metric, at the last position, on the
 * logits the model predicts with (after any logit soft-cap): `logit-diff` = logit[answer] −
 * logit[wrong], or `logprob` = log-softmax[answer]. The answer and the wrong answer are one token
 * each.
 *
 * Direction: denoising. Every patched run reads the corrupted prompt, and one activation (or a
 * slice of it) is replaced by its value on the clean prompt; the rest of the forward is
 * recomputed from there. Each cell reports the patched metric (raw) and its recovery
 * (patched − corrupted) / (clean − corrupted): 0 = as corrupted, 1 = as clean. The sweeps (hook
 * points: engine/models/hooks.ts):
 *   resid      resid_pre of layer ℓ at position p, per (layer, position), layers 1..L
 *   attn       attn_out of layer ℓ at position p (the attention layer's output after W_o)
 *   mlp        mlp_out of layer ℓ at position p
 *   heads      z of head h of layer ℓ at every position (the head's output, which reaches the
 *              stream only through W_o), per (layer, head)
 *   heads-pos  z of head h of layer ℓ at position p, per (layer, head, position)
 *   path       path patching, below
 *
 * Path patching of sender head s through receiver heads R and their input X ∈ {q, k, v} (the
 * projections x·W_Xᵀ, before qk-norm and RoPE), for every sender in a layer before the last
 * receiver's:
 *   1. Run the corrupted prompt with head s's z replaced by its clean value and every other
 *      head's z, in every layer, frozen at its value on the corrupted run (the MLPs, norms and
 *      stream are recomputed). Keep each receiver's X there.
 *   2. Run the corrupted prompt with each receiver's X replaced by what step 1 kept (every
 *      position), everything else recomputed; the metric of this run is the cell.
 * So the sender's clean output reaches the metric only through the receivers' X: its direct
 * path to the logits and its paths through every other head are cut (Wang et al. §3.1, App. B),
 * while the paths through MLPs between the sender and a receiver are kept. A receiver in a layer
 * at or before the sender's sees no change. Under grouped-query attention a receiver's k or v is
 * its key/value head's, shared with the other query heads of its group, all of which then read
 * the patched keys or values.
 *
 * The patched runs of a sweep are batched, one run per batch item, as many per forward as the
 * model was planned for; progress is reported after each forward, and the work stops between
 * forwards when asked (CancelledError).
 *
 * Leaves out: noising (patching corrupted into clean), encoder-decoder runs (refused: their
 * decoder reads a source the prompts do not give), patching the encoder and cross-attention,
 * and drawing the results (the maps are rows × columns of numbers with their labels).
 */

import type { ModelConfig } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import type { FloatArray } from '../../engine/backend';
import { memoryProblem } from '../../engine/models/estimate';
import type { ForwardHook, HookPoint } from '../../engine/models/hooks';
import type { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { tokenLabels } from '../../engine/tokenizers/tokenDisplay';
import type { PatchMapData, PatchMetric, PatchOutputData, PatchWhat, PathInput } from '../../protocol/patching';
import { CancelledError } from '../base/cancelled';
import type { OpenRun, RunPlan } from './openRun';

export type { PatchMetric, PatchWhat, PathInput };

/** A head by 0-based layer and head. */
export interface HeadAt {
  readonly layer: number;
  readonly head: number;
}

/** The token ids of a patching experiment. */
export interface PatchIds {
  /** BOS + the clean prompt's tokens; the corrupted prompt's, the same length. */
  readonly clean: Int32Array;
  readonly corrupted: Int32Array;
  readonly answer: number;
  /** The wrong answer (logit-diff), else null. */
  readonly wrong: number | null;
  readonly metric: PatchMetric;
}

/** What to patch, and how to report. */
export interface PatchOptions {
  readonly what: readonly PatchWhat[];
  /** Path patching's receivers and their input (needed with `path`). */
  readonly path?: { readonly receivers: readonly HeadAt[]; readonly input: PathInput };
  /** Called after each forward with the patched runs done and their total. */
  readonly onProgress?: (done: number, total: number) => void;
  /** Polled between forwards: true stops the work with CancelledError. */
  readonly isCancelled?: () => boolean;
}

/** One sweep's results: a heatmap of rows × cols, row-major. */
export type PatchMap = PatchMapData;

/** The metric on the clean and corrupted prompts, and each sweep's map. */
export interface PatchResult {
  readonly clean: number;
  readonly corrupted: number;
  readonly maps: readonly PatchMap[];
}

/** Most patched runs batched in one forward. */
export const MAX_PATCH_BATCH = 64;

/** An activation of one run, per hook point and layer: [T, heads·width]. */
type Acts = Map<string, Float64Array>;

const actKey = (point: HookPoint, layer: number): string => `${point}.${layer}`;

/**
 * One replacement in a patched run: at `point` of `layer`, the channels of head `head` (null: a
 * whole row) at position `pos` (null: every position) take `src`'s values ([T, heads·width]).
 */
interface Patch {
  readonly point: HookPoint;
  readonly layer: number;
  readonly head: number | null;
  readonly pos: number | null;
  readonly src: Float64Array;
}

/** A patched run: its replacements, in order, and the activations it keeps (keep[key] receives [T, heads·width]). */
interface Job {
  readonly patches: readonly Patch[];
  readonly keep?: Map<string, Float64Array | null>;
}

/** The metric of the logits row `row` ([V] at row·V). */
function metricAt(logits: FloatArray, row: number, V: number, ids: PatchIds): number {
  const at = row * V;
  const a = logits[at + ids.answer] as number;
  if (ids.metric === 'logit-diff') return a - (logits[at + (ids.wrong as number)] as number);
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[at + v] as number);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[at + v] as number) - max);
  return a - max - Math.log(sum);
}

/** Runs `B` copies of `input` with `hook`; the metric of each. */
function forwardCopies(model: Transformer, input: Int32Array, B: number, ids: PatchIds, hook: ForwardHook): number[] {
  const T = input.length;
  const inp = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    inp.set(input, b * T);
    targets.set(input.subarray(1), b * T);
    targets[b * T + T - 1] = input[0] as number;
  }
  // Only each copy's last position is read: no loss, and the output projection runs on those rows alone.
  model.forward({ B, T, input: inp, targets }, { train: false, labelSmoothing: 0, hook, loss: false });
  const V = model.config.vocabSize;
  const out: number[] = [];
  for (let b0 = 0; b0 < B; b0 += model.logitRows) {
    const rows = Array.from({ length: Math.min(model.logitRows, B - b0) }, (_, i) => (b0 + i) * T + T - 1);
    const logits = model.logitsAt(rows);
    rows.forEach((_, i) => out.push(metricAt(logits, i, V, ids)));
  }
  return out;
}

/** The metric of `input` alone and every activation of its forward. */
function capture(model: Transformer, input: Int32Array, ids: PatchIds): { metric: number; acts: Acts } {
  const acts: Acts = new Map();
  const [metric] = forwardCopies(model, input, 1, ids, (site, data) => {
    acts.set(actKey(site.point, site.layer), Float64Array.from(data));
  });
  return { metric: metric as number, acts };
}

/** Runs `jobs` on the corrupted prompt, batched; each one's metric. `done` counts every run finished. */
function runJobs(
  model: Transformer,
  ids: PatchIds,
  jobs: readonly Job[],
  progress: { done: number; readonly total: number },
  opts: PatchOptions,
): number[] {
  const out: number[] = [];
  const T = ids.corrupted.length;
  for (let start = 0; start < jobs.length; start += model.maxBatch) {
    if (opts.isCancelled?.()) throw new CancelledError('patching');
    const batch = jobs.slice(start, start + model.maxBatch);
    const byKey = new Map<string, { b: number; p: Patch }[]>();
    batch.forEach((job, b) => {
      for (const p of job.patches) {
        const k = actKey(p.point, p.layer);
        const list = byKey.get(k) ?? [];
        list.push({ b, p });
        byKey.set(k, list);
      }
    });
    const hook: ForwardHook = (site, data) => {
      const k = actKey(site.point, site.layer);
      const row = site.heads * site.width;
      for (const { b, p } of byKey.get(k) ?? []) {
        const c0 = p.head === null ? 0 : p.head * site.width;
        const c1 = p.head === null ? row : c0 + site.width;
        const t0 = p.pos ?? 0;
        const t1 = p.pos === null ? T : p.pos + 1;
        for (let t = t0; t < t1; t++)
          for (let c = c0; c < c1; c++) data[(b * T + t) * row + c] = p.src[t * row + c] as number;
      }
      batch.forEach((job, b) => {
        if (job.keep?.has(k)) job.keep.set(k, Float64Array.from(data.subarray(b * T * row, (b + 1) * T * row)));
      });
    };
    out.push(...forwardCopies(model, ids.corrupted, batch.length, ids, hook));
    progress.done += batch.length;
    opts.onProgress?.(progress.done, progress.total);
  }
  return out;
}

/** `n` labels numbered from 1, as people see layers and heads: L1, L2, … */
function labels(n: number, prefix: string): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
}

/** The map of `values` ([rows × cols]) normalised by the clean and corrupted metrics. */
function map(
  what: PatchWhat,
  rows: string[],
  cols: string[],
  values: number[],
  clean: number,
  corrupted: number,
): PatchMap {
  const d = clean - corrupted;
  return { what, rows, cols, values, normalised: values.map((v) => (v - corrupted) / d) };
}

/**
 * The patching sweeps of `opts.what` on `model` (decoder-only, planned for at least one
 * sequence of the prompts' length): see the file comment. Column labels of positions are
 * `posLabels` (one per token).
 */
export function patchModel(
  model: Transformer,
  ids: PatchIds,
  opts: PatchOptions,
  posLabels: readonly string[] = Array.from({ length: ids.clean.length }, (_, i) => String(i)),
): PatchResult {
  const cfg = model.config;
  if (cfg.kind !== 'decoder-only')
    throw new EngineError(
      'input/invalid',
      "Patching reads decoder-only runs; an encoder-decoder's decoder also reads a source the prompts do not give.",
    );
  checkIds(ids, cfg.vocabSize);
  const T = ids.clean.length;
  const L = cfg.nDecoderLayers;
  const attn = (model.decoder[0] as Transformer['decoder'][number]).selfAttn;
  const H = attn.H;
  const clean = capture(model, ids.clean, ids);
  const corrupt = capture(model, ids.corrupted, ids);
  if (clean.metric === corrupt.metric)
    throw new EngineError(
      'input/invalid',
      `The clean and corrupted prompts give the same ${ids.metric} (${clean.metric}); ` +
        'choose prompts the model answers differently.',
    );
  const src = (point: HookPoint, layer: number): Float64Array => clean.acts.get(actKey(point, layer)) as Float64Array;
  const what = [...new Set(opts.what)];
  const path = what.includes('path') ? pathPlan(opts, L, H) : null;
  const count: Record<PatchWhat, number> = {
    resid: L * T,
    attn: L * T,
    mlp: L * T,
    heads: L * H,
    'heads-pos': L * H * T,
    path: path ? 2 * path.senders.length : 0,
  };
  const progress = { done: 0, total: what.reduce((s, w) => s + count[w], 0) };
  const layerRows = labels(L, 'L');
  const maps: PatchMap[] = [];
  const perLayerPos = (w: PatchWhat, point: HookPoint): void => {
    const jobs: Job[] = [];
    for (let layer = 0; layer < L; layer++)
      for (let pos = 0; pos < T; pos++)
        jobs.push({ patches: [{ point, layer, head: null, pos, src: src(point, layer) }] });
    const v = runJobs(model, ids, jobs, progress, opts);
    maps.push(map(w, layerRows, [...posLabels], v, clean.metric, corrupt.metric));
  };
  for (const w of what) {
    if (w === 'resid') perLayerPos(w, 'resid_pre');
    else if (w === 'attn') perLayerPos(w, 'attn_out');
    else if (w === 'mlp') perLayerPos(w, 'mlp_out');
    else if (w === 'heads') {
      const jobs: Job[] = [];
      for (let layer = 0; layer < L; layer++)
        for (let head = 0; head < H; head++)
          jobs.push({ patches: [{ point: 'z', layer, head, pos: null, src: src('z', layer) }] });
      const v = runJobs(model, ids, jobs, progress, opts);
      maps.push(map(w, layerRows, labels(H, 'H'), v, clean.metric, corrupt.metric));
    } else if (w === 'heads-pos') {
      const jobs: Job[] = [];
      const rows: string[] = [];
      for (let layer = 0; layer < L; layer++)
        for (let head = 0; head < H; head++) {
          rows.push(`L${layer + 1}H${head + 1}`);
          for (let pos = 0; pos < T; pos++)
            jobs.push({ patches: [{ point: 'z', layer, head, pos, src: src('z', layer) }] });
        }
      const v = runJobs(model, ids, jobs, progress, opts);
      maps.push(map(w, rows, [...posLabels], v, clean.metric, corrupt.metric));
    } else if (w === 'path' && path) {
      const v = pathPatch(model, ids, path, clean.acts, corrupt.acts, progress, opts);
      const m = map(w, labels(path.senderLayers, 'L'), labels(H, 'H'), v, clean.metric, corrupt.metric);
      maps.push({
        ...m,
        path: { receivers: path.receivers.map((r) => ({ layer: r.layer, head: r.head })), input: path.input },
      });
    }
  }
  return { clean: clean.metric, corrupted: corrupt.metric, maps };
}

/** Path patching's receivers and input, checked, and its senders: each head of the layers before the last receiver. */
interface PathPlan {
  readonly receivers: readonly HeadAt[];
  readonly input: PathInput;
  readonly senderLayers: number;
  readonly senders: readonly HeadAt[];
}

function pathPlan(opts: PatchOptions, L: number, H: number): PathPlan {
  const p = opts.path;
  if (!p || p.receivers.length === 0)
    throw new EngineError(
      'input/invalid',
      'Path patching needs receiver heads and their input (q, k or v); name them, e.g. receivers L2H1 with input q.',
    );
  for (const r of p.receivers)
    if (
      !Number.isInteger(r.layer) ||
      r.layer < 0 ||
      r.layer >= L ||
      !Number.isInteger(r.head) ||
      r.head < 0 ||
      r.head >= H
    )
      throw new EngineError(
        'input/invalid',
        `No receiver head L${r.layer + 1}H${r.head + 1}; this model has layers 1..${L} and heads 1..${H}.`,
      );
  const senderLayers = Math.max(...p.receivers.map((r) => r.layer));
  if (senderLayers === 0)
    throw new EngineError(
      'input/invalid',
      'Every receiver is in layer 1, so no head sends to them; choose receivers in a later layer.',
    );
  const senders: HeadAt[] = [];
  for (let layer = 0; layer < senderLayers; layer++) for (let head = 0; head < H; head++) senders.push({ layer, head });
  return { receivers: p.receivers, input: p.input, senderLayers, senders };
}

/** Path patching's two batched passes (see the file comment): the metric of each sender. */
function pathPatch(
  model: Transformer,
  ids: PatchIds,
  plan: PathPlan,
  clean: Acts,
  corrupt: Acts,
  progress: { done: number; readonly total: number },
  opts: PatchOptions,
): number[] {
  const L = model.config.nDecoderLayers;
  const attn = (model.decoder[0] as Transformer['decoder'][number]).selfAttn;
  const recvLayers = [...new Set(plan.receivers.map((r) => r.layer))];
  const z = (acts: Acts, layer: number): Float64Array => acts.get(actKey('z', layer)) as Float64Array;
  const first: Job[] = plan.senders.map((s) => {
    const patches: Patch[] = [];
    for (let layer = 0; layer < L; layer++)
      patches.push({ point: 'z', layer, head: null, pos: null, src: z(corrupt, layer) });
    patches.push({ point: 'z', layer: s.layer, head: s.head, pos: null, src: z(clean, s.layer) });
    return { patches, keep: new Map(recvLayers.map((l) => [actKey(plan.input, l), null])) };
  });
  runJobs(model, ids, first, progress, opts);
  const second: Job[] = first.map((job) => ({
    patches: plan.receivers.map((r) => ({
      point: plan.input,
      layer: r.layer,
      head: plan.input === 'q' ? r.head : attn.kvGroup(r.head),
      pos: null,
      src: job.keep?.get(actKey(plan.input, r.layer)) as Float64Array,
    })),
  }));
  return runJobs(model, ids, second, progress, opts);
}

function checkIds(ids: PatchIds, V: number): void {
  if (ids.clean.length !== ids.corrupted.length || ids.clean.length === 0)
    throw new EngineError(
      'input/invalid',
      'The clean and corrupted prompts must have the same number of tokens; ' +
        `they have ${ids.clean.length} and ${ids.corrupted.length}.`,
    );
  const bad = [ids.answer, ids.wrong ?? 0, ...ids.clean, ...ids.corrupted].find(
    (t) => !Number.isInteger(t) || t < 0 || t >= V,
  );
  if (bad !== undefined)
    throw new EngineError('input/invalid', `Token id ${bad} is outside this model's vocabulary of ${V}.`);
  if (ids.metric === 'logit-diff' && ids.wrong === null)
    throw new EngineError(
      'input/invalid',
      'The logit-diff metric needs a wrong answer; give one, or use the logprob metric.',
    );
}

/** What a patching request gives: the prompts and answers as text, the metric and the sweeps. */
export interface PatchRequest {
  readonly clean: string;
  readonly corrupted: string;
  readonly answer: string;
  /** Needed with logit-diff. */
  readonly wrong: string | null;
  readonly metric: PatchMetric;
  readonly what: readonly PatchWhat[];
  readonly receivers?: readonly HeadAt[];
  readonly input?: PathInput;
}

/** The one token of `text` (an answer), or a refusal that says what it became. */
function oneToken(tok: Tokenizer, text: string, what: string): number {
  const t = tok.encode(text);
  if (t.length !== 1)
    throw new EngineError(
      'input/invalid',
      `The ${what} "${text}" is ${t.length} tokens (${tokenLabels(tok, t)
        .map((s) => JSON.stringify(s))
        .join(' ')}); give one token (with its leading space where the tokenizer has one).`,
    );
  return t[0] as number;
}

/**
 * The ids of a request with `tok`: BOS + each prompt's tokens, which must be as many (else a
 * refusal naming both lengths and the positions where the tokens differ) and fit the context.
 */
export function patchIds(tok: Tokenizer, config: ModelConfig, req: PatchRequest): PatchIds {
  const { bos } = tok.specialIds;
  const clean = Int32Array.of(bos, ...tok.encode(req.clean));
  const corrupted = Int32Array.of(bos, ...tok.encode(req.corrupted));
  if (clean.length !== corrupted.length) {
    const a = tokenLabels(tok, clean).slice(1);
    const b = tokenLabels(tok, corrupted).slice(1);
    const n = Math.max(a.length, b.length);
    const diff: string[] = [];
    for (let i = 0; i < n && diff.length < 6; i++)
      if (a[i] !== b[i]) diff.push(`${i + 1}: ${JSON.stringify(a[i] ?? '')} vs ${JSON.stringify(b[i] ?? '')}`);
    throw new EngineError(
      'input/invalid',
      `The clean prompt is ${a.length} tokens and the corrupted ${b.length}; they differ at ${diff.join(', ')}. ` +
        'Give prompts of the same token length.',
    );
  }
  if (clean.length > config.maxLen)
    throw new EngineError(
      'input/invalid',
      `The prompts (with BOS) are ${clean.length} tokens, over the context of ${config.maxLen}; shorten them.`,
    );
  const answer = oneToken(tok, req.answer, 'answer');
  const wrong = req.wrong === null ? null : oneToken(tok, req.wrong, 'wrong answer');
  return { clean, corrupted, answer, wrong, metric: req.metric };
}

/**
 * How a run is opened for patching prompts of T tokens: as many sequences per forward (≤ 64) as fit, with logits for
 * each one's last position (the metric's). With `gradients` (attribution patching beside it), the gradients and
 * one whole sequence's logits [T, V] (its backward) are counted too.
 */
export function patchPlan(config: ModelConfig, T: number, gradients = false): RunPlan {
  const shape = (rows: number): RunPlan['shape'] => ({
    maxBatch: rows,
    maxLen: T,
    logitRows: gradients ? Math.max(rows, T) : rows,
  });
  let rows = MAX_PATCH_BATCH;
  while (rows > 1 && memoryProblem(config, shape(rows), 'inference', { gradients }) !== null) rows = rows >> 1;
  return {
    shape: shape(rows),
    lower: `shorten the prompts (${T} tokens with BOS)`,
    ...(gradients ? { gradients } : {}),
  };
}

/** The request's patching on an opened run (the CLI's and the model worker's one entry). */
export function patchRun(
  r: OpenRun,
  req: PatchRequest,
  hooks: Pick<PatchOptions, 'onProgress' | 'isCancelled'> = {},
): PatchOutputData {
  const ids = patchIds(r.tok, r.model.config, req);
  const tokens = tokenLabels(r.tok, ids.clean);
  const res = patchModel(
    r.model,
    ids,
    {
      what: req.what,
      ...(req.receivers ? { path: { receivers: req.receivers, input: req.input ?? 'q' } } : {}),
      ...hooks,
    },
    tokens.map((t, i) => `${i} ${t}`),
  );
  return {
    tokens: { clean: tokens, corrupted: tokenLabels(r.tok, ids.corrupted) },
    answer: req.answer,
    wrong: req.wrong,
    metric: req.metric,
    clean: res.clean,
    corrupted: res.corrupted,
    maps: [...res.maps],
  };
}
