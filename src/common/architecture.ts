/**
 * The architecture options of a model for people: what each option does and which models use
 * it (Configure Model…'s architecture step, the settings' descriptions), each option's value
 * as a readable name ("RoPE θ 10000", "RMSNorm (no scale)", "SwiGLU", "GQA 4 q / 2 kv heads"),
 * the architecture of a config as named rows (the Model tab, the compare table), and which
 * key/value head a query head reads under grouped-query attention ("head 5 · kv 2"). One
 * implementation for the dashboard and the extension.
 *
 * Leaves out: the meaning of the fields in the engine (src/engine/config.ts, which also
 * validates every combination) and drawing.
 */

import type { ModelConfigData } from '../protocol/model';

/** The architecture options people choose behind a preset, in the order they are offered. */
export const ARCHITECTURE_OPTIONS = [
  'positional',
  'ropeTheta',
  'rotaryFraction',
  'norm',
  'normType',
  'normScale',
  'qkNorm',
  'activation',
  'nKvHeads',
  'headDim',
  'attnScale',
  'qkvBias',
  'attnOutBias',
  'mlpBias',
  'attnSoftCap',
  'logitSoftCap',
  'slidingWindow',
  'globalEvery',
  'ropeLocalTheta',
  'parallelResidual',
  'postNorms',
  'embedNorm',
] as const satisfies readonly (keyof ModelConfigData)[];

/** One of {@link ARCHITECTURE_OPTIONS}. */
export type ArchitectureOption = (typeof ARCHITECTURE_OPTIONS)[number];

/** What an option is for people: its short title, one line on what it does and who uses it, the values it takes. */
export interface OptionInfo {
  readonly title: string;
  readonly description: string;
  /** 'choice' takes one of `choices`; 'int' a whole number ≥ 0; 'number' a number. */
  readonly type: 'choice' | 'bool' | 'int' | 'number';
  readonly choices?: readonly string[];
}

