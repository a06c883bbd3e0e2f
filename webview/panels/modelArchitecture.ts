/**
 * The model tab's drawing of the architecture: the paper's stacks (Vaswani et al. 2017, Figure
 * 1: N× encoder layers of self-attention + feed-forward, N× decoder layers of masked
 * self-attention + cross-attention + feed-forward, each sublayer with a residual and a norm)
 * with this run's sizes and each option of today's transformers said where it acts: the
 * positions (added to the embeddings, or RoPE / ALiBi inside attention), the norm (LayerNorm or
 * RMSNorm, with or without a scale; QK-norm; the embedding norm), the key/value heads of
 * grouped-query attention, the feed-forward's kind (a gated one's three matrices), the soft-caps,
 * the sliding window and the parallel residual.
 *
 * Leaves out: the option names (src/common/architecture.ts) and the rest of the tab (model.ts).
 */

import type { ModelConfigData } from '../../src/protocol/model';
import { GATED, headsName, kvHeadCount, optionName } from '../../src/common/architecture';
import { h } from '../base/dom';

type Config = ModelConfigData;

/** A config field for people: "?" when the config does not have it. */
function field(v: string | number | boolean | undefined): string {
  return v === undefined ? '?' : String(v);
}

/** d_k: headDim when set, else d_model / h (the paper, §3.2.2); undefined while unknown. */
function headDim(c: Config): number | undefined {
  if (c.headDim !== undefined && c.headDim > 0) return c.headDim;
  return c.dModel !== undefined && c.nHeads !== undefined ? c.dModel / c.nHeads : undefined;
}

function box(title: string, ...lines: string[]): HTMLElement {
  return h(
    'div',
    { className: 'arch-box' },
    h('strong', {}, title),
    ...lines.filter((l) => l !== '').map((l) => h('span', { className: 'arch-line' }, l)),
  );
}

function stack(label: string, n: string, boxes: HTMLElement[]): HTMLElement {
  return h(
    'div',
    { className: 'arch-stack', attrs: { role: 'group', 'aria-label': `${label}, ${n} layers` } },
    h('div', { className: 'arch-stack-head' }, `${label} × ${n}`),
    ...boxes,
  );
}

/** The norm every norm of the model is: "LayerNorm", "RMSNorm", "RMSNorm (no scale)". */
function normWord(c: Config): string {
  return c.normType === undefined ? 'norm ?' : optionName('normType', c);
}

/** What the positions do, on the embedding box. */
function positionsLine(c: Config): string {
  const max = `(max ${field(c.maxLen)})`;
  switch (c.positional) {
    case 'sinusoidal':
    case 'learned':
      return `${c.positional} positions ${max}, added`;
    case 'rope':
      return `no positions added: ${optionName('positional', c)} rotates queries and keys ${max}`;
    case 'alibi':
      return `no positions added: ALiBi biases the scores by distance ${max}`;
    case 'none':
      return `no positions (NoPE): order comes from the causal mask alone ${max}`;
    default:
      return `? positions ${max}`;
  }
}

/** The lines of an attention box: heads and their key/value heads, the matrices, and the options inside. */
function attentionLines(c: Config, self: boolean): string[] {
  const d = field(c.dModel);
  const dk = headDim(c);
  const kv = c.nHeads !== undefined && c.nKvHeads !== undefined ? kvHeadCount(c.nHeads, c.nKvHeads) : undefined;
  const grouped = kv !== undefined && kv !== c.nHeads;
  const kvWidth = grouped && dk !== undefined ? String(kv * dk) : d;
  // headDim apart from d_model / h: the queries and the concatenated heads are h·d_k wide, not d_model.
  const apart = c.headDim !== undefined && c.headDim > 0 && c.nHeads !== undefined && c.headDim * c.nHeads !== c.dModel;
  const qWidth = apart ? String((c.nHeads as number) * (c.headDim as number)) : d;
  const kvW = apart && !grouped ? qWidth : kvWidth;
  const bias = (on: boolean | undefined, what: string): string => (on === true ? ` + ${what} bias` : '');
  const biases = `${bias(c.qkvBias, 'q/k/v')}${bias(c.attnOutBias, 'output')}`;
  const lines = [
    `${field(c.nHeads)} heads × d_k = ${field(dk)}${apart ? ' (headDim, not d_model / h)' : ''}`,
    grouped ? `${headsName(c)}: each kv head serves ${(c.nHeads as number) / (kv as number)} query heads` : '',
    apart
      ? `W_Q: ${d}×${qWidth}; W_K, W_V: ${d}×${kvW}; W_O: ${qWidth}×${d}${biases}`
      : grouped
        ? `W_Q, W_O: ${d}×${d}; W_K, W_V: ${d}×${kvWidth}${biases}`
        : `W_Q, W_K, W_V, W_O: ${d}×${d}${biases}`,
  ];
  if (c.qkNorm) lines.push('QK-norm: RMSNorm of each head’s q and k before the scores');
  if (self && c.positional === 'rope') lines.push(`${optionName('positional', c)} on q and k`);
  if (self && c.positional === 'alibi') lines.push('ALiBi: score += slope_h · (key − query position)');
  if (c.attnScale) lines.push(`scores scaled by ${c.attnScale}, not 1/√d_k`);
  if (c.attnSoftCap) lines.push(`scores soft-capped: ${c.attnSoftCap} · tanh(s / ${c.attnSoftCap})`);
  if (self && c.slidingWindow) lines.push(`sliding window: each position sees the last ${c.slidingWindow}`);
  return lines;
}

