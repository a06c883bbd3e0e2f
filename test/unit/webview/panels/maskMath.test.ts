import { describe, expect, it } from 'vitest';
import {
  broadcastPlan,
  broadcastSlice,
  combine,
  globalLayers,
  globalLayersText,
  hidesBeyondWindow,
  maskDimLabels,
  maskedCount,
  outsideWindow,
  scoresUses,
  windowMask,
} from '../../../../webview/panels/maskMath';

const u8 = (...v: number[]): Uint8Array => Uint8Array.from(v);

describe('maskMath', () => {
  it('labels each dimension with its symbol and size', () => {
    expect(maskDimLabels({ name: 'source.padding', shape: [4, 1, 1, 12] })).toEqual(['B=4', '1', '1', 'S=12']);
    expect(maskDimLabels({ name: 'decoder.causal', shape: [1, 1, 9, 9] })).toEqual(['1', '1', 'T=9', 'T=9']);
    expect(maskDimLabels({ name: 'decoder.self', shape: [1, 1, 9, 9] })).toEqual(['B=1', '1', 'T=9', 'T=9']);
  });

  it('plans the broadcast to the scores: size-1 dims repeat, others must match', () => {
    const z = { B: 4, H: 8, T: 10, S: 12 };
    const [enc, cross] = scoresUses('source.padding', z);
    expect(enc?.dims.map((d) => `${d.name}=${d.size}`)).toEqual(['B=4', 'H=8', 'S=12', 'S=12']);
    expect(broadcastPlan([4, 1, 1, 12], cross?.dims ?? []).map((p) => p.repeated)).toEqual([false, true, true, false]);
    expect(
      broadcastPlan([1, 1, 10, 10], scoresUses('decoder.causal', z)[0]?.dims ?? []).map((p) => p.repeated),
    ).toEqual([true, true, false, false]);
    // A notebook-style bug: a [B,1,S,1] mask where [B,1,1,S] was meant does not line up.
    const bad = broadcastPlan([4, 1, 12, 1], cross?.dims ?? []);
    expect(bad[2]).toEqual({ mask: 12, scores: 10, repeated: false });
  });

  it('slices item b of a mask, repeating a size-1 query dimension', () => {
    const pad = { name: 'source.padding', shape: [2, 1, 1, 3], data: u8(1, 1, 0, 1, 1, 1) };
    expect(Array.from(broadcastSlice(pad, 0, 2))).toEqual([1, 1, 0, 1, 1, 0]);
    expect(Array.from(broadcastSlice(pad, 1, 1))).toEqual([1, 1, 1]);
    const causal = { name: 'decoder.causal', shape: [1, 1, 3, 3], data: u8(1, 0, 0, 1, 1, 0, 1, 1, 1) };
    expect(Array.from(broadcastSlice(causal, 1, 3))).toEqual(Array.from(causal.data));
    expect(Array.from(combine(pad, causal, 0))).toEqual([1, 0, 0, 1, 1, 0, 1, 1, 0]);
    expect(maskedCount(combine(pad, causal, 0))).toBe(4);
  });

  it('draws a sliding window as a band of the causal square: the last W keys, the query included', () => {
    // T = 4, W = 2: row t sees keys t − 1 and t.
    expect(Array.from(windowMask(4, 2))).toEqual([1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1]);
    // W = 1: the diagonal; W ≥ T and W = 0: plain causal.
    expect(Array.from(windowMask(3, 1))).toEqual([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    const causal = [1, 0, 0, 1, 1, 0, 1, 1, 1];
    expect(Array.from(windowMask(3, 3))).toEqual(causal);
    expect(Array.from(windowMask(3, 0))).toEqual(causal);
    expect(maskedCount(windowMask(8, 3))).toBe(64 - (1 + 2 + 3 * 6));
    expect(outsideWindow(3, 1, 2)).toBe(true);
    expect(outsideWindow(3, 2, 2)).toBe(false);
    expect(outsideWindow(1, 3, 2)).toBe(false); // ahead of the query: causal, not the window
    expect(outsideWindow(7, 0, 0)).toBe(false);
  });

  it("tells whether a snapshot's square mask already holds the window", () => {
    const T = 5;
    const banded = { shape: [1, 1, T, T], data: windowMask(T, 2) };
    const plain = { shape: [1, 1, T, T], data: windowMask(T, 0) };
    expect(hidesBeyondWindow(banded, 2)).toBe(true);
    // A band of 3 lets key t − 2 through, which a window of 2 masks.
    expect(hidesBeyondWindow({ shape: [1, 1, T, T], data: windowMask(T, 3) }, 2)).toBe(false);
    expect(hidesBeyondWindow(plain, 2)).toBe(false);
    expect(hidesBeyondWindow(plain, 0)).toBe(false);
    // A window as long as the sequence masks nothing more: there is nothing to show as a window.
    expect(hidesBeyondWindow({ shape: [1, 1, T, T], data: windowMask(T, T) }, T)).toBe(false);
    // Padding masks are not squares.
    expect(hidesBeyondWindow({ shape: [2, 1, 1, T], data: new Uint8Array(2 * T) }, 2)).toBe(false);
    expect(maskDimLabels({ name: 'decoder.window', shape: [1, 1, 9, 9] })).toEqual(['1', '1', 'T=9', 'T=9']);
  });

  it("names Gemma 3's global layers (every n-th, counted from 1), and none without a window", () => {
    const gemma = { nDecoderLayers: 18, slidingWindow: 512, globalEvery: 6 };
    expect(globalLayers(gemma)).toEqual([6, 12, 18]);
    expect(globalLayers({ ...gemma, nDecoderLayers: 17 })).toEqual([6, 12]);
    expect(globalLayers({ ...gemma, slidingWindow: 0 })).toEqual([]);
    expect(globalLayers({ ...gemma, globalEvery: 0 })).toEqual([]);
    expect(globalLayersText(gemma)).toMatch(/^Layers 6, 12 and 18 \(every 6th of 18\) are global: /);
    expect(globalLayersText({ nDecoderLayers: 2, slidingWindow: 8, globalEvery: 2 })).toMatch(
      /^Layer 2 \(every 2nd of 2\) is global: it sees the whole causal context/,
    );
    expect(globalLayersText({ ...gemma, globalEvery: 0 })).toBe('');
  });
});
