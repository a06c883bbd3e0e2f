/**
 * A run's tokenizer.json: written once when a run starts (or is imported), read back to
 * resume, decode, score or evaluate it.
 *
 * Leaves out: training a tokenizer (data/runData.ts) and the tokenizer JSON format itself
 * (src/engine/tokenizers/tokenizerJson.ts; a Hugging Face tokenizer's: hfTokenizer.ts).
 */

import { EngineError } from '../../engine/errors';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { parseTokenizerJSON, tokenizerFromJSON } from '../../engine/tokenizers/tokenizerJson';
import { hfTokenizerFromJSON, isHfTokenizerJSON } from './hfTokenizer';
import type { LabFs } from '../files/labFs';
import { exists, writeFile } from '../files/labFs';
import { readCappedText } from '../files/fileCaps';
import { RUN_FILES } from './runFolder';

/** Reads a run's tokenizer.json. */
export async function readTokenizer(fs: LabFs, runDir: string): Promise<Tokenizer> {
  const file = fs.join(runDir, RUN_FILES.tokenizer);
  if (!(await exists(fs, file)))
    throw new EngineError('checkpoint/invalid', `${file} is missing; the run folder is incomplete — start a new run.`);
  const text = await readCappedText(fs, file, 'tokenizer.json');
  try {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return parseTokenizerJSON(text); // says what is wrong with the JSON
    }
    // A Hugging Face tokenizer (an imported model's) encodes with its own library, which the engine does not import.
    return isHfTokenizerJSON(json) ? hfTokenizerFromJSON(json) : tokenizerFromJSON(json);
  } catch (e) {
    if (EngineError.is(e)) throw new EngineError('checkpoint/invalid', `${file}: ${e.message}`, { cause: e });
    throw e;
  }
}

/** Saves a tokenizer into the run folder. */
export function writeTokenizer(fs: LabFs, runDir: string, tok: Tokenizer): Promise<void> {
  return writeFile(fs, fs.join(runDir, RUN_FILES.tokenizer), `${JSON.stringify(tok.toJSON())}\n`);
}
