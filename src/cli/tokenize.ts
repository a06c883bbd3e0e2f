/**
 * `attention-lab tokenize`: the token ids and token strings of a text under a run's
 * tokenizer (the run folder's tokenizer.json), as a line or JSON.
 *
 * Leaves out: the tokenizers (src/engine/tokenizers).
 */

import { readTokenizer } from '../lab/training/prepare';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { RUN_FLAG, runDirOf } from './runFlags';

export const TOKENIZE_HELP = `attention-lab tokenize --run DIR --text TEXT [--json]
  The token ids and token strings of TEXT under the run's tokenizer.`;

/** `tokenize`. */
export function tokenizeCommand(argv: string[], ctx: CommandContext): number {
  const f = parseFlags('tokenize', argv, { ...RUN_FLAG, text: { type: 'string' } });
  if (f.bool('help')) return ctx.help(TOKENIZE_HELP);
  const tok = readTokenizer(runDirOf(f, ctx, 'tokenize'));
  const text = f.str('text');
  if (text === undefined) throw new UsageError('`tokenize` needs --text TEXT.');
  const ids = tok.encode(text);
  const tokens = Array.from(ids, (id) => tok.tokenText(id));
  if (f.bool('json')) ctx.out(JSON.stringify({ ids: Array.from(ids), tokens, vocab_size: tok.vocabSize, type: tok.type }));
  else {
    ctx.out(`${ids.length} tokens (${tok.type} tokenizer, vocabulary ${tok.vocabSize})`);
    ctx.out(tokens.map((t, i) => `${t}:${ids[i]}`).join(' '));
  }
  return 0;
}
