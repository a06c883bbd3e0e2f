/**
 * The padding id a model masks for each kind of tokenizer: ours pads with 0; a Hugging Face
 * tokenizer.json's pad_token is a real token (Qwen's <|endoftext|>, id 151643; SmolLM2-Instruct's
 * <|im_end|>, which its chat template writes), so a model of it masks nothing by id — before, its
 * id reached the engine, which refused every decode, attention and score of such an import.
 */

import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../../../src/engine/config';
import { planShape } from '../../../../src/engine/models/inputs';
import { trainCharTokenizer } from '../../../../src/engine/tokenizers/charTokenizer';
import { hfTokenizerFromFiles } from '../../../../src/lab/runs/hfTokenizer';
import { modelPadId } from '../../../../src/lab/runs/specModel';
import { hfFiles } from './hfTokenizerFiles';

describe('modelPadId', () => {
  it('ours: PAD is 0, and the model masks it', () => {
    const tok = trainCharTokenizer(['abc']);
    expect(tok.specialIds.pad).toBe(0);
    expect(modelPadId(tok)).toBe(0);
  });

  it('a Hugging Face tokenizer whose pad_token is a real token: the model masks nothing, and plans', () => {
    const f = hfFiles('qwen');
    const tok = hfTokenizerFromFiles(f.tokenizer, f.config);
    expect(tok.specialIds.pad).toBe(151643); // <|endoftext|>, tokenizer_config.json's pad_token
    expect(modelPadId(tok)).toBe(-1);
    const cfg = presetConfig('decoder-only', 'tiny', 64);
    expect(planShape(cfg, { maxBatch: 1, padId: modelPadId(tok) }).padId).toBe(-1);
    // What the model was given before: refused.
    expect(() => planShape(cfg, { maxBatch: 1, padId: tok.specialIds.pad })).toThrow(/padId 151643 is not supported/);
  });

  it('a Hugging Face tokenizer whose pad_token is id 0 (Gemma 3 <pad>): still no masking by id', () => {
    const f = hfFiles('gemma3');
    const tok = hfTokenizerFromFiles(f.tokenizer, f.config);
    expect(tok.specialIds.pad).toBe(0);
    expect(modelPadId(tok)).toBe(-1);
  });
});
