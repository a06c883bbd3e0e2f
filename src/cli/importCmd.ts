/**
 * `attention-lab import`: a thin adapter over the lab's import job (lab/interop/importCheckpoint.ts)
 * — flags in, a progress line while the weights stream in (Ctrl-C cancels, nothing is
 * written), and what was imported out.
 */

import * as path from 'node:path';
import { formatBytes, formatCompact } from '../common/format';
import { listDocumentFiles } from '../lab/data/globFiles.node';
import { NODE_FS } from '../lab/files/fs.node';
import { CancelledError } from '../lab/base/cancelled';
import { FINE_TUNE_LR, FINE_TUNE_STEPS, importCheckpoint } from '../lab/interop/importCheckpoint';
import type { ImportRequest } from '../lab/interop/importCheckpoint';
import { IMPORT_LAYOUTS } from '../engine/models/importLayouts';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { PrepareLine } from './progress';

export const IMPORT_HELP = `attention-lab import --from DIR_OR_FILE --out RUN_DIR [options]
  Opens a PyTorch checkpoint — .safetensors, or torch.save's .bin/.pt/.pth (its pickle read
  by a restricted reader that runs nothing and refuses any global but tensors'; a state dict
  under "model" is found, nanoGPT's model_args size it) — as an ordinary run folder, for
  decode, score, lens, heads, report, export and train --resume. A Hugging Face folder
  (config.json + model.safetensors, or model.safetensors.index.json and its shards;
  F32, BF16 or F16) of a Llama, Qwen2/2.5, Qwen3, Mistral or GPT-NeoX/Pythia model keeps
  the model's own name in the run. Layouts, detected from config.json's model_type or
  the tensor names and shapes:
    ${Object.values(IMPORT_LAYOUTS).join('\n    ')}
  The config comes from a config.json beside the checkpoint, else from the shapes.
Options:
  --heads N              attention heads, when no config.json says (shapes cannot)
  --tokenizer PATH       tokenizer.json, vocab.json (+ merges.txt beside it), or a folder
                         (default: the files beside the checkpoint)
  --data GLOB…           documents that train --resume RUN_DIR fine-tunes on
  --steps N              fine-tuning steps (default ${FINE_TUNE_STEPS})
  --lr X                 fine-tuning peak learning rate (default ${FINE_TUNE_LR}, AdamW + cosine:
                         low, so the imported weights are adjusted rather than overwritten)
  --json                 print one JSON object`;

const FLAGS = {
  from: { type: 'string' },
  out: { type: 'string' },
  heads: { type: 'string' },
  tokenizer: { type: 'string' },
  data: { type: 'string', multiple: true },
  steps: { type: 'string' },
  lr: { type: 'string' },
} as const;

export async function importCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('import', argv, FLAGS);
  if (f.bool('help')) return ctx.help(IMPORT_HELP);
  const from = f.str('from');
  const out = f.str('out');
  if (!from || !out)
    throw new UsageError(
      '`import` needs --from DIR_OR_FILE (a .safetensors or .bin/.pt checkpoint, or its folder) and --out RUN_DIR.',
    );
  const req: { -readonly [K in keyof ImportRequest]: ImportRequest[K] } = {
    from: path.resolve(ctx.cwd, from),
    out: path.resolve(ctx.cwd, out),
  };
  if (f.has('heads')) req.heads = f.num('heads', 0, 1, 4096);
  if (f.has('heads') && !Number.isInteger(req.heads))
    throw new UsageError(`--heads must be a whole number, got ${f.str('heads')}.`);
  const tokenizer = f.str('tokenizer');
  if (tokenizer) req.tokenizer = path.resolve(ctx.cwd, tokenizer);
  if (f.has('data')) {
    const listed = await listDocumentFiles([...f.list('data'), ...f.positionals], ctx.cwd);
    req.data = { files: listed.files, root: listed.root };
  } else if (f.positionals.length)
    throw new UsageError(`unexpected argument "${f.positionals[0]}"; pass documents to fine-tune on with --data GLOB.`);
  if (f.has('steps')) req.steps = Math.round(f.num('steps', FINE_TUNE_STEPS, 1, 1e9));
  if (f.has('lr')) req.lr = f.num('lr', FINE_TUNE_LR, 1e-9, 1);
  const json = f.bool('json');
  const line = new PrepareLine(ctx.stderr);
  let cancelled = false;
  const onInt = (): void => {
    cancelled = true;
  };
  process.once('SIGINT', onInt);
  const started = Date.now();
  try {
    const res = await importCheckpoint(NODE_FS, req, {
      ...(json ? {} : { onProgress: (p) => line.update(p) }),
      isCancelled: () => cancelled,
      yieldNow: () => new Promise((resolve) => setImmediate(resolve)),
    });
    line.end();
    const seconds = (Date.now() - started) / 1000;
    if (json) {
      ctx.out(
        JSON.stringify({
          runDir: res.runDir,
          layout: res.layout,
          modelFile: res.modelFile,
          config: res.config,
          params: res.params,
          tensors: res.tensors,
          ignored: res.ignored,
          tokenizer: res.tokenizer,
          notes: res.notes,
          bytesRead: res.bytesRead,
          ...(res.source ? { source: res.source } : {}),
          seconds,
        }),
      );
      return 0;
    }
    const what = res.source ? `${res.source.name} (${res.source.architecture})` : res.layoutText;
    ctx.out(
      `Imported ${what}: ${formatCompact(res.params)} parameters, ${res.tensors} tensors ` +
        `(${formatBytes(res.bytesRead)} in ${seconds.toFixed(1)} s) → ${res.runDir}`,
    );
    const c = res.config;
    ctx.out(
      `  ${c.kind}, ` +
        `${c.kind === 'decoder-only' ? c.nDecoderLayers : `${c.nEncoderLayers}+${c.nDecoderLayers}`}` +
        ` layers, d_model ${c.dModel}, ${c.nHeads} heads, d_ff ${c.dFF}, vocab ` +
        `${c.vocabSize}, context ${c.maxLen}, ${c.activation}, ` +
        `${c.tieEmbeddings ? 'tied' : 'untied'} output`,
    );
    ctx.out(`  tokenizer: ${res.tokenizer}`);
    if (res.ignored.length)
      ctx.out(
        `  not used: ${res.ignored.length} tensor(s) ` +
          `(${res.ignored.slice(0, 2).join(', ')}${res.ignored.length > 2 ? ', …' : ''})`,
      );
    for (const n of res.notes) ctx.out(`  ${n}`);
    const input = c.kind === 'encoder-decoder' ? '--src' : '--prompt';
    ctx.out(
      `Next: attention-lab decode --run ${out} ${input} "…", score, lens, heads, report, or train --resume ${out}`,
    );
    return 0;
  } catch (e) {
    line.end();
    if (e instanceof CancelledError) {
      ctx.err(`attention-lab: ${e.message}`);
      return 130;
    }
    throw e;
  } finally {
    process.removeListener('SIGINT', onInt);
  }
}
