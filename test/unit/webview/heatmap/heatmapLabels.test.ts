/** How many heatmap axis labels fit: every token from 7 px cells on, one font rule for both axes. */
import { describe, expect, it } from 'vitest';
import { labelEvery, labelFontPx } from '../../../../webview/heatmap/heatmapLabels';

describe('heatmap axis labels', () => {
  it('labels every token while a cell is at least 7 px, else every n-th', () => {
    // 32 tokens in 520 px (16 px cells) and 64 in 520 px (8 px) were labelled every other before.
    expect([40, 16, 8, 7].map(labelEvery)).toEqual([1, 1, 1, 1]);
    expect([6, 4, 3, 2].map(labelEvery)).toEqual([2, 2, 3, 4]);
  });

  it('shrinks the font with the cell, between 7 and 12 px, never past the cell', () => {
    expect([40, 13, 10, 8, 7, 3].map(labelFontPx)).toEqual([12, 12, 9, 7, 7, 7]);
    for (let cell = 7; cell <= 40; cell++) expect(labelFontPx(cell)).toBeLessThanOrEqual(cell);
  });
});
