/**
 * `attention-lab steer`: steering by activation addition — the difference of two prompts' mean
 * residual stream at a layer, times α, added at every position while the prompt is decoded;
 * prints the steered continuation beside the unsteered one (or `--json` / `--csv`). An adapter
 * over the lab's one implementation (lab/inference/steer.ts), which the model worker calls too.
 */

import * as path from 'node:path';
import { toCsv } from '../common/csv';
import { NODE_FS } from '../lab/files/fs.node';
import { MAX_DECODE_TOKENS } from '../lab/inference/decode';
import { openRun } from '../lab/inference/openRun';
import { steerPlan, steerRun } from '../lab/inference/steer';
import { readCheckpointConfig } from '../lab/runs/checkpoint';
import { readTokenizer } from '../lab/runs/tokenizerFile';
import { DECODE_STRATEGIES } from '../protocol/data';
import type { SteerOutputData, SteerRequestData } from '../protocol/steering';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { BACKEND_FLAG, RUN_FLAG, backendOf } from './runFlags';

export const STEER_HELP = `attention-lab steer RUN --layer L --plus TEXT --minus TEXT --alpha A --prompt TEXT
        [--tokens N] [--strategy greedy|sample|beam] [--temperature T] [--top-k K] [--top-p P]
        [--beam N] [--seed N] [--json | --csv]
  Steering by activation addition: v = mean over positions of the residual stream entering
  layer L on --plus − the same on --minus (each read as BOS + its tokens); while --prompt is
  decoded, α·v is added to that stream at every position, the prompt's and each new token's.
  Prints the steered continuation and, beside it, the same decode unsteered.
  --layer   0 to the number of layers: the stream entering that layer (0: after the embedding;
            the number of layers: the final norm's input), TransformerLens's blocks.L.hook_resid_pre
  --tokens  tokens to generate (default 20); decoding settings as for \`decode\` (default greedy)
  RUN (or --run DIR) a run folder. An encoder-decoder run: --plus, --minus and --prompt are
            sources; v is the difference of the decoder's stream at layer L, averaged over the
            model's own greedy translation of each, and is added to the decoder's stream while
            --prompt's translation is decoded.
  --json   one object: {"layer", "alpha", "norm", "streamNorm", "steered", "unsteered"}; norm is ‖v‖,
           streamNorm the mean norm of the stream at the layer; steered/unsteered as \`decode\`'s output
  --csv    which,text,tokens,score: one line per decode`;

/** The request of the flags. */
function requestOf(f: ReturnType<typeof parseFlags>): SteerRequestData {
  const need = (name: string): string => {
    const v = f.str(name);
    if (v === undefined) throw new UsageError(`\`steer\` needs --${name} (see \`attention-lab steer --help\`).`);
    return v;
  };
  need('layer');
  need('alpha');
  const strategy = f.choice('strategy', DECODE_STRATEGIES, 'greedy');
  return {
    vector: { plus: need('plus'), minus: need('minus'), layer: f.int('layer', 0, 0), alpha: f.num('alpha', 0) },
    decode: {
      input: need('prompt'),
      strategy,
      beam: strategy === 'beam' ? f.int('beam', 4, 1, 64) : 1,
      lengthPenalty: f.num('length-penalty', 0.6, 0),
      temperature: f.num('temperature', 1, 0),
      topK: f.int('top-k', 0, 0),
      topP: f.num('top-p', 1, 0, 1),
      maxTokens: f.int('tokens', 20, 1, MAX_DECODE_TOKENS),
      seed: f.int('seed', 1, -2147483648, 2147483647),
    },
  };
}

/** The results as text: the vector, then both continuations. */
export function steerLines(out: SteerOutputData, prompt: string): string[] {
  return [
    `v at the stream entering layer ${out.layer}: ‖v‖ ${out.norm.toFixed(4)} (the stream's mean norm there ` +
      `${out.streamNorm.toFixed(4)}); α ${out.alpha}, so ‖α·v‖ ${(Math.abs(out.alpha) * out.norm).toFixed(4)}`,
    `steered:   ${JSON.stringify(prompt + out.steered.text)}`,
    `unsteered: ${JSON.stringify(prompt + out.unsteered.text)}`,
  ];
}

/** The results as CSV: one line per decode. */
export function steerCsv(out: SteerOutputData): string {
  return toCsv(
    ['which', 'text', 'tokens', 'score'],
    (['steered', 'unsteered'] as const).map((w) => [w, out[w].text, out[w].tokens.join('\u241f'), out[w].score]),
  );
}

/** `steer`: flags → the lab's steering → text, JSON or CSV. */
export async function steerCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags(
    'steer',
    argv,
    {
      ...RUN_FLAG,
      layer: { type: 'string' },
      plus: { type: 'string' },
      minus: { type: 'string' },
      alpha: { type: 'string' },
      prompt: { type: 'string' },
      tokens: { type: 'string' },
      strategy: { type: 'string' },
      beam: { type: 'string' },
      'length-penalty': { type: 'string' },
      temperature: { type: 'string' },
      'top-k': { type: 'string' },
      'top-p': { type: 'string' },
      seed: { type: 'string' },
      csv: { type: 'boolean' },
      ...BACKEND_FLAG,
    },
    1,
  );
  if (f.bool('help')) return ctx.help(STEER_HELP);
  const run = f.positionals[0] ?? f.str('run');
  if (!run) throw new UsageError('`steer` needs a run folder: attention-lab steer RUN --layer … (or --run DIR).');
  if (f.positionals[0] !== undefined && f.str('run') !== undefined)
    throw new UsageError('Give the run folder once: as RUN or as --run DIR, not both.');
  const json = f.bool('json');
  const csv = f.bool('csv');
  if (json && csv) throw new UsageError('`steer` prints either --json or --csv, not both; pick one.');
  const req = requestOf(f);
  const runDir = path.resolve(ctx.cwd, run);
  const { config } = await readCheckpointConfig(NODE_FS, runDir);
  const tok = await readTokenizer(NODE_FS, runDir);
  const r = await openRun(NODE_FS, runDir, backendOf(f), steerPlan(config, tok, req));
  const out = steerRun(r, req);
  if (json) ctx.out(JSON.stringify(out));
  else if (csv) ctx.out(steerCsv(out).replace(/\r\n$/, ''));
  else for (const line of steerLines(out, req.decode.input)) ctx.out(line);
  return 0;
}
