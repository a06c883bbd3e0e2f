/**
 * `attention-lab patch`: activation and path patching of a clean and a corrupted prompt — the
 * metric of the corrupted run with one activation patched in from the clean run, per sweep a
 * heatmap printed as a compact table of the recovery (0 = corrupted, 1 = clean), or `--json` /
 * `--csv` with the raw metric beside it. An adapter over the lab's one implementation
 * (lab/inference/patch.ts), which the model worker calls too.
 */

import { toCsv } from '../common/csv';
import { NODE_FS } from '../lab/files/fs.node';
import { openRun } from '../lab/inference/openRun';
import type { HeadAt, PatchMetric, PatchRequest, PatchWhat, PathInput } from '../lab/inference/patch';
import { patchIds, patchLength, patchPlan, patchRun } from '../lab/inference/patch';
import { readCheckpointConfig } from '../lab/runs/checkpoint';
import { readTokenizer } from '../lab/runs/tokenizerFile';
import type { PatchOutputData, PatchTopTokenData } from '../protocol/patching';
import { MAX_PATCH_TOP, MAX_TOP_CELLS } from '../protocol/patching';
import * as path from 'node:path';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { BACKEND_FLAG, RUN_FLAG, backendOf } from './runFlags';

const WHATS: readonly PatchWhat[] = ['resid', 'heads', 'heads-pos', 'mlp', 'attn', 'path'];
const DEFAULT_WHAT: readonly PatchWhat[] = ['resid', 'attn', 'mlp', 'heads'];

export const PATCH_HELP = `attention-lab patch RUN --clean TEXT --corrupted TEXT --answer TOKEN [--wrong TOKEN]
        [--metric logit-diff|logprob] [--what resid,attn,mlp,heads,heads-pos,path]
        [--receivers L2H1,… --input q|k|v] [--target TEXT] [--top K] [--json | --csv]
  Activation patching (denoising): run the corrupted prompt and patch in one activation of the
  clean prompt; the metric at the last position is logit[answer] − logit[wrong] (logit-diff,
  the default; needs --wrong) or the answer's log-probability (logprob). The prompts must have
  the same number of tokens (BOS is added to both); the answers are one token each.
  --what     sweeps (repeat or comma-separate; default ${DEFAULT_WHAT.join(',')}):
             resid      the residual stream entering each layer, per (layer, position)
             attn, mlp  each attention layer's / MLP's output, per (layer, position)
             heads      each head's output at every position, per (layer, head)
             heads-pos  each head's output per (layer, head, position)
             path       path patching: each head of an earlier layer, its clean output reaching
                        only --receivers' --input (queries, keys or values; default q), every
                        other head frozen at the corrupted run
  RUN (or --run DIR) a run folder. Layers and heads are numbered from 1 (L2H1).
  An encoder-decoder run: --clean and --corrupted are sources (the same token length, EOS
  added), both read under one target prefix --target (BOS added; default BOS alone), and the
  metric is at the target's last position. Each sweep covers the encoder (rows enc L1, columns
  source positions) and the decoder (rows dec L1, with self and cross rows for attn and the
  heads: dec L1 cross H2; columns target positions). Path patching runs over every attention
  in the forward's order (encoder layers, then each decoder layer's self and cross); name a
  receiver's attention as enc:L1H2, self:L2H1 (the default) or cross:L2H1 (whose k and v read
  the encoder's output).
  Prints a table per sweep of the recovery (patched − corrupted) / (clean − corrupted):
  0 = as corrupted, 1 = as clean.
  --json   one object: {"tokens", "answer", "wrong", "metric", "clean", "corrupted",
           "maps": [{"what", "rows", "cols", "values", "normalised", "path"?, "stack"?}]}
           (values row-major; stack: an encoder-decoder map's encoder or decoder)
  --csv    what,row,col,value,normalised, one line per cell
  --top K  also each run's K most likely next tokens with their probabilities (K ≤ ${MAX_PATCH_TOP}): the
           clean and corrupted runs' (printed, and "top" in --json) and each patched run's ("top" of
           each map in --json, row-major; a sweep of more than ${MAX_TOP_CELLS} cells keeps none)`;

