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
import { attribute, attributePlan } from '../lab/inference/attribute';
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
    [--metric logit-diff|logprob] [--what dla|resid-accum|attribution [--with-patching]] [--json | --csv]
  What in a decoder-only model makes it predict --answer after the clean prompt (BOS + TEXT),
  read at the last position. The run is <run> or --run DIR.
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

/** Full patching's normalised map `what`, or null (not run). */
function fullMap(out: AttributionOutputData, what: string): readonly number[] | null {
  if (out.what !== 'attribution' || !out.patching) return null;
  return out.patching.maps.find((m) => m.what === what)?.normalised ?? null;
}

/** The result as CSV rows (what, kind, layer, head, position, token, value, patched: full patching's, when run). */
export function attributionCsv(out: AttributionOutputData): string {
  const rows: CsvCell[][] = [];
  const tok = (p: number): string => out.tokens[p] ?? '';
  const T = out.tokens.length;
  const perPos = (
    kind: string,
    layer: number | null,
    head: number | null,
    values: readonly number[],
    full: readonly number[] | null = null,
    row = 0,
  ): void => values.forEach((v, p) => rows.push([out.what, kind, layer, head, p, tok(p), v, full?.[row * T + p]]));
  if (out.what === 'dla') {
    for (const c of out.components) perPos(c.kind, c.layer, c.head, c.values);
    perPos('excluded', null, null, out.excluded);
    perPos('logit-diff', null, null, out.logitDiff);
  } else if (out.what === 'resid-accum') {
    for (const l of out.layers) perPos('resid_pre', l.layer, null, l.values);
    perPos('excluded', null, null, out.excluded);
    perPos('logit-diff', null, null, out.logitDiff);
  } else {
    const grid = (kind: string, what: string, g: readonly (readonly number[])[]): void =>
      g.forEach((v, l) => perPos(kind, l, null, v, fullMap(out, what), l));
    grid('resid_pre', 'resid', out.resid);
    grid('attn_out', 'attn', out.attnOut);
    grid('mlp_out', 'mlp', out.mlpOut);
    const heads = fullMap(out, 'heads');
    const H = out.head[0]?.length ?? 0;
    out.head.forEach((hs, l) =>
      hs.forEach((v, h) => rows.push([out.what, 'head', l, h, null, null, v, heads?.[l * H + h]])),
    );
    const headPos = fullMap(out, 'heads-pos');
    out.headPos.forEach((hs, l) => hs.forEach((v, h) => perPos('head_pos', l, h, v, headPos, l * H + h)));
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
        : c.kind === 'head'
          ? headName(c.layer ?? 0, c.head ?? 0)
          : `L${(c.layer ?? 0) + 1} ${c.kind === 'mlp' ? 'mlp' : 'attn bias'}`;
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
  const cols = out.tokens.map((t, p) => `${p}:${JSON.stringify(t)}`);
  const both = (v: number, full: number | undefined): string => (full === undefined ? f3(v) : `${f3(v)}/${f3(full)}`);
  const grid = (title: string, what: string, g: readonly (readonly number[])[]): string[] => {
    const full = fullMap(out, what);
    return [
      '',
      title,
      ...table(
        ['layer', ...cols],
        g.map((v, l) => [`L${l + 1}`, ...v.map((x, p) => both(x, full?.[l * v.length + p]))]),
      ),
    ];
  };
  const H = out.head[0]?.length ?? 0;
  const heads = fullMap(out, 'heads');
  return [
    `Attribution patching: metric ${out.metric.kind} clean ${f3(out.clean)}, corrupted ${f3(out.corrupted)} ` +
      '(layers and heads from 1, positions from 0).',
    out.note,
    ...(out.patching ? ['Each cell: estimate/full patching (both normalised).'] : []),
    '',
    'heads (every position)',
    ...table(
      ['layer', ...Array.from({ length: H }, (_, h) => `H${h + 1}`)],
      out.head.map((hs, l) => [`L${l + 1}`, ...hs.map((v, h) => both(v, heads?.[l * H + h]))]),
    ),
    ...grid('resid_pre', 'resid', out.resid),
    ...grid('attn_out', 'attn', out.attnOut),
    ...grid('mlp_out', 'mlp', out.mlpOut),
  ];
}

/** The run opened for `attribute` (attributePlan) on prompts of `clean`'s length. */
async function openAttribute(runDir: string, backend: Backend, p: AttributionParamsData): Promise<OpenRun> {
  const tok = await readTokenizer(NODE_FS, runDir);
  const { config } = await readCheckpointConfig(NODE_FS, runDir);
  const T = 1 + tok.encode(p.clean).length;
  return openRun(NODE_FS, runDir, backend, attributePlan(config, T, p.what, p.withPatching === true));
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
  const params: AttributionParamsData = {
    clean,
    corrupted: corrupted ?? clean,
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
