/**
 * Characters of test text that a run's character tokenizer never saw in training. Such a
 * character is encoded as its UTF-8 bytes (byte fallback, engine/tokenizers/charTokenizer.ts), tokens the
 * model was never trained on, so a loss over text full of them says little about the model.
 * `eval --data/--pairs` and "Evaluate on Files…" count them, report the count, and refuse
 * past {@link MAX_UNSEEN_FRACTION}.
 *
 * Leaves out: BPE tokenizers (byte-level: every byte is in the vocabulary, so nothing is
 * counted or refused) and unseen words or merges, which BPE handles by splitting.
 */

import { EngineError } from '../../engine/errors';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { BASE_VOCAB } from '../../engine/tokenizers/special';
import { formatCount, formatPercent } from '../../common/format';

/** Refuse test text when more than this fraction of its characters are unseen (5%). */
export const MAX_UNSEEN_FRACTION = 0.05;

/** How many of the unseen characters are named in results and messages. */
const EXAMPLES = 5;

/** Characters of some text against a tokenizer's vocabulary. */
export interface UnseenCharacters {
  /** Code points in the text (a lone surrogate counts as one). */
  readonly characters: number;
  /** Of those, code points outside a char tokenizer's vocabulary; null for BPE. */
  readonly unseen: number | null;
  /** Up to five distinct unseen characters, most frequent first (ties: first seen first). */
  readonly examples: readonly string[];
}

/** Counts the characters of `texts` a char tokenizer `tok` has no token for (each distinct one is encoded once). */
export function countUnseenChars(texts: Iterable<string>, tok: Tokenizer): UnseenCharacters {
  let characters = 0;
  let unseen = 0;
  const known = new Map<number, boolean>();
  const missed = new Map<string, number>();
  for (const text of texts) {
    for (let i = 0; i < text.length;) {
      const cp = text.codePointAt(i) as number;
      const ch = String.fromCodePoint(cp);
      i += ch.length;
      characters++;
      if (tok.type !== 'char') continue;
      let seen = known.get(cp);
      if (seen === undefined) {
        const ids = tok.encode(ch);
        // One learned id (≥ BASE_VOCAB); byte-fallback ids sit below it.
        seen = ids.length === 1 && (ids[0] as number) >= BASE_VOCAB;
        known.set(cp, seen);
      }
      if (!seen) {
        unseen++;
        missed.set(ch, (missed.get(ch) ?? 0) + 1);
      }
    }
  }
  const examples = [...missed]
    .sort((a, b) => b[1] - a[1])
    .slice(0, EXAMPLES)
    .map(([ch]) => ch);
  return { characters, unseen: tok.type === 'char' ? unseen : null, examples };
}

/**
 * The sentence that warns a text (a prompt, a selection) holds characters the run's character
 * tokenizer never saw — read as byte tokens the model never trained on — naming a few; null
 * when it holds none (and for BPE, whose bytes are all in its vocabulary).
 */
export function unseenNote(text: string, tok: Tokenizer, what = 'text'): string | null {
  const u = countUnseenChars([text], tok);
  if (!u.unseen) return null;
  const named = u.examples.map((c) => JSON.stringify(c)).join(', ');
  return (
    `${formatCount(u.unseen)} character${u.unseen === 1 ? '' : 's'} of the ${what} (${named}) ` +
    `${u.unseen === 1 ? 'is' : 'are'} not in the run's vocabulary: the model reads ` +
    `${u.unseen === 1 ? 'it' : 'them'} as bytes it never trained on.`
  );
}

/**
 * Throws `EngineError('input/invalid')`, one line naming a few of the characters, when more
 * than {@link MAX_UNSEEN_FRACTION} of the test text's characters are unseen.
 */
export function refuseUnseenChars(u: UnseenCharacters): void {
  if (u.unseen === null || u.characters === 0 || u.unseen / u.characters <= MAX_UNSEEN_FRACTION) return;
  const named = u.examples.map((c) => JSON.stringify(c)).join(', ');
  throw new EngineError(
    'input/invalid',
    `${formatPercent(u.unseen / u.characters)} of the test text's characters ` +
      `(${formatCount(u.unseen)} of ${formatCount(u.characters)}, e.g. ${named}) never occur in the ` +
      `run's training data, ` +
      `so the model has no trained tokens for them (more than ${formatPercent(MAX_UNSEEN_FRACTION)} ` +
      `makes the loss meaningless); ` +
      'evaluate on text in the training data’s alphabet, or retrain with these files in the data.',
  );
}
