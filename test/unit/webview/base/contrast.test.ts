import { describe, expect, it } from 'vitest';
import type { Rgba } from '../../../../webview/base/colorRamp';
import { MIN_CHART_CONTRAST, contrastRatio, luminance, quieter, readable } from '../../../../webview/base/contrast';

const WHITE: Rgba = [255, 255, 255, 255];
const BLACK: Rgba = [0, 0, 0, 255];
const DARK: Rgba = [31, 31, 31, 255]; // Dark Modern's editor background

describe('contrast', () => {
  it("is WCAG 2's: luminance 0 to 1, ratio 21 for black on white, symmetric", () => {
    expect(luminance(BLACK)).toBe(0);
    expect(luminance(WHITE)).toBeCloseTo(1, 12);
    expect(contrastRatio(BLACK, WHITE)).toBeCloseTo(21, 10);
    expect(contrastRatio(WHITE, BLACK)).toBeCloseTo(21, 10);
    // WCAG's own example values: #767676 on white is 4.54:1.
    expect(contrastRatio([0x76, 0x76, 0x76, 255], WHITE)).toBeCloseTo(4.54, 2);
  });

  it("makes a translucent theme colour opaque when its hue passes (Modern themes' charts.orange, #EA5C0055)", () => {
    const orange: Rgba = [0xea, 0x5c, 0x00, 0x55];
    expect(readable(orange, BLACK, WHITE, BLACK)).toEqual([0xea, 0x5c, 0x00, 255]);
    expect(contrastRatio([0xea, 0x5c, 0x00, 255], WHITE)).toBeGreaterThan(MIN_CHART_CONTRAST);
  });

  it('falls back when the theme colour fails, and moves toward the foreground when both do', () => {
    const paleYellow: Rgba = [255, 240, 150, 255];
    const blue: Rgba = [0, 99, 211, 255];
    expect(readable(paleYellow, blue, WHITE, BLACK)).toEqual(blue);
    const c = readable(paleYellow, [250, 250, 200, 255], WHITE, BLACK);
    expect(contrastRatio(c, WHITE)).toBeGreaterThanOrEqual(MIN_CHART_CONTRAST);
    expect(c[3]).toBe(255);
    expect(readable(null, [40, 40, 40, 255], DARK, WHITE)).not.toEqual([40, 40, 40, 255]);
    expect(contrastRatio(readable(null, [40, 40, 40, 255], DARK, WHITE), DARK)).toBeGreaterThanOrEqual(
      MIN_CHART_CONTRAST,
    );
  });

  it('quieter keeps the hue readable, nearer the background', () => {
    const blue: Rgba = [0, 99, 211, 255];
    const q = quieter(blue, WHITE);
    expect(contrastRatio(q, WHITE)).toBeGreaterThanOrEqual(MIN_CHART_CONTRAST);
    expect(contrastRatio(q, WHITE)).toBeLessThan(contrastRatio(blue, WHITE));
    const d = quieter([89, 164, 249, 255], DARK);
    expect(contrastRatio(d, DARK)).toBeGreaterThanOrEqual(MIN_CHART_CONTRAST);
  });
});
