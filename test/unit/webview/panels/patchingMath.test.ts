/**
 * The Patching tab's pure helpers: receiver heads as typed for path patching (1-based names to
 * 0-based heads, or the one line that says what is wrong), Pearson's r of the estimate against full
 * patching, and the accumulated residual's layer labels.
 */
import { describe, expect, it } from 'vitest';
import type { AttributionOutputData } from '../../../../src/protocol/attribution';
import { estimateMaps, parseReceivers, pearson, residLabel } from '../../../../webview/panels/patchingMath';

describe('path patching receivers as typed', () => {
  it('reads L2H1 and 2.3, spaces or commas between, into 0-based heads', () => {
    expect(parseReceivers('L2H1 l2h3', 2, 4)).toEqual([
      { layer: 1, head: 0 },
      { layer: 1, head: 2 },
    ]);
    expect(parseReceivers(' 2.1,3.4 ', 3, 4)).toEqual([
      { layer: 1, head: 0 },
      { layer: 2, head: 3 },
    ]);
    // A layer-1 receiver beside a later one is kept: the lab says it sees no change.
    expect(parseReceivers('L1H1 L2H2', 2, 2)).toEqual([
      { layer: 0, head: 0 },
      { layer: 1, head: 1 },
    ]);
  });

  it('says in one line what is wrong', () => {
    expect(parseReceivers('  ', 2, 4)).toBe('Type the receiver heads of path patching, e.g. L2H1 L2H2.');
    expect(parseReceivers('L2H1 head3', 2, 4)).toBe(
      'Receivers are heads such as L2H1 (layer 2, head 1); "head3" is not one.',
    );
    expect(parseReceivers('L3H1', 2, 4)).toBe('No head L3H1: this model has layers 1 to 2 and heads 1 to 4.');
    expect(parseReceivers('L2H5', 2, 4)).toBe('No head L2H5: this model has layers 1 to 2 and heads 1 to 4.');
    expect(parseReceivers('L2H0', 2, 4)).toMatch(/^No head L2H0/);
    expect(parseReceivers('L1H1 1.2', 2, 4)).toBe(
      'Every receiver is in layer 1, so no head sends to them; choose a later layer.',
    );
  });
});

describe("an encoder-decoder's receivers", () => {
  it('name their attention as the CLI does, each checked against its stack', () => {
    expect(parseReceivers('cross:L2H1 enc:L1H2 self:2.3 L1H1', 2, 4, 3)).toEqual([
      { layer: 1, head: 0, attention: 'cross' },
      { layer: 0, head: 1, attention: 'encoder' },
      { layer: 1, head: 2, attention: 'self' },
      { layer: 0, head: 0 },
    ]);
    expect(parseReceivers('enc:L3H1', 2, 4, 3)).toEqual([{ layer: 2, head: 0, attention: 'encoder' }]);
    expect(parseReceivers('cross:L3H1', 2, 4, 3)).toBe(
      "No head cross:L3H1: this model's decoder has layers 1 to 2 and heads 1 to 4.",
    );
    expect(parseReceivers('enc:L4H1', 2, 4, 3)).toBe(
      "No head enc:L4H1: this model's encoder has layers 1 to 3 and heads 1 to 4.",
    );
    expect(parseReceivers('', 2, 4, 3)).toBe('Type the receiver heads of path patching, e.g. cross:L2H1 self:L2H2.');
  });

  it('are refused on a decoder-only run', () => {
    expect(parseReceivers('cross:L2H1', 2, 4)).toBe(
      '"cross:L2H1": enc:, self: and cross: name an encoder-decoder\'s attentions; type L2H1.',
    );
  });
});

describe("the estimate's agreement with full patching", () => {
  it("is Pearson's r", () => {
    expect(pearson([0, 1, 2], [0, 2, 4])).toBeCloseTo(1, 12);
    expect(pearson([0, 1, 2], [4, 2, 0])).toBeCloseTo(-1, 12);
    // x = 1..4, y = 1, 3, 2, 4: Σdxdy = 4, Σdx² = Σdy² = 5, r = 0.8
    expect(pearson([1, 2, 3, 4], [1, 3, 2, 4])).toBeCloseTo(0.8, 12);
    expect(pearson([1, 1, 1], [1, 2, 3])).toBeNull();
    expect(pearson([1], [2])).toBeNull();
  });
});

describe('the accumulated residual', () => {
  it('labels the stream entering each layer, then the final stream', () => {
    expect([0, 1, 2].map((l) => residLabel(l, 3))).toEqual(['embeddings', 'after L1', 'final']);
  });
});

describe('the estimate before full patching arrives', () => {
  const a: AttributionOutputData = {
    what: 'attribution',
    tokens: ['<bos>', 'a', 'b'],
    corruptedTokens: ['<bos>', 'a', 'c'],
    metric: { kind: 'logit-diff', answer: 'b', wrong: 'c' },
    note: '',
    clean: 2,
    corrupted: -1,
    resid: [
      [0, 1, 0.5],
      [0, 0.25, 1],
    ],
    attnOut: [
      [0, 0, 0.1],
      [0, 0, 0.2],
    ],
    mlpOut: [
      [0, 0, 0.3],
      [0, 0, 0.4],
    ],
    head: [
      [0.1, 0.2],
      [0.3, 0.4],
    ],
    headPos: [
      [
        [1, 2, 3],
        [4, 5, 6],
      ],
      [
        [7, 8, 9],
        [10, 11, 12],
      ],
    ],
  };

  it('lays each sweep out as full patching will: rows, columns and values', () => {
    const maps = estimateMaps(a, ['resid', 'heads', 'heads-pos', 'path']) ?? [];
    expect(maps.map((m) => [m.what, m.rows, m.cols])).toEqual([
      ['resid', ['L1', 'L2'], ['0 <bos>', '1 a', '2 b']],
      ['heads', ['L1', 'L2'], ['H1', 'H2']],
      ['heads-pos', ['L1H1', 'L1H2', 'L2H1', 'L2H2'], ['0 <bos>', '1 a', '2 b']],
    ]);
    expect(maps.map((m) => m.normalised)).toEqual([
      [0, 1, 0.5, 0, 0.25, 1],
      [0.1, 0.2, 0.3, 0.4],
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    ]);
  });

  it('leaves an encoder-decoder and other answers to full patching', () => {
    expect(
      estimateMaps({ ...a, encoder: { resid: [], attnOut: [], mlpOut: [], head: [], headPos: [] } } as never, [
        'resid',
      ]),
    ).toBeNull();
    expect(estimateMaps({ ...a, what: 'dla' } as never, ['resid'])).toBeNull();
  });
});
