/**
 * `attention-lab ablate`: head importance — the change in validation loss when each
 * attention head alone is switched off (lab/inference/ablate.ts) — as a table or `--json`.
 * To be folded into `attention-lab heads --ablate` beside the head scores.
 */

import * as path from 'node:path';
import { createBackend } from '../engine/backends/select';
import { headImportance, openRunWithValidation } from '../lab/inference/ablate';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';

export const ABLATE_HELP = `attention-lab ablate --run DIR [--json]
  Head importance: for every attention head (encoder self, decoder self, decoder cross), the
  validation loss (the run's validation batches, no label smoothing, as \`eval\`) with that
  head's output zeroed minus the loss with every head on. Positive: the model relies on it.
  Layers and heads are numbered from 1.
  --json   one object: {"baseLoss", "heads": [{"stack", "layer", "head", "deltaLoss"}]}`;

/** `ablate`: flags → the lab's head importance → a table or JSON. */
export async function ablateCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('ablate', argv, { run: { type: 'string' }, backend: { type: 'string' } });
  if (f.bool('help')) return ctx.help(ABLATE_HELP);
  const runDir = f.str('run');
  if (!runDir) throw new UsageError('`ablate` needs --run DIR (a folder that `attention-lab train` created).');
  const backend = createBackend(f.choice('backend', ['auto', 'wasm', 'reference'] as const, 'auto'));
  const { run, batches } = await openRunWithValidation(path.resolve(ctx.cwd, runDir), backend);
  if (!batches.length) throw new UsageError('This run has no validation batches to measure heads on; retrain it with a validation split.');
  const json = f.bool('json');
  if (!json) ctx.err(`Switching each of the model's heads off in turn on ${batches.length} validation batches…`);
  const r = headImportance(run.model, batches);
  const heads = r.heads.map((h) => ({ stack: h.stack, layer: h.layer + 1, head: h.head + 1, deltaLoss: h.deltaLoss }));
  if (json) {
    ctx.out(JSON.stringify({ baseLoss: r.baseLoss, heads }));
    return 0;
  }
  ctx.out(`validation loss with every head on ${r.baseLoss.toFixed(4)}`);
  ctx.out('stack          layer  head     Δloss');
  for (const h of heads) ctx.out(`${h.stack.padEnd(14)} ${String(h.layer).padStart(5)} ${String(h.head).padStart(5)}  ${(h.deltaLoss >= 0 ? '+' : '') + h.deltaLoss.toFixed(4)}`);
  return 0;
}
