/**
 * Decoding with a run's model: the one pipeline behind `attention-lab decode`, the
 * dashboard's playground and the editor's "Decode…" (both through the model worker).
 * The input becomes ids (decoder-only: BOS + prompt; encoder-decoder: source + EOS, and
 * the target starts at BOS), is fitted to the context (a long prompt keeps its last tokens,
 * a long source its first, and `contextNote` says so), is decoded greedily, by beam
 * search (the paper's §6.1: beam 4, length penalty 0.6) or by seeded sampling with the
 * key/value cache, and comes back as a `DecodeOutput`. Greedy and sampled decodes go past
 * the model's context over a sliding window (engine/decode/singleRow.ts); beam search stops
 * there. Either way `contextNote` says so. EOS, when the model chose it, stays
 * in `ids`/`tokens` (it is what the model did) and is left out of `text` (it is not text).
 *
 * A decode never ends inside a character (a byte-level BPE splits many across tokens): every
 * strategy, beam search included, goes on past `maxTokens` for at most 3 more tokens to
 * finish the character the limit split. Where it still ends in part of one (the model chose
 * EOS, or the context came first), `text` leaves those bytes out and their token reads `◌…`.
 *
 * Leaves out: flag parsing and printing (cli/decode.ts), posting (the model worker), and
 * the algorithms themselves (engine/decode/).
 */

import { beamSteps } from '../../engine/decode/beam';
import { greedySteps } from '../../engine/decode/greedy';
import { sampleSteps } from '../../engine/decode/sample';
import type {
  DecodeOptions,
  DecodeResult,
  DecodeStepper,
  DecodeSteps,
  StreamingOptions,
} from '../../engine/decode/stepperContract';
import { MAX_FINISHING_TOKENS, runSteps, runStepsAsync } from '../../engine/decode/stepperContract';
import type { ResidAdd } from '../../engine/models/steering';
import type { StepperWorkspace } from '../../engine/models/stepper';
import { createStepper } from '../../engine/models/stepper';
import type { Transformer } from '../../engine/models/transformer';
import { Rng } from '../../engine/rng';
import type { SpecialIds } from '../../engine/tokenizers/special';
import type { EvalDecoding } from '../../protocol/evaluation';
import type { DecodeOutput, DecodeParams } from '../../protocol/model';
import type { OpenRun } from './openRun';
import { EngineError } from '../../engine/errors';
import type { ReadSteps } from '../../engine/hostReads';
import { settling } from '../../engine/hostReads';
import { unseenNote } from './unseenChars';
import { chatIds } from './chatTemplate';
import { cutCharacterBytes, endsMidCharacter, nextTokenLabel, tokenLabels } from '../../engine/tokenizers/tokenDisplay';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { promptBos, promptIds } from './promptIds';

/** How a decode reports back, beyond its result. */
export interface DecodeTextOptions {
  /** Return the attention maps of the best hypothesis in `output.attention` (else null). */
  readonly attention?: boolean;
  /** Streams each greedy or sampled token as it is chosen (beam search chooses at the end). */
  readonly onToken?: (token: string, logprob: number) => void;
  /** Steering: a vector added to the decoder's stream at one layer, every position (lab/inference/steer.ts). */
  readonly residAdd?: ResidAdd;
}

/** A finished decode: the protocol's output (which says why the best hypothesis stopped). */
export interface Decoded {
  readonly output: DecodeOutput;
}

/** Decoder input of a decode: the prompt the decoder starts from, and the source for an encoder-decoder. */
export interface DecodeInput {
  readonly prompt: Int32Array;
  readonly src: Int32Array | null;
  /** Set when the input was longer than the model's context and was cut: the sentence that says how. */
  readonly cut: string | null;
}

/**
 * The ids `input` is decoded from, fitted to the model's context: an encoder-decoder reads
 * `input` as its source (tokens + EOS; past the context, its first L − 1 tokens and EOS) and
 * starts the target at BOS; a decoder-only model continues BOS + the tokens of `input`, of
 * which a prompt longer than the context keeps the last `keep` tokens (the model could not
 * see the rest: nanoGPT crops its input the same way). `keep` is the context for decodes that
 * slide past it, less room to generate for beam search, which stops at it. With `chat`, a
 * decoder-only model continues the run's chat template around `input` as one user message
 * (chatTemplate.ts) instead of BOS + `input`.
 */
