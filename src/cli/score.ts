/**
 * `attention-lab score`: per-token log-probabilities of a text (or a source→target pair)
 * under a run's model — which tokens surprised it — through the lab's one scoring
 * (lab/inference/score.ts, which the editor's Score Selection runs too), as a table or JSON.
 *
 * Leaves out: scoring itself (src/lab/inference/score.ts).
 */

import { formatPerplexity } from '../common/format';
import type { ScoredText } from '../lab/inference/score';
import { MAX_SCORED_TOKENS, scoreTextAsync } from '../lab/inference/score';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { BACKEND_FLAG, RUN_FLAG, openRunFor } from './runFlags';

export const SCORE_HELP = `attention-lab score --run DIR (--text TEXT | --src TEXT --tgt TEXT) [--json]
  Per-token log-probabilities, by the rule the editor's Score Selection uses too:
  Decoder-only: ids = BOS + tokens of TEXT (no EOS: the text is scored as it stands, not as
  a whole document), logprobs[i] = log p(ids[i+1] | ids[0..i]).
  Encoder-decoder: tgt_ids = BOS + tokens of TGT + EOS (the end is scored, as training
  scores it), logprobs[i] = log p(tgt_ids[i+1] | src, tgt_ids[0..i]); SRC must fit the context.
  Longer than the context: sliding windows of the context, each ending half a context after
  the one before and scoring only its new tokens, so every token is scored once with at
  least half a context before it (the first window's with all there is). Never refused for
  its length; past ${MAX_SCORED_TOKENS} tokens the rest is left out (--json: "truncated").
  --json   one object: {"ids", "logprobs"} or {"src_ids", "tgt_ids", "logprobs"}`;

/** `score`: flags → the lab's scoring (as Score Selection runs it) → a table or JSON. */
export async function scoreCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('score', argv, {
    ...RUN_FLAG,
    text: { type: 'string' },
    src: { type: 'string' },
    tgt: { type: 'string' },
    ...BACKEND_FLAG,
  });
  if (f.bool('help')) return ctx.help(SCORE_HELP);
  const r = await openRunFor(
    f,
    ctx,
    'score',
    (kind) =>
      kind === 'encoder-decoder'
        ? { job: 'score', text: f.str('tgt') ?? '', source: f.str('src') ?? '' }
        : { job: 'score', text: f.str('text') ?? '' },
    true,
  );
  let scored: ScoredText;
  if (r.model.config.kind === 'encoder-decoder') {
    const s = f.str('src');
    const t = f.str('tgt');
    if (s === undefined || t === undefined)
      throw new UsageError('This run is an encoder-decoder: pass --src TEXT and --tgt TEXT.');
    scored = await scoreTextAsync(r, s, t);
  } else {
    const text = f.str('text');
    if (text === undefined) throw new UsageError('This run is a decoder-only model: pass --text TEXT.');
    scored = await scoreTextAsync(r, null, text);
  }
  const { output, ids, src } = scored;
  const { logprobs, truncated } = output;
  if (truncated > 0)
    ctx.err(`Scored the first ${MAX_SCORED_TOKENS} tokens; the ${truncated} after them were left out.`);
  if (f.bool('json')) {
    const cut = truncated > 0 ? { truncated } : {};
    ctx.out(
      JSON.stringify(
        src
          ? { src_ids: Array.from(src), tgt_ids: Array.from(ids), logprobs, ...cut }
          : { ids: Array.from(ids), logprobs, ...cut },
      ),
    );
  } else {
    ctx.out('token            log p     surprise');
    logprobs.forEach((lp, i) =>
      ctx.out(
        `${JSON.stringify(output.tokens[i]).padEnd(16)} ${lp.toFixed(3).padStart(8)}  ` +
          `${'▇'.repeat(Math.min(30, Math.round(-lp * 3)))}`,
      ),
    );
    const total = logprobs.reduce((a, b) => a + b, 0);
    ctx.out(
      `total ${total.toFixed(3)} nats · perplexity ` +
        `${formatPerplexity(Math.exp(-total / Math.max(1, logprobs.length)))}`,
    );
  }
  return 0;
}
