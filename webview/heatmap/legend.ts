/**
 * The colour legend of the attention heatmaps: the ramp from 0 to 1 (under the chosen scale,
 * so a √ scale shows where 0.25 really lands), a masked-cell swatch and the padding-token
 * marker — the same colours the heatmaps paint, taken from the same theme.
 *
 * Leaves out: the heatmaps (heatmap.ts).
 */

import type { RampScale } from '../base/colorRamp';
import { rampIndex } from '../base/colorRamp';
import { h, replaceChildren } from '../base/dom';
import type { Theme } from '../base/theme';

const WIDTH = 240;
const HEIGHT = 12;

/** Builds or repaints a legend into `box`. */
export function drawLegend(box: HTMLElement, theme: Theme, scale: RampScale): void {
  const ramp = document.createElement('canvas');
  ramp.width = WIDTH;
  ramp.height = HEIGHT;
  ramp.className = 'legend-ramp';
  ramp.setAttribute('role', 'img');
  ramp.setAttribute(
    'aria-label',
    `colour scale from probability 0 (left) to 1 (right)${scale === 'sqrt' ? ', square-root spaced' : ''}`,
  );
  const ctx = ramp.getContext('2d');
  if (ctx) {
    const img = ctx.createImageData(WIDTH, HEIGHT);
    const px = new Uint32Array(img.data.buffer);
    for (let x = 0; x < WIDTH; x++) {
      const word = theme.ramp[rampIndex(x / (WIDTH - 1), scale)] as number;
      for (let y = 0; y < HEIGHT; y++) px[y * WIDTH + x] = word;
    }
    ctx.putImageData(img, 0, 0);
  }
  const swatch = document.createElement('canvas');
  swatch.width = 14;
  swatch.height = 14;
  swatch.className = 'legend-masked';
  swatch.setAttribute('aria-hidden', 'true');
  const sctx = swatch.getContext('2d');
  if (sctx) {
    const m = theme.masked;
    sctx.fillStyle = `rgb(${m[0]}, ${m[1]}, ${m[2]})`;
    sctx.fillRect(0, 0, 14, 14);
  }
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((v) => {
    const span = h('span', { className: 'legend-tick' }, String(v));
    // Place each tick where the ramp shows that value.
    const x = scale === 'sqrt' ? Math.sqrt(v) : v;
    span.style.left = `${(x * 100).toFixed(1)}%`;
    return span;
  });
  replaceChildren(
    box,
    h('span', { className: 'legend-title' }, 'attention p'),
    h('span', { className: 'legend-scale' }, ramp, h('span', { className: 'legend-ticks' }, ...ticks)),
    h('span', { className: 'legend-item' }, swatch, ' masked (probability 0, as if its score were −∞)'),
    h('span', { className: 'legend-item' }, h('span', { className: 'hm-label pad' }, '<pad>'), ' padding token'),
  );
}
