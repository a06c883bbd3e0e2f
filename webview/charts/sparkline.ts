/**
 * Sparklines of head scores on canvas: one canvas per head, one band per score, each band a
 * line over the snapshots' steps on a fixed y range (0–1 for fractions, 0–max for entropy, so
 * heads compare at a glance), with the selected step marked and, in the chosen score's band,
 * the threshold as a dashed line. Device pixels follow devicePixelRatio (as heatmap.ts does);
 * colours come from the theme.
 *
 * Leaves out: values as text, hover and keyboard (panels/headsGrid.ts).
 */

import type { Theme } from '../base/theme';

/** One band: a score over the steps. */
export interface SparkBand {
  readonly values: readonly number[];
  /** y range of the band. */
  readonly min: number;
  readonly max: number;
  readonly color: string;
  /** Drawn dashed across the band (the chosen score's threshold), or null. */
  readonly threshold: number | null;
}

/** Horizontal inset of the lines, in CSS pixels (so end points are not cut). */
const PAD = 2;

/** The x of row `i` of `n` in a canvas `w` CSS pixels wide. */
export function sparkX(i: number, n: number, w: number): number {
  return n <= 1 ? w - PAD : PAD + (i / (n - 1)) * (w - 2 * PAD);
}

/** The row of `n` nearest to x (CSS pixels) in a canvas `w` wide. */
export function sparkRowAt(x: number, n: number, w: number): number {
  if (n <= 1) return n - 1;
  return Math.max(0, Math.min(n - 1, Math.round(((x - PAD) / (w - 2 * PAD)) * (n - 1))));
}

/**
 * Paints `bands` stacked top to bottom, each `bandH` CSS pixels tall, into `canvas` (sized to
 * `cssW` × bands·bandH). `cursor` is the selected row (−1: none).
 */
export function drawSparklines(
  canvas: HTMLCanvasElement,
  bands: readonly SparkBand[],
  cursor: number,
  theme: Theme,
  cssW: number,
  bandH: number,
): void {
  const dpr = Math.max(1, Math.round(window.devicePixelRatio || 1));
  const cssH = bands.length * bandH;
  const W = Math.round(cssW * dpr);
  const H = Math.round(cssH * dpr);
  if (canvas.width !== W) canvas.width = W;
  if (canvas.height !== H) canvas.height = H;
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cssW, cssH);
  const n = bands[0]?.values.length ?? 0;
  bands.forEach((b, k) => {
    const top = k * bandH + 2;
    const h = bandH - 4;
    const span = b.max - b.min || 1;
    const y = (v: number): number => top + h - ((Math.min(b.max, Math.max(b.min, v)) - b.min) / span) * h;
    ctx.strokeStyle = theme.grid;
    ctx.lineWidth = 1;
    ctx.setLineDash([]);
    ctx.beginPath();
    ctx.moveTo(0, top + h + 0.5);
    ctx.lineTo(cssW, top + h + 0.5);
    ctx.stroke();
    if (b.threshold !== null && b.threshold > b.min && b.threshold < b.max) {
      ctx.strokeStyle = theme.text;
      ctx.globalAlpha = 0.55;
      ctx.setLineDash([2, 2]);
      ctx.beginPath();
      ctx.moveTo(0, Math.round(y(b.threshold)) + 0.5);
      ctx.lineTo(cssW, Math.round(y(b.threshold)) + 0.5);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.globalAlpha = 1;
    }
    ctx.strokeStyle = b.color;
    ctx.fillStyle = b.color;
    ctx.lineWidth = 1.25;
    ctx.beginPath();
    let pen = false;
    for (let i = 0; i < n; i++) {
      const v = b.values[i] as number;
      if (!Number.isFinite(v)) {
        pen = false;
        continue;
      }
      const x = sparkX(i, n, cssW);
      if (pen) ctx.lineTo(x, y(v));
      else ctx.moveTo(x, y(v));
      pen = true;
    }
    ctx.stroke();
    const c = cursor >= 0 && cursor < n ? (b.values[cursor] as number) : NaN;
    if (Number.isFinite(c)) {
      ctx.beginPath();
      ctx.arc(sparkX(cursor, n, cssW), y(c), 2, 0, 2 * Math.PI);
      ctx.fill();
    }
  });
  if (cursor >= 0 && n > 1) {
    const x = Math.round(sparkX(cursor, n, cssW)) + 0.5;
    ctx.strokeStyle = theme.text;
    ctx.globalAlpha = 0.35;
    ctx.beginPath();
    ctx.moveTo(x, 0);
    ctx.lineTo(x, cssH);
    ctx.stroke();
    ctx.globalAlpha = 1;
  }
}
