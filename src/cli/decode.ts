/**
 * `attention-lab decode`: generates text with a run's model — greedy, beam search or
 * sampling — through the lab's one decode (lab/inference/decode.ts, which the playground
 * and the editor's Decode… run too), and prints the text or one JSON object.
 *
 * Leaves out: decoding itself (src/lab/inference/decode.ts, src/engine/decode).
 */

import { DECODE_STRATEGIES } from '../protocol/data';
import type { DecodeParams } from '../protocol/model';
import { MAX_DECODE_TOKENS, decodeTextAsync } from '../lab/inference/decode';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { BACKEND_FLAG, RUN_FLAG, openRunFor } from './runFlags';

export const DECODE_HELP = `attention-lab decode --run DIR (--prompt TEXT | --src TEXT) [options]
  --strategy ${DECODE_STRATEGIES.join('|')} (default greedy)   --beam N (4)   --length-penalty A (0.6)
  --temperature T (1)   --top-k K (0 = off)   --top-p P (1 = off)   --max-tokens N (100)   --seed N
  --chat   wrap the prompt in the run's chat template as one user message (a model imported with a
           tokenizer_config.json that has one); prints only the reply
  --json   one object: {"text", "tokens", "logprobs", "score", ...}
  Greedy and sampling go past the model's context with a sliding window (the model sees the
  last half to whole context); beam search stops at the context. Either way a note on stderr
  (--json: "context_note") says so. A limit that splits a character goes on for at most 3
  more tokens to finish it; the text never ends in part of one.`;

/** `decode`: flags → the lab's decode (as the playground runs it) → text or JSON. */
export async function decodeCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('decode', argv, {
    ...RUN_FLAG,
    prompt: { type: 'string' },
    src: { type: 'string' },
    strategy: { type: 'string' },
    beam: { type: 'string' },
    'length-penalty': { type: 'string' },
    temperature: { type: 'string' },
    'top-k': { type: 'string' },
    'top-p': { type: 'string' },
    'max-tokens': { type: 'string' },
    seed: { type: 'string' },
    chat: { type: 'boolean' },
    ...BACKEND_FLAG,
  });
  if (f.bool('help')) return ctx.help(DECODE_HELP);
  const maxTokens = f.int('max-tokens', 100, 1, MAX_DECODE_TOKENS); // before the model is loaded
  const strategy = f.choice('strategy', DECODE_STRATEGIES, 'greedy');
  const beam = f.int('beam', 4, 1, 64);
  const r = await openRunFor(
    f,
    ctx,
    'decode',
    (kind) => ({
      job: 'decode',
      input: (kind === 'encoder-decoder' ? (f.str('src') ?? f.str('prompt')) : f.str('prompt')) ?? '',
      beam: strategy === 'beam' ? beam : 1,
    }),
    true,
  );
  const encdec = r.model.config.kind === 'encoder-decoder';
  const input = encdec ? (f.str('src') ?? f.str('prompt')) : f.str('prompt');
  if (input === undefined)
    throw new UsageError(
      encdec
        ? 'This run is an encoder-decoder: pass the source with --src TEXT.'
        : 'This run is a decoder-only model: pass --prompt TEXT.',
    );
  if (!encdec && f.has('src'))
    throw new UsageError('--src is for encoder-decoder runs; this one is decoder-only, so use --prompt.');
  const params: DecodeParams = {
    input,
    strategy,
    beam,
    lengthPenalty: f.num('length-penalty', 0.6, 0),
    temperature: f.num('temperature', 1, 0),
    topK: f.int('top-k', 0, 0),
    topP: f.num('top-p', 1, 0, 1),
    maxTokens,
    seed: f.int('seed', 1, -2147483648, 2147483647),
    ...(f.bool('chat') ? { chat: true } : {}),
  };
  const { output: d } = await decodeTextAsync(r, params);
  if (f.bool('json')) {
    ctx.out(
      JSON.stringify({
        text: d.text,
        tokens: d.ids,
        token_text: d.tokens,
        logprobs: d.logprobs,
        score: d.score,
        stop_reason: d.stopReason,
        strategy: params.strategy,
        ...(params.strategy === 'beam' ? { beams: d.beams } : {}),
        ...(d.contextNote !== undefined ? { context_note: d.contextNote } : {}),
      }),
    );
  } else ctx.out(encdec || params.chat === true ? d.text : input + d.text);
  if (d.contextNote !== undefined) ctx.err(d.contextNote); // stderr, so the text on stdout stays clean
  return 0;
}