export function decodeInput(
  r: OpenRun,
  input: string,
  keep: number = r.model.config.maxLen,
  chat = false,
): DecodeInput {
  const { model, tok } = r;
  const { bos, eos } = tok.specialIds;
  if (model.config.kind === 'encoder-decoder') {
    if (chat)
      throw new EngineError(
        'input/invalid',
        'A chat template wraps the prompt of a decoder-only model; this run is an encoder-decoder, so decode ' +
          'without the chat option.',
      );
    const full = tok.encode(input, { eos: true });
    const L = model.config.maxLen;
    if (full.length <= L) return { prompt: Int32Array.of(bos), src: full, cut: null };
    const src = Int32Array.of(...full.subarray(0, L - 1), eos);
    return {
      prompt: Int32Array.of(bos),
      src,
      cut:
        `The source of ${full.length - 1} tokens is longer than the model's context of ${L}: ` +
        `translated its first ${L - 1} (and EOS).`,
    };
  }
  // A chat prompt is the template's text, which writes BOS where its model wants it.
  const prompt = chat ? chatIds(tok, [{ role: 'user', content: input }]) : promptIds(tok, input);
  if (prompt.length <= keep) return { prompt, src: null, cut: null };
  return {
    prompt: prompt.slice(prompt.length - keep),
    src: null,
    cut:
      `The prompt of ${prompt.length - (promptBos(tok) ? 1 : 0)} tokens is longer than the model's context of ` +
      `${model.config.maxLen}: continued from its last ${keep}.`,
  };
}

/**
 * `tokens` without the EOS (the run's tokenizer's id `eos`) the decoders leave at the end of a hypothesis that chose
 * it.
 */
export function withoutEos(tokens: readonly number[], eos: number): number[] {
  return tokens[tokens.length - 1] === eos ? tokens.slice(0, -1) : tokens.slice();
}

/**
 * The text of generated `tokens` (continuing a prompt that ends on a whole character): without
 * the EOS the decoders leave at the end, and without the first bytes of a character the
 * tokens cut off, which would read as `�` (see the file comment).
 */
export function decodedText(tok: Tokenizer, tokens: readonly number[]): string {
  const ids = withoutEos(tokens, tok.specialIds.eos);
  const text = tok.decode(ids, { skipSpecial: true });
  // A cut-off character decodes as one U+FFFD (WHATWG: one per maximal subpart).
  return cutCharacterBytes(tok, ids) > 0 && text.endsWith('\ufffd') ? text.slice(0, -1) : text;
}

/**
 * The most tokens one decode generates: greedy decoding and sampling slide past the context,
 * so without a bound `--max-tokens 1e9` ran a billion model steps.
 */
export const MAX_DECODE_TOKENS = 4096;

/** Decodes `params.input` with the run's model (see the file comment); on a device, use {@link decodeTextAsync}. */
export function decodeText(r: OpenRun, params: DecodeParams, opts: DecodeTextOptions = {}): Decoded {
  const job = decodeJob(r, params, opts);
  return job.finish(runSteps(job.stepper, job.steps));
}

/** {@link decodeText} on any backend: a model on a device (WebGPU) reads each step's logits back between steps. */
export async function decodeTextAsync(
  r: OpenRun,
  params: DecodeParams,
  opts: DecodeTextOptions = {},
): Promise<Decoded> {
  const job = decodeJob(r, params, opts);
  return job.finish(await runStepsAsync(job.stepper, job.steps));
}

/** A decode set up: its stepper, its steps, and what makes the answer of their hypotheses. */
function decodeJob(
  r: OpenRun,
  params: DecodeParams,
  opts: DecodeTextOptions,
): { stepper: DecodeStepper; steps: DecodeSteps<DecodeResult[]>; finish: (results: DecodeResult[]) => Decoded } {
  if (!(params.maxTokens <= MAX_DECODE_TOKENS)) {
    throw new EngineError(
      'input/invalid',
      `A decode generates at most ${MAX_DECODE_TOKENS} tokens; asked for ${params.maxTokens}. Ask ` +
        `for fewer (decode again from the end of the text for more).`,
    );
  }
  const L = r.model.config.maxLen;
  // Beam search stops at the context, so a cut prompt leaves it room to generate.
  const keep = params.strategy === 'beam' ? L - Math.min(params.maxTokens, Math.ceil(L / 2)) : L;
  const { prompt, src, cut } = decodeInput(r, params.input, keep, params.chat === true);
  const { stepper, steps } = strategySteps(r, prompt, src, params, opts);
  return { stepper, steps, finish: (results) => decodedOutput(r, params, prompt, src, cut, results) };
}

