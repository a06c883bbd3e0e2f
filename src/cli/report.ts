/**
 * `attention-lab report`: the dashboard as ONE self-contained HTML file that any browser opens
 * from disk — the bundle (dist/webview/dashboard.js + .css) inlined, the runs' metrics,
 * evaluations and attention snapshots embedded as JSON (typed arrays as base64, the tagged
 * form of src/common/wireCodec.ts) in `<script type="application/json" id="attention-lab-data">`,
 * and a strict Content-Security-Policy: nothing loads from anywhere, only the nonce'd inline
 * script and style run. Run paths are reduced to folder names so a shared report does not
 * leak the author's directories.
 *
 * Leaves out: decoding in the page (the playground says why it is off and what to run
 * instead: the page has no model) and serving (there is nothing to serve).
 */

import { formatBytes } from '../common/format';
import { metricsCsv } from '../common/csv';
import { encodeArrays } from '../common/wireCodec';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../lab/files/atomicFile.node';
import { NODE_FS } from '../lab/files/fs.node';
import { loadRunStateCounted, skippedNote } from '../lab/runs/runState';
import { SnapshotDrawer, drawPendingSnapshots } from '../lab/pytorch/follow.node';
import { createBackend } from '../engine/backends/select';
import type { AttentionSnapshot } from '../protocol/model';
import type { ToWebview, RunState } from '../protocol/webview';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { RUN_FLAG, runDirsOf } from './runFlags';

/** `attention-lab report --help`. */
export const REPORT_HELP =
  `attention-lab report --run DIR [--run DIR2 …] [--out FILE] ` +
  `[--max-snapshots N] [--csv] [--json]
  Writes the dashboard of one or more runs (curves overlaid) as a single HTML file that opens
  in any browser with no server and no network: loss curves, attention snapshots with the
  timeline, head scores over training, masks and the model. Default --out: DIR/report.html. --max-snapshots N keeps N
  snapshots per run, evenly spaced, first and last included (default: up to 40, as many as fit
  in 32 MiB of attention maps per run).
  --csv  instead writes the metrics of the runs as CSV — one row per (run, logged step):
         step, run, train loss, val loss, val perplexity, lr, grad norm, tokens, tokens/s,
         elapsed (s) [, exact match, bleu] — to --out FILE, or to stdout without --out (the
         same file as the dashboard's "Save metrics as CSV").`;

/** The `format` of the embedded data (webview/host.ts checks it). */
export const REPORT_FORMAT = 'attention-lab-report';
/** The version of the embedded data this build writes (and webview/host.ts reads). */
export const REPORT_VERSION = 1;

/** At most `n` items: evenly spaced, first and last included. */
export function spread<T>(items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  if (n <= 1) return items.slice(-1);
  return Array.from({ length: n }, (_, i) => items[Math.round((i * (items.length - 1)) / (n - 1))] as T);
}

/** JSON safe inside a <script> element: `<` escaped, so no `</script>` or `<!--` can appear. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Bytes of attention maps and masks in one snapshot. */
export function snapshotBytes(s: AttentionSnapshot): number {
  return s.maps.reduce((n, m) => n + m.data.byteLength, 0) + s.masks.reduce((n, m) => n + m.data.byteLength, 0);
}

/** Snapshots kept by default: at most 40, and no more than fit in this many bytes per run. */
export const DEFAULT_SNAPSHOT_BUDGET = 32 * 1024 * 1024;

/**
 * A run as the report embeds it: the folder name instead of the absolute path, snapshots
 * thinned to `maxSnapshots` (null: at most 40 and within {@link DEFAULT_SNAPSHOT_BUDGET}).
 */
export function reportRunState(state: RunState, maxSnapshots: number | null): RunState {
  const name = state.run.name;
  let keep = maxSnapshots ?? 40;
  if (maxSnapshots === null && state.snapshots.length > 0) {
    const per = Math.max(1, snapshotBytes(state.snapshots[state.snapshots.length - 1] as AttentionSnapshot));
    keep = Math.max(1, Math.min(keep, Math.floor(DEFAULT_SNAPSHOT_BUDGET / per)));
  }
  const snapshots: AttentionSnapshot[] = spread(state.snapshots, keep);
  // The maps of a few snapshots, but the head scores of all: the Heads view loses no step.
  const kept = new Set(snapshots);
  const headScores = state.snapshots.flatMap((s) =>
    !kept.has(s) && s.headScores ? [{ step: s.step, heads: s.headScores }] : [],
  );
  // Test files by name only, as the run folder: a shared report does not show the author's folders.
  const evaluations = state.evaluations?.map(({ hypothesesFile, ...e }) => ({
    ...e,
    files: e.files.map((f) => ({ ...f, path: path.basename(f.path) })),
    ...(hypothesesFile !== undefined ? { hypothesesFile: path.basename(hypothesesFile) } : {}),
  }));
  return {
    ...state,
    run: { ...state.run, id: name, runDir: name },
    snapshots,
    ...(headScores.length ? { headScores } : {}),
    ...(evaluations ? { evaluations } : {}),
  };
}

