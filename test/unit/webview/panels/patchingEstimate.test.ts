/**
 * The Patching tab's estimate beside each map (webview/panels/patchingEstimate.ts): for an
 * encoder-decoder, the encoder's map takes the encoder's estimates and the decoder's takes its
 * own with each layer's cross-attention rows after its self-attention rows — the order of
 * lab/inference/patch.ts's rows ("dec L1 self", "dec L1 cross", …) — so every cell sits beside
 * its own estimate; a decoder-only answer is read as before.
 */
import { describe, expect, it } from 'vitest';
import type { AttributionOutputData } from '../../../../src/protocol/attribution';
import { estimateOf } from '../../../../webview/panels/patchingEstimate';

/** [layers][positions] of distinct numbers: base + 10·layer + position. */
const grid = (base: number, layers: number, n: number): number[][] =>
  Array.from({ length: layers }, (_, l) => Array.from({ length: n }, (_, p) => base + 10 * l + p));
/** [layers][heads][positions]. */
const heads = (base: number, layers: number, H: number, n: number): number[][][] =>
  Array.from({ length: layers }, (_, l) => grid(base + 100 * l, H, n));

const Le = 1;
const L = 2;
const H = 2;
const S = 3;
const T = 2;
const common = {
  what: 'attribution' as const,
  tokens: ['<bos>', 'd'],
  corruptedTokens: ['<bos>', 'd'],
  metric: { kind: 'logit-diff' as const, answer: 'c', wrong: 'x' },
  note: '',
  clean: 1,
  corrupted: 0,
  resid: grid(1000, L, T),
  attnOut: grid(2000, L, T),
  mlpOut: grid(3000, L, T),
  head: grid(4000, L, H),
  headPos: heads(5000, L, H, T),
};
const encdec: AttributionOutputData = {
  ...common,
  source: { clean: ['a', 'b', '<eos>'], corrupted: ['a', 'x', '<eos>'] },
  cross: { out: grid(6000, L, T), head: grid(7000, L, H), headPos: heads(8000, L, H, T) },
  encoder: {
    resid: grid(9000, Le, S),
    attnOut: grid(10000, Le, S),
    mlpOut: grid(11000, Le, S),
    head: grid(12000, Le, H),
    headPos: heads(13000, Le, H, S),
  },
};

describe('estimateOf', () => {
  it("an encoder-decoder's encoder maps take the encoder's estimates", () => {
    const enc = { stack: 'encoder' as const };
    expect(estimateOf(encdec, 'resid', enc)).toEqual([9000, 9001, 9002]);
    expect(estimateOf(encdec, 'attn', enc)).toEqual([10000, 10001, 10002]);
    expect(estimateOf(encdec, 'mlp', enc)).toEqual([11000, 11001, 11002]);
    expect(estimateOf(encdec, 'heads-pos', enc)).toEqual([13000, 13001, 13002, 13010, 13011, 13012]);
  });

  it("the decoder's maps interleave each layer's self and cross rows, as patch.ts's rows", () => {
    const dec = { stack: 'decoder' as const };
    expect(estimateOf(encdec, 'resid', dec)).toEqual([1000, 1001, 1010, 1011]);
    // rows dec L1 self, dec L1 cross, dec L2 self, dec L2 cross
    expect(estimateOf(encdec, 'attn', dec)).toEqual([2000, 2001, 6000, 6001, 2010, 2011, 6010, 6011]);
    // rows dec L1 self H1, H2, dec L1 cross H1, H2, dec L2 …
    expect(estimateOf(encdec, 'heads-pos', dec)).toEqual([
      5000, 5001, 5010, 5011, 8000, 8001, 8010, 8011, 5100, 5101, 5110, 5111, 8100, 8101, 8110, 8111,
    ]);
    // the one heads map: enc L1, then dec L1 self, dec L1 cross, dec L2 self, dec L2 cross (columns: heads)
    expect(estimateOf(encdec, 'heads', {})).toEqual([12000, 12001, 4000, 4001, 7000, 7001, 4010, 4011, 7010, 7011]);
    expect(estimateOf(encdec, 'path', dec)).toBeNull();
  });

  it('a decoder-only answer is read as before', () => {
    expect(estimateOf(common, 'attn')).toEqual([2000, 2001, 2010, 2011]);
    expect(estimateOf(common, 'heads')).toEqual([4000, 4001, 4010, 4011]);
  });
});
