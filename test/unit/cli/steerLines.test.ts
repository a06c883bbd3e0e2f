/**
 * What `attention-lab steer` prints (src/cli/steer.ts steerLines): a decoder-only run's
 * continuations follow the prompt; an encoder-decoder's prompt is a source, so its line stands
 * apart and the two translations are printed alone (not glued to the source's text).
 */
import { describe, expect, it } from 'vitest';
import { steerLines } from '../../../src/cli/steer';
import type { SteerOutputData } from '../../../src/protocol/steering';

const decodeOut = (text: string) => ({ text, promptTokens: [], tokens: [...text], ids: [], logprobs: [], score: -1 });
const out = {
  layer: 1,
  alpha: -2,
  norm: 0.5,
  streamNorm: 4,
  steered: decodeOut('A dog runs.'),
  unsteered: decodeOut('A man runs.'),
} as unknown as SteerOutputData;

describe('steer lines', () => {
  it('prints a decoder-only continuation after its prompt', () => {
    const lines = steerLines(out, 'Once ');
    expect(lines[0]).toBe(
      "v at the stream entering layer 1: ‖v‖ 0.5000 (the stream's mean norm there 4.0000); α -2, so ‖α·v‖ 1.0000",
    );
    expect(lines.slice(1)).toEqual(['steered:   "Once A dog runs."', 'unsteered: "Once A man runs."']);
  });

  it('prints an encoder-decoder source on its own line and the translations alone', () => {
    expect(steerLines(out, 'Ein Mann läuft.', true).slice(1)).toEqual([
      'source:    "Ein Mann läuft."',
      'steered:   "A dog runs."',
      'unsteered: "A man runs."',
    ]);
  });
});
