import { describe, expect, it } from 'vitest';
import type { AttentionSnapshot } from '../../../../src/protocol/model';
import {
  axisTokens,
  batchSize,
  headEntropies,
  keysAreSource,
  mapsOf,
  maskForMap,
  paddedRows,
  rowEntropy,
} from '../../../../webview/heatmap/attentionMath';

const u8 = (...v: number[]): Uint8Array => Uint8Array.from(v);

/** B = 2, S = 3 (item 0: last source token is PAD), T = 2. */
const snap: AttentionSnapshot = {
  step: 1,
  srcTokens: ['a', 'b', '<pad>'],
  tgtTokens: ['<bos>', 'x'],
  maps: [
    { stack: 'decoder.cross', layer: 1, shape: [1, 2, 3], data: new Float32Array(6) },
    { stack: 'encoder.self', layer: 0, shape: [1, 3, 3], data: new Float32Array(9) },
    { stack: 'decoder.self', layer: 0, shape: [1, 2, 2], data: new Float32Array(4) },
  ],
  masks: [
    { name: 'source.padding', shape: [2, 1, 1, 3], data: u8(1, 1, 0, 1, 1, 1) },
    { name: 'target.padding', shape: [2, 1, 1, 2], data: u8(1, 1, 1, 0) },
    { name: 'decoder.causal', shape: [1, 1, 2, 2], data: u8(1, 0, 1, 1) },
  ],
};

describe('attentionMath', () => {
  it('entropy: 0 for a one-hot row, ln n for a uniform one', () => {
    expect(rowEntropy([0, 1, 0], 0, 3)).toBe(0);
    expect(rowEntropy([0.25, 0.25, 0.25, 0.25], 0, 4)).toBeCloseTo(Math.log(4), 12);
  });

  it('mean entropy per head skips padding query rows', () => {
    // head 0: rows [1,0] and [0.5,0.5]; head 1: uniform rows
    const data = Float32Array.of(1, 0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5);
    const e = headEntropies({ shape: [2, 2, 2], data });
    expect(e[0]).toBeCloseTo(Math.log(2) / 2, 6);
    expect(e[1]).toBeCloseTo(Math.log(2), 6);
    expect(headEntropies({ shape: [2, 2, 2], data }, [true, false])[0]).toBeCloseTo(Math.log(2), 6);
  });

  it('encoder self and cross-attention use the source padding of item b', () => {
    const enc = snap.maps[1] as AttentionSnapshot['maps'][number];
    expect(Array.from(maskForMap(snap, enc, 0) ?? [])).toEqual([1, 1, 0, 1, 1, 0, 1, 1, 0]);
    expect(Array.from(maskForMap(snap, enc, 1) ?? [])).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(Array.from(maskForMap(snap, snap.maps[0] as AttentionSnapshot['maps'][number], 0) ?? [])).toEqual([
      1, 1, 0, 1, 1, 0,
    ]);
  });

  it('decoder self-attention falls back to the causal mask when no combined mask was built', () => {
    expect(Array.from(maskForMap(snap, snap.maps[2] as AttentionSnapshot['maps'][number]) ?? [])).toEqual([1, 0, 1, 1]);
    const withSelf: AttentionSnapshot = {
      ...snap,
      masks: [...snap.masks, { name: 'decoder.self', shape: [2, 1, 2, 2], data: u8(1, 0, 1, 1, 1, 0, 1, 0) }],
    };
    expect(Array.from(maskForMap(withSelf, snap.maps[2] as AttentionSnapshot['maps'][number], 1) ?? [])).toEqual([
      1, 0, 1, 0,
    ]);
  });

  it('returns null when the masks do not fit the map', () => {
    expect(maskForMap({ ...snap, masks: [] }, snap.maps[1] as AttentionSnapshot['maps'][number])).toBeNull();
    expect(maskForMap(snap, { stack: 'encoder.self', shape: [1, 4, 4] })).toBeNull();
  });

  it('padding rows, batch size, tokens and the maps of a stack', () => {
    expect(paddedRows(snap, snap.maps[1] as AttentionSnapshot['maps'][number], 0)).toEqual([false, false, true]);
    expect(paddedRows(snap, snap.maps[2] as AttentionSnapshot['maps'][number], 1)).toEqual([false, true]);
    expect(batchSize(snap)).toBe(2);
    expect(axisTokens(snap, snap.maps[0] as AttentionSnapshot['maps'][number])).toEqual({
      rows: ['<bos>', 'x'],
      cols: ['a', 'b', '<pad>'],
    });
    expect(axisTokens(snap, snap.maps[1] as AttentionSnapshot['maps'][number])).toEqual({
      rows: ['a', 'b', '<pad>'],
      cols: ['a', 'b', '<pad>'],
    });
    expect(axisTokens(snap, snap.maps[2] as AttentionSnapshot['maps'][number])).toEqual({
      rows: ['<bos>', 'x'],
      cols: ['<bos>', 'x'],
    });
    expect(snap.maps.map((m) => keysAreSource(m.stack))).toEqual([true, true, false]);
    expect(mapsOf(snap, 'decoder.cross').map((m) => m.layer)).toEqual([1]);
    expect(mapsOf(snap, 'encoder.self').map((m) => m.stack)).toEqual(['encoder.self']);
  });
});