/** Each option's title, description and values (the same words in package.json: a unit test compares them). */
export const OPTION_INFO: Readonly<Record<ArchitectureOption, OptionInfo>> = {
  positional: {
    title: 'positions',
    description:
      'How token order enters: added sinusoids (the paper) or learned vectors (GPT-2), RoPE on queries and keys ' +
      '(Llama, Qwen, nanochat), ALiBi score biases (BLOOM), or none.',
    type: 'choice',
    choices: ['sinusoidal', 'learned', 'rope', 'alibi', 'none'],
  },
  ropeTheta: {
    title: 'RoPE θ',
    description:
      "RoPE's base: 10000 (RoFormer, Llama 2), 500000 (Llama 3), 1000000 (Qwen2.5); a larger base turns slower " +
      'and reaches further.',
    type: 'number',
  },
  rotaryFraction: {
    title: 'rotary fraction',
    description: "The share of each head's channels RoPE rotates, the rest pass unrotated (Pythia, GPT-NeoX: 0.25).",
    type: 'number',
  },
  norm: {
    title: 'norm placement',
    description:
      'Post-norm normalises after each residual add (the paper); pre-norm before each sublayer, with a final ' +
      'norm (GPT-2 and every model since).',
    type: 'choice',
    choices: ['post', 'pre'],
  },
  normType: {
    title: 'norm',
    description:
      'LayerNorm centres and rescales (the paper, GPT-2); RMSNorm only rescales by the root mean square, ' +
      'without a bias (Llama, Qwen, Gemma, nanochat).',
    type: 'choice',
    choices: ['layernorm', 'rmsnorm'],
  },
  normScale: {
    title: 'norm scale',
    description:
      'Norms learn a per-channel weight (every model but nanochat); off: a weightless RMSNorm (RMSNorm only).',
    type: 'bool',
  },
  qkNorm: {
    title: 'QK-norm',
    description:
      "RMSNorm of each head's queries and keys before the scores, keeping them bounded (Qwen3, Gemma 3, OLMo 2, " +
      'nanochat).',
    type: 'bool',
  },
  activation: {
    title: 'feed-forward',
    description:
      "The feed-forward's nonlinearity: ReLU (the paper), GELU (GPT-2, BERT), ReLU² (nanochat), SiLU; gated with " +
      'a third matrix: SwiGLU (Llama, Qwen, Mistral), GeGLU (Gemma).',
    type: 'choice',
    choices: ['relu', 'gelu', 'geluTanh', 'relu2', 'silu', 'swiglu', 'geglu'],
  },
  nKvHeads: {
    title: 'key/value heads',
    description:
      'Key/value heads each shared by a group of query heads: grouped-query (Llama 3, Mistral, Qwen), 1 for ' +
      'multi-query (PaLM, Falcon); 0 = one per query head.',
    type: 'int',
  },
  headDim: {
    title: 'head size',
    description:
      'Channels of each attention head apart from dModel / nHeads: q is nHeads·headDim wide (Qwen3: 128, Gemma 3: ' +
      '256); 0 = dModel / nHeads.',
    type: 'int',
  },
  attnScale: {
    title: 'score scale',
    description:
      'The factor of the attention scores before the softmax (Gemma 3: query_pre_attn_scalar^−½); 0 = 1 / √headDim, ' +
      "the paper's.",
    type: 'number',
  },
  qkvBias: {
    title: 'q/k/v bias',
    description: 'Biases on the query, key and value projections (the paper, GPT-2; Qwen2 keeps only these).',
    type: 'bool',
  },
  attnOutBias: {
    title: 'attention output bias',
    description: "Bias on the attention's output projection W_O (the paper, GPT-2; not Llama, Qwen).",
    type: 'bool',
  },
  mlpBias: {
    title: 'feed-forward bias',
    description: "Biases on the feed-forward's matrices (the paper, GPT-2; not Llama, Qwen, Gemma).",
    type: 'bool',
  },
  attnSoftCap: {
    title: 'attention soft-cap',
    description: 'Bounds the attention scores smoothly, c · tanh(s / c) (Gemma 2: 50); 0 = off.',
    type: 'number',
  },
  logitSoftCap: {
    title: 'logit soft-cap',
    description: 'Bounds the output logits smoothly, c · tanh(z / c) (Gemma 2: 30, nanochat: 15); 0 = off.',
    type: 'number',
  },
  slidingWindow: {
    title: 'sliding window',
    description:
      'Each position attends to the last W positions only, itself included (Mistral 7B, Gemma 2 and 3); 0 = the ' +
      'whole context.',
    type: 'int',
  },
  globalEvery: {
    title: 'global layers',
    description:
      'With a sliding window, every n-th layer attends to the whole context and the others through the window ' +
      '(Gemma 3: 6); 0 = every layer alike.',
    type: 'int',
  },
  ropeLocalTheta: {
    title: 'local RoPE θ',
    description:
      "RoPE's base in the windowed layers of a model with global layers (Gemma 3: 10000, its global layers " +
      '1000000); 0 = ropeTheta.',
    type: 'number',
  },
  parallelResidual: {
    title: 'parallel residual',
    description:
      'Attention and feed-forward read the same input and add to the residual in one step (GPT-J, GPT-NeoX, ' +
      'PaLM); pre-norm only.',
    type: 'bool',
  },
  postNorms: {
    title: 'sandwich norms',
    description: "A second norm on each sublayer's output before it joins the residual (Gemma 2 and 3); pre-norm only.",
    type: 'bool',
  },
  embedNorm: {
    title: 'embedding norm',
    description: 'A norm right after the embeddings, before the first layer (nanochat, BLOOM).',
    type: 'bool',
  },
};

/** What a choice is for people. */
const CHOICE_NAMES: Readonly<Record<string, string>> = {
  sinusoidal: 'sinusoidal positions',
  learned: 'learned positions',
  alibi: 'ALiBi',
  none: 'no positions (NoPE)',
  post: 'post-norm',
  pre: 'pre-norm',
  layernorm: 'LayerNorm',
  rmsnorm: 'RMSNorm',
  relu: 'ReLU',
  gelu: 'GELU',
  geluTanh: 'GELU (tanh)',
  relu2: 'ReLU²',
  silu: 'SiLU',
  swiglu: 'SwiGLU',
  geglu: 'GeGLU',
};

/** The feed-forward activations that gate with a third matrix (the engine's GATED_ACTIVATIONS). */
export const GATED = ['swiglu', 'geglu'] as const;

