/**
 * `attention-lab export` and the editor's "Export for PyTorch": one folder, named after the
 * run, that is usable alone:
 *
 *   <out>/<run name>/     the name the run shows (common/fileNames.ts), not its folder's id
 *     model.safetensors   fp32 weights under nanoGPT's / the notebook Transformer's names
 *     config.json         their constructor fields + an `attention_lab` block (below)
 *     tokenizer.json      our tokenizer, as the run saved it
 *     vocab.json          (byte-level BPE only) the same BPE in GPT-2's format, which
 *     merges.txt            Hugging Face's GPT2Tokenizer reads with the same ids
 *     README.md           the lines of PyTorch that load it and reproduce `attention-lab score`
 *     reference.py, safetensors_io.py, lab_tokenizers.py, score_export.py
 *                         the PyTorch model, reader and check the README runs (scripts/pytorch/,
 *                         built into exportPython.generated.ts by scripts/exportPython.mjs), so
 *                         the folder needs nothing else
 *
 * config.json's `attention_lab` block: `format` ("attention-lab-export"), `version` (1),
 * `run` (the name), `step`, `config` (the whole ModelConfig, so an import rebuilds the model
 * exactly), `tokenizer` ({type, file, vocab_size, special_ids}) and `example` (a text and the
 * log-probability `attention-lab score` gives it, computed here, so a PyTorch run can be
 * checked against it: score_export.py). The example is the run's own held-out text (the
 * first of the prompts its data recorded), so it is in the language the model learned; a run
 * with none scores {@link DEFAULT_EXAMPLE}.
 *
 * `format: 'hf'` writes a Llama-shaped run in Hugging Face's `LlamaForCausalLM` layout instead
 * (exportHf.ts: config.json's Llama fields beside the same `attention_lab` block, whose example
 * also lists its ids; the tokenizer as attention_lab_tokenizer.json, since transformers reads a
 * tokenizer.json as its own format; lab_tokenizers.py; a README with the transformers lines),
 * and refuses, in one line, a run Llama cannot express.
 *
 * Everything is computed in memory first; the files go into a temporary folder beside the
 * target, which is renamed into place, so a failure or a kill never leaves a half-written
 * export. A non-empty existing folder is replaced only with `force`, and never when it is a
 * run folder.
 *
 * Leaves out: the tensor layout (exportPytorch.ts) and reading exports back (import).
 */

import { EngineError } from '../../engine/errors';
import { BpeTokenizer } from '../../engine/tokenizers/bpeTokenizer';
import { gpt2FilesOf } from '../../engine/tokenizers/gpt2Files';
import { hfTokenizerConfigJson } from '../../engine/tokenizers/hfVocab';
import type { LabFs } from '../files/labFs';
import { exists, listNames, scratchFolder } from '../files/labFs';
import { folderError } from '../files/fileErrors';
import { exportReadme } from './exportReadme';
import { HF_EXPORT_TOKENIZER } from './importTokenizer';
import type { ExportExample } from './exportReadme';
import { pytorchConfig, pytorchTensors } from './exportPytorch';
import { checkLlamaShaped, hfLlamaConfig, hfLlamaTensors, llamaDifferences } from './exportHf';
import { scoreText } from '../inference/score';
import type { OpenRun } from '../inference/openRun';
import { RUN_FILES } from '../runs/runFolder';
import { HfTokenizer } from '../runs/hfTokenizer';
import { folderNameOf } from '../../common/fileNames';
import { EXPORT_PYTHON_FILES } from './exportPython.generated';

/** The `format` of config.json's `attention_lab` block. */
export const EXPORT_FORMAT = 'attention-lab-export';
/** Its version. */
export const EXPORT_VERSION = 1;

/** The example scored at export time when none is given and the run recorded no held-out text. */
export const DEFAULT_EXAMPLE = {
  text: 'To be, or not to be, that is the question.\n',
  source: 'the cat sat on the mat',
} as const;