/** The answer of a decode's hypotheses (best first). */
function decodedOutput(
  r: OpenRun,
  params: DecodeParams,
  prompt: Int32Array,
  src: Int32Array | null,
  cut: string | null,
  results: DecodeResult[],
): Decoded {
  const L = r.model.config.maxLen;
  const textOf = (d: DecodeResult): string => decodedText(r.tok, d.tokens);
  const best = results[0] as DecodeResult;
  const a = best.attention;
  const slid = contextNote(L, params, best);
  const note =
    [cut, slid, unseenNote(params.input, r.tok, r.model.config.kind === 'encoder-decoder' ? 'source' : 'prompt')]
      .filter((n) => n !== null)
      .join(' ') || null;
  const output: DecodeOutput = {
    text: textOf(best),
    promptTokens: tokenLabels(r.tok, src ?? prompt),
    // Generated tokens read after what the decoder was fed first (a split character joins across).
    tokens: tokenLabels(r.tok, [...prompt, ...best.tokens]).slice(prompt.length),
    ids: best.tokens,
    logprobs: best.logprobs,
    score: best.score,
    attention: a
      ? {
          queryStart: a.queryStart,
          queries: a.queries,
          selfKeys: a.selfKeys,
          sourceLength: a.sourceLength,
          nHeads: a.nHeads,
          self: a.self,
          cross: a.cross,
        }
      : null,
    beams: params.strategy === 'beam' ? results.map((d) => ({ text: textOf(d), score: d.score })) : [],
    ...(note !== null ? { contextNote: note } : {}),
    stopReason: best.stopReason,
  };
  return { output };
}

/**
 * The sentence that says how the model's context of `L` tokens shaped `best`, or null
 * when it did not: a sliding-window decode went past it, or beam search stopped at it.
 */
export function contextNote(L: number, params: DecodeParams, best: DecodeResult): string | null {
  const n = best.tokens.length;
  if (best.slid) {
    const lo = Math.min(L, Math.ceil(L / 2));
    return (
      `Generated ${n} tokens past the model's context of ${L} with a sliding window: each ` +
      `token was chosen from the last ${lo}–${L} tokens before it.`
    );
  }
  if (best.stopReason === 'context') {
    const fix =
      params.strategy === 'beam'
        ? 'beam search does not slide; use greedy or sampling to generate more'
        : 'retrain with a longer context to generate more';
    return `Stopped at the model's context of ${L} tokens after ${n} of ${params.maxTokens} token(s); ${fix}.`;
  }
  return null;
}

/** One decode's stepper and steps, whose result is its hypotheses, best first (one for greedy and sampling). */
function strategySteps(
  r: OpenRun,
  prompt: Int32Array,
  src: Int32Array | null,
  params: DecodeParams,
  opts: DecodeTextOptions,
): { stepper: DecodeStepper; steps: DecodeSteps<DecodeResult[]> } {
  const rows = params.strategy === 'beam' ? params.beam : 1;
  const stepper = createStepper(r.model, r.model.backendOrThrow(), {
    maxRows: rows,
    // The cache holds what this decode feeds, a split character's last tokens included (past the
    // context, greedy and sampling slide in it).
    positions: Math.min(r.model.config.maxLen, prompt.length + params.maxTokens + MAX_FINISHING_TOKENS),
    workspace: r.workspace,
    ...(src ? { src } : {}),
    ...(opts.residAdd ? { residAdd: opts.residAdd } : {}),
  });
  const common = { maxTokens: params.maxTokens, eos: r.tok.specialIds.eos, captureAttention: opts.attention === true };
  // No strategy stops in the middle of a character (a byte-level BPE splits many across tokens).
  const complete = (tokens: readonly number[]): boolean =>
    !endsMidCharacter(r.tok, [...prompt.subarray(Math.max(0, prompt.length - 3)), ...tokens.slice(-4)]);
  const slide = { slide: true }; // greedy and sampling go past the context (beam search stops there)
  const onToken = opts.onToken;
  // A streamed token reads after the ones before it (a character split across them shows whole).
  const fed = Array.from(prompt);
  const stream = onToken
    ? {
        onToken: (id: number, lp: number): void => {
          onToken(nextTokenLabel(r.tok, fed, id), lp);
          fed.push(id);
        },
      }
    : {};
  return { stepper, steps: strategyOf(stepper, prompt, params, { ...common, complete }, { ...stream, ...slide }) };
}

