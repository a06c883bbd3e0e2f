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
 * forwards when asked (CancelledError). Asked for `top`, each run also keeps its most likely next
 * tokens with their probabilities (softmax of the same logits the metric reads) — the clean and
 * corrupted runs' and every patched run's of a sweep of at most MAX_TOP_CELLS cells — so a cell
 * shows what the patched model predicts without running it again.
 *
 * An encoder-decoder run: the clean and corrupted inputs are two SOURCE sentences of the same
 * token length (each with EOS, as the model reads a source), and both runs share one target
 * prefix (BOS + its tokens; empty: BOS alone, the metric then on the first target token), the
 * decoder's input; the metric is at the decoder's last position. Every sweep covers both stacks,
 * in maps that name them (`stack`; row labels "enc L1", "dec L1", "dec L1 cross H2"):
 *   resid      enc_resid_pre per (encoder layer, source position); resid_pre per (decoder layer,
 *              target position)
 *   attn       enc_attn_out per (encoder layer, source position); each decoder layer's self-
 *              attention (attn_out) and cross-attention (cross_out) per target position
 *   mlp        enc_mlp_out and mlp_out likewise
 *   heads      one map: encoder heads (enc_z), decoder self-attention (z) and cross-attention heads
 *              (cross_z), each at every position of its stack, per (layer, head)
 *   heads-pos  the encoder's heads per source position; the decoder's self and cross heads per
 *              target position
 *   path       as above over every attention in the order the forward runs them: the encoder's
 *              layers, then each decoder layer's self- and cross-attention. Receivers name their
 *              attention (`attention`: encoder, self, cross) and input X: enc_X, X or cross_X (a
 *              cross-attention's k and v are its projections of the encoder output, S rows). Step 1
 *              freezes every head of every attention (enc_z, z, cross_z) at the corrupted run but the
 *              sender; senders are every head of the attentions before the last receiver's (rows
 *              "enc L1", "dec L1 self", "dec L1 cross", …; columns heads).
 * With a shared target, the decoder's embeddings (resid_pre of decoder layer 1) are the same in
 * both runs, so that row is 0: the source reaches the decoder only through cross-attention. For
 * the same reason, in path patching an encoder head reaches a decoder receiver only through a
 * cross-attention's keys or values (every cross-attention head is frozen), and a decoder head
 * reaches no cross-attention key or value: those cells are 0.
 *
 * Leaves out: noising (patching corrupted into clean), and drawing the results (the maps are rows
 * × columns of numbers with their labels).
 */

