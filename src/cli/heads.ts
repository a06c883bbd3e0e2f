/**
 * `attention-lab heads`: what each attention head does — at a snapshot step, or measured now
 * on a text or (a run without snapshots) on the diagnostic sequences — previous-token,
 * first-token, diagonal, induction and entropy for self-attention, diagonal and anti-diagonal
 * alignment for cross-attention — and, with --ablate, how much the model relies on it: the
 * change in validation loss when that head alone is switched off. A table, or with --json one
 * object with 1-based layer and head numbers (as the dashboard labels them). The scores and
 * the ablation come from the lab (lab/inference/heads.ts, lab/inference/ablate.ts);
 * definitions in src/engine/analysis/headScores.ts.
 */

import { EngineError } from '../engine/errors';
import { NODE_FS } from '../lab/files/fs.node';
import { headImportance, openRunWithValidation } from '../lab/inference/ablate';
import type { HeadsAtStep, HeadsMeasuredOn } from '../lab/inference/heads';
import { hasSnapshots, headsOfRun, headsOfText, headsOnDiagnostics } from '../lab/inference/heads';
import { SnapshotDrawer, drawPendingSnapshots } from '../lab/pytorch/follow.node';
import { openForRequest } from '../lab/inference/requestPlan';
import type { Backend } from '../engine/backend';
import type { HeadScoreData } from '../protocol/model';
import { headScoresCsv } from '../common/csv';
import type { Flags } from './args';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { BACKEND_FLAG, RUN_FLAG, backendOf, runDirOf } from './runFlags';

export const HEADS_HELP = `attention-lab heads --run DIR [--step N | --text TEXT] [--ablate] [--json | --csv]
  Scores of every attention head. Self-attention: previousToken, firstToken (BOS sink),
  diagonal, induction (on random tokens repeated twice), entropy (nats); cross-attention:
  diagonal (copy) and antiDiagonal (reverse).
  Measured on: a training snapshot (--step N, default the last one); with --text, the model
  now on TEXT (cut to the context; an encoder-decoder reads it as the source); a run without
  snapshots (an imported model) without --text: the model now on the run's diagnostic
  sequences. Induction is always the mean over the diagnostic sequences.
  --ablate   also each head's importance: the validation loss (the run's validation batches,
             no label smoothing, as \`eval\`) with that head's output zeroed, minus the loss
             with every head on. Positive: the model relies on it. Runs without head scores
             (made before they existed) still get this column.
  --json     prints {"step": N, "measuredOn": "snapshot" | "text" | "diagnostic",
             "heads": [{"stack", "layer", "head", "kvGroup"?, "scores", "deltaLoss"?}, …]}
             (with --ablate also "baseLoss"), layers and heads from 1; "kvGroup" (from 1)
             is the key/value head a head reads under grouped-query attention.
  --csv      prints the table as CSV (step, stack, layer, head, previousToken, firstToken,
             diagonal, antiDiagonal, induction, entropy[, deltaLoss]) — the same columns as
             the dashboard's head-score export; a score a head's kind lacks is left empty.`;

/** One head as printed: 1-based, with whatever is known of it. */
interface HeadRow {
  readonly stack: HeadScoreData['stack'];
  readonly layer: number;
  readonly head: number;
  /** The key/value head it reads (1-based), under grouped-query attention. */
  readonly kvGroup?: number;
  readonly scores?: HeadScoreData['scores'];
  readonly deltaLoss?: number;
}

const key = (h: { stack: string; layer: number; head: number }): string => `${h.stack}/${h.layer}/${h.head}`;

/** Rows of one table per kind of scores. */
function table(rows: readonly HeadRow[]): string[] {
  const lines: string[] = [];
  for (const cross of [false, true]) {
    const some = rows.filter((h) => (h.stack === 'decoder.cross') === cross);
    const first = some[0];
    if (!first) continue;
    const names = first.scores ? Object.keys(first.scores) : [];
    const ablated = some.some((h) => h.deltaLoss !== undefined);
    const grouped = some.some((h) => h.kvGroup !== undefined); // grouped-query attention: the kv head read
    const w = Math.max(...names.map((n) => n.length), 6);
    lines.push(
      [
        'stack'.padEnd(13),
        'layer',
        'head',
        ...(grouped ? ['kv'] : []),
        ...names.map((n) => n.padStart(w)),
        ...(ablated ? ['Δloss'.padStart(9)] : []),
      ].join('  '),
    );
    for (const h of some) {
      const vals = h.scores ? Object.values(h.scores).map((v: number) => v.toFixed(3).padStart(w)) : [];
      const delta =
        h.deltaLoss === undefined ? [] : [`${h.deltaLoss >= 0 ? '+' : ''}${h.deltaLoss.toFixed(4)}`.padStart(9)];
      lines.push(
        [
          h.stack.padEnd(13),
          String(h.layer).padStart(5),
          String(h.head).padStart(4),
          ...(grouped ? [String(h.kvGroup ?? '').padStart(2)] : []),
          ...vals,
          ...delta,
        ].join('  '),
      );
    }
    lines.push('');
  }
  return lines;
}

