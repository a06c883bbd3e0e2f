/**
 * A decode never ends inside a character (src/lab/inference/decode.ts, the one decode of the
 * CLI, the playground and the editor): with byte tokens (a model that writes 映画😀 then the
 * first byte of を and EOS, one byte a token: scriptedGpt2.ts), a `maxTokens` that falls inside
 * 画 or 😀 goes on to finish it — greedy, sampling and beam search alike — and where the
 * model ends the text inside one (EOS after を's first byte), the text leaves those bytes out
 * (no `�`) and their token reads `◌…`. Neither the final tokens nor the streamed ones read
 * `<0x..>` for a character's bytes.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecodeParams } from '../../../../src/protocol/model';
import { decodeText, decodedText } from '../../../../src/lab/inference/decode';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { END, byteTokens, scriptedRun } from './scriptedGpt2';

// Position 0 (BOS) predicts the prompt 'a'; generated token k is predicted at position 1 + k.
const WRITTEN = byteTokens('映画😀'); // E6 98 A0 | E7 94 BB | F0 9F 98 80
const SCRIPT = [0x61, ...WRITTEN, 0xe3, END]; // then を's first byte, then EOS

let root = '';
let r: OpenRun;
beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-decode-partial-'));
  r = (await scriptedRun(root, SCRIPT)).r;
}, 60_000);
afterAll(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const STRATEGIES = ['greedy', 'sample', 'beam'] as const;

function params(strategy: (typeof STRATEGIES)[number], maxTokens: number): DecodeParams {
  return { input: 'a', strategy, beam: 4, lengthPenalty: 0.6, temperature: 1, topK: 0, topP: 1, maxTokens, seed: 7 };
}

describe('a decode whose limit falls inside a character', () => {
  it('the scripted model writes its script (the fixture works)', () => {
    const d = decodeText(r, params('greedy', 20)).output;
    expect(d.ids).toEqual([...WRITTEN, 0xe3, END]);
  });

  for (const strategy of STRATEGIES) {
    it(`${strategy}: a limit inside 画 or 😀 goes on to finish the character, at most 3 tokens more`, () => {
      for (const [maxTokens, text] of [
        [4, '映画'], // E6 98 A0 E7 | 94 BB
        [5, '映画'], // … E7 94 | BB
        [7, '映画😀'], // … F0 | 9F 98 80: three more, the most a character needs
        [9, '映画😀'], // … F0 9F 98 | 80
        [6, '映画'], // whole at the limit: nothing more
      ] as const) {
        const streamed: string[] = [];
        const d = decodeText(r, params(strategy, maxTokens), { onToken: (t) => streamed.push(t) }).output;
        expect(d.text, `maxTokens ${maxTokens}`).toBe(text);
        expect(d.ids).toEqual(WRITTEN.slice(0, byteTokens(text).length));
        expect(d.stopReason).toBe('maxTokens');
        expect(d.tokens.join('')).not.toContain('<0x');
        // Streamed as chosen, a token cannot know how its character ends: the character it begins reads ◌….
        if (strategy !== 'beam') expect(streamed).toHaveLength(d.ids.length); // beam search does not stream
        if (strategy !== 'beam' && maxTokens === 4) expect(streamed).toEqual(['◌…', '…◌…', '…映', '◌…', '…◌…', '…画']);
        if (maxTokens === 4) expect(d.tokens).toEqual(['映…', '…映…', '…映', '画…', '…画…', '…画']);
        for (const t of streamed) expect(t).not.toMatch(/<0x/);
      }
    });

    it(`${strategy}: the model ends inside a character (EOS after its first byte): the text leaves it out, its token reads ◌…`, () => {
      const streamed: string[] = [];
      const d = decodeText(r, params(strategy, 11), { onToken: (t) => streamed.push(t) }).output;
      expect(d.ids).toEqual([...WRITTEN, 0xe3, END]);
      expect(d.stopReason).toBe('eos');
      expect(d.text).toBe('映画😀');
      expect(d.tokens.slice(-2)).toEqual(['◌…', '<|endoftext|>']);
      if (strategy === 'beam') expect(d.beams[0]?.text).toBe('映画😀');
      for (const t of [...d.tokens, ...streamed]) expect(t).not.toMatch(/<0x/);
    });
  }

  it('decodedText drops only a cut-off character: a whole text, and a text ending in a real U+FFFD, stay', () => {
    expect(decodedText(r.tok, [...byteTokens('映画'), 0xe6, 0x98])).toBe('映画');
    expect(decodedText(r.tok, [...byteTokens('映画'), 0xe6, 0x98, END])).toBe('映画');
    expect(decodedText(r.tok, byteTokens('映画'))).toBe('映画');
    expect(decodedText(r.tok, byteTokens('映\ufffd'))).toBe('映\ufffd');
    expect(decodedText(r.tok, [...byteTokens('映'), 0x98])).toBe('映\ufffd'); // a stray byte, not a cut: the model wrote it
  });
});
