/**
 * Reading a token label back (src/common/tokenLabels.ts): a piece of a split character and a
 * character the sequence cuts off (`◌…`, the engine's labelling) are partial labels, and their
 * hover says what they hold; whole characters and plain bytes are not.
 */
import { describe, expect, it } from 'vitest';
import { CUT_MARK, SPLIT_MARK, describeToken, isPartialLabel } from '../../../src/common/tokenLabels';
import {
  CUT_MARK as ENGINE_CUT_MARK,
  SPLIT_MARK as ENGINE_SPLIT_MARK,
  labelPieces,
} from '../../../src/engine/tokenizers/tokenDisplay';

describe('token labels read back', () => {
  it('uses the marks the engine writes', () => {
    expect(CUT_MARK).toBe(ENGINE_CUT_MARK);
    expect(SPLIT_MARK).toBe(ENGINE_SPLIT_MARK);
  });

  it('a cut-off character is partial and its hover says so, without naming a character it cannot know', () => {
    const bytes = new TextEncoder().encode('画映');
    const [cutOne] = labelPieces([bytes.subarray(0, 5)]);
    expect(cutOne).toBe('画◌…');
    expect(isPartialLabel('◌…')).toBe(true);
    expect(isPartialLabel(cutOne as string)).toBe(true);
    expect(describeToken('◌…')).toBe(
      '◌… — ends with the first bytes of a character the sequence cuts off (which one, its next bytes would say)',
    );
    expect(describeToken('…◌…')).toBe('…◌… — more bytes of a character the sequence cuts off');
    expect(describeToken('…映◌…')).toMatch(
      /^…映◌… — ends 映 \(U\+6620, UTF-8 E6 98 A0\), begun in the previous token; ends with the first bytes/,
    );
    expect(describeToken(cutOne as string)).not.toContain('U+25CC');
  });

  it('labels saved before (`<0xE6>…`) still read as cut-off characters; whole text and bytes are not partial', () => {
    expect(isPartialLabel('<0xE6><0x98>…')).toBe(true);
    expect(describeToken('<0xE6><0x98>…')).toContain('a character the sequence cuts off');
    expect(isPartialLabel('映画')).toBe(false);
    expect(isPartialLabel('<0x98>')).toBe(false);
    expect(isPartialLabel('a…')).toBe(false);
    expect(describeToken('映画')).toBe('映画');
  });
});