function* strategyOf(
  stepper: DecodeStepper,
  prompt: Int32Array,
  params: DecodeParams,
  common: DecodeOptions,
  streaming: Omit<StreamingOptions, keyof DecodeOptions>,
): DecodeSteps<DecodeResult[]> {
  switch (params.strategy) {
    case 'greedy':
      return [yield* greedySteps(stepper, prompt, { ...common, ...streaming })];
    case 'beam':
      return yield* beamSteps(stepper, prompt, {
        ...common,
        beamSize: params.beam,
        lengthPenalty: params.lengthPenalty,
      });
    case 'sample':
      return [
        yield* sampleSteps(stepper, prompt, {
          ...common,
          ...streaming,
          temperature: params.temperature,
          topK: params.topK,
          topP: params.topP,
          rng: new Rng(params.seed),
        }),
      ];
    default:
      return params.strategy satisfies never;
  }
}

/**
 * An encoder-decoder's target for `src` (source ids ending in EOS), without its EOS: at most
 * one context of tokens after BOS, decoded greedily or by beam search (the best hypothesis),
 * with BOS and EOS the ids of the run's tokenizer (`ids`). What exact match, BLEU and chrF
 * are computed on; `workspace` lends the stepper its buffers (one set for many decodes).
 */
export function decodeTarget(
  model: Transformer,
  ids: SpecialIds,
  src: Int32Array,
  decoding: EvalDecoding,
  workspace?: StepperWorkspace,
): number[] {
  const job = targetJob(model, ids, src, decoding, workspace);
  return withoutEos(runSteps(job.stepper, job.steps).tokens, ids.eos);
}

/** {@link decodeTarget} on any backend (a model on a device reads each step's logits back between steps). */
export async function decodeTargetAsync(
  model: Transformer,
  ids: SpecialIds,
  src: Int32Array,
  decoding: EvalDecoding,
  workspace?: StepperWorkspace,
): Promise<number[]> {
  const job = targetJob(model, ids, src, decoding, workspace);
  return withoutEos((await runStepsAsync(job.stepper, job.steps)).tokens, ids.eos);
}

function targetJob(
  model: Transformer,
  ids: SpecialIds,
  src: Int32Array,
  decoding: EvalDecoding,
  workspace?: StepperWorkspace,
): { stepper: DecodeStepper; steps: DecodeSteps<DecodeResult> } {
  const rows = decoding.strategy === 'beam' ? decoding.beam : 1;
  const stepper = createStepper(model, model.backendOrThrow(), {
    maxRows: rows,
    src,
    ...(workspace ? { workspace } : {}),
  });
  const common = { maxTokens: Math.max(1, model.config.maxLen - 1), eos: ids.eos };
  const start = Int32Array.of(ids.bos);
  function* best(): DecodeSteps<DecodeResult> {
    if (decoding.strategy !== 'beam') return yield* greedySteps(stepper, start, common);
    const beam = { ...common, beamSize: decoding.beam, lengthPenalty: decoding.lengthPenalty };
    return (yield* beamSteps(stepper, start, beam))[0] as DecodeResult;
  }
  return { stepper, steps: best() };
}

/**
 * An encoder-decoder's greedy target for `src` ({@link decodeTarget}): what validation's
 * greedy decodes and the attention and lens of a source show; `workspace` as there (an opened run's).
 */
export function greedyTarget(
  model: Transformer,
  ids: SpecialIds,
  src: Int32Array,
  workspace?: StepperWorkspace,
): number[] {
  return decodeTarget(model, ids, src, { strategy: 'greedy' }, workspace);
}

/** {@link greedyTarget} as a job's steps (engine/hostReads.ts): what the attention and lens of a source decode. */
export function* greedyTargetSteps(
  model: Transformer,
  ids: SpecialIds,
  src: Int32Array,
  workspace?: StepperWorkspace,
): ReadSteps<number[]> {
  const job = targetJob(model, ids, src, { strategy: 'greedy' }, workspace);
  return withoutEos((yield* settling(job.stepper, job.steps)).tokens, ids.eos);
}

/** {@link greedyTarget} on any backend. */
export function greedyTargetAsync(
  model: Transformer,
  ids: SpecialIds,
  src: Int32Array,
  workspace?: StepperWorkspace,
): Promise<number[]> {
  return decodeTargetAsync(model, ids, src, { strategy: 'greedy' }, workspace);
}
