/**
 * `attention-lab attribute`: direct logit attribution, the accumulated residual stream or
 * attribution patching of a clean and a corrupted prompt, as tables, `--json` (the protocol's
 * AttributionOutputData) or `--csv` (one value a row). An adapter over the lab's one
 * implementation (lab/inference/attribute.ts), which the model worker calls too.
 *
 * Leaves out: full activation patching (`attention-lab patch`).
 */

import { toCsv } from '../common/csv';
import type { CsvCell } from '../common/csv';
import { attribute, attributeRequestPlan } from '../lab/inference/attribute';
import { NODE_FS } from '../lab/files/fs.node';
import type { Backend } from '../engine/backend';
import type { OpenRun } from '../lab/inference/openRun';
import { openRun } from '../lab/inference/openRun';
import { readCheckpointConfig } from '../lab/runs/checkpoint';
import { readTokenizer } from '../lab/runs/tokenizerFile';
import type { AttributionOutputData, AttributionParamsData } from '../protocol/attribution';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { BACKEND_FLAG, RUN_FLAG, backendOf } from './runFlags';
import * as path from 'node:path';

export const ATTRIBUTE_HELP = `attention-lab attribute <run> --clean TEXT --corrupted TEXT --answer TEXT [--wrong TEXT]
    [--metric logit-diff|logprob] [--what dla|resid-accum|attribution [--with-patching]]
    [--target TEXT] [--json | --csv]
  What in a model makes it predict --answer after the clean prompt (BOS + TEXT), read at the
  last position. The run is <run> or --run DIR.
  An encoder-decoder run: --clean and --corrupted are sources (the same token length), read
  under one target prefix --target (default: BOS alone), the metric at its last position. DLA
  then has each decoder layer's cross-attention heads (L1H1 cross) and bias; attribution
  patching adds cross_out, the cross-attention heads and the encoder's enc_* per source
  position (enc L1).
  --what dla           (default) each head's, MLP's, attention bias's and the embeddings'
                       direct contribution to logit[answer] − logit[wrong], through the final
                       norm with the clean run's scale (its bias and the unembedding's excluded)
  --what resid-accum   the residual stream before each layer read the same way (the logit lens
                       of the logit difference)
  --what attribution   attribution patching: the first-order estimate of patching each
                       activation of the corrupted run with the clean run's (resid_pre, attn_out
                       and mlp_out per layer and position; each head), as recovery
                       (patched − corrupted) / (clean − corrupted); --metric logit-diff (default,
                       needs --wrong) or logprob (log p(answer))
  --with-patching      with --what attribution: run full activation patching of the same
                       prompts too (as \`attention-lab patch\`) and show it beside each estimate
  --answer, --wrong    each must be one token of the run's tokenizer (mind a leading space)
  --corrupted          the same number of tokens as --clean (needed by --what attribution)
  --json               the whole result as one object; --csv one value a row:
                       what,kind,layer,head,position,token,value,patched (layers, heads and
                       positions from 0 in both; the tables name layers and heads from 1)`;

/** "L1H1": layers and heads as people see them (from 1, as `heads` and `patch` print them). */
const headName = (layer: number, head: number): string => `L${layer + 1}H${head + 1}`;

type Attribution = Extract<AttributionOutputData, { what: 'attribution' }>;

/** A row's label in the patching maps (patch.ts): decoder-only "L1"; an encoder-decoder's "enc L1", "dec L1 cross". */
function rowLabel(out: Attribution, stack: 'enc' | 'dec', layer: number, sub: '' | 'self' | 'cross' = ''): string {
  if (!out.source) return `L${layer + 1}`;
  return `${stack} L${layer + 1}${sub ? ` ${sub}` : ''}`;
}

/** A heads-pos row's label: decoder-only "L1H2"; an encoder-decoder's "enc L1 H2", "dec L1 cross H2". */
function headLabel(
  out: Attribution,
  stack: 'enc' | 'dec',
  layer: number,
  head: number,
  sub: '' | 'self' | 'cross',
): string {
  return out.source ? `${rowLabel(out, stack, layer, sub)} H${head + 1}` : `L${layer + 1}H${head + 1}`;
}