/** The layouts of an export: ours under PyTorch names, or Hugging Face's LlamaForCausalLM. */
export const EXPORT_FORMATS = ['pytorch', 'hf'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Options of {@link exportRun}. */
export interface ExportOptions {
  /** The layout (default 'pytorch'). */
  readonly format?: ExportFormat;
  /** Replace a non-empty folder of the same name. */
  readonly force?: boolean;
  /** The example text (the target, for an encoder-decoder) scored into the README. */
  readonly text?: string;
  /** The example's source (encoder-decoder only). */
  readonly source?: string;
}

export type { ExportExample } from './exportReadme';

/** What an export wrote. */
export interface ExportResult {
  /** The folder written: `<out>/<run name>`. */
  readonly dir: string;
  readonly files: readonly string[];
  readonly tensors: number;
  /** Ways the model differs from the PyTorch class it is named after, and files left out. */
  readonly warnings: readonly string[];
  /** The example's score (null when it could not be scored, with a warning saying why). */
  readonly example: ExportExample | null;
}

/** Scores the example as the CLI's `score` would; null (with a warning) when it cannot be. */
function scoreExample(r: OpenRun, opts: ExportOptions, warnings: string[]): ExportExample | null {
  const encdec = r.model.config.kind === 'encoder-decoder';
  const own = encdec ? undefined : r.run.data.prompts?.[0];
  const text = opts.text ?? own ?? DEFAULT_EXAMPLE.text;
  const source = encdec ? (opts.source ?? DEFAULT_EXAMPLE.source) : null;
  try {
    const { output, ids } = scoreText(r, source, text);
    return {
      text,
      source,
      tokens: output.logprobs.length,
      logprobSum: output.logprobs.reduce((a, b) => a + b, 0),
      ids: [...ids],
    };
  } catch (e) {
    if (!EngineError.is(e)) throw e;
    warnings.push(`no example score in README.md: ${e.message}`);
    return null;
  }
}

/** The files of the export, in memory: name → contents. */
function exportFiles(
  r: OpenRun,
  name: string,
  opts: ExportOptions,
): { files: Map<string, Uint8Array | string>; tensors: number; warnings: string[]; example: ExportExample | null } {
  const c = r.model.config;
  const hf = opts.format === 'hf';
  const { bytes, tensors, warnings } = hf
    ? { ...hfLlamaTensors(r.model), warnings: [] as string[] }
    : pytorchTensors(r.model);
  if (!hf && c.kind === 'decoder-only' && llamaDifferences(c).length === 0)
    warnings.push("this run is Llama-shaped: --format hf writes it in Hugging Face's LlamaForCausalLM layout");
  const files = new Map<string, Uint8Array | string>();
  files.set('model.safetensors', bytes);
  const tok = r.tok;
  // An imported model's Hugging Face tokenizer leaves as it came, which transformers reads as its own.
  const hfTok = tok instanceof HfTokenizer ? tok : null;
  const tokFile = hf && !hfTok ? HF_EXPORT_TOKENIZER : 'tokenizer.json';
  let gpt2 = false;
  if (tok instanceof BpeTokenizer) {
    try {
      const g = gpt2FilesOf(tok);
      files.set('vocab.json', g.vocabJson);
      files.set('merges.txt', g.mergesText);
      gpt2 = true;
    } catch (e) {
      if (!EngineError.is(e)) throw e;
      warnings.push(`no vocab.json / merges.txt: ${e.message}`);
    }
  }
  if (hfTok) {
    files.set(tokFile, `${JSON.stringify(hfTok.vocab.json)}\n`);
    files.set('tokenizer_config.json', `${JSON.stringify(hfTokenizerConfigJson(hfTok.config), null, 2)}\n`);
  } else files.set(tokFile, `${JSON.stringify(tok.toJSON())}\n`);
  const example = scoreExample(r, opts, warnings);
  const config = {
    ...(hf ? hfLlamaConfig(c, tok.specialIds) : pytorchConfig(c)),
    attention_lab: {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      run: name,
      step: r.step,
      config: c,
      tokenizer: {
        type: tok.type,
        file: tokFile,
        vocab_size: tok.vocabSize,
        special_ids: tok.specialIds,
        ...(gpt2 ? { vocab: 'vocab.json', merges: 'merges.txt' } : {}),
        ...(hfTok ? { huggingface: true } : {}),
      },
      example: example && {
        text: example.text,
        ...(example.source !== null ? { source: example.source } : {}),
        tokens: example.tokens,
        logprob_sum: example.logprobSum,
        ...(hf ? { ids: example.ids } : {}),
      },
    },
  };
  files.set('config.json', `${JSON.stringify(config, null, 2)}\n`);
  for (const [file, text] of Object.entries(EXPORT_PYTHON_FILES))
    if (!hf || file === 'lab_tokenizers.py') files.set(file, text);
  files.set(
    'README.md',
    exportReadme({
      format: hf ? 'hf' : 'pytorch',
      name,
      step: r.step,
      config: c,
      tokType: tok.type,
      gpt2Files: gpt2,
      hfTokenizer: hfTok !== null,
      specialIds: tok.specialIds,
      example,
      warnings,
    }),
  );
  return { files, tensors, warnings, example };
}

/** The name of `r`'s export folder: the name the run shows, as a folder name. */
export function exportFolderName(fs: LabFs, r: OpenRun): string {
  const own = fs.basename(fs.resolve(r.runDir));
  return folderNameOf(r.run.displayName ?? own, own);
}

/**
 * Writes the export folder of run `r` into `outParent` (see the file comment); returns what
 * it wrote. Throws EngineError('input/invalid') when the folder exists and is not empty
 * (unless `force`), or would be a run folder.
 */
export async function exportRun(
  fs: LabFs,
  r: OpenRun,
  outParent: string,
  opts: ExportOptions = {},
): Promise<ExportResult> {
  if (opts.format === 'hf') checkLlamaShaped(r.model.config); // before any file is touched
  const name = exportFolderName(fs, r);
  const dir = fs.join(fs.resolve(outParent), name);
  if (await exists(fs, fs.join(outParent, RUN_FILES.run))) {
    throw new EngineError(
      'input/invalid',
      `${outParent} is a run folder; export into another folder, so that the run's own files stay as they are.`,
    );
  }
  if ((await exists(fs, fs.join(dir, RUN_FILES.run))) || fs.resolve(dir) === fs.resolve(r.runDir)) {
    throw new EngineError(
      'input/invalid',
      `${dir} is a run folder; choose another --out folder, so that no run is replaced by its export.`,
    );
  }
  const kind = (await fs.stat(dir))?.kind;
  if (kind === 'file') {
    throw new EngineError(
      'input/invalid',
      `${dir} exists and is a file, not a folder; move it, or choose another --out folder.`,
    );
  }
  if ((await listNames(fs, dir)).length > 0 && opts.force !== true) {
    throw new EngineError(
      'input/invalid',
      `${dir} already exists and is not empty; pass --force to replace it, or choose another --out folder.`,
    );
  }
  const { files, tensors, warnings, example } = exportFiles(
    r,
    r.run.displayName ?? fs.basename(fs.resolve(r.runDir)),
    opts,
  );
  const tmp = await scratchFolder(fs, dir, 'export');
  try {
    await fs.writeFiles([...files].map(([file, data]) => ({ path: fs.join(tmp, file), data })));
    if (kind === 'directory') {
      const old = await scratchFolder(fs, dir, 'old'); // beside it, its name within 255 bytes too
      await fs.rename(dir, old);
      await fs.rename(tmp, dir);
      await fs.remove(old);
    } else {
      await fs.rename(tmp, dir);
    }
  } catch (e) {
    await fs.remove(tmp);
    throw folderError(e, dir); // a full disk leaves no half export, and says so in one line
  }
  return { dir, files: [...files.keys()].map((f) => fs.join(dir, f)), tensors, warnings, example };
}
