/**
 * The curves tab's table of the selected run's evaluations on test data (its
 * evaluations.jsonl): when, the weights' step, the test data, loss, bits per byte, perplexity
 * and, for pairs, BLEU (the tokenizer from its sacreBLEU signature; the whole signature on
 * hover), chrF, exact match and how the pairs were decoded. Newest first.
 *
 * Leaves out: recording evaluations (src/lab/evaluation) and the marks on the loss chart (curves.ts).
 */

import {
  formatBitsPerByte,
  formatBleu,
  formatDecoding,
  formatLoss,
  formatPercent,
  formatPerplexity,
} from '../../src/common/format';
import type { EvaluationRecord } from '../../src/protocol/evaluation';
import { h } from '../base/dom';
import { signatureTokenizer, testDataName } from './evaluationText';

function when(at: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return at;
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

const HEAD = [
  'when',
  'step',
  'test data',
  'loss',
  'bits/byte',
  'perplexity',
  'BLEU',
  'chrF',
  'exact match',
  'decoding',
];

/** The table (or nothing, when the run was never evaluated on test data). */
export function evaluationsTable(runName: string, evaluations: readonly EvaluationRecord[]): HTMLElement[] {
  if (evaluations.length === 0) return [];
  const num = (text: string, title?: string): HTMLElement =>
    h('td', { className: 'num', ...(title ? { attrs: { title } } : {}) }, text);
  const rows = [...evaluations].reverse().map((e) => {
    const t = e.translation;
    const files = e.files.map((f) => `${f.path} (${f.bytes} bytes, sha256 ${f.sha256.slice(0, 12)}…)`).join('\n');
    return h(
      'tr',
      { attrs: { 'data-step': e.step } },
      h('td', {}, when(e.at)),
      num(String(e.step)),
      h('td', { attrs: { title: `${e.source}\n${files}\ntest data ${e.dataHash.slice(0, 16)}…` } }, testDataName(e)),
      num(formatLoss(e.loss)),
      num(formatBitsPerByte(e.bpb)),
      num(formatPerplexity(e.ppl)),
      t ? num(`${formatBleu(t.bleu)} ${signatureTokenizer(t.bleuSignature)}`, t.bleuSignature) : num('—'),
      t ? num(formatBleu(t.chrf), t.chrfSignature) : num('—'),
      t ? num(formatPercent(t.exactMatch)) : num('—'),
      h('td', {}, t ? formatDecoding(t.decoding) : '—'),
    );
  });
  return [
    h('h3', { className: 'config-diff-title' }, `Evaluations of ${runName} on test data`),
    h(
      'table',
      { className: 'ab-table evaluations', attrs: { id: 'evaluations' } },
      h('thead', {}, h('tr', {}, ...HEAD.map((c) => h('th', { attrs: { scope: 'col' } }, c)))),
      h('tbody', {}, ...rows),
    ),
  ];
}