/** "L2H1" or "2.1" (1-based), an encoder-decoder's optionally after "enc:", "self:" or "cross:" → 0-based. */
function parseHead(s: string): HeadAt {
  const m = /^\s*(?:(enc|self|cross):)?(?:[lL](\d+)[hH](\d+)|(\d+)\.(\d+))\s*$/.exec(s);
  if (!m)
    throw new UsageError(
      `--receivers takes heads as L2H1 (layer 2, head 1) or 2.1, an encoder-decoder's as enc:L1H2 or ` +
        `cross:L2H1; got "${s}".`,
    );
  const layer = Number(m[2] ?? m[4]);
  const head = Number(m[3] ?? m[5]);
  if (layer < 1 || head < 1) throw new UsageError(`Layers and heads are numbered from 1; got "${s}".`);
  const attention = m[1] === 'enc' ? 'encoder' : (m[1] as 'self' | 'cross' | undefined);
  return { layer: layer - 1, head: head - 1, ...(attention ? { attention } : {}) };
}

/** A receiver as --receivers takes it: L2H1, or cross:L2H1 / enc:L1H2 (an encoder-decoder's). */
function headName(r: HeadAt): string {
  const at = r.attention === 'encoder' ? 'enc:' : r.attention === 'cross' ? 'cross:' : '';
  return `${at}L${r.layer + 1}H${r.head + 1}`;
}

/** The request of the flags. */
function requestOf(f: ReturnType<typeof parseFlags>): PatchRequest {
  const need = (name: string): string => {
    const v = f.str(name);
    if (v === undefined) throw new UsageError(`\`patch\` needs --${name} TEXT (see \`attention-lab patch --help\`).`);
    return v;
  };
  const metric = f.choice<PatchMetric>('metric', ['logit-diff', 'logprob'], 'logit-diff');
  const wrong = f.str('wrong') ?? null;
  if (metric === 'logit-diff' && wrong === null)
    throw new UsageError('The logit-diff metric needs --wrong TOKEN; or pass --metric logprob.');
  const whatList = f.list('what').flatMap((w) => w.split(',').map((x) => x.trim()));
  for (const w of whatList)
    if (!(WHATS as readonly string[]).includes(w))
      throw new UsageError(`--what must be among ${WHATS.join(', ')}, got "${w}".`);
  const what = whatList.length ? (whatList as PatchWhat[]) : [...DEFAULT_WHAT];
  const receivers = f
    .list('receivers')
    .flatMap((r) => r.split(','))
    .filter((r) => r.trim() !== '')
    .map(parseHead);
  const input = f.choice<PathInput>('input', ['q', 'k', 'v'], 'q');
  const top = f.int('top', 0, 0, MAX_PATCH_TOP);
  if (what.includes('path') && receivers.length === 0)
    throw new UsageError('--what path needs --receivers, e.g. --receivers L2H1 --input q.');
  if (!what.includes('path') && (receivers.length || f.has('input')))
    throw new UsageError('--receivers and --input are for path patching; add --what path.');
  return {
    clean: need('clean'),
    corrupted: need('corrupted'),
    answer: need('answer'),
    wrong,
    metric,
    what,
    ...(receivers.length ? { receivers, input } : {}),
    ...(top ? { top } : {}),
    ...(f.str('target') !== undefined ? { target: f.str('target') as string } : {}),
  };
}

const TITLES: Record<PatchWhat, string> = {
  resid: 'residual stream entering each layer (rows: layers, columns: positions)',
  attn: 'attention output (rows: layers, columns: positions)',
  mlp: 'MLP output (rows: layers, columns: positions)',
  heads: 'head output, every position (rows: layers, columns: heads)',
  'heads-pos': 'head output per position (rows: heads, columns: positions)',
  path: 'path patching (rows: sender layers, columns: sender heads)',
};

