/**
 * Attention of a run's model on a text: the Attention and Heads tabs' text box, Show
 * Attention for Selection, `attention-lab heads --text`. Every layer's attention
 * probabilities softmax(QKᵀ/√d_k) ("Attention Is All You Need" §3.2.1), the masks that were
 * applied, and every head's scores, for any run — trained here or imported, with or without
 * snapshots. Decoder-only: BOS + the text. Encoder-decoder: the text is the source, and the
 * decoder side is the model's own greedy output for it (teacher-forced back through).
 *
 * The text goes through the decoding path in one prefill (engine/models/stepper.ts): each
 * layer's probabilities are handed out as the layer runs, scored at once in float32, and kept
 * only as 8-bit codes, with max-pooled overviews of maps longer than OVERVIEW_SIDE
 * (src/common/attentionCodec.ts). So GPT-2 small's full 1024-token context costs one forward
 * pass without the output projection, 150 MB of codes (not 600 MB of float32) and none of
 * the training forward's per-layer buffers.
 *
 * Texts longer than the context are cut to fit (BOS + the first L − 1 tokens; a source keeps
 * its first L − 1 tokens and EOS), and `truncation` says so ("Showing the first 63 of 97
 * tokens — the model's context is 64.").
 *
 * Head scores: previous-token, first-token, diagonal, entropy and the cross-attention
 * alignment measured on this text; induction on the run's diagnostic sequences (random
 * tokens repeated twice — a text has no known repeat to measure it on), measured once per
 * opened model and kept with it (`OpenRun.measured`).
 *
 * On a device (WebGPU) each prefill's maps are read back once, after it, and handed out then
 * (`attendTextAsync`; engine/hostReads.ts).
 *
 * Leaves out: beam or sampled targets, and keeping results between requests (the model
 * worker keeps the last text's full maps per run).
 */

import type { FloatArray } from '../../engine/backend';
import { kvHeads } from '../../engine/config';
import { EngineError } from '../../engine/errors';
import type { AttentionStack } from '../../engine/models/heads';
import type { MaskSnapshot } from '../../engine/models/masks';
import {
  causalView,
  combinedView,
  fillCausalMask,
  fillCombinedMask,
  fillPaddingMask,
  paddingView,
  snapshotMask,
} from '../../engine/models/masks';
import type { LayerAttentionSink } from '../../engine/models/stepper';
import { createStepper } from '../../engine/models/stepper';
import type { Batch } from '../../engine/models/inputs';
import { PAD } from '../../engine/tokenizers/special';
import { encodeSqrt8, poolFactor, poolMax } from '../../common/attentionCodec';
import type { AttentionMapData, AttentionSnapshot, HeadScoreData } from '../../protocol/model';
import type { OpenRun } from './openRun';
import type { InductionByLayer } from './headScores';
import { diagnosticRows, measureInduction, probeExtent, scoreLayer } from './headScores';
import { greedyTargetSteps } from './decode';
import type { ReadSteps } from '../../engine/hostReads';
import { runReads, runReadsAsync } from '../../engine/hostReads';
import { unseenNote } from './unseenChars';
import { tokenLabels } from '../../engine/tokenizers/tokenDisplay';
import { promptBos, promptIds } from './promptIds';

/** The attention of one text. */
export interface TextAttention {
  /**
   * What is shown at once: tokens, masks, every head's scores and every layer's map — whole
   * when it fits OVERVIEW_SIDE, else its overview (`pool` set).
   */
  readonly snapshot: AttentionSnapshot;
  /** Every layer's whole map (8-bit codes), for the layer someone looks at. */
  readonly full: readonly AttentionMapData[];
}

/** The attention of `text` (see the file comment for what each model kind shows); on a device, use attendTextAsync. */
export function attendText(r: OpenRun, text: string): TextAttention {
  return runReads(r.model.backendOrThrow(), attendSteps(r, text));
}

/** {@link attendText} on any backend (a model on a device reads each prefill's maps back once). */
export function attendTextAsync(r: OpenRun, text: string): Promise<TextAttention> {
  return runReadsAsync(r.model.backendOrThrow(), attendSteps(r, text));
}

function* attendSteps(r: OpenRun, text: string): ReadSteps<TextAttention> {
  if (text.length === 0)
    throw new EngineError('input/invalid', 'The text is empty; type or select some text to see its attention.');
  const { batch, truncation: cut } = yield* attentionBatch(r, text);
  const { snapshot, full } = yield* attendBatch(r, batch);
  const truncation = [cut, unseenNote(text, r.tok)].filter((n) => n !== null).join(' ') || null;
  return { snapshot: { ...snapshot, text, ...(truncation === null ? {} : { truncation }) }, full };
}