/** A config that may lack fields (a ModelInfo need not come from a run folder): the names say "?" for those. */
type Cfg = Partial<ModelConfigData>;

const known = (v: unknown): boolean => v !== undefined;

/** A number for people: "10000", "0.25", "1e+6" as "1000000". */
function num(v: number | undefined): string {
  return v === undefined ? '?' : String(v);
}

/**
 * The positions of a config: "RoPE θ 10000", "RoPE θ 10000 on 25 % of each head", "RoPE θ 500000 (llama3 scaling
 * ×32)", "ALiBi", "learned positions".
 */
function positionsName(c: Cfg): string {
  if (!known(c.positional)) return '?';
  if (c.positional !== 'rope') return CHOICE_NAMES[c.positional as string] ?? String(c.positional);
  const part =
    c.rotaryFraction !== undefined && c.rotaryFraction !== 1
      ? ` on ${Math.round(c.rotaryFraction * 1000) / 10} % of each head`
      : '';
  return `RoPE θ ${num(c.ropeTheta)}${part}${ropeScalingName(c)}`;
}

/** RoPE's frequency scaling: "", " (linear scaling ×8)", " (llama3 scaling ×32)". */
function ropeScalingName(c: Cfg): string {
  if (c.ropeScaling === undefined || c.ropeScaling === 'none') return '';
  return ` (${c.ropeScaling} scaling ×${num(c.ropeScalingFactor)})`;
}

/** The norm of a config: "LayerNorm", "RMSNorm", "RMSNorm (no scale)". */
function normName(c: Cfg): string {
  if (!known(c.normType)) return '?';
  return `${CHOICE_NAMES[c.normType as string] ?? String(c.normType)}${c.normScale === false ? ' (no scale)' : ''}`;
}

/** The attention heads of a config: "MHA 4 heads", "GQA 4 q / 2 kv heads", "MQA 4 q / 1 kv head". */
export function headsName(c: Cfg): string {
  if (c.nHeads === undefined || c.nKvHeads === undefined) return c.nHeads === undefined ? '?' : `${c.nHeads} heads`;
  const kv = kvHeadCount(c.nHeads, c.nKvHeads);
  if (kv === c.nHeads) return `MHA ${c.nHeads} ${c.nHeads === 1 ? 'head' : 'heads'}`;
  return `${kv === 1 ? 'MQA' : 'GQA'} ${c.nHeads} q / ${kv} kv ${kv === 1 ? 'head' : 'heads'}`;
}

/** The heads' size of a config: "heads of 128", "heads of 64 (dModel / nHeads)". */
function headSizeName(c: Cfg): string {
  if (c.headDim === undefined) return '?';
  if (c.headDim > 0) return `heads of ${c.headDim}`;
  return c.dModel === undefined || c.nHeads === undefined ? '?' : `heads of ${c.dModel / c.nHeads} (dModel / nHeads)`;
}

/** The scale of the scores of a config: "scores × 1/√D", "scores × 0.0625". */
function scaleName(c: Cfg): string {
  if (c.attnScale === undefined) return '?';
  return c.attnScale > 0 ? `scores × ${num(c.attnScale)}` : 'scores × 1/√D';
}

/** The biases of a config: "biases everywhere", "no biases", "q/k/v bias only", "biases: q/k/v, feed-forward". */
function biasesName(c: Cfg): string {
  const parts: [boolean | undefined, string][] = [
    [c.qkvBias, 'q/k/v'],
    [c.attnOutBias, 'attention output'],
    [c.mlpBias, 'feed-forward'],
  ];
  if (parts.some(([v]) => v === undefined)) return '?';
  const on = parts.filter(([v]) => v).map(([, n]) => n);
  if (on.length === parts.length) return 'biases everywhere';
  if (on.length === 0) return 'no biases';
  return `biases: ${on.join(', ')} only`;
}

/**
 * One option's value for people, e.g. positional → "RoPE θ 10000", normType → "RMSNorm (no scale)",
 * activation → "SwiGLU", nKvHeads → "GQA 4 q / 2 kv heads", slidingWindow → "sliding window 32".
 * Reads the fields an option depends on (ropeTheta with positional, nHeads with nKvHeads); "?" where
 * the config lacks the option.
 */
