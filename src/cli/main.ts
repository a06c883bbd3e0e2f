/**
 * The `attention-lab` command: dispatches to a subcommand and turns errors into exit
 * codes — 2 with one line for anything the user can fix (bad flags, bad data, a damaged or
 * foreign file, a disk that is full or read-only, a file where a folder must be:
 * lab/base/errorCodes.ts `isUserFixable`, lab/files/fileErrors.ts), 1 for anything else (one line for an engine
 * error such as a non-finite loss, details for a bug). Never a stack trace for a user error.
 *
 * Leaves out: the commands, one file each (train.ts, eval.ts, decode.ts, score.ts, lens.ts, patch.ts,
 * tokenize.ts, export.ts, importCmd.ts, bench.ts, heads.ts, report.ts, attribute.ts,
 * steer.ts), and the flags
 * they share (args.ts; runFlags.ts for --run and --backend).
 */

import { EngineError } from '../engine/errors';
import { isUserFixable } from '../lab/base/errorCodes';
import { RunLockedError } from '../lab/runs/runLock';
import { fileErrorData } from '../lab/files/fileErrors';
import { UsageError } from './args';
import type { CommandContext } from './context';
import { ATTRIBUTE_HELP, attributeCommand } from './attribute';
import { BENCH_HELP, benchCommand } from './bench';
import { DECODE_HELP, decodeCommand } from './decode';
import { EVAL_HELP, evalCommand } from './eval';
import { EXPORT_HELP, exportCommand } from './export';
import { LENS_HELP, lensCommand } from './lens';
import { PATCH_HELP, patchCommand } from './patch';
import { HEADS_HELP, headsCommand } from './heads';
import { IMPORT_HELP, importCommand } from './importCmd';
import { REPORT_HELP, reportCommand } from './report';
import { SCORE_HELP, scoreCommand } from './score';
import { STEER_HELP, steerCommand } from './steer';
import { TOKENIZE_HELP, tokenizeCommand } from './tokenize';
import { TRAIN_HELP, trainCommand } from './train';

declare const VERSION: string | undefined;

const COMMANDS: Record<
  string,
  { run: (argv: string[], ctx: CommandContext) => number | Promise<number>; summary: string; help: string }
> = {
  train: { run: trainCommand, summary: 'train a model (default: the reverse task) in a run folder', help: TRAIN_HELP },
  eval: {
    run: evalCommand,
    summary: 'loss, perplexity, exact match and BLEU of a run, on its validation set or on test files',
    help: EVAL_HELP,
  },
  decode: { run: decodeCommand, summary: 'generate text: greedy, beam search or sampling', help: DECODE_HELP },
  score: { run: scoreCommand, summary: 'per-token log-probabilities of a text', help: SCORE_HELP },
  lens: { run: lensCommand, summary: 'logit lens: the top next tokens read out after every layer', help: LENS_HELP },
  patch: {
    run: patchCommand,
    summary: 'activation and path patching: which layers, heads and positions carry a clean answer',
    help: PATCH_HELP,
  },
  attribute: {
    run: attributeCommand,
    summary: 'direct logit attribution, accumulated residual, attribution patching of two prompts',
    help: ATTRIBUTE_HELP,
  },
  steer: {
    run: steerCommand,
    summary: 'steering: add α × the difference of two prompts at a layer while decoding, beside unsteered',
    help: STEER_HELP,
  },
  tokenize: { run: tokenizeCommand, summary: "show a run's tokenization of a text", help: TOKENIZE_HELP },
  export: {
    run: exportCommand,
    summary: 'write a folder for PyTorch: weights (nanoGPT / notebook names), config, tokenizer, README',
    help: EXPORT_HELP,
  },
  import: {
    run: importCommand,
    summary: 'open a PyTorch .safetensors checkpoint (ours, nanoGPT, GPT-2, notebook) as a run folder',
    help: IMPORT_HELP,
  },
  bench: { run: benchCommand, summary: 'measure speed against PyTorch (and TF.js) in the same run', help: BENCH_HELP },
  heads: {
    run: headsCommand,
    summary: 'what each attention head does: previous-token, induction, alignment … scores; --ablate: Δ loss per head',
    help: HEADS_HELP,
  },
  report: {
    run: reportCommand,
    summary: 'write the dashboard of a run as one self-contained HTML file',
    help: REPORT_HELP,
  },
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
    if (RunLockedError.is(e)) {
      ctx.err(`attention-lab: ${e.message}`);
      return 2; // another session trains the run: stop it, or wait
    }
    const fileError = fileErrorData(e);
    if (fileError) {
      ctx.err(`attention-lab: ${fileError.message}`);
      return 2; // a full or read-only disk, a file in the way …: nothing half-written was left
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