/** The results as text: the two metrics, then a table of recoveries per sweep. */
export function patchTables(out: PatchOutputData): string[] {
  const metric =
    out.metric === 'logit-diff'
      ? `logit[${JSON.stringify(out.answer)}] − logit[${JSON.stringify(out.wrong)}]`
      : `log p(${JSON.stringify(out.answer)})`;
  const lines = [
    `${metric} at the last position: clean ${out.clean.toFixed(4)}, corrupted ${out.corrupted.toFixed(4)}`,
  ];
  const tops = (t: readonly PatchTopTokenData[]): string =>
    t.map((x) => `${JSON.stringify(x.token)} ${(x.p * 100).toFixed(1)}%`).join(', ');
  if (out.top) lines.push(`clean predicts ${tops(out.top.clean)}`, `corrupted predicts ${tops(out.top.corrupted)}`);
  for (const m of out.maps) {
    lines.push('');
    const via = m.path ? ` → ${m.path.receivers.map(headName).join(', ')} (${m.path.input})` : '';
    const stack = m.stack ? ` [${m.stack}; columns: ${m.stack === 'encoder' ? 'source' : 'target'} positions]` : '';
    lines.push(`${m.what}: ${TITLES[m.what]}${via}${stack}; recovery, 0 = corrupted, 1 = clean`);
    const rows: string[][] = [['', ...m.cols]];
    m.rows.forEach((r, i) =>
      rows.push([r, ...m.cols.map((_, j) => (m.normalised[i * m.cols.length + j] as number).toFixed(2))]),
    );
    const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
    for (const r of rows)
      lines.push(
        r
          .map((x, c) => (c === 0 ? x.padEnd(widths[c] ?? 0) : x.padStart(widths[c] ?? 0)))
          .join('  ')
          .trimEnd(),
      );
  }
  return lines;
}

/** The results as CSV: one line per cell. */
export function patchCsv(out: PatchOutputData): string {
  return toCsv(
    ['what', 'row', 'col', 'value', 'normalised'],
    out.maps.flatMap((m) =>
      m.rows.flatMap((r, i) =>
        m.cols.map((c, j) => [m.what, r, c, m.values[i * m.cols.length + j], m.normalised[i * m.cols.length + j]]),
      ),
    ),
  );
}

/** `patch`: flags → the lab's patching → tables, JSON or CSV. */
export async function patchCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags(
    'patch',
    argv,
    {
      ...RUN_FLAG,
      clean: { type: 'string' },
      corrupted: { type: 'string' },
      answer: { type: 'string' },
      wrong: { type: 'string' },
      metric: { type: 'string' },
      what: { type: 'string', multiple: true },
      receivers: { type: 'string', multiple: true },
      input: { type: 'string' },
      top: { type: 'string' },
      target: { type: 'string' },
      csv: { type: 'boolean' },
      ...BACKEND_FLAG,
    },
    1,
  );
  if (f.bool('help')) return ctx.help(PATCH_HELP);
  const run = f.positionals[0] ?? f.str('run');
  if (!run) throw new UsageError('`patch` needs a run folder: attention-lab patch RUN --clean … (or --run DIR).');
  if (f.positionals[0] !== undefined && f.str('run') !== undefined)
    throw new UsageError('Give the run folder once: as RUN or as --run DIR, not both.');
  const json = f.bool('json');
  const csv = f.bool('csv');
  if (json && csv) throw new UsageError('`patch` prints either --json or --csv, not both; pick one.');
  const req = requestOf(f);
  const runDir = path.resolve(ctx.cwd, run);
  const { config } = await readCheckpointConfig(NODE_FS, runDir);
  const T = patchLength(patchIds(await readTokenizer(NODE_FS, runDir), config, req));
  const r = await openRun(NODE_FS, runDir, backendOf(f), patchPlan(config, T));
  const tty = ctx.stderr.isTTY === true;
  const out = patchRun(r, req, {
    onProgress: (done, total) => {
      if (tty) ctx.stderr.write(`\rpatching: ${done}/${total} runs${done === total ? '\n' : ''}`);
    },
  });
  if (json) ctx.out(JSON.stringify(out));
  else if (csv) ctx.out(patchCsv(out).replace(/\r\n$/, ''));
  else for (const line of patchTables(out)) ctx.out(line);
  return 0;
}