/** Full patching's normalised row `label` of sweep `what` (of `stack`'s map where it has one), or null (not run). */
function fullRow(
  out: AttributionOutputData,
  what: string,
  label: string,
  stack: 'encoder' | 'decoder',
): number[] | null {
  if (out.what !== 'attribution' || !out.patching) return null;
  for (const m of out.patching.maps) {
    if (m.what !== what || (m.stack !== undefined && m.stack !== stack)) continue;
    const i = m.rows.indexOf(label);
    if (i >= 0) return m.normalised.slice(i * m.cols.length, (i + 1) * m.cols.length);
  }
  return null;
}

/** One grid of an attribution result: its CSV kind, its title, the sweep and row label of full patching, its rows. */
interface Grid {
  readonly kind: string;
  readonly title: string;
  readonly stack: 'encoder' | 'decoder';
  readonly what: string;
  readonly label: (layer: number) => string;
  readonly values: readonly (readonly number[])[];
}

/** Every per-position grid of an attribution result: the decoder's, then an encoder-decoder's cross and encoder. */
function grids(out: Attribution): Grid[] {
  const dec = (
    kind: string,
    what: string,
    values: readonly (readonly number[])[],
    sub: '' | 'self' | 'cross' = '',
  ) => ({
    kind,
    title: kind,
    stack: 'decoder' as const,
    what,
    label: (l: number) => rowLabel(out, 'dec', l, sub),
    values,
  });
  const enc = (kind: string, what: string, values: readonly (readonly number[])[]) => ({
    kind,
    title: `${kind} (source positions)`,
    stack: 'encoder' as const,
    what,
    label: (l: number) => rowLabel(out, 'enc', l),
    values,
  });
  return [
    dec('resid_pre', 'resid', out.resid),
    dec('attn_out', 'attn', out.attnOut, 'self'),
    ...(out.cross ? [dec('cross_out', 'attn', out.cross.out, 'cross')] : []),
    dec('mlp_out', 'mlp', out.mlpOut),
    ...(out.encoder
      ? [
          enc('enc_resid_pre', 'resid', out.encoder.resid),
          enc('enc_attn_out', 'attn', out.encoder.attnOut),
          enc('enc_mlp_out', 'mlp', out.encoder.mlpOut),
        ]
      : []),
  ];
}

/** Every head grid of an attribution result: [layer][head] totals and [layer][head][position], per attention. */
function headGrids(out: Attribution): {
  kind: string;
  stack: 'enc' | 'dec';
  sub: '' | 'self' | 'cross';
  head: readonly (readonly number[])[];
  headPos: readonly (readonly (readonly number[])[])[];
}[] {
  return [
    { kind: 'head', stack: 'dec', sub: out.source ? 'self' : '', head: out.head, headPos: out.headPos },
    ...(out.cross ? [{ kind: 'cross_head', stack: 'dec' as const, sub: 'cross' as const, ...out.cross }] : []),
    ...(out.encoder ? [{ kind: 'enc_head', stack: 'enc' as const, sub: '' as const, ...out.encoder }] : []),
  ];
}

/** The result as CSV rows (what, kind, layer, head, position, token, value, patched: full patching's, when run). */
export function attributionCsv(out: AttributionOutputData): string {
  const rows: CsvCell[][] = [];
  const perPos = (
    kind: string,
    layer: number | null,
    head: number | null,
    values: readonly number[],
    full: readonly number[] | null = null,
    tokens: readonly string[] = out.tokens,
  ): void => values.forEach((v, p) => rows.push([out.what, kind, layer, head, p, tokens[p] ?? '', v, full?.[p]]));
  if (out.what === 'dla') {
    for (const c of out.components) perPos(c.kind, c.layer, c.head, c.values);
    perPos('excluded', null, null, out.excluded);
    perPos('logit-diff', null, null, out.logitDiff);
  } else if (out.what === 'resid-accum') {
    for (const l of out.layers) perPos('resid_pre', l.layer, null, l.values);
    perPos('excluded', null, null, out.excluded);
    perPos('logit-diff', null, null, out.logitDiff);
  } else {
    const source = out.source?.clean ?? [];
    for (const g of grids(out))
      g.values.forEach((v, l) =>
        perPos(
          g.kind,
          l,
          null,
          v,
          fullRow(out, g.what, g.label(l), g.stack),
          g.stack === 'encoder' ? source : out.tokens,
        ),
      );
    for (const g of headGrids(out)) {
      const stack = g.stack === 'enc' ? 'encoder' : 'decoder';
      g.head.forEach((hs, l) => {
        const full = fullRow(out, 'heads', rowLabel(out, g.stack, l, g.sub), stack);
        hs.forEach((v, h) => rows.push([out.what, g.kind, l, h, null, null, v, full?.[h]]));
      });
      g.headPos.forEach((hs, l) =>
        hs.forEach((v, h) =>
          perPos(
            `${g.kind}_pos`,
            l,
            h,
            v,
            fullRow(out, 'heads-pos', headLabel(out, g.stack, l, h, g.sub), stack),
            g.stack === 'enc' ? source : out.tokens,
          ),
        ),
      );
    }
  }
  return toCsv(['what', 'kind', 'layer', 'head', 'position', 'token', 'value', 'patched'], rows);
}

