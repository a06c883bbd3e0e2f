import { describe, expect, it } from 'vitest';
import {
  RAMP_SIZE,
  buildRamp,
  mix,
  over,
  pack,
  parseColor,
  rampIndex,
  unpack,
} from '../../../../webview/base/colorRamp';

describe('colorRamp', () => {
  it('parses the colour syntaxes themes use', () => {
    expect(parseColor('#1e1e1e')).toEqual([30, 30, 30, 255]);
    expect(parseColor('#fff')).toEqual([255, 255, 255, 255]);
    expect(parseColor('#3794ff80')).toEqual([55, 148, 255, 128]);
    expect(parseColor('rgb(1, 2, 3)')).toEqual([1, 2, 3, 255]);
    expect(parseColor('rgba(10, 20, 30, 0.5)')).toEqual([10, 20, 30, 128]);
    expect(parseColor('rgb(10 20 30 / 50%)')).toEqual([10, 20, 30, 128]);
    expect(parseColor('tomato')).toBeNull();
    expect(parseColor('#12')).toBeNull();
  });

  it('packs in ImageData byte order', () => {
    const w = pack([1, 2, 3, 4]);
    expect(Array.from(new Uint8Array(Uint32Array.of(w).buffer))).toEqual([1, 2, 3, 4]);
    expect(unpack(w)).toEqual([1, 2, 3, 4]);
  });

  it('mixes in linear light: the midpoint of black and white is sRGB 188, not 128', () => {
    expect(mix([0, 0, 0, 255], [255, 255, 255, 255], 0.5)[0]).toBe(188);
    expect(over([255, 0, 0, 128], [0, 0, 255, 255])).toEqual([128, 0, 127, 255]);
  });

  it('a ramp runs from the first stop to the last, and values map onto it', () => {
    const lut = buildRamp([
      [255, 255, 255, 255],
      [0, 0, 255, 255],
    ]);
    expect(lut.length).toBe(RAMP_SIZE);
    expect(unpack(lut[0] as number)).toEqual([255, 255, 255, 255]);
    expect(unpack(lut[RAMP_SIZE - 1] as number)).toEqual([0, 0, 255, 255]);
    expect(rampIndex(0)).toBe(0);
    expect(rampIndex(1)).toBe(255);
    expect(rampIndex(2)).toBe(255);
    expect(rampIndex(Number.NaN)).toBe(0);
    expect(rampIndex(0.25, 'sqrt')).toBe(Math.round(0.5 * 255));
  });
});
