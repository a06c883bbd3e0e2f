/**
 * The `attention-lab` command: dispatches to a subcommand and turns errors into exit
 * codes — 2 with one line for anything the user can fix (bad flags, bad data, a damaged or
 * foreign file: lab/workers/errorCodes.ts `isUserFixable`), 1 for anything else (one line for an engine
 * error such as a non-finite loss, details for a bug). Never a stack trace for a user error.
 */

import * as path from 'node:path';
import { EngineError } from '../engine/errors';
import { createBackend } from '../engine/backends/select';
import { isUserFixable } from '../lab/workers/errorCodes';
import { DiskFullError } from '../lab/runs/atomicFile';
import { exportRun } from '../lab/interop/exportFolder';
import { openRun } from '../lab/runs/openRun';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { DECODE_HELP, EVAL_HELP, SCORE_HELP, TOKENIZE_HELP, decodeCommand, evalCommand, scoreCommand, tokenizeCommand } from './inspect';
import { BENCH_HELP, benchCommand } from './bench';
import { LENS_HELP, lensCommand } from './lens';
import { HEADS_HELP, headsCommand } from './heads';
import { IMPORT_HELP, importCommand } from './importCmd';
import { REPORT_HELP, reportCommand } from './report';
import { TRAIN_HELP, trainCommand } from './train';

declare const VERSION: string | undefined;

const EXPORT_HELP = `attention-lab export --run DIR --out DIR [--format pytorch] [--force] [--text TEXT] [--src TEXT]
  Writes DIR/<run name>/: model.safetensors (nanoGPT's GPT or the notebook Transformer's
  state_dict names, fp32, Linear weights [out, in]), config.json, tokenizer.json, for a BPE
  run also vocab.json + merges.txt (GPT-2's format), and README.md with the PyTorch lines
  that load it and the score of an example text (--text; --src for an encoder-decoder).
  An existing non-empty folder of that name is replaced only with --force.`;

function exportCommand(argv: string[], ctx: CommandContext): number {
  const f = parseFlags('export', argv, { run: { type: 'string' }, format: { type: 'string' }, out: { type: 'string' }, force: { type: 'boolean' }, text: { type: 'string' }, src: { type: 'string' } });
  if (f.bool('help')) return ctx.help(EXPORT_HELP);
  f.choice('format', ['pytorch'] as const, 'pytorch');
  const run = f.str('run');
  const out = f.str('out');
  if (!run || !out) throw new UsageError('`export` needs --run DIR and --out DIR (the export goes into DIR/<run name>).');
  const r = openRun(path.resolve(ctx.cwd, run), createBackend('reference'));
  const text = f.str('text');
  const source = f.str('src');
  const res = exportRun(r, path.resolve(ctx.cwd, out), { force: f.bool('force'), ...(text !== undefined ? { text } : {}), ...(source !== undefined ? { source } : {}) });
  if (f.bool('json')) ctx.out(JSON.stringify({ dir: res.dir, files: res.files, tensors: res.tensors, warnings: res.warnings, example: res.example }));
  else {
    ctx.out(`Wrote ${res.dir}: ${res.files.map((p) => path.basename(p)).join(', ')} (${res.tensors} tensors)`);
    if (res.example) ctx.out(`Example: ${res.example.tokens} tokens, total log p ${res.example.logprobSum.toFixed(4)} nats (see README.md)`);
    for (const w of res.warnings) ctx.err(`note: ${w}`);
  }
  return 0;
}

const COMMANDS: Record<string, { run: (argv: string[], ctx: CommandContext) => number | Promise<number>; summary: string; help: string }> = {
  train: { run: trainCommand, summary: 'train a model (default: the reverse task) in a run folder', help: TRAIN_HELP },
  eval: { run: evalCommand, summary: 'loss, perplexity, exact match and BLEU of a run, on its validation set or on test files', help: EVAL_HELP },
  decode: { run: decodeCommand, summary: 'generate text: greedy, beam search or sampling', help: DECODE_HELP },
  score: { run: scoreCommand, summary: 'per-token log-probabilities of a text', help: SCORE_HELP },
  lens: { run: lensCommand, summary: 'logit lens: the top next tokens read out after every layer', help: LENS_HELP },
  tokenize: { run: tokenizeCommand, summary: "show a run's tokenization of a text", help: TOKENIZE_HELP },
  export: { run: exportCommand, summary: 'write a folder for PyTorch: weights (nanoGPT / notebook names), config, tokenizer, README', help: EXPORT_HELP },
  import: { run: importCommand, summary: 'open a PyTorch .safetensors checkpoint (ours, nanoGPT, GPT-2, notebook) as a run folder', help: IMPORT_HELP },
  bench: { run: benchCommand, summary: 'measure speed against PyTorch (and TF.js) in the same run', help: BENCH_HELP },
  heads: { run: headsCommand, summary: 'what each attention head does: previous-token, induction, alignment … scores; --ablate: Δ loss per head', help: HEADS_HELP },
  report: { run: reportCommand, summary: 'write the dashboard of a run as one self-contained HTML file', help: REPORT_HELP },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'attention-lab — train the transformer of "Attention Is All You Need" on your own files',
    '',
    'Usage: attention-lab <command> [options]   (attention-lab <command> --help for its options)',
    '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
  ].join('\n');
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: string[], ctx: CommandContext): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    ctx.out(usage());
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    ctx.out(typeof VERSION === 'string' ? VERSION : 'dev');
    return 0;
  }
  const cmd = COMMANDS[command];
  try {
    if (!cmd) throw new UsageError(`unknown command "${command}"; commands are ${Object.keys(COMMANDS).join(', ')}.`);
    return await cmd.run(rest, ctx);
  } catch (e) {
    if (DiskFullError.is(e)) {
      ctx.err(`attention-lab: ${e.message}`);
      return 2; // nothing half-written was left: free space and run it again
    }
    if (e instanceof UsageError || EngineError.is(e)) {
      // An EngineError's message is written for people: one line either way, but only what
      // the user can fix exits 2 (the same classification as a failed training run).
      ctx.err(`attention-lab: ${e.message}`);
      return e instanceof UsageError || isUserFixable(e.code) ? 2 : 1;
    }
    ctx.err(`attention-lab: internal error: ${(e as Error)?.stack ?? String(e)}`);
    return 1;
  }
}
