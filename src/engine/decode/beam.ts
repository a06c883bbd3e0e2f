/**
 * Beam search with the GNMT length penalty, as the transformer paper decodes (Vaswani et
 * al. 2017, §6.1: beam 4, α 0.6; the penalty is Wu et al. 2016, "Google's Neural Machine
 * Translation System", §7: lp(Y) = ((5 + |Y|) / 6)^α, score = log P(Y) / lp(Y)).
 *
 * The search, exactly:
 * 1. Feed the prompt with rows = 1; one live beam, the empty hypothesis, raw score 0.
 * 2. Each step, every live beam j and token v is a candidate with raw score
 *    s_j + log p(v | beam j); log p comes from a stable log-sum-exp (logits.ts). Candidates
 *    are ranked by raw score (ties: lower row, then lower token id) and walked best first:
 *    - EOS: becomes a finished hypothesis if its rank is < beamSize, else is dropped;
 *    - any other token: becomes a live beam of the next step, until beamSize are live.
 *    When no further token fits (`maxTokens` or the context), the chosen non-EOS candidates
 *    become finished hypotheses too, with stop reason 'maxTokens' / 'context' — except, with
 *    `complete`, a candidate that `maxTokens` stops inside a character: it stays live for up
 *    to MAX_FINISHING_TOKENS more steps (within the context) and finishes at the first step
 *    that completes the character, as greedy decoding and sampling do.
 * 3. The stepper's rows follow the live beams: reorder(parents) where parents[i] is the row
 *    of new beam i's parent (after the prompt that is reorder(new Int32Array(beamSize)), or
 *    fewer rows when the vocabulary is too small to fill the beam), then step(their tokens).
 * 4. Stop after a step when any of these holds:
 *    (a) beamSize hypotheses have finished (not while the live beams only finish characters);
 *    (b) at least one has finished and no live beam can beat the best finished score: a live
 *        beam of raw score s ≤ 0 and length n can only lose probability, so its final score
 *        is at most max(s / lp(n + 1), s / lp(maxLen)) (lp is monotone in the length, so the
 *        bound sits at an end of the range of lengths it can still reach);
 *    (c) no live beam is left, or no further token fits.
 * 5. Finished hypotheses are sorted by score = raw / lp(|Y|) (|Y| counts EOS), best first
 *    (ties keep the one that finished first); the first beamSize are returned.
 * Rule (a) is the usual heuristic (a longer live beam could still win when α > 0); rule (b)
 * is exact. With a beam wide enough never to prune, the search is exhaustive.
 *
 * Leaves out: diverse beam search, coverage penalties, several prompts at once.
 */

import { EngineError } from '../errors';
import type { AttentionTrace } from './attentionTrace';
import { checkLogitsLength, rowLogSumExp } from './logits';
import { feedPrompt, makeTrace } from './singleRow';
import { MAX_FINISHING_TOKENS, runSteps } from './stepperContract';
import type { DecodeOptions, DecodeResult, DecodeStepper, DecodeSteps, StopReason } from './stepperContract';
import { TopK } from './topK';
import { checkNumber, validateCommon } from './validate';
import type { GenerationBudget } from './validate';

/** Options of `beamSearch`. */
export interface BeamOptions extends DecodeOptions {
  /** Beam width, in [1, stepper.maxRows]; the paper uses 4. */
  readonly beamSize: number;
  /** GNMT α ≥ 0; 0 ranks by raw log-probability; the paper uses 0.6. */
  readonly lengthPenalty: number;
}

/** GNMT length penalty lp(Y) = ((5 + |Y|) / 6)^α (Wu et al. 2016, §7). */
export function lengthPenalty(length: number, alpha: number): number {
  return Math.pow((5 + length) / 6, alpha);
}

/** The live beams at one step: beam i occupies stepper row i. */
interface BeamStep {
  readonly parents: Int32Array; // [R] row of the parent at the previous step
  readonly tokens: Int32Array; // [R] the token this step appended
  readonly logprobs: Float64Array; // [R]
  readonly scores: Float64Array; // [R] raw scores
}

interface Finished {
  readonly tokens: number[];
  readonly logprobs: number[];
  readonly score: number;
  readonly stopReason: StopReason;
  readonly rowAt: Int32Array; // stepper row of this hypothesis at generation steps 0..|Y|-1
}

/** The tokens of the hypothesis of row r at step k followed by v (backpointers, as `finish` follows them). */
function tokensOf(history: BeamStep[], k: number, r: number, v: number): number[] {
  const tokens = new Array<number>(k + 1);
  tokens[k] = v;
  let row = r;
  for (let i = k; i >= 1; i--) {
    const step = history[i] as BeamStep;
    tokens[i - 1] = step.tokens[row] as number;
    row = step.parents[row] as number;
  }
  return tokens;
}