/**
 * The attention of the longest of the run's diagnostic sequences (random tokens, repeated
 * twice), with every head's scores: what `attention-lab heads` measures on a run that has
 * no snapshots (an imported model). Null when the model's context or vocabulary is too small
 * for them.
 */
export function attendDiagnostic(r: OpenRun): TextAttention | null {
  const rows = diagnosticRows(r.model, r.tok.specialIds, r.run.spec.training.seed, diagnosticRoom(r));
  const longest = rows?.reduce((a, b) => (b.batch.T > a.batch.T ? b : a));
  return longest ? runReads(r.model.backendOrThrow(), attendBatch(r, longest.batch)) : null;
}

/** The attention of item 0 of `batch` (the snapshot says source 'selection'; the caller adds its text). */
function* attendBatch(r: OpenRun, batch: Batch): ReadSteps<TextAttention> {
  const extent = probeExtent(batch, r.tok.specialIds);
  const induction = yield* inductionOf(r);
  const full: AttentionMapData[] = [];
  const overview: AttentionMapData[] = [];
  const headScores: HeadScoreData[] = [];
  const kv = kvHeads(r.model.config);
  yield* runAttention(r, batch, (stack, layer, probs, shape) => {
    const [H, R, C] = shape;
    const data = asFloat32(probs, H * R * C);
    headScores.push(...scoreLayer(stack, layer, data, shape, extent, induction, kv));
    const codes = new Uint8Array(H * R * C);
    encodeSqrt8(data, codes);
    const map: AttentionMapData = { stack, layer, shape: [H, R, C], data: codes, kvHeads: kv };
    full.push(map);
    const f = poolFactor(R, C);
    overview.push(
      f === 1
        ? map
        : {
            stack,
            layer,
            shape: [H, Math.ceil(R / f), Math.ceil(C / f)],
            data: poolMax(codes, H, R, C, f),
            pool: f,
            kvHeads: kv,
          },
    );
  });
  const tokens = (ids: Int32Array | undefined, n: number): string[] =>
    ids ? tokenLabels(r.tok, ids.subarray(0, n)) : [];
  const snapshot: AttentionSnapshot = {
    step: r.step,
    srcTokens: tokens(batch.src, batch.S ?? 0),
    tgtTokens: tokens(batch.input, batch.T),
    maps: overview,
    masks: masksOf(r, batch),
    headScores: headScores.sort(byHead),
    source: 'selection',
  };
  return { snapshot, full };
}

/** Heads in the order a model lists them: encoder self, decoder self, decoder cross; by layer, then head. */
const STACK_ORDER: readonly AttentionStack[] = ['encoder.self', 'decoder.self', 'decoder.cross'];
function byHead(a: HeadScoreData, b: HeadScoreData): number {
  return STACK_ORDER.indexOf(a.stack) - STACK_ORDER.indexOf(b.stack) || a.layer - b.layer || a.head - b.head;
}

/** The first n values of a backend array as float32 (the array itself when it is one). */
function asFloat32(a: FloatArray, n: number): Float32Array {
  return a instanceof Float32Array ? a.subarray(0, n) : Float32Array.from(a.subarray(0, n));
}

/**
 * Positions a diagnostic row may take: the context (the cache path), and an encoder-decoder's source as its encoder is
 * planned.
 */
function diagnosticRoom(r: OpenRun): number {
  const m = r.model;
  return m.config.kind === 'encoder-decoder' ? Math.min(m.config.maxLen, m.maxSrcLen) : m.config.maxLen;
}

/**
 * Feeds `batch` (item 0) through the model's decoding path in one prefill, handing out every layer's attention
 * (on a device, when the stepper it yields has settled).
 */
function* runAttention(r: OpenRun, batch: Batch, sink: LayerAttentionSink): ReadSteps<void> {
  const src = batch.src?.subarray(0, batch.S ?? 0);
  const stepper = createStepper(r.model, r.model.backendOrThrow(), {
    maxRows: 1,
    positions: batch.T,
    workspace: r.workspace,
    ...(src ? { src } : {}),
  });
  stepper.prefill(batch.input.subarray(0, batch.T), false, sink);
  yield stepper;
}

/** One layer's attention as a sink receives it. */
type LayerMap = [AttentionStack, number, Float32Array, readonly [number, number, number]];

