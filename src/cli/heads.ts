/**
 * `attention-lab heads`: what each attention head does at one snapshot step — previous-token,
 * first-token, diagonal, induction and entropy for self-attention, diagonal and anti-diagonal
 * alignment for cross-attention — as a table or, with --json, one object with 1-based layer
 * and head numbers (as the dashboard labels them). The scores come from the lab
 * (lab/inference/heads.ts); definitions in src/engine/analysis/headScores.ts.
 */

import * as path from 'node:path';
import { headsOfRun } from '../lab/inference/heads';
import type { HeadScoreData } from '../protocol/model';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';

export const HEADS_HELP = `attention-lab heads --run DIR [--step N] [--json]
  Scores of every attention head at a snapshot step (default: the last one). Self-attention:
  previousToken, firstToken (BOS sink), diagonal, induction (on random tokens repeated
  twice), entropy (nats); cross-attention: diagonal (copy) and antiDiagonal (reverse).
  --json prints {"step": N, "heads": [{"stack", "layer", "head", "scores"}, …]}, 1-based.`;

/** A head as people number it: layer and head from 1. */
function oneBased(h: HeadScoreData): HeadScoreData {
  return { ...h, layer: h.layer + 1, head: h.head + 1 };
}

/** Rows of one table per kind of scores. */
function table(heads: readonly HeadScoreData[]): string[] {
  const lines: string[] = [];
  for (const cross of [false, true]) {
    const rows = heads.filter((h) => (h.stack === 'decoder.cross') === cross);
    const first = rows[0];
    if (!first) continue;
    const names = Object.keys(first.scores);
    const w = Math.max(...names.map((n) => n.length), 6);
    lines.push(['stack'.padEnd(13), 'layer', 'head', ...names.map((n) => n.padStart(w))].join('  '));
    for (const h of rows) {
      const vals = Object.values(h.scores).map((v: number) => v.toFixed(3).padStart(w));
      lines.push([h.stack.padEnd(13), String(h.layer + 1).padStart(5), String(h.head + 1).padStart(4), ...vals].join('  '));
    }
    lines.push('');
  }
  return lines;
}

/** Runs `heads`. Returns the exit code. */
export function headsCommand(argv: string[], ctx: CommandContext): number {
  const f = parseFlags('heads', argv, { run: { type: 'string' }, step: { type: 'string' } });
  if (f.bool('help')) return ctx.help(HEADS_HELP);
  const run = f.str('run');
  if (!run) throw new UsageError('`heads` needs --run DIR (a folder that `attention-lab train` created).');
  const step = f.has('step') ? f.int('step', 0, 0) : null;
  const r = headsOfRun(path.resolve(ctx.cwd, run), step);
  if (f.bool('json')) ctx.out(JSON.stringify({ step: r.step, heads: r.heads.map(oneBased) }));
  else {
    ctx.out(`Head scores at step ${r.step} (layer and head from 1; entropy in nats)`);
    for (const line of table(r.heads)) ctx.out(line);
  }
  return 0;
}
