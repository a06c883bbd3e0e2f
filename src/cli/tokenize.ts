/**
 * `attention-lab tokenize`: the token ids of a text under a run's tokenizer (the run
 * folder's tokenizer.json), labelled as every surface labels them (tokenDisplay.ts), with
 * each token's bytes, as a line or JSON.
 *
 * Leaves out: the tokenizers (src/engine/tokenizers).
 */

import { NODE_FS } from '../lab/files/fs.node';
import { isPartialLabel } from '../common/tokenLabels';
import { tokenLabels } from '../engine/tokenizers/tokenDisplay';
import { readTokenizer } from '../lab/runs/tokenizerFile';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { RUN_FLAG, runDirOf } from './runFlags';

export const TOKENIZE_HELP = `attention-lab tokenize --run DIR --text TEXT [--json]
  The token ids of TEXT under the run's tokenizer, each labelled as the dashboard labels it:
  its text (· space, ↵ newline, → tab), a character split across tokens written in each
  token that holds some of its bytes with … where it continues (映 as E6 98 | A0 reads
  "映…" then "…映"), <0xNN> only for bytes that form no character.
  --json   {"ids", "tokens", "bytes" (each token's bytes in hex, "" for a special token), "vocab_size", "type"}`;

/** `tokenize`. */
export async function tokenizeCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('tokenize', argv, { ...RUN_FLAG, text: { type: 'string' } });
  if (f.bool('help')) return ctx.help(TOKENIZE_HELP);
  const tok = await readTokenizer(NODE_FS, runDirOf(f, ctx, 'tokenize'));
  const text = f.str('text');
  if (text === undefined) throw new UsageError('`tokenize` needs --text TEXT.');
  const ids = tok.encode(text);
  const tokens = tokenLabels(tok, ids);
  const hex = (id: number): string =>
    Array.from(tok.tokenBytes(id) ?? [], (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
  if (f.bool('json'))
    ctx.out(
      JSON.stringify({
        ids: Array.from(ids),
        tokens,
        bytes: Array.from(ids, hex),
        vocab_size: tok.vocabSize,
        type: tok.type,
      }),
    );
  else {
    ctx.out(`${ids.length} tokens (${tok.type} tokenizer, vocabulary ${tok.vocabSize})`);
    ctx.out(tokens.map((t, i) => `${t}:${ids[i]}`).join(' '));
    const split = tokens.flatMap((t, i) => (isPartialLabel(t) ? [`${t} = ${hex(ids[i] as number)}`] : []));
    if (split.length)
      ctx.out(`split characters (… where a character continues in the next or previous token): ${split.join(', ')}`);
  }
  return 0;
}