/**
 * Induction of every head on the run's diagnostic sequences, measured on first use and kept with the opened run.
 * Each row's maps are taken first (on a device, read back once per row), then measured.
 */
function* inductionOf(r: OpenRun): ReadSteps<InductionByLayer | null> {
  if (r.measured.induction) return r.measured.induction;
  const rows = diagnosticRows(r.model, r.tok.specialIds, r.run.spec.training.seed, diagnosticRoom(r));
  if (!rows) return null;
  const maps = new Map<Batch, LayerMap[]>();
  for (const { batch } of rows) {
    const got: LayerMap[] = [];
    yield* runAttention(r, batch, (stack, layer, probs, shape) =>
      got.push([stack, layer, Float32Array.from(probs.subarray(0, shape[0] * shape[1] * shape[2])), shape]),
    );
    maps.set(batch, got);
  }
  r.measured.induction = measureInduction(rows, (batch, sink) => {
    for (const m of maps.get(batch) ?? []) sink(...m);
  });
  return r.measured.induction;
}

/**
 * The masks the model applied, with the shapes the training forward reports them in
 * (Transformer.captureMasks): source padding [1,1,1,S], target padding [1,1,1,T], causal
 * [1,1,T,T], and for the encoder-decoder their combination [1,1,T,T].
 */
function masksOf(r: OpenRun, batch: Batch): AttentionSnapshot['masks'] {
  const { T } = batch;
  const S = batch.S ?? 0;
  const out: MaskSnapshot[] = [];
  if (batch.src) {
    const srcPad = new Uint8Array(S);
    fillPaddingMask(srcPad, batch.src, 1, S);
    out.push(snapshotMask('source.padding', paddingView(srcPad, S), 1, 1, S));
  }
  const tgtPad = new Uint8Array(T);
  fillPaddingMask(tgtPad, batch.input, 1, T, r.model.padId);
  out.push(snapshotMask('target.padding', paddingView(tgtPad, T), 1, 1, T));
  const causal = new Uint8Array(T * T);
  const window = r.model.config.slidingWindow;
  fillCausalMask(causal, T, window);
  out.push(snapshotMask('decoder.causal', causalView(causal, T), 1, T, T));
  if (batch.src) {
    const combined = new Uint8Array(T * T);
    fillCombinedMask(combined, tgtPad, 1, T, window);
    out.push(snapshotMask('decoder.self', combinedView(combined, T), 1, T, T));
  }
  return out.map((m) => ({ name: m.name, shape: m.shape, data: m.data }));
}

/**
 * The sentence saying a text of `total` tokens was cut to its first `shown` (context `L`):
 * the one rule and wording of every view of a text (attention, heads, logit lens, ablation).
 */
export function truncationNote(shown: number, total: number, L: number, what: string): string {
  return `Showing the first ${shown} of ${total} ${what} tokens — the model's context is ${L}.`;
}

/** The one-sequence batch whose attention is shown for `text`, and the note when the text was cut. */
function* attentionBatch(r: OpenRun, text: string): ReadSteps<{ batch: Batch; truncation: string | null }> {
  const { model, tok } = r;
  const { bos, eos } = tok.specialIds; // GPT-2's <|endoftext|> in its vocabulary
  const L = model.config.maxLen; // the context: the text goes through the key/value-cache path, not the planned forward
  if (model.config.kind === 'encoder-decoder') {
    const full = tok.encode(text, { eos: true });
    const cut = full.length > L;
    const src = cut ? Int32Array.of(...full.subarray(0, L - 1), eos) : full;
    const input = Int32Array.of(
      bos,
      ...(yield* greedyTargetSteps(model, tok.specialIds, src, r.workspace)).slice(0, L - 1),
    );
    const targets = Int32Array.of(...input.subarray(1), eos);
    const truncation = cut ? truncationNote(L - 1, full.length - 1, L, 'source') : null;
    return { batch: { B: 1, T: input.length, input, targets, S: src.length, src }, truncation };
  }
  const body = promptIds(tok, text); // BOS first where the run's prompts start with it
  const input = body.slice(0, L);
  const targets = Int32Array.of(...input.subarray(1), PAD);
  const typed = promptBos(tok) ? 1 : 0; // BOS is not one of the text's tokens
  const truncation = body.length > L ? truncationNote(L - typed, body.length - typed, L, 'text') : null;
  return { batch: { B: 1, T: input.length, input, targets }, truncation };
}