export function optionName(key: ArchitectureOption, c: Cfg): string {
  const v = c[key];
  if (v === undefined) return '?';
  const onOff = (on: string, off: string): string => (v ? on : off);
  const cap = (what: string): string => (v === 0 ? `no ${what}` : `${what} ${num(v as number)}`);
  switch (key) {
    case 'positional':
      return positionsName(c);
    case 'ropeTheta':
      return `RoPE θ ${num(c.ropeTheta)}`;
    case 'rotaryFraction':
      return `RoPE on ${Math.round((c.rotaryFraction as number) * 1000) / 10} % of each head`;
    case 'norm':
    case 'activation':
      return CHOICE_NAMES[v as string] ?? String(v);
    case 'normType':
    case 'normScale':
      return normName(c);
    case 'qkNorm':
      return onOff('QK-norm', 'no QK-norm');
    case 'nKvHeads':
      return headsName(c);
    case 'headDim':
      return headSizeName(c);
    case 'attnScale':
      return scaleName(c);
    case 'qkvBias':
      return onOff('q/k/v bias', 'no q/k/v bias');
    case 'attnOutBias':
      return onOff('attention output bias', 'no attention output bias');
    case 'mlpBias':
      return onOff('feed-forward bias', 'no feed-forward bias');
    case 'attnSoftCap':
      return cap('attention soft-cap');
    case 'logitSoftCap':
      return cap('logit soft-cap');
    case 'slidingWindow':
      return v === 0 ? 'the whole context' : `sliding window ${num(v as number)}`;
    case 'globalEvery':
      return v === 0 ? 'no global layers' : `every ${ordinal(v as number)} layer global`;
    case 'ropeLocalTheta':
      return v === 0 ? 'local RoPE θ = RoPE θ' : `local RoPE θ ${num(v as number)}`;
    case 'parallelResidual':
      return onOff('parallel residual', 'sequential residual');
    case 'postNorms':
      return onOff('sandwich norms', 'no sandwich norms');
    case 'embedNorm':
      return onOff('embedding norm', 'no embedding norm');
    default:
      return key satisfies never;
  }
}

/** 2 → "2nd", 6 → "6th", 1 → "1st" (every layer). */
function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** A choice's value for people, as the option list shows it ("rope" → "RoPE", "relu2" → "ReLU²"). */
export function choiceName(value: string): string {
  return value === 'rope' ? 'RoPE' : (CHOICE_NAMES[value] ?? value);
}

/** One named row of a config's architecture. */
export interface ArchitectureRow {
  /** What the row is about: "positions", "norm", "attention heads"… */
  readonly label: string;
  /** Its value for people: "RoPE θ 10000", "pre-norm · RMSNorm (no scale)", "GQA 4 q / 2 kv heads"… */
  readonly value: string;
  /** The config fields it reads. */
  readonly fields: readonly (keyof ModelConfigData)[];
}

/**
 * A config's architecture as rows people read: positions, norm, QK-norm, feed-forward,
 * attention heads, biases, soft-caps, window, residual, embedding norm. Every row is there for
 * every config (the compare table keeps those that differ).
 */
export function architectureRows(c: Cfg): ArchitectureRow[] {
  const caps =
    c.attnSoftCap === undefined || c.logitSoftCap === undefined
      ? '?'
      : c.attnSoftCap === 0 && c.logitSoftCap === 0
        ? 'none'
        : [optionName('attnSoftCap', c), optionName('logitSoftCap', c)].filter((t) => !t.startsWith('no ')).join(', ');
  const gated = c.activation !== undefined && (GATED as readonly string[]).includes(c.activation);
  const ffn = c.activation === undefined ? '?' : `${optionName('activation', c)}${gated ? ' (gated: 3 matrices)' : ''}`;
  return [
    { label: 'positions', value: positionsName(c), fields: ['positional', 'ropeTheta', 'rotaryFraction'] },
    {
      label: 'norm',
      value: `${c.norm === undefined ? '?' : optionName('norm', c)} · ${normName(c)}`,
      fields: ['norm', 'normType', 'normScale'],
    },
    { label: 'QK-norm', value: optionName('qkNorm', c), fields: ['qkNorm'] },
    { label: 'feed-forward', value: ffn, fields: ['activation'] },
    { label: 'attention heads', value: headsName(c), fields: ['nHeads', 'nKvHeads'] },
    { label: 'head size', value: headSizeName(c), fields: ['headDim'] },
    { label: 'score scale', value: scaleName(c), fields: ['attnScale'] },
    { label: 'biases', value: biasesName(c), fields: ['qkvBias', 'attnOutBias', 'mlpBias'] },
    { label: 'soft-caps', value: caps, fields: ['attnSoftCap', 'logitSoftCap'] },
    { label: 'attention window', value: windowName(c), fields: ['slidingWindow', 'globalEvery', 'ropeLocalTheta'] },
    { label: 'residual', value: residualName(c), fields: ['parallelResidual', 'postNorms'] },
    { label: 'embedding norm', value: optionName('embedNorm', c), fields: ['embedNorm'] },
  ];
}

