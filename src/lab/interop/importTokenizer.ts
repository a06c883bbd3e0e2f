/**
 * The tokenizer of an imported checkpoint: `--tokenizer PATH` when given (a file, or a folder
 * such as the run folder the model came from), else the files beside the checkpoint —
 * `attention_lab_tokenizer.json` (ours, in a Hugging Face Llama export), `tokenizer.json` (ours,
 * or Hugging Face's, with `tokenizer_config.json` and `chat_template.jinja` beside it when
 * there: {@link importHfTokenizer}) or GPT-2's `vocab.json` + `merges.txt`. Each
 * problem is one line saying which files were looked for and what to pass.
 */

import { EngineError } from '../../engine/errors';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { TOKENIZER_FORMAT } from '../../engine/tokenizers/special';
import { bpeFromGpt2Files } from '../../engine/tokenizers/gpt2Files';
import { parseTokenizerJSON } from '../../engine/tokenizers/tokenizerJson';
import type { LabFs } from '../files/labFs';
import { exists } from '../files/labFs';
import { readCappedText } from '../files/fileCaps';
import { hfTokenizerFromFiles } from '../runs/hfTokenizer';

/** A tokenizer and, for people, where it came from. */
export interface ImportTokenizer {
  readonly tokenizer: Tokenizer;
  readonly source: string;
}

/**
 * Our tokenizer's name in an `export --format hf` folder (exportFolder.ts), where transformers
 * would read a tokenizer.json as its own format; looked for first.
 */
export const HF_EXPORT_TOKENIZER = 'attention_lab_tokenizer.json';

function bad(msg: string): never {
  throw new EngineError('tokenizer/invalid', msg);
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    return bad(`${file} is not valid JSON (${(e as Error).message}); pass a tokenizer file that is.`);
  }
}

async function fromTokenizerJson(fs: LabFs, file: string, rows?: number): Promise<ImportTokenizer> {
  const text = await readCappedText(fs, file, 'tokenizer.json');
  const json = parseJson(text, file);
  const format = (json as { format?: unknown } | null)?.format;
  if (format === TOKENIZER_FORMAT) {
    try {
      return { tokenizer: parseTokenizerJSON(text), source: file };
    } catch (e) {
      return bad(`${file}: ${(e as Error).message}`);
    }
  }
  return hfFromParsed(fs, file, json, rows);
}

/** Hugging Face's tokenizer.json (parsed) at `file`, with the config and template beside it. */
async function hfFromParsed(fs: LabFs, file: string, json: unknown, rows?: number): Promise<ImportTokenizer> {
  const dir = fs.dirname(file);
  const configFile = fs.join(dir, 'tokenizer_config.json');
  const templateFile = fs.join(dir, 'chat_template.jinja');
  const config = (await exists(fs, configFile))
    ? parseJson(await readCappedText(fs, configFile, 'tokenizer.json'), configFile)
    : null;
  const template = (await exists(fs, templateFile)) ? await readCappedText(fs, templateFile, 'tokenizer.json') : null;
  try {
    const tokenizer = hfTokenizerFromFiles(json, config, template, rows);
    const withConfig = config !== null ? ' + tokenizer_config.json' : '';
    const chat = tokenizer.chatTemplate !== null ? ', with a chat template' : '';
    return { tokenizer, source: `${file}${withConfig} (Hugging Face${chat})` };
  } catch (e) {
    return bad(`${file}: ${(e as Error).message}`);
  }
}

/**
 * The tokenizer of a Hugging Face model folder `dir`: its `tokenizer.json`, read with the
 * `tokenizer_config.json` (roles, BOS/EOS, chat template) and `chat_template.jinja` beside it
 * when they are there. The one entry point for importing a model folder's tokenizer.
 * `vocabRows`: the model's embedding rows (config.json's vocab_size) when they differ from the
 * tokenizer's ids — padded rows become unused ids, special tokens past the rows are left out
 * (HfVocab). Throws EngineError('tokenizer/invalid') in one line naming the file and what is
 * not supported.
 */
export async function importHfTokenizer(
  fs: LabFs,
  dir: string,
  opts: { readonly vocabRows?: number } = {},
): Promise<ImportTokenizer> {
  const file = fs.join(dir, 'tokenizer.json');
  if (!(await exists(fs, file)))
    bad(`${dir} has no tokenizer.json; pass --tokenizer PATH (a tokenizer file or folder).`);
  return hfFromParsed(fs, file, parseJson(await readCappedText(fs, file, 'tokenizer.json'), file), opts.vocabRows);
}

async function fromVocab(fs: LabFs, vocab: string): Promise<ImportTokenizer> {
  const merges = fs.join(fs.dirname(vocab), 'merges.txt');
  if (!(await exists(fs, merges)))
    bad(`${vocab} has no merges.txt beside it; GPT-2's byte-level BPE needs both files.`);
  const vocabJson = parseJson(await readCappedText(fs, vocab, 'vocab.json'), vocab);
  const mergesText = await readCappedText(fs, merges, 'merges.txt');
  try {
    return {
      tokenizer: bpeFromGpt2Files(vocabJson, mergesText, { vocab: vocab, merges }),
      source: `${vocab} + merges.txt`,
    };
  } catch (e) {
    return bad((e as Error).message);
  }
}

/** The tokenizer in folder `dir`, or null when it has none. */
async function inFolder(fs: LabFs, dir: string, rows?: number): Promise<ImportTokenizer | null> {
  const hfExport = fs.join(dir, HF_EXPORT_TOKENIZER);
  const own = fs.join(dir, 'tokenizer.json');
  const vocab = fs.join(dir, 'vocab.json');
  if (await exists(fs, hfExport)) return fromTokenizerJson(fs, hfExport);
  if (await exists(fs, own)) return fromTokenizerJson(fs, own, rows);
  if (await exists(fs, vocab)) return fromVocab(fs, vocab);
  return null;
}

/**
 * The tokenizer for the checkpoint `modelFile`; see the file comment. `vocabRows` fits a Hugging
 * Face tokenizer.json to the model's embedding rows, as {@link importHfTokenizer} does.
 */
export async function loadImportTokenizer(
  fs: LabFs,
  modelFile: string,
  given?: string,
  vocabRows?: number,
): Promise<ImportTokenizer> {
  if (given !== undefined) {
    const p = fs.resolve(given);
    const st = await fs.stat(p);
    if (st === null)
      bad(
        `--tokenizer ${given} does not exist; pass a tokenizer.json, a vocab.json (with merges.txt ` +
          `beside it), or a folder holding one.`,
      );
    if (st.kind === 'directory') {
      return (
        (await inFolder(fs, p, vocabRows)) ??
        bad(`${p} holds no tokenizer.json and no vocab.json + merges.txt; pass the tokenizer file itself.`)
      );
    }
    return fs.basename(p) === 'vocab.json' || p.endsWith('.vocab.json')
      ? fromVocab(fs, p)
      : fromTokenizerJson(fs, p, vocabRows);
  }
  const dir = fs.dirname(modelFile);
  return (
    (await inFolder(fs, dir, vocabRows)) ??
    bad(
      `No tokenizer beside ${fs.basename(modelFile)} (looked for ${HF_EXPORT_TOKENIZER}, tokenizer.json, ` +
        'or vocab.json + ' +
        `merges.txt, in ${dir}); pass --tokenizer PATH (a tokenizer file, or the run folder the model came from).`,
    )
  );
}