/** The feed-forward box: two matrices, or a gated one's three with its formula. */
function ffnBox(c: Config): HTMLElement {
  const d = field(c.dModel);
  const f = field(c.dFF);
  const bias = c.mlpBias === false ? ', no biases' : '';
  if (c.activation !== undefined && (GATED as readonly string[]).includes(c.activation)) {
    const act = c.activation === 'swiglu' ? 'SiLU' : 'GELU (tanh)';
    return box(
      `Feed-forward (${optionName('activation', c)}, gated)`,
      `gate, up: ${d} → ${f}; down: ${f} → ${d}${bias}`,
      `down(${act}(gate(x)) ⊙ up(x)): three matrices`,
    );
  }
  return box(
    'Feed-forward',
    `${d} → ${f} → ${d}${bias}`,
    `activation ${c.activation === undefined ? '?' : `${c.activation} (${optionName('activation', c)})`}`,
  );
}

/** The line under the stacks: kind, norm placement and kind, residual, dropout, smoothing, eps. */
function summaryLine(c: Config): string {
  // "LN" is LayerNorm's: with RMSNorm the placement is said without it.
  const ln = c.normType === 'rmsnorm' ? 'norm' : 'LN';
  const place = c.norm === undefined ? 'norm ?' : c.norm === 'pre' ? `pre-${ln}` : `post-${ln} (Add & Norm)`;
  const kind = c.normType === undefined || c.normType === 'layernorm' ? '' : ` · ${normWord(c)}`;
  const residual = c.parallelResidual ? ' · parallel residual: x + attn(norm₁(x)) + mlp(norm₂(x))' : '';
  const eps = c.normType === 'rmsnorm' ? 'RMSNorm ε' : 'LayerNorm ε';
  return (
    `${c.kind} · ${place}${kind}${residual} · dropout ${field(c.dropout)} · label smoothing ` +
    `${field(c.labelSmoothing)} · ${eps} ${field(c.layerNormEps)}`
  );
}

/** The architecture of a run's config, drawn as the paper's stacks with every option in its place. */
export function architecture(c: Config): HTMLElement {
  const encdec = c.kind === 'encoder-decoder';
  const d = field(c.dModel);
  const attn = (kind: string, self = true): HTMLElement => box(kind, ...attentionLines(c, self));
  const embed = (which: string, vocab: number | undefined): HTMLElement =>
    box(
      `${which} embedding`,
      `${field(vocab)} × ${d}${c.embedScale === true ? ', scaled by √d_model' : ''}`,
      positionsLine(c),
      c.embedNorm ? `then the embedding norm: ${normWord(c)}` : '',
    );
  const parts: HTMLElement[] = [];
  if (encdec) {
    parts.push(
      h(
        'div',
        { className: 'arch-col' },
        embed('Source', c.srcVocabSize),
        stack('Encoder', field(c.nEncoderLayers), [attn('Self-attention'), ffnBox(c)]),
      ),
    );
  }
  const dec = [attn(encdec ? 'Masked self-attention' : 'Causal self-attention')];
  if (encdec) dec.push(attn('Cross-attention (queries: decoder, keys/values: encoder)', false));
  dec.push(ffnBox(c));
  const cap = c.logitSoftCap ? `logits soft-capped: ${c.logitSoftCap} · tanh(z / ${c.logitSoftCap})` : '';
  parts.push(
    h(
      'div',
      { className: 'arch-col' },
      embed(encdec ? 'Target' : 'Token', c.vocabSize),
      stack('Decoder', field(c.nDecoderLayers), dec),
      box(
        'Output',
        `linear ${d} → ${field(c.vocabSize)}${c.tieEmbeddings === true ? ' (tied to the embedding)' : ''}`,
        cap,
        'softmax over the vocabulary',
      ),
    ),
  );
  return h(
    'div',
    { className: 'arch' },
    h('p', { className: 'note' }, summaryLine(c)),
    h('div', { className: 'arch-cols' }, ...parts),
  );
}
