/**
 * What one request on a trained model needs its model planned for: the one rule the model
 * worker (the dashboard's views, the editor's commands) and the CLI's commands share, so a
 * request that works in one works in the other. A model's forward buffers are planned up
 * front (engine/models/plan.ts) for a batch and a length, and on the WebAssembly backend
 * everything must fit in 4 GiB: GPT-2 small planned for 4 sequences of 1024 positions needs
 * 7.7 GiB, for the one sequence of a 1000-token text 2.8 GiB. So each request is planned for
 * what it runs:
 *
 * - attention (the Attention and Heads text, `heads --text`, the diagnostic sequences) and
 *   decoding run the key/value-cache path, whose buffers are its own (the beam width's rows
 *   over the context): the forward pass is planned for one position, an encoder-decoder's
 *   encoder for the source;
 * - the logit lens, ablation and scoring run one forward pass of one sequence: planned for
 *   the text's tokens (at most the context), its logits held for a chunk of positions at a time
 *   (logitChunkRows: 55 of Qwen2.5's 151,936-token vocabulary, where a 1,024-token text's
 *   whole [T, V] would take 622 MB, twice), and its layers reusing two sets of buffers
 *   (ModelShape.activations): the lens keeps each layer's stream, scoring only the top;
 * - an export scores its short example text (64 positions).
 *
 * Lengths are rounded up to a power of two (at least 64, at most the context), so the model
 * worker, which keeps a model open and reopens it only when a request needs more than it was
 * planned for (`covers`, `widened`), reopens a few times at most. When it still does not fit,
 * the advice names what the person can change where they asked: the text's length or the beam
 * width — never a flag of another front door or a setting of the model.
 *
 * Leaves out: evaluation and training (their batches are their data's), and opening itself
 * (inference/openRun.ts).
 */

import type { ModelConfig } from '../../engine/config';
import type { Tokenizer } from '../../engine/tokenizers/special';
import type { Backend } from '../../engine/backend';
import type { LabFs } from '../files/labFs';
import { readCheckpointConfig } from '../runs/checkpoint';
import type { OpenRun, RunPlan } from './openRun';
import { openRun } from './openRun';
import { readTokenizer } from '../runs/tokenizerFile';
import { DIAGNOSTIC_MAX_LEN } from './headScores';
import { memoryProblem } from '../../engine/models/estimate';
import type { KeptActivations } from '../../engine/models/inputs';
import { logitChunkRows } from '../../engine/models/inputs';
import { MAX_FINISHING_TOKENS } from '../../engine/decode/stepperContract';
import { MAX_DECODE_TOKENS } from './decode';
import type { LensInput } from './lens';

/** A request on a trained model, as far as planning its model goes. */
export type InferenceRequest =
  | { readonly job: 'attend'; readonly text: string }
  | { readonly job: 'diagnostic' }
  | { readonly job: 'decode'; readonly input: string; readonly beam: number }
  | { readonly job: 'lens'; readonly input: LensInput }
  | { readonly job: 'score'; readonly text: string; readonly source?: string }
  | { readonly job: 'export' };

/**
 * What a request's forward keeps (ModelShape.activations): the lens each layer's stream, scoring and ablation only the
 * top, and the key/value-cache path (attention, decoding) none of it — their layers reuse buffers, so Qwen2.5-0.5B's
 * lens and scores over 1,024 tokens fit where every layer's own activations (3.9 GiB) would not, and a model opened
 * for one serves the others. Only jobs that plan for themselves (patching, attribution: backward) keep every layer's.
 */
const STREAMS: KeptActivations = 'streams';
const TOP: KeptActivations = 'top';
/** Which kept activations serve which: a model that keeps more serves a job that needs less. */
const KEPT_RANK: Readonly<Record<KeptActivations, number>> = { top: 0, streams: 1, backward: 2 };

/** Smallest length planned: short texts share one plan. */
const MIN_PLANNED = 64;

/** n rounded up to a power of two, at least MIN_PLANNED, at most `context`. */
function rounded(n: number, context: number): number {
  let p = MIN_PLANNED;
  while (p < n) p *= 2;
  return Math.min(context, p);
}

/** "1 token" / "1,000 tokens". */
function tokens(n: number): string {
  return `${n.toLocaleString('en-US')} token${n === 1 ? '' : 's'}`;
}