import type { ModelConfig } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import type { FloatArray } from '../../engine/backend';
import { memoryProblem } from '../../engine/models/estimate';
import type { ForwardHook, HookPoint } from '../../engine/models/hooks';
import type { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { nextTokenLabel, tokenLabels } from '../../engine/tokenizers/tokenDisplay';
import type {
  PatchMapData,
  PatchMetric,
  PatchOutputData,
  PatchTopTokenData,
  PatchWhat,
  PathInput,
} from '../../protocol/patching';
import { MAX_PATCH_TOP, MAX_TOP_CELLS } from '../../protocol/patching';
import { CancelledError } from '../base/cancelled';
import type { OpenRun, RunPlan } from './openRun';
import { promptBos, promptIds, withBosNote } from './promptIds';

export type { PatchMetric, PatchWhat, PathInput };

/** A head by 0-based layer and head (an encoder-decoder's: of `attention`, absent = the decoder's self-attention). */
export interface HeadAt {
  readonly layer: number;
  readonly head: number;
  readonly attention?: 'encoder' | 'self' | 'cross';
}

/** The token ids of a patching experiment. */
export interface PatchIds {
  /**
   * BOS + the clean prompt's tokens; the corrupted prompt's, the same length. An encoder-decoder's: the clean and
   * corrupted sources (their tokens + EOS).
   */
  readonly clean: Int32Array;
  readonly corrupted: Int32Array;
  /** An encoder-decoder's target prefix (BOS + its tokens), the decoder's input of every run; else absent. */
  readonly target?: Int32Array;
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
  /**
   * Keep each run's `top` most likely next tokens (0 or absent: none): the clean and corrupted
   * runs' and, in sweeps of at most MAX_TOP_CELLS cells, every patched run's.
   */
  readonly top?: number;
  /** The most cells a sweep keeps top tokens for (default MAX_TOP_CELLS). */
  readonly maxTopCells?: number;
  /** How a predicted token id reads (default: the id as text). */
  readonly tokenLabel?: (id: number) => string;
}

/** One sweep's results: a heatmap of rows × cols, row-major. */
export type PatchMap = PatchMapData;

/** The metric on the clean and corrupted prompts, and each sweep's map. */
export interface PatchResult {
  readonly clean: number;
  readonly corrupted: number;
  readonly maps: readonly PatchMap[];
  /** With `top`: the clean and the corrupted run's top tokens. */
  readonly top?: { readonly clean: PatchTopTokenData[]; readonly corrupted: PatchTopTokenData[] };
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

/** A predicted token id and its probability. */
interface Prediction {
  readonly id: number;
  readonly p: number;
}

/** The `k` most likely tokens of the logits row `row` ([V] at row·V), most likely first (ties: the lower id). */
function topOf(logits: FloatArray, row: number, V: number, k: number): Prediction[] {
  const at = row * V;
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[at + v] as number);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((logits[at + v] as number) - max);
  const ids: number[] = [];
  for (let v = 0; v < V; v++) {
    const x = logits[at + v] as number;
    if (ids.length === k) {
      if (x <= (logits[at + (ids[k - 1] as number)] as number)) continue;
      ids.pop();
    }
    let i = ids.length;
    while (i > 0 && x > (logits[at + (ids[i - 1] as number)] as number)) i--;
    ids.splice(i, 0, v);
  }
  return ids.map((id) => ({ id, p: Math.exp((logits[at + id] as number) - max) / sum }));
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

/** What a batch of runs gives: each run's metric and, where asked, its top tokens. */
interface Runs {
  readonly metric: number[];
  readonly top: Prediction[][];
}

/**
 * Runs `B` copies of `input` (an encoder-decoder's: the source, the decoder reading `ids.target`) with `hook`;
 * the metric of each and its `k` top tokens (none when k = 0).
 */
function forwardCopies(
  model: Transformer,
  input: Int32Array,
  B: number,
  ids: PatchIds,
  hook: ForwardHook,
  k = 0,
): Runs {
  const dec = ids.target ?? input;
  const T = dec.length;
  const inp = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    inp.set(dec, b * T);
    targets.set(dec.subarray(1), b * T);
    targets[b * T + T - 1] = dec[0] as number;
  }
  const S = input.length;
  const src = ids.target ? new Int32Array(B * S) : null;
  if (src) for (let b = 0; b < B; b++) src.set(input, b * S);
  // Only each copy's last position is read: no loss, and the output projection runs on those rows alone.
  model.forward(
    { B, T, input: inp, targets, ...(src ? { S, src } : {}) },
    { train: false, labelSmoothing: 0, hook, loss: false },
  );
  const V = model.config.vocabSize;
  const runs: Runs = { metric: [], top: [] };
  for (let b0 = 0; b0 < B; b0 += model.logitRows) {
    const rows = Array.from({ length: Math.min(model.logitRows, B - b0) }, (_, i) => (b0 + i) * T + T - 1);
    const logits = model.logitsAt(rows);
    rows.forEach((_, i) => {
      runs.metric.push(metricAt(logits, i, V, ids));
      if (k > 0) runs.top.push(topOf(logits, i, V, k));
    });
  }
  return runs;
}

/** The metric of `input` alone, its `k` top tokens and every activation of its forward. */
function capture(
  model: Transformer,
  input: Int32Array,
  ids: PatchIds,
  k: number,
): { metric: number; top: Prediction[]; acts: Acts } {
  const acts: Acts = new Map();
  const runs = forwardCopies(
    model,
    input,
    1,
    ids,
    (site, data) => {
      acts.set(actKey(site.point, site.layer), Float64Array.from(data));
    },
    k,
  );
  return { metric: runs.metric[0] as number, top: runs.top[0] ?? [], acts };
}

/**
 * Runs `jobs` on the corrupted prompt, batched; each one's metric and its `k` top tokens (none when
 * k = 0). `done` counts every run finished.
 */
function runJobs(
  model: Transformer,
  ids: PatchIds,
  jobs: readonly Job[],
  progress: { done: number; readonly total: number },
  opts: PatchOptions,
  k = 0,
): Runs {
  const out: Runs = { metric: [], top: [] };
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
      const T = site.T; // positions of the point's stack
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
    const runs = forwardCopies(model, ids.corrupted, batch.length, ids, hook, k);
    out.metric.push(...runs.metric);
    out.top.push(...runs.top);
    progress.done += batch.length;
    opts.onProgress?.(progress.done, progress.total);
  }
  return out;
}