/**
 * A config's architecture in one line, the options that differ from the paper's and GPT-2's
 * defaults: "RoPE θ 10000 · RMSNorm · SwiGLU · GQA 4 q / 2 kv heads · no biases".
 */
export function architectureLine(c: Cfg): string {
  const parts = [positionsName(c), normName(c)];
  if (c.qkNorm) parts.push('QK-norm');
  if (c.activation !== undefined) parts.push(optionName('activation', c));
  if (c.nHeads !== undefined && c.nKvHeads !== undefined && kvHeadCount(c.nHeads, c.nKvHeads) !== c.nHeads)
    parts.push(headsName(c));
  if (c.headDim) parts.push(headSizeName(c));
  if (c.attnScale) parts.push(scaleName(c));
  const biases = biasesName(c);
  if (biases !== 'biases everywhere') parts.push(biases);
  if (c.attnSoftCap) parts.push(optionName('attnSoftCap', c));
  if (c.logitSoftCap) parts.push(optionName('logitSoftCap', c));
  if (c.slidingWindow) parts.push(windowName(c));
  if (c.parallelResidual) parts.push('parallel residual');
  if (c.postNorms) parts.push('sandwich norms');
  if (c.embedNorm) parts.push('embedding norm');
  return parts.join(' · ');
}

/**
 * The attention window with its global layers: "sliding window 512, every 6th layer global (local RoPE θ 10000)";
 * "sliding window 32" without them, "the whole context" without a window.
 */
export function windowName(c: Cfg): string {
  const w = optionName('slidingWindow', c);
  if (!c.slidingWindow || !c.globalEvery) return w;
  const local = c.ropeLocalTheta ? ` (${optionName('ropeLocalTheta', c)})` : '';
  return `${w}, ${optionName('globalEvery', c)}${local}`;
}

/** The residual stream's shape: "sequential residual", "parallel residual", "sequential residual, sandwich norms". */
function residualName(c: Cfg): string {
  const r = optionName('parallelResidual', c);
  return c.postNorms ? `${r}, sandwich norms` : r;
}

/** Key/value heads of a model: nKvHeads, or nHeads when it is 0 (the engine's `kvHeads`). */
export function kvHeadCount(nHeads: number, nKvHeads: number): number {
  return nKvHeads > 0 ? nKvHeads : nHeads;
}

/**
 * The key/value head (0-based) query head `head` reads: floor(head / (nHeads / kvHeads)),
 * as the engine's attention computes it; `head` itself under multi-head attention.
 */
export function kvGroup(head: number, nHeads: number, nKvHeads: number): number {
  const kv = kvHeadCount(nHeads, nKvHeads);
  return Math.floor(head / (nHeads / kv));
}

/**
 * A query head for people, 1-based, with its key/value head when several query heads share
 * one: "head 5 · kv 3" (grouped- or multi-query attention), "head 5" (multi-head, or a config
 * that does not say).
 */
export function headLabel(head: number, c: Pick<Cfg, 'nHeads' | 'nKvHeads'> | undefined): string {
  const base = `head ${head + 1}`;
  if (c?.nHeads === undefined || c.nKvHeads === undefined) return base;
  const kv = kvHeadCount(c.nHeads, c.nKvHeads);
  return kv === c.nHeads ? base : `${base} · kv ${kvGroup(head, c.nHeads, c.nKvHeads) + 1}`;
}