/** The report page for `states`, with the bundle's `script` and `css` inlined under `nonce`. */
export function buildReportHtml(opts: {
  states: readonly RunState[];
  script: string;
  css: string;
  nonce: string;
  title: string;
  generatedAt: string;
}): string {
  const { nonce } = opts;
  const messages: ToWebview[] = [
    { type: 'dashboard/didLoadRuns', runs: opts.states, selectedId: opts.states[0]?.run.id ?? null },
  ];
  const data = scriptSafeJson(
    encodeArrays({ format: REPORT_FORMAT, version: REPORT_VERSION, generatedAt: opts.generatedAt, messages }),
  );
  const csp = [
    `default-src 'none'`,
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    `img-src data: blob:`,
    `base-uri 'none'`,
    `form-action 'none'`,
  ].join('; ');
  // An inline script or style ends at the first `</script` / `</style`; escape any inside.
  const script = opts.script.replace(/<\/(script)/gi, '<\\/$1');
  const css = opts.css.replace(/<\/(style)/gi, '<\\/$1');
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    `<title>${escapeHtml(opts.title)}</title>`,
    `<style nonce="${nonce}">${css}</style>`,
    '</head>',
    '<body>',
    '<main id="attention-lab-root"></main>',
    `<script type="application/json" id="attention-lab-data">${data}</script>`,
    `<script nonce="${nonce}">${script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** Reads the dashboard bundle that sits next to the CLI bundle (dist/webview/). */
export function readDashboardBundle(distDir: string): { script: string; css: string } {
  const js = path.join(distDir, 'webview', 'dashboard.js');
  const css = path.join(distDir, 'webview', 'dashboard.css');
  if (!fs.existsSync(js) || !fs.existsSync(css)) {
    throw new Error(
      `The dashboard bundle is missing (${js}); this installation is incomplete — rebuild it with \`npm run build\`.`,
    );
  }
  return { script: fs.readFileSync(js, 'utf8'), css: fs.readFileSync(css, 'utf8') };
}

/** A run's state; what was damaged and left out is said on stderr. */
async function loadCounted(dir: string, ctx: CommandContext): Promise<RunState> {
  const { state, skipped } = await loadRunStateCounted(NODE_FS, dir);
  const note = skippedNote(dir, skipped);
  if (note) ctx.err(`note: ${note}`);
  return state;
}

/** `report --csv`: the metrics of `runs` as CSV, to `out` or stdout. */
async function writeMetricsCsv(
  runs: readonly string[],
  outFlag: string | undefined,
  json: boolean,
  ctx: CommandContext,
): Promise<number> {
  const states = await Promise.all(runs.map((dir) => loadCounted(dir, ctx)));
  const csv = metricsCsv(states.map((s) => ({ name: s.run.name, steps: s.steps, evals: s.evals })));
  if (outFlag === undefined) {
    if (json) throw new UsageError('`report --csv --json` needs --out FILE: without it the CSV itself goes to stdout.');
    ctx.out(csv.replace(/\r\n$/, ''));
    return 0;
  }
  const out = path.resolve(ctx.cwd, outFlag);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  writeFileAtomic(out, csv);
  const rows = csv.split('\r\n').length - 2;
  if (json) ctx.out(JSON.stringify({ out, bytes: Buffer.byteLength(csv), runs: states.length, rows }));
  else ctx.out(`Wrote ${out} (${formatBytes(Buffer.byteLength(csv))}: ${states.length} run(s), ${rows} rows).`);
  return 0;
}

/** `report`. */
export async function reportCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('report', argv, {
    run: { ...RUN_FLAG.run, multiple: true },
    out: { type: 'string' },
    'max-snapshots': { type: 'string' },
    csv: { type: 'boolean' },
  });
  if (f.bool('help')) return ctx.help(REPORT_HELP);
  const runs = runDirsOf(f, ctx, 'report');
  const maxSnapshots = f.has('max-snapshots') ? f.int('max-snapshots', 40, 1, 10_000) : null;
  if (f.bool('csv')) return writeMetricsCsv(runs, f.str('out'), f.bool('json'), ctx);
  const out = path.resolve(ctx.cwd, f.str('out') ?? path.join(runs[0] as string, 'report.html'));
  // A PyTorch run trained where no lab followed it left its snapshot steps as weights: draw them first.
  for (const dir of runs)
    await drawPendingSnapshots(NODE_FS, dir, () => SnapshotDrawer.open(NODE_FS, dir, createBackend('auto')));
  const states = (await Promise.all(runs.map((dir) => loadCounted(dir, ctx)))).map((s) =>
    reportRunState(s, maxSnapshots),
  );
  const names = new Set<string>();
  for (const s of states) {
    if (names.has(s.run.id))
      throw new UsageError(`two runs are both named "${s.run.id}"; pass runs from folders with different names.`);
    names.add(s.run.id);
  }
  const bundle = readDashboardBundle(path.dirname(ctx.workerScript));
  const html = buildReportHtml({
    states,
    script: bundle.script,
    css: bundle.css,
    nonce: randomBytes(18).toString('base64'),
    title: `Attention Lab — ${states.map((s) => s.run.name).join(', ')}`,
    generatedAt: new Date().toISOString(),
  });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  writeFileAtomic(out, html);
  const snapshots = states.reduce((n, s) => n + s.snapshots.length, 0);
  const steps = states.reduce((n, s) => n + s.steps.length, 0);
  if (f.bool('json'))
    ctx.out(JSON.stringify({ out, bytes: Buffer.byteLength(html), runs: states.length, steps, snapshots }));
  else
    ctx.out(
      `Wrote ${out} (${formatBytes(Buffer.byteLength(html))}: ${states.length} run(s), ${steps} ` +
        `steps, ${snapshots} snapshots). Open it in any browser.`,
    );
  return 0;
}