/** `n` labels numbered from 1, as people see layers and heads: L1, L2, … */
function labels(n: number, prefix: string): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
}

/** The map of `runs` ([rows × cols]) normalised by the clean and corrupted metrics; its top tokens named by `label`. */
function map(
  what: PatchWhat,
  rows: string[],
  cols: string[],
  runs: Runs,
  clean: number,
  corrupted: number,
  label: (id: number) => string,
): PatchMap {
  const d = clean - corrupted;
  const values = runs.metric;
  return {
    what,
    rows,
    cols,
    values,
    normalised: values.map((v) => (v - corrupted) / d),
    ...(runs.top.length ? { top: runs.top.map((t) => named(t, label)) } : {}),
  };
}

/** Predictions with their tokens' labels. */
function named(top: readonly Prediction[], label: (id: number) => string): PatchTopTokenData[] {
  return top.map(({ id, p }) => ({ token: label(id), p }));
}

/** 0 .. n − 1. */
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Position labels "0", "1", … */
const numbered = (n: number): string[] => range(n).map(String);

/**
 * The patching sweeps of `opts.what` on `model` (planned for at least one sequence of the
 * prompts' length): see the file comment. Column labels of positions are `posLabels` (one per
 * token of the prompts; an encoder-decoder's: of the sources) and, for an encoder-decoder's
 * decoder, `targetLabels` (one per token of the target).
 */
export function patchModel(
  model: Transformer,
  ids: PatchIds,
  opts: PatchOptions,
  posLabels: readonly string[] = numbered(ids.clean.length),
  targetLabels: readonly string[] = numbered(ids.target?.length ?? 0),
): PatchResult {
  const cfg = model.config;
  const encdec = cfg.kind === 'encoder-decoder';
  checkIds(ids, cfg);
  if (!encdec && opts.path?.receivers.some((r) => r.attention !== undefined && r.attention !== 'self'))
    throw new EngineError(
      'input/invalid',
      'Encoder and cross-attention receivers are for an encoder-decoder run; this run is decoder-only.',
    );
  const T = ids.clean.length;
  const L = cfg.nDecoderLayers;
  const attn = (model.decoder[0] as Transformer['decoder'][number]).selfAttn;
  const H = attn.H;
  const k = opts.top ?? 0;
  if (!Number.isInteger(k) || k < 0 || k > MAX_PATCH_TOP)
    throw new EngineError('input/invalid', `Ask for 0 to ${MAX_PATCH_TOP} top tokens per run, not ${k}.`);
  const label = opts.tokenLabel ?? String;
  /** The top tokens a sweep of `cells` runs keeps: none past maxTopCells. */
  const kOf = (cells: number): number => (cells <= (opts.maxTopCells ?? MAX_TOP_CELLS) ? k : 0);
  const clean = capture(model, ids.clean, ids, k);
  const corrupt = capture(model, ids.corrupted, ids, k);
  if (clean.metric === corrupt.metric)
    throw new EngineError(
      'input/invalid',
      `The clean and corrupted prompts give the same ${ids.metric} (${clean.metric}); ` +
        'choose prompts the model answers differently.',
    );
  const src = (point: HookPoint, layer: number): Float64Array => clean.acts.get(actKey(point, layer)) as Float64Array;
  const what = [...new Set(opts.what)];
  const top = k > 0 ? { top: { clean: named(clean.top, label), corrupted: named(corrupt.top, label) } } : {};
  if (encdec) {
    const tops = { kOf, label };
    const maps = encDecMaps(model, ids, opts, what, clean, corrupt, posLabels, targetLabels, tops);
    return { clean: clean.metric, corrupted: corrupt.metric, maps, ...top };
  }
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
    const v = runJobs(model, ids, jobs, progress, opts, kOf(jobs.length));
    maps.push(map(w, layerRows, [...posLabels], v, clean.metric, corrupt.metric, label));
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
      const v = runJobs(model, ids, jobs, progress, opts, kOf(jobs.length));
      maps.push(map(w, layerRows, labels(H, 'H'), v, clean.metric, corrupt.metric, label));
    } else if (w === 'heads-pos') {
      const jobs: Job[] = [];
      const rows: string[] = [];
      for (let layer = 0; layer < L; layer++)
        for (let head = 0; head < H; head++) {
          rows.push(`L${layer + 1}H${head + 1}`);
          for (let pos = 0; pos < T; pos++)
            jobs.push({ patches: [{ point: 'z', layer, head, pos, src: src('z', layer) }] });
        }
      const v = runJobs(model, ids, jobs, progress, opts, kOf(jobs.length));
      maps.push(map(w, rows, [...posLabels], v, clean.metric, corrupt.metric, label));
    } else if (w === 'path' && path) {
      const v = pathPatch(model, ids, path, clean.acts, corrupt.acts, progress, opts, kOf(path.senders.length));
      const m = map(w, labels(path.senderLayers, 'L'), labels(H, 'H'), v, clean.metric, corrupt.metric, label);
      maps.push({
        ...m,
        path: { receivers: path.receivers.map((r) => ({ layer: r.layer, head: r.head })), input: path.input },
      });
    }
  }
  return {
    clean: clean.metric,
    corrupted: corrupt.metric,
    maps,
    ...top,
  };
}