/** Follows backpointers from row r at step k, then appends the final token v. */
function finish(
  history: BeamStep[],
  k: number,
  r: number,
  v: number,
  lp: number,
  raw: number,
  alpha: number,
  stopReason: StopReason,
): Finished {
  const tokens = new Array<number>(k + 1);
  const logprobs = new Array<number>(k + 1);
  const rowAt = new Int32Array(k + 1);
  tokens[k] = v;
  logprobs[k] = lp;
  rowAt[k] = r;
  for (let i = k; i >= 1; i--) {
    const step = history[i] as BeamStep;
    const row = rowAt[i] as number;
    tokens[i - 1] = step.tokens[row] as number;
    logprobs[i - 1] = step.logprobs[row] as number;
    rowAt[i - 1] = step.parents[row] as number;
  }
  return { tokens, logprobs, score: raw / lengthPenalty(k + 1, alpha), stopReason, rowAt };
}

function isIdentity(parents: Int32Array, rows: number): boolean {
  if (parents.length !== rows) return false;
  for (let i = 0; i < rows; i++) if (parents[i] !== i) return false;
  return true;
}

/** Rule (b): true when no live beam's best reachable score exceeds the best finished one. */
function cannotImprove(step: BeamStep, length: number, maxLen: number, alpha: number, best: number): boolean {
  for (let i = 0; i < step.scores.length; i++) {
    const s = step.scores[i] as number;
    const bound = Math.max(s / lengthPenalty(length + 1, alpha), s / lengthPenalty(maxLen, alpha));
    if (bound > best) return false;
  }
  return true;
}

function validateBeam(stepper: DecodeStepper, opts: BeamOptions): void {
  const B = opts.beamSize;
  if (!Number.isInteger(B) || B < 1 || B > stepper.maxRows) {
    throw new EngineError(
      'input/invalid',
      `beamSize must be an integer in [1, ${stepper.maxRows}] (the rows this model's stepper was ` +
        `built for), got ${String(B)}; use 4 as the paper does, or 1 for greedy.`,
    );
  }
  checkNumber(
    'lengthPenalty',
    opts.lengthPenalty,
    (v) => v >= 0,
    'a number ≥ 0 (0 = raw log-probability)',
    'use 0.6 as the paper does',
  );
}

/** The state of one search: the beams of every step (backpointers) and the finished hypotheses. */
class BeamState {
  private readonly history: BeamStep[] = [
    {
      parents: new Int32Array(1),
      tokens: new Int32Array(1),
      logprobs: new Float64Array(1),
      scores: new Float64Array(1),
    },
  ];
  private readonly finished: Finished[] = [];
  private readonly top: TopK; // at most R ≤ B candidates are EOS, so B + R always fill the beam
  private readonly lse: Float64Array; // [R]
  // Scratch for the next step's beams; each step keeps a right-sized copy in `history`.
  private readonly parents: Int32Array;
  private readonly tokens: Int32Array;
  private readonly logprobs: Float64Array;
  private readonly scores: Float64Array;

  /** Generation steps a hypothesis may reach: `maxGenerated`, or past it to finish a character (within the context). */
  private readonly reach: number;

  constructor(
    private readonly V: number,
    private readonly opts: BeamOptions,
    private readonly budget: GenerationBudget,
    byContext: number,
  ) {
    this.reach =
      opts.complete !== undefined && budget.limitReason === 'maxTokens'
        ? Math.min(budget.maxGenerated + MAX_FINISHING_TOKENS, byContext)
        : budget.maxGenerated;
    const B = opts.beamSize;
    this.top = new TopK(2 * B);
    this.lse = new Float64Array(B);
    this.parents = new Int32Array(B);
    this.tokens = new Int32Array(B);
    this.logprobs = new Float64Array(B);
    this.scores = new Float64Array(B);
  }

  /** Rows the stepper holds at step k. */
  rows(k: number): number {
    return (this.history[k] as BeamStep).scores.length;
  }

  /** Ranks every (beam, token) candidate of step k by raw score into `top` (step 2). */
  private rank(logits: Float32Array, k: number): void {
    const { V, top, lse } = this;
    const cur = this.history[k] as BeamStep;
    const R = cur.scores.length;
    checkLogitsLength(logits, R, V);
    top.reset(this.opts.beamSize + R);
    for (let j = 0; j < R; j++) {
      const l = rowLogSumExp(logits, j * V, V, k);
      lse[j] = l;
      const s = cur.scores[j] as number;
      for (let v = 0; v < V; v++) top.push(s + ((logits[j * V + v] as number) - l), j * V + v);
    }
  }