const f3 = (x: number): string => (Object.is(Math.round(x * 1000), -0) ? 0 : x).toFixed(3);

/** A grid with a header row, columns padded. */
function table(header: string[], body: string[][]): string[] {
  const all = [header, ...body];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  return all.map((r) =>
    r
      .map((x, c) => x.padStart(c === 0 ? 0 : (widths[c] ?? 0)).padEnd(c === 0 ? (widths[0] ?? 0) : 0))
      .join('  ')
      .trimEnd(),
  );
}

/** The result as text tables: DLA and resid-accum at the last position, attribution as layer × position grids. */
export function attributionText(out: AttributionOutputData): string[] {
  const last = out.tokens.length - 1;
  const at = (v: readonly number[]): string => f3(v[last] ?? NaN);
  if (out.what === 'dla' || out.what === 'resid-accum') {
    const name = (c: { kind: string; layer: number | null; head: number | null }): string =>
      c.kind === 'embed'
        ? 'embed'
        : c.kind === 'head' || c.kind === 'cross-head'
          ? `${headName(c.layer ?? 0, c.head ?? 0)}${c.kind === 'cross-head' ? ' cross' : ''}`
          : `L${(c.layer ?? 0) + 1} ${c.kind === 'mlp' ? 'mlp' : c.kind === 'cross-bias' ? 'cross bias' : 'attn bias'}`;
    const body =
      out.what === 'dla'
        ? out.components.map((c) => [name(c), at(c.values)])
        : out.layers.map((l) => [l.layer === out.layers.length - 1 ? 'final' : `L${l.layer + 1} in`, at(l.values)]);
    return [
      `${out.what === 'dla' ? 'Direct logit attribution' : 'Accumulated residual'} of ` +
        `logit[${JSON.stringify(out.answer)}] − logit[${JSON.stringify(out.wrong)}] ` +
        `after ${JSON.stringify(out.tokens[last])} ` +
        '(layers and heads from 1):',
      ...table(['component', 'value'], [...body, ['excluded', at(out.excluded)], ['logit diff', at(out.logitDiff)]]),
      out.note,
    ];
  }
  const colsOf = (ts: readonly string[]): string[] => ts.map((t, p) => `${p}:${JSON.stringify(t)}`);
  const both = (v: number, full: number | undefined): string => (full === undefined ? f3(v) : `${f3(v)}/${f3(full)}`);
  const grid = (g: Grid): string[] => {
    const cols = colsOf(g.stack === 'encoder' ? (out.source?.clean ?? []) : out.tokens);
    return [
      '',
      g.title,
      ...table(
        ['layer', ...cols],
        g.values.map((v, l) => {
          const full = fullRow(out, g.what, g.label(l), g.stack);
          return [g.label(l), ...v.map((x, p) => both(x, full?.[p]))];
        }),
      ),
    ];
  };
  const H = out.head[0]?.length ?? 0;
  const headTables = headGrids(out).flatMap((g) => [
    '',
    `${{ head: 'heads', cross_head: 'cross-attention heads' }[g.kind] ?? 'encoder heads'} (every position)`,
    ...table(
      ['layer', ...Array.from({ length: H }, (_, h) => `H${h + 1}`)],
      g.head.map((hs, l) => {
        const label = rowLabel(out, g.stack, l, g.sub);
        const full = fullRow(out, 'heads', label, g.stack === 'enc' ? 'encoder' : 'decoder');
        return [label, ...hs.map((v, h) => both(v, full?.[h]))];
      }),
    ),
  ]);
  return [
    `Attribution patching: metric ${out.metric.kind} clean ${f3(out.clean)}, corrupted ${f3(out.corrupted)} ` +
      '(layers and heads from 1, positions from 0).',
    out.note,
    ...(out.source
      ? [`Sources: clean ${out.source.clean.join(' ')}, corrupted ${out.source.corrupted.join(' ')}.`]
      : []),
    ...(out.patching ? ['Each cell: estimate/full patching (both normalised).'] : []),
    ...headTables,
    ...grids(out).flatMap(grid),
  ];
}