/** A row of an encoder-decoder's map: its label and the point and layer it patches. */
interface PointRow {
  readonly label: string;
  readonly point: HookPoint;
  readonly layer: number;
}

/** An encoder-decoder's sweeps (see the file comment): the maps of `what`, in its order, each stack's apart. */
function encDecMaps(
  model: Transformer,
  ids: PatchIds,
  opts: PatchOptions,
  what: readonly PatchWhat[],
  cleanRun: { metric: number; acts: Acts },
  corruptRun: { metric: number; acts: Acts },
  srcLabels: readonly string[],
  tgtLabels: readonly string[],
  tops: { readonly kOf: (cells: number) => number; readonly label: (id: number) => string },
): PatchMap[] {
  const Le = model.encoder.length;
  const L = model.decoder.length;
  const H = model.config.nHeads;
  const S = ids.clean.length;
  const T = (ids.target as Int32Array).length;
  const clean = cleanRun.metric;
  const corrupted = corruptRun.metric;
  const src = (point: HookPoint, layer: number): Float64Array =>
    cleanRun.acts.get(actKey(point, layer)) as Float64Array;
  const path = what.includes('path') ? encDecPathPlan(opts, Le, L, H) : null;
  const count: Record<PatchWhat, number> = {
    resid: Le * S + L * T,
    attn: Le * S + 2 * L * T,
    mlp: Le * S + L * T,
    heads: (Le + 2 * L) * H,
    'heads-pos': H * (Le * S + 2 * L * T),
    path: path ? 2 * path.senders.length : 0,
  };
  const progress = { done: 0, total: what.reduce((s, w) => s + count[w], 0) };
  const maps: PatchMap[] = [];
  const push = (w: PatchWhat, stack: 'encoder' | 'decoder' | null, rows: string[], cols: string[], jobs: Job[]) => {
    const runs = runJobs(model, ids, jobs, progress, opts, tops.kOf(jobs.length));
    const m = map(w, rows, cols, runs, clean, corrupted, tops.label);
    maps.push(stack ? { ...m, stack } : m);
  };
  const enc = (point: HookPoint): PointRow[] =>
    range(Le).map((layer) => ({ label: `enc L${layer + 1}`, point, layer }));
  const dec = (points: readonly (readonly [HookPoint, string])[]): PointRow[] =>
    range(L).flatMap((layer) => points.map(([point, name]) => ({ label: `dec L${layer + 1}${name}`, point, layer })));
  const selfCross = [
    ['z', ' self'],
    ['cross_z', ' cross'],
  ] as const;
  /** Each row's point at each of `n` positions. */
  const perPos = (w: PatchWhat, stack: 'encoder' | 'decoder', rows: PointRow[], n: number, cols: readonly string[]) =>
    push(
      w,
      stack,
      rows.map((r) => r.label),
      [...cols],
      rows.flatMap((r) =>
        range(n).map((pos) => ({
          patches: [{ point: r.point, layer: r.layer, head: null, pos, src: src(r.point, r.layer) }],
        })),
      ),
    );
  /** Each head of each row's z at each of `n` positions. */
  const headsPos = (stack: 'encoder' | 'decoder', rows: PointRow[], n: number, cols: readonly string[]) => {
    const heads = rows.flatMap((r) => range(H).map((head) => ({ ...r, head, label: `${r.label} H${head + 1}` })));
    push(
      'heads-pos',
      stack,
      heads.map((r) => r.label),
      [...cols],
      heads.flatMap((r) =>
        range(n).map((pos) => ({
          patches: [{ point: r.point, layer: r.layer, head: r.head, pos, src: src(r.point, r.layer) }],
        })),
      ),
    );
  };
  for (const w of what) {
    if (w === 'resid') {
      perPos(w, 'encoder', enc('enc_resid_pre'), S, srcLabels);
      perPos(w, 'decoder', dec([['resid_pre', '']]), T, tgtLabels);
    } else if (w === 'attn') {
      perPos(w, 'encoder', enc('enc_attn_out'), S, srcLabels);
      const rows = dec([
        ['attn_out', ' self'],
        ['cross_out', ' cross'],
      ]);
      perPos(w, 'decoder', rows, T, tgtLabels);
    } else if (w === 'mlp') {
      perPos(w, 'encoder', enc('enc_mlp_out'), S, srcLabels);
      perPos(w, 'decoder', dec([['mlp_out', '']]), T, tgtLabels);
    } else if (w === 'heads') {
      const rows = [...enc('enc_z'), ...dec(selfCross)];
      const jobs = rows.flatMap((r) =>
        range(H).map((head) => ({
          patches: [{ point: r.point, layer: r.layer, head, pos: null, src: src(r.point, r.layer) }],
        })),
      );
      push(
        w,
        null,
        rows.map((r) => r.label),
        labels(H, 'H'),
        jobs,
      );
    } else if (w === 'heads-pos') {
      headsPos('encoder', enc('enc_z'), S, srcLabels);
      headsPos('decoder', dec(selfCross), T, tgtLabels);
    } else if (w === 'path' && path) {
      const attentions = allAttentions(Le, L);
      const z = (acts: Acts, a: AttentionAt): Float64Array =>
        acts.get(actKey(Z_POINT[a.attention], a.layer)) as Float64Array;
      const inputOf = (a: AttentionAt): HookPoint => inputPoint(a.attention, path.input);
      const kvGroup = (model.decoder[0] as Transformer['decoder'][number]).selfAttn;
      // 1: the sender's z clean, every other head of every attention frozen at the corrupted run; keep the receivers'
      // input
      const first: Job[] = path.senders.map((s) => ({
        patches: [
          ...attentions.map((a) => ({
            point: Z_POINT[a.attention],
            layer: a.layer,
            head: null,
            pos: null,
            src: z(corruptRun.acts, a),
          })),
          { point: Z_POINT[s.attention], layer: s.layer, head: s.head, pos: null, src: z(cleanRun.acts, s) },
        ],
        keep: new Map(path.receivers.map((r) => [actKey(inputOf(r), r.layer), null])),
      }));
      runJobs(model, ids, first, progress, opts);
      // 2: the corrupted run with the receivers' input replaced by what 1 kept
      const second: Job[] = first.map((job) => ({
        patches: path.receivers.map((r) => ({
          point: inputOf(r),
          layer: r.layer,
          head: path.input === 'q' ? r.head : kvGroup.kvGroup(r.head),
          pos: null,
          src: job.keep?.get(actKey(inputOf(r), r.layer)) as Float64Array,
        })),
      }));
      const m = map(
        w,
        path.senderRows.map(attentionLabel),
        labels(H, 'H'),
        runJobs(model, ids, second, progress, opts, tops.kOf(path.senders.length)),
        clean,
        corrupted,
        tops.label,
      );
      maps.push({
        ...m,
        path: {
          receivers: path.receivers.map((r) => ({ layer: r.layer, head: r.head, attention: r.attention })),
          input: path.input,
        },
      });
    }
  }
  return maps;
}

