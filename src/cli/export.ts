/**
 * `attention-lab export`: writes a run as a folder PyTorch users can load — weights under
 * nanoGPT's or the seed notebook's state_dict names, config.json, the tokenizer (and GPT-2's
 * vocab.json + merges.txt for a BPE run), and a README with the lines that load it —
 * through the lab's one export (lab/interop/exportFolder.ts). Always on the reference
 * backend: nothing is computed but the README's example score.
 *
 * Leaves out: the export itself (src/lab/interop) and the other direction (importCmd.ts).
 */

import * as path from 'node:path';
import { createBackend } from '../engine/backends/select';
import { EXPORT_FORMATS, exportRun } from '../lab/interop/exportFolder';
import { NODE_FS } from '../lab/files/fs.node';
import { openRun } from '../lab/inference/openRun';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { RUN_FLAG, runDirOf } from './runFlags';

export const EXPORT_HELP =
  `attention-lab export --run DIR --out DIR [--format pytorch|hf] [--force] ` +
  `[--text TEXT] [--src TEXT]
  Writes DIR/<run's shown name>/: model.safetensors (nanoGPT's GPT or the notebook Transformer's
  state_dict names, fp32, Linear weights [out, in]), config.json, tokenizer.json, for a BPE
  run also vocab.json + merges.txt (GPT-2's format), and README.md with the PyTorch lines
  that load it, the Python they run (reference.py, score_export.py, …), and the score of
  an example text (the run's held-out text, or --text; --src for an encoder-decoder).
  --format hf: a Llama-shaped run (RoPE, RMSNorm, SwiGLU, pre-norm) in Hugging Face's
  LlamaForCausalLM layout (config.json, model.safetensors), which transformers loads with
  from_pretrained; other runs are refused (--format pytorch exports every option).
  An existing non-empty folder of that name is replaced only with --force.`;

/** `export`: flags → the lab's export folder → the files written, or JSON. */
export async function exportCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('export', argv, {
    ...RUN_FLAG,
    format: { type: 'string' },
    out: { type: 'string' },
    force: { type: 'boolean' },
    text: { type: 'string' },
    src: { type: 'string' },
  });
  if (f.bool('help')) return ctx.help(EXPORT_HELP);
  const format = f.choice('format', EXPORT_FORMATS, 'pytorch');
  const out = f.str('out');
  if (!f.str('run') || !out)
    throw new UsageError('`export` needs --run DIR and --out DIR (the export goes into DIR/<run name>).');
  const r = await openRun(NODE_FS, runDirOf(f, ctx, 'export'), createBackend('reference'));
  const text = f.str('text');
  const source = f.str('src');
  const res = await exportRun(NODE_FS, r, path.resolve(ctx.cwd, out), {
    force: f.bool('force'),
    format,
    ...(text !== undefined ? { text } : {}),
    ...(source !== undefined ? { source } : {}),
  });
  if (f.bool('json'))
    ctx.out(
      JSON.stringify({
        dir: res.dir,
        files: res.files,
        tensors: res.tensors,
        warnings: res.warnings,
        example: res.example,
      }),
    );
  else {
    ctx.out(`Wrote ${res.dir}: ${res.files.map((p) => path.basename(p)).join(', ')} (${res.tensors} tensors)`);
    if (res.example)
      ctx.out(
        `Example: ${res.example.tokens} tokens, total log p ${res.example.logprobSum.toFixed(4)} nats (see README.md)`,
      );
    for (const w of res.warnings) ctx.err(`note: ${w}`);
  }
  return 0;
}
