/**
 * `attention-lab lens`: the logit lens of a prompt (or a source and target) as a layer ×
 * position grid of the top-k next tokens, or `--json`. An adapter over the lab's one
 * implementation (lab/inference/lens.ts), which the playground calls too (through the model worker).
 */

import type { LensInput, LensOutput } from '../lab/inference/lens';
import { MAX_TOP_K, logitLensAsync } from '../lab/inference/lens';
import { NODE_FS } from '../lab/files/fs.node';
import { openForRequest } from '../lab/inference/requestPlan';
import { readCheckpointConfig } from '../lab/runs/checkpoint';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { BACKEND_FLAG, RUN_FLAG, deviceBackendOf, runDirOf } from './runFlags';

export const LENS_HELP = `attention-lab lens --run DIR (--prompt TEXT | --src TEXT [--tgt TEXT]) [--top-k K] [--json]
  The logit lens: for each decoder position, the top-K (default 5, at most ${MAX_TOP_K}) next
  tokens read out of the residual stream after the embeddings (layer 0) and after every
  layer, through the final LayerNorm (pre-LN models; a post-LN model's layers end in their
  own LayerNorm) and the output projection. The last layer is the model's own prediction.
  Decoder-only: BOS + the prompt. Encoder-decoder: the source, and the decoder reading BOS +
  --tgt (default: the model's greedy translation). Must fit the context.
  --json   one object: {"tokens", "layers": [{"layer", "positions": [{"top": [{"token", "prob"}]}]}]}`;

/** The lens input of the flags for a model of `kind`. */
function lensInput(f: ReturnType<typeof parseFlags>, kind: 'encoder-decoder' | 'decoder-only'): LensInput {
  const prompt = f.str('prompt');
  const src = f.str('src');
  const tgt = f.str('tgt');
  if (kind === 'encoder-decoder') {
    if (src === undefined)
      throw new UsageError(
        'This run is an encoder-decoder: pass the source with --src TEXT (and optionally --tgt TEXT).',
      );
    if (prompt !== undefined)
      throw new UsageError(
        '--prompt is for decoder-only runs; this one is an encoder-decoder, so use --src (and --tgt).',
      );
    return tgt === undefined ? { src } : { src, tgt };
  }
  if (prompt === undefined) throw new UsageError('This run is a decoder-only model: pass --prompt TEXT.');
  if (src !== undefined || tgt !== undefined)
    throw new UsageError('--src and --tgt are for encoder-decoder runs; this one is decoder-only, so use --prompt.');
  return { prompt };
}

/** The grid as text: a column per position, K rows per layer (the most probable first). */
export function lensTable(lens: LensOutput): string[] {
  const cell = (token: string, prob: number): string => `${JSON.stringify(token)} ${prob.toFixed(2)}`;
  const rows: string[][] = [['layer', ...lens.tokens.map((t) => JSON.stringify(t))]];
  for (const l of lens.layers) {
    const k = l.positions[0]?.top.length ?? 0;
    for (let i = 0; i < k; i++) {
      const name = i > 0 ? '' : l.layer === 0 ? 'emb' : String(l.layer);
      rows.push([name, ...l.positions.map((p) => (p.top[i] ? cell(p.top[i].token, p.top[i].prob) : ''))]);
    }
  }
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) =>
    r
      .map((x, c) => x.padEnd(widths[c] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

/** `lens`: flags → the lab's logit lens → a grid or JSON. */
export async function lensCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('lens', argv, {
    ...RUN_FLAG,
    prompt: { type: 'string' },
    src: { type: 'string' },
    tgt: { type: 'string' },
    'top-k': { type: 'string' },
    ...BACKEND_FLAG,
  });
  if (f.bool('help')) return ctx.help(LENS_HELP);
  const runDir = runDirOf(f, ctx, 'lens');
  const topK = f.int('top-k', 5, 1, MAX_TOP_K);
  const { config } = await readCheckpointConfig(NODE_FS, runDir);
  const input = lensInput(f, config.kind);
  const r = await openForRequest(NODE_FS, runDir, await deviceBackendOf(f), { job: 'lens', input });
  const lens = await logitLensAsync(r, input, { topK });
  if (f.bool('json')) ctx.out(JSON.stringify(lens));
  else for (const line of lensTable(lens)) ctx.out(line);
  return 0;
}