/** What the scores were measured on, for the table's title. */
const MEASURED_ON: Readonly<Record<HeadsMeasuredOn, string>> = {
  snapshot: 'the training snapshot',
  text: 'the text',
  diagnostic: "the run's diagnostic sequences (no snapshots: measured now)",
};

/** The scores to print (see HEADS_HELP), or none with the reason when --ablate may go on without them. */
async function scoresOf(
  runDir: string,
  f: Flags,
  backend: () => Backend,
  ablate: boolean,
): Promise<{ s: HeadsAtStep | null; note: string | null }> {
  const text = f.str('text');
  if (text !== undefined && f.has('step'))
    throw new UsageError('--text measures the heads now and --step reads a snapshot; pick one.');
  if (text !== undefined)
    return {
      s: headsOfText(await openForRequest(NODE_FS, runDir, backend(), { job: 'attend', text }), text),
      note: null,
    };
  if (!f.has('step') && !(await hasSnapshots(NODE_FS, runDir)))
    return {
      s: headsOnDiagnostics(await openForRequest(NODE_FS, runDir, backend(), { job: 'diagnostic' })),
      note: null,
    };
  try {
    return { s: await headsOfRun(NODE_FS, runDir, f.has('step') ? f.int('step', 0, 0) : null), note: null };
  } catch (e) {
    if (!ablate || f.has('step') || !EngineError.is(e, 'input/invalid')) throw e;
    return { s: null, note: e.message };
  }
}

/** Runs `heads`. Returns the exit code. */
export async function headsCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('heads', argv, {
    ...RUN_FLAG,
    step: { type: 'string' },
    text: { type: 'string' },
    ablate: { type: 'boolean' },
    ...BACKEND_FLAG,
    csv: { type: 'boolean' },
  });
  if (f.bool('help')) return ctx.help(HEADS_HELP);
  const runDir = runDirOf(f, ctx, 'heads');
  const ablate = f.bool('ablate');
  const json = f.bool('json');
  const csv = f.bool('csv');
  if (json && csv) throw new UsageError('`heads` prints either --json or --csv, not both; pick one.');
  let backend: Backend | null = null;
  const theBackend = (): Backend => (backend ??= backendOf(f));
  // A PyTorch run trained where no lab followed it left its snapshot steps as weights: draw
  // them first when the scores come from snapshots (a text is measured on the model now).
  const drawn =
    f.str('text') === undefined
      ? await drawPendingSnapshots(NODE_FS, runDir, () => SnapshotDrawer.open(NODE_FS, runDir, theBackend()))
      : 0;
  if (drawn && !json && !csv)
    ctx.err(
      `Drew ${drawn} attention ${drawn === 1 ? 'snapshot' : 'snapshots'} from the weights the PyTorch trainer left.`,
    );
  const { s, note } = await scoresOf(runDir, f, theBackend, ablate);
  const step = s?.step ?? null;
  const rows = new Map<string, HeadRow>();
  for (const h of s?.heads ?? []) {
    const group = h.kvGroup !== undefined ? { kvGroup: h.kvGroup + 1 } : {};
    const row: HeadRow = { stack: h.stack, layer: h.layer + 1, head: h.head + 1, ...group, scores: h.scores };
    rows.set(key(row), row);
  }
  let baseLoss: number | null = null;
  if (ablate) {
    const { run: opened, batches } = await openRunWithValidation(NODE_FS, runDir, theBackend());
    if (!batches.length)
      throw new UsageError(
        'This run has no validation batches to measure heads on; retrain it with a validation split.',
      );
    if (!json && !csv) ctx.err(`Switching each head off in turn on ${batches.length} validation batches…`);
    const r = headImportance(opened.model, batches);
    baseLoss = r.baseLoss;
    for (const h of r.heads) {
      const k = key({ stack: h.stack, layer: h.layer + 1, head: h.head + 1 });
      rows.set(k, {
        ...(rows.get(k) ?? { stack: h.stack, layer: h.layer + 1, head: h.head + 1 }),
        deltaLoss: h.deltaLoss,
      });
    }
  }
  const heads = [...rows.values()];
  if (json) {
    ctx.out(
      JSON.stringify({ step, ...(s ? { measuredOn: s.on } : {}), ...(baseLoss !== null ? { baseLoss } : {}), heads }),
    );
    return 0;
  }
  if (csv) {
    // The CSV ends with a line break; `out` adds one of its own.
    ctx.out(headScoresCsv(heads.map((h) => ({ step, ...h }))).replace(/\r\n$/, ''));
    return 0;
  }
  if (note) ctx.err(`No head scores: ${note}`);
  if (s?.truncation) ctx.err(s.truncation);
  ctx.out(
    `${s ? `Head scores at step ${s.step} on ${MEASURED_ON[s.on]}` : 'Heads'}` +
      ` (layer and head from 1; entropy in nats)` +
      `${baseLoss !== null ? ` · validation loss with every head on ${baseLoss.toFixed(4)}` : ''}`,
  );
  for (const line of table(heads)) ctx.out(line);
  return 0;
}