/** An attention of an encoder-decoder: the encoder's (self-attention) or a decoder layer's self- or cross-attention. */
interface AttentionAt {
  readonly attention: 'encoder' | 'self' | 'cross';
  readonly layer: number;
}

const Z_POINT = { encoder: 'enc_z', self: 'z', cross: 'cross_z' } as const;

/** The hook point of input X (q, k, v) of an attention. */
function inputPoint(attention: AttentionAt['attention'], X: PathInput): HookPoint {
  return attention === 'encoder' ? `enc_${X}` : attention === 'cross' ? `cross_${X}` : X;
}

/** Its place in the forward: the encoder's layers first, then each decoder layer's self-, then cross-attention. */
function attentionOrder(a: AttentionAt, Le: number): number {
  return a.attention === 'encoder' ? a.layer : Le + 2 * a.layer + (a.attention === 'cross' ? 1 : 0);
}

/** "enc L1", "dec L1 self", "dec L1 cross" (a map's row). */
function attentionLabel(a: AttentionAt): string {
  return a.attention === 'encoder' ? `enc L${a.layer + 1}` : `dec L${a.layer + 1} ${a.attention}`;
}

/** Every attention of an encoder-decoder of Le encoder and L decoder layers, in the forward's order. */
function allAttentions(Le: number, L: number): AttentionAt[] {
  return [
    ...range(Le).map((layer) => ({ attention: 'encoder' as const, layer })),
    ...range(L).flatMap((layer) => [
      { attention: 'self' as const, layer },
      { attention: 'cross' as const, layer },
    ]),
  ];
}