/** The run opened for `attribute` (attributeRequestPlan): `p`'s prompts, as `patch` opens it with --with-patching. */
async function openAttribute(runDir: string, backend: Backend, p: AttributionParamsData): Promise<OpenRun> {
  const tok = await readTokenizer(NODE_FS, runDir);
  const { config } = await readCheckpointConfig(NODE_FS, runDir);
  return openRun(NODE_FS, runDir, backend, attributeRequestPlan(config, tok, p));
}

/** `attribute`: flags → the lab's attribution → tables, JSON or CSV. */
export async function attributeCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags(
    'attribute',
    argv,
    {
      ...RUN_FLAG,
      clean: { type: 'string' },
      corrupted: { type: 'string' },
      answer: { type: 'string' },
      wrong: { type: 'string' },
      metric: { type: 'string' },
      what: { type: 'string' },
      target: { type: 'string' },
      csv: { type: 'boolean' },
      'with-patching': { type: 'boolean' },
      ...BACKEND_FLAG,
    },
    1,
  );
  if (f.bool('help')) return ctx.help(ATTRIBUTE_HELP);
  const run = f.positionals[0] ?? f.str('run');
  if (!run) throw new UsageError('`attribute` needs a run folder: attention-lab attribute <run> --clean TEXT …');
  const what = f.choice('what', ['dla', 'resid-accum', 'attribution'] as const, 'dla');
  const kind = f.choice('metric', ['logit-diff', 'logprob'] as const, 'logit-diff');
  if (kind === 'logprob' && what !== 'attribution')
    throw new UsageError('--metric logprob is for --what attribution; DLA reads the logit difference (--wrong).');
  const clean = f.str('clean');
  const answer = f.str('answer');
  if (clean === undefined || answer === undefined)
    throw new UsageError('`attribute` needs --clean TEXT and --answer TEXT (and --wrong TEXT for a logit difference).');
  const corrupted = f.str('corrupted');
  if (what === 'attribution' && corrupted === undefined)
    throw new UsageError('--what attribution needs --corrupted TEXT (as many tokens as --clean).');
  const wrong = f.str('wrong');
  if (kind === 'logit-diff' && wrong === undefined)
    throw new UsageError('The logit difference needs --wrong TEXT (or use --what attribution --metric logprob).');
  const withPatching = f.bool('with-patching');
  if (withPatching && what !== 'attribution')
    throw new UsageError('--with-patching compares attribution patching with full patching: add --what attribution.');
  if (f.bool('json') && f.bool('csv')) throw new UsageError('`attribute` prints either --json or --csv, not both.');
  const target = f.str('target');
  const params: AttributionParamsData = {
    clean,
    corrupted: corrupted ?? clean,
    ...(target === undefined ? {} : { target }),
    metric: { kind, answer, ...(wrong === undefined ? {} : { wrong }) },
    what,
    ...(withPatching ? { withPatching } : {}),
  };
  const runDir = path.resolve(ctx.cwd, run);
  const backend = backendOf(f);
  const r = await openAttribute(runDir, backend, params);
  const out = attribute(r, params);
  if (f.bool('json')) ctx.out(JSON.stringify(out));
  else if (f.bool('csv')) ctx.out(attributionCsv(out).replace(/\r\n$/, ''));
  else for (const line of attributionText(out)) ctx.out(line);
  return 0;
}
