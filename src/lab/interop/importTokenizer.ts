/**
 * The tokenizer of an imported checkpoint: `--tokenizer PATH` when given (a file, or a folder
 * such as the run folder the model came from), else the files beside the checkpoint —
 * `tokenizer.json` (ours, or Hugging Face's) or GPT-2's `vocab.json` + `merges.txt`. Each
 * problem is one line saying which files were looked for and what to pass.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { EngineError } from '../../engine/errors';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { TOKENIZER_FORMAT } from '../../engine/tokenizers/special';
import { bpeFromGpt2Files, bpeFromHfTokenizerJson } from '../../engine/tokenizers/gpt2Files';
import { parseTokenizerJSON } from '../../engine/tokenizers/tokenizerJson';

/** A tokenizer and, for people, where it came from. */
export interface ImportTokenizer {
  readonly tokenizer: Tokenizer;
  readonly source: string;
}

function bad(msg: string): never {
  throw new EngineError('tokenizer/invalid', msg);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    return bad(`${file} is not valid JSON (${(e as Error).message}); pass a tokenizer file that is.`);
  }
}

function fromTokenizerJson(file: string): ImportTokenizer {
  const json = readJson(file);
  const format = (json as { format?: unknown } | null)?.format;
  if (format === TOKENIZER_FORMAT) {
    try {
      return { tokenizer: parseTokenizerJSON(fs.readFileSync(file, 'utf8')), source: file };
    } catch (e) {
      return bad(`${file}: ${(e as Error).message}`);
    }
  }
  try {
    return { tokenizer: bpeFromHfTokenizerJson(json), source: `${file} (Hugging Face)` };
  } catch (e) {
    return bad(`${file}: ${(e as Error).message}`);
  }
}

function fromVocab(vocab: string): ImportTokenizer {
  const merges = path.join(path.dirname(vocab), 'merges.txt');
  if (!fs.existsSync(merges)) bad(`${vocab} has no merges.txt beside it; GPT-2's byte-level BPE needs both files.`);
  const vocabJson = readJson(vocab);
  try {
    return { tokenizer: bpeFromGpt2Files(vocabJson, fs.readFileSync(merges, 'utf8'), { vocab: vocab, merges }), source: `${vocab} + merges.txt` };
  } catch (e) {
    return bad((e as Error).message);
  }
}

/** The tokenizer in folder `dir`, or null when it has none. */
function inFolder(dir: string): ImportTokenizer | null {
  const own = path.join(dir, 'tokenizer.json');
  const vocab = path.join(dir, 'vocab.json');
  if (fs.existsSync(own)) return fromTokenizerJson(own);
  if (fs.existsSync(vocab)) return fromVocab(vocab);
  return null;
}

/** The tokenizer for the checkpoint `modelFile`; see the file comment. */
export function loadImportTokenizer(modelFile: string, given?: string): ImportTokenizer {
  if (given !== undefined) {
    const p = path.resolve(given);
    if (!fs.existsSync(p)) bad(`--tokenizer ${given} does not exist; pass a tokenizer.json, a vocab.json (with merges.txt beside it), or a folder holding one.`);
    if (fs.statSync(p).isDirectory()) {
      return inFolder(p) ?? bad(`${p} holds no tokenizer.json and no vocab.json + merges.txt; pass the tokenizer file itself.`);
    }
    return path.basename(p) === 'vocab.json' || p.endsWith('.vocab.json') ? fromVocab(p) : fromTokenizerJson(p);
  }
  const dir = path.dirname(modelFile);
  return inFolder(dir) ?? bad(`No tokenizer beside ${path.basename(modelFile)} (looked for tokenizer.json, or vocab.json + merges.txt, in ${dir}); pass --tokenizer PATH (a tokenizer file, or the run folder the model came from).`);
}