/** The plan `req` needs of a model of `config` with tokenizer `tok` (see the file comment). */
export function planRequest(config: ModelConfig, tok: Tokenizer, req: InferenceRequest): RunPlan {
  const L = config.maxLen;
  const encDec = config.kind === 'encoder-decoder';
  /** Source positions of `text` (tokens + EOS), at most the context. */
  const srcOf = (text: string): number => Math.min(L, tok.encode(text, { eos: true }).length);
  const shorten = (n: number): string => `shorten the text (${tokens(n)})`;
  switch (req.job) {
    case 'attend': {
      // The cache path; an encoder-decoder's source (and the diagnostic sequences) go through the forward's encoder.
      const n = tok.encode(req.text).length;
      const src = encDec ? { maxSrcLen: rounded(Math.max(srcOf(req.text), DIAGNOSTIC_MAX_LEN), L) } : {};
      const plan = {
        shape: { maxBatch: 1, maxLen: 1, activations: TOP, ...src },
        decodeRows: 1,
        decodePositions: rounded(1 + n, L),
        lower: shorten(n),
      };
      // The lens and scores of the same text usually follow: planning their forward now spares
      // a reopening (planned memory no request touches costs address space, not RAM), when it fits.
      const rows = rounded(1 + n, L);
      const ahead = {
        ...plan,
        shape: {
          ...plan.shape,
          maxLen: rows,
          logitRows: logitChunkRows(config, rows),
          activations: STREAMS,
        },
      };
      return memoryProblem(config, ahead.shape, 'inference', {
        decodeRows: 1,
        decodePositions: plan.decodePositions,
      }) === null
        ? ahead
        : plan;
    }
    case 'diagnostic':
      return {
        shape: {
          maxBatch: 1,
          maxLen: 1,
          activations: TOP,
          ...(encDec ? { maxSrcLen: rounded(DIAGNOSTIC_MAX_LEN, L) } : {}),
        },
        decodeRows: 1,
        decodePositions: rounded(DIAGNOSTIC_MAX_LEN, L),
      };
    case 'decode': {
      const rows = Math.max(1, req.beam);
      const n = 1 + tok.encode(req.input).length;
      const src = encDec ? { maxSrcLen: rounded(srcOf(req.input), L) } : {};
      return {
        shape: { maxBatch: 1, maxLen: 1, activations: TOP, ...src },
        decodeRows: rows,
        // the prompt and the most tokens a decode generates (decode.ts), at most the context
        decodePositions: rounded(n + MAX_DECODE_TOKENS + MAX_FINISHING_TOKENS, L),
        decodePrompt: rounded(n, L),
        ...(rows > 1 ? { lower: `lower the beam width (${rows})` } : {}),
      };
    }
    case 'lens': {
      if ('prompt' in req.input) {
        const n = tok.encode(req.input.prompt).length;
        const rows = rounded(1 + n, L);
        const shape = { maxBatch: 1, maxLen: rows, logitRows: logitChunkRows(config, rows), activations: STREAMS };
        return { shape, lower: shorten(n) };
      }
      // Without a target the decoder reads the model's own translation, up to the context.
      const t = req.input.tgt === undefined ? L : 1 + tok.encode(req.input.tgt).length;
      return {
        shape: {
          maxBatch: 1,
          maxLen: rounded(t, L),
          maxSrcLen: rounded(srcOf(req.input.src), L),
          logitRows: logitChunkRows(config, rounded(t, L)),
          activations: STREAMS,
        },
        decodeRows: 1,
        lower: shorten(tok.encode(req.input.src).length),
      };
    }
    case 'score': {
      const n = tok.encode(req.text).length;
      const src = encDec ? { maxSrcLen: rounded(srcOf(req.source ?? ''), L) } : {};
      const rows = rounded(n + (encDec ? 2 : 1), L);
      const shape = { maxBatch: 1, maxLen: rows, logitRows: logitChunkRows(config, rows), activations: TOP, ...src };
      return { shape, lower: shorten(n) };
    }
    case 'export': {
      const rows = rounded(1, L);
      const src = encDec ? { maxSrcLen: rounded(1, L) } : {};
      return {
        shape: { maxBatch: 1, maxLen: rows, logitRows: logitChunkRows(config, rows), activations: TOP, ...src },
      };
    }
    default:
      return req satisfies never;
  }
}

/** Whether a model opened as `r` serves `plan` without reopening. */
export function covers(r: OpenRun, plan: RunPlan): boolean {
  const m = r.model;
  const s = plan.shape;
  const len = s.maxLen ?? m.config.maxLen;
  return (
    m.maxBatch >= s.maxBatch &&
    m.maxLen >= len &&
    m.logitRows >= (s.logitRows ?? s.maxBatch * len) &&
    KEPT_RANK[m.activations] >= KEPT_RANK[s.activations ?? 'backward'] &&
    (!plan.gradients || r.gradients) &&
    (m.config.kind !== 'encoder-decoder' || m.maxSrcLen >= (s.maxSrcLen ?? m.config.maxLen))
  );
}

/**
 * A plan that serves both what `r` was opened for and `plan` (the model worker reopens with
 * it), or `plan` alone when both together would not fit.
 */
export function widened(r: OpenRun, plan: RunPlan): RunPlan {
  const m = r.model;
  const s = plan.shape;
  const src =
    m.config.kind === 'encoder-decoder' ? { maxSrcLen: Math.max(m.maxSrcLen, s.maxSrcLen ?? m.config.maxLen) } : {};
  const maxLen = Math.max(m.maxLen, s.maxLen ?? m.config.maxLen);
  const gradients = r.gradients || plan.gradients === true;
  const wide = {
    ...plan,
    shape: {
      maxBatch: Math.max(m.maxBatch, s.maxBatch),
      maxLen,
      logitRows: Math.max(m.logitRows, s.logitRows ?? s.maxBatch * (s.maxLen ?? m.config.maxLen)),
      activations:
        KEPT_RANK[m.activations] >= KEPT_RANK[s.activations ?? 'backward']
          ? m.activations
          : (s.activations ?? 'backward'),
      ...src,
    },
    ...(gradients ? { gradients } : {}),
  };
  const decode = {
    decodeRows: plan.decodeRows ?? 1,
    decodePositions: plan.decodePositions ?? m.config.maxLen,
    ...(plan.decodePrompt === undefined ? {} : { decodePrompt: plan.decodePrompt }),
    gradients,
  };
  return memoryProblem(m.config, wide.shape, 'inference', decode) === null ? wide : plan;
}

/**
 * Opens `runDir` planned for `req` (the CLI's commands; the model worker plans the same way and keeps the model open).
 */
export async function openForRequest(
  fs: LabFs,
  runDir: string,
  backend: Backend,
  req: InferenceRequest,
): Promise<OpenRun> {
  const tok = await readTokenizer(fs, runDir);
  const { config } = await readCheckpointConfig(fs, runDir);
  return openRun(fs, runDir, backend, planRequest(config, tok, req));
}
