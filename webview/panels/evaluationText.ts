/**
 * An evaluation on test data in a few words, for tables: the tokenizer its BLEU signature
 * names, and its test data by file names (or the validation split) and size. Pure.
 *
 * Leaves out: numbers (src/common/format.ts) and the tables (panels/evaluationsTable.ts,
 * runComparison.ts).
 */

import type { EvaluationRecord } from '../../src/protocol/evaluation';

/** "tok:13a" out of a BLEU signature ("" when it has none). */
export function signatureTokenizer(signature: string): string {
  return /(?:^|\|)(tok:[^|]+)/.exec(signature)?.[1] ?? '';
}

/** The test data of an evaluation in a few words: its files' names (or the validation split), and its hash's start. */
export function testDataName(e: EvaluationRecord): string {
  if (e.data === 'validation') return 'validation split';
  const names = e.files.map((f) => f.path.split(/[\\/]/).pop() ?? f.path);
  const shown = names.length > 3 ? `${names.slice(0, 3).join(', ')} +${names.length - 3}` : names.join(' → ');
  return `${shown} (${e.items} ${e.data === 'pairs' ? 'pairs' : e.items === 1 ? 'document' : 'documents'})`;
}