/** An encoder-decoder's path patching: its receivers (attention filled in), input, senders and their rows. */
interface EncDecPathPlan {
  readonly receivers: readonly (AttentionAt & { readonly head: number })[];
  readonly input: PathInput;
  readonly senderRows: readonly AttentionAt[];
  readonly senders: readonly (AttentionAt & { readonly head: number })[];
}

function encDecPathPlan(opts: PatchOptions, Le: number, L: number, H: number): EncDecPathPlan {
  const p = opts.path;
  if (!p || p.receivers.length === 0)
    throw new EngineError(
      'input/invalid',
      'Path patching needs receiver heads and their input (q, k or v); name them, e.g. receivers cross:L2H1 with ' +
        'input k.',
    );
  const receivers = p.receivers.map((r) => ({ ...r, attention: r.attention ?? ('self' as const) }));
  for (const r of receivers) {
    const layers = r.attention === 'encoder' ? Le : L;
    if (
      !Number.isInteger(r.layer) ||
      r.layer < 0 ||
      r.layer >= layers ||
      !Number.isInteger(r.head) ||
      r.head < 0 ||
      r.head >= H
    )
      throw new EngineError(
        'input/invalid',
        `No receiver head ${attentionLabel(r)} H${r.head + 1}; this model's ` +
          `${r.attention === 'encoder' ? 'encoder' : 'decoder'} has layers 1..${layers} and heads 1..${H}.`,
      );
  }
  const last = Math.max(...receivers.map((r) => attentionOrder(r, Le)));
  if (last === 0)
    throw new EngineError(
      'input/invalid',
      "Every receiver is in the encoder's layer 1, so no head sends to them; choose receivers in a later attention.",
    );
  const senderRows = allAttentions(Le, L).filter((a) => attentionOrder(a, Le) < last);
  return {
    receivers,
    input: p.input,
    senderRows,
    senders: senderRows.flatMap((a) => range(H).map((head) => ({ ...a, head }))),
  };
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
  k: number,
): Runs {
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
  return runJobs(model, ids, second, progress, opts, k);
}