  /**
   * Runs step k on its logits [R, V]: ranks, sets finished hypotheses aside, and returns the
   * beams to feed next, or null when a stopping rule (step 4) holds.
   */
  advance(logits: Float32Array, k: number): BeamStep | null {
    this.rank(logits, k);
    const { V, top, opts, budget } = this;
    const B = opts.beamSize;
    const limit = k + 1 >= budget.maxGenerated; // past it, only hypotheses inside a character go on
    const last = k + 1 >= this.reach; // tokens chosen now can never be fed
    let live = 0;
    let taken = 0; // non-EOS candidates taken: live, or finished at the limit
    for (let rank = 0; rank < top.count && taken < B; rank++) {
      const id = top.ids[rank] as number;
      const j = Math.floor(id / V);
      const v = id - j * V;
      const raw = top.values[rank] as number;
      const lp = (logits[id] as number) - (this.lse[j] as number);
      if (v === opts.eos) {
        if (rank < B) this.finished.push(finish(this.history, k, j, v, lp, raw, opts.lengthPenalty, 'eos'));
        continue;
      }
      taken++;
      if (limit && (last || opts.complete?.(tokensOf(this.history, k, j, v)) !== false)) {
        this.finished.push(finish(this.history, k, j, v, lp, raw, opts.lengthPenalty, budget.limitReason));
        continue;
      }
      this.parents[live] = j;
      this.tokens[live] = v;
      this.logprobs[live] = lp;
      this.scores[live] = raw;
      live++;
    }
    if (last || live === 0 || (!limit && this.finished.length >= B)) return null; // rules (c), (a)
    const next: BeamStep = {
      parents: this.parents.slice(0, live),
      tokens: this.tokens.slice(0, live),
      logprobs: this.logprobs.slice(0, live),
      scores: this.scores.slice(0, live),
    };
    if (this.finished.length > 0) {
      const best = Math.max(...this.finished.map((f) => f.score));
      if (cannotImprove(next, k + 1, this.reach, opts.lengthPenalty, best)) return null; // rule (b)
    }
    this.history.push(next);
    return next;
  }

  /** The finished hypotheses, best first (stable: ties keep finishing order), at most beamSize (step 5). */
  nBest(): Finished[] {
    return [...this.finished].sort((a, b) => b.score - a.score).slice(0, this.opts.beamSize);
  }
}

/**
 * Beam search (see the file header for the exact rules). Returns the n-best list, at most
 * beamSize hypotheses sorted by length-penalized score, best first; each carries its
 * attention when `captureAttention` is set. `stepper` must be fresh (empty cache, rows = 1).
 * Throws EngineError('input/invalid') for a bad prompt or option.
 */
export function beamSearch(stepper: DecodeStepper, prompt: Int32Array, opts: BeamOptions): DecodeResult[] {
  return runSteps(stepper, beamSteps(stepper, prompt, opts));
}

/** {@link beamSearch} as steps (stepperContract.ts `DecodeSteps`), for a stepper on a device. */
export function* beamSteps(stepper: DecodeStepper, prompt: Int32Array, opts: BeamOptions): DecodeSteps<DecodeResult[]> {
  const budget = validateCommon(stepper, prompt, opts);
  validateBeam(stepper, opts);
  const search = new BeamState(stepper.vocabSize, opts, budget, stepper.maxPositions - prompt.length + 1);
  const trace = makeTrace(stepper, prompt, opts);
  let out = yield* feedPrompt(stepper, prompt, trace);
  for (let k = 0; ; k++) {
    const next = search.advance(out.logits, k);
    if (next === null) break;
    if (!isIdentity(next.parents, search.rows(k))) stepper.reorder(next.parents);
    out = stepper.step(next.tokens, trace !== null);
    yield;
    if (trace !== null) trace.record(out.attention, next.tokens.length);
  }
  return search.nBest().map((f) => toResult(f, trace, prompt.length));
}

function toResult(f: Finished, trace: AttentionTrace | null, promptLength: number): DecodeResult {
  const result: DecodeResult = { tokens: f.tokens, logprobs: f.logprobs, score: f.score, stopReason: f.stopReason };
  if (trace === null) return result;
  // Prompt steps (recorded with rows = 1) come first, then one row per generation step.
  const promptRows = promptLength - 1 - trace.queryStart;
  const rowAt = new Int32Array(promptRows + f.rowAt.length);
  rowAt.set(f.rowAt, promptRows);
  return { ...result, attention: trace.assemble(rowAt) };
}