function checkIds(ids: PatchIds, cfg: ModelConfig): void {
  const encdec = cfg.kind === 'encoder-decoder';
  const what = encdec ? 'sources' : 'prompts';
  if (ids.clean.length !== ids.corrupted.length || ids.clean.length === 0)
    throw new EngineError(
      'input/invalid',
      `The clean and corrupted ${what} must have the same number of tokens; ` +
        `they have ${ids.clean.length} and ${ids.corrupted.length}.`,
    );
  if (encdec !== (ids.target !== undefined) || ids.target?.length === 0)
    throw new EngineError(
      'input/invalid',
      encdec
        ? 'An encoder-decoder is patched on two sources and one target prefix (BOS at least); give the target.'
        : 'A decoder-only run reads prompts, not a target prefix; leave the target out.',
    );
  const V = cfg.vocabSize;
  const outside = (xs: Iterable<number>, n: number): number | undefined =>
    [...xs].find((t) => !Number.isInteger(t) || t < 0 || t >= n);
  const bad = encdec
    ? (outside([ids.answer, ids.wrong ?? 0, ...(ids.target ?? [])], V) ??
      outside([...ids.clean, ...ids.corrupted], cfg.srcVocabSize))
    : outside([ids.answer, ids.wrong ?? 0, ...ids.clean, ...ids.corrupted], V);
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
  /** Each run's top tokens to keep (see PatchOptions.top). */
  readonly top?: number;
  /** An encoder-decoder's shared target prefix (without BOS; absent: BOS alone); clean and corrupted are sources. */
  readonly target?: string;
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
  const encdec = config.kind === 'encoder-decoder';
  if (!encdec && req.target !== undefined)
    throw new EngineError(
      'input/invalid',
      'A target prefix is for an encoder-decoder run; this run is decoder-only: give prompts only.',
    );
  // A decoder-only prompt: BOS + its tokens; an encoder-decoder source: its tokens + EOS (as the model reads one).
  const read = (text: string): Int32Array => (encdec ? tok.encode(text, { eos: true }) : promptIds(tok, text));
  const clean = read(req.clean);
  const corrupted = read(req.corrupted);
  if (clean.length !== corrupted.length) {
    const skip = encdec || !promptBos(tok) ? 0 : 1; // BOS is not a token the user typed
    const a = tokenLabels(tok, clean).slice(skip);
    const b = tokenLabels(tok, corrupted).slice(skip);
    const n = Math.max(a.length, b.length);
    const diff: string[] = [];
    for (let i = 0; i < n && diff.length < 6; i++)
      if (a[i] !== b[i]) diff.push(`${i + 1}: ${JSON.stringify(a[i] ?? '')} vs ${JSON.stringify(b[i] ?? '')}`);
    throw new EngineError(
      'input/invalid',
      `The clean ${encdec ? 'source' : 'prompt'} is ${a.length} tokens and the corrupted ${b.length}; they ` +
        `differ at ${diff.join(', ')}. Give ${encdec ? 'sources' : 'prompts'} of the same token length.`,
    );
  }
  if (clean.length > config.maxLen)
    throw new EngineError(
      'input/invalid',
      `The ${encdec ? 'sources (with EOS)' : `prompts${withBosNote(tok)}`} are ${clean.length} tokens, ` +
        `over the context of ${config.maxLen}; shorten them.`,
    );
  const target = encdec ? Int32Array.of(bos, ...tok.encode(req.target ?? '')) : undefined;
  if (target && target.length > config.maxLen)
    throw new EngineError(
      'input/invalid',
      `The target (with BOS) is ${target.length} tokens, over the context of ${config.maxLen}; shorten it.`,
    );
  const answer = oneToken(tok, req.answer, 'answer');
  const wrong = req.wrong === null ? null : oneToken(tok, req.wrong, 'wrong answer');
  return { clean, corrupted, ...(target ? { target } : {}), answer, wrong, metric: req.metric };
}

/** The longest sequence a patching experiment feeds the model: the prompts, or a source and the target. */
export function patchLength(ids: PatchIds): number {
  return Math.max(ids.clean.length, ids.target?.length ?? 0);
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
  const target = ids.target ? tokenLabels(r.tok, ids.target) : null;
  const numberedLabels = (ts: string[]): string[] => ts.map((t, i) => `${i} ${t}`);
  const res = patchModel(
    r.model,
    ids,
    {
      what: req.what,
      ...(req.receivers ? { path: { receivers: req.receivers, input: req.input ?? 'q' } } : {}),
      ...(req.top
        ? { top: req.top, tokenLabel: (id: number) => nextTokenLabel(r.tok, ids.target ?? ids.corrupted, id) }
        : {}),
      ...hooks,
    },
    numberedLabels(tokens),
    target ? numberedLabels(target) : [],
  );
  return {
    tokens: { clean: tokens, corrupted: tokenLabels(r.tok, ids.corrupted), ...(target ? { target } : {}) },
    answer: req.answer,
    wrong: req.wrong,
    metric: req.metric,
    clean: res.clean,
    corrupted: res.corrupted,
    maps: [...res.maps],
    ...(res.top ? { top: res.top } : {}),
  };
}
