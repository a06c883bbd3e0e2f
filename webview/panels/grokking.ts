/**
 * The Grokking view under the training curves, for a run of the modular-addition task (its
 * validations carry `grokking`, src/protocol/data.ts): train and test accuracy, and train, test,
 * restricted and excluded loss, against the step on log axes (log loss too); the embedding's
 * Fourier spectrum at the latest validation, its key frequencies in the series' second colour;
 * and the key frequencies over training, one column per validation, one row per frequency. It
 * fills in as validations arrive; hidden for every other run.
 *
 * Leaves out: the numbers (src/lab/evaluation/grokking.ts computes them) and the main loss chart
 * (curves.ts).
 */

import type uPlot from 'uplot';
import { h, replaceChildren } from '../base/dom';
import { MISSING, formatCount, formatLoss, formatPercent } from '../../src/common/format';
import type { EvalMetrics, GrokkingMetrics } from '../../src/protocol/data';
import type { RunEntry } from '../store';
import { Chart } from './chart';
import type { PanelContext } from './panel';

/** One validation's step with its progress measures. */
type Point = { readonly step: number; readonly g: GrokkingMetrics };

/** The validations of `evals` that carry progress measures, at steps ≥ 1 (a log axis has no 0). */
export function grokkingPoints(evals: readonly EvalMetrics[]): Point[] {
  return evals.flatMap((e) => (e.grokking && e.step >= 1 ? [{ step: e.step, g: e.grokking }] : []));
}

function series(label: string, stroke: string, fmt: (v: number) => string): uPlot.Series {
  return { label, stroke, width: 2, points: { show: false }, value: (_u, v) => (v == null ? MISSING : fmt(v)) };
}

/** The Grokking view (see the file comment). */
export class GrokkingView {
  readonly el: HTMLElement;
  private readonly acc: Chart;
  private readonly loss: Chart;
  private readonly spectrum = h('canvas', { className: 'grokking-spectrum', attrs: { role: 'img' } });
  private readonly keys = h('canvas', { className: 'grokking-keys', attrs: { role: 'img' } });
  private readonly spectrumNote = h('figcaption', { className: 'grokking-caption' });
  private readonly keysNote = h('figcaption', { className: 'grokking-caption' });
  private readonly summary = h('p', { className: 'grokking-summary', attrs: { 'aria-live': 'polite' } });

  constructor(private readonly ctx: PanelContext) {
    this.acc = new Chart('Grokking: accuracy', 'chart-small grokking-acc', ctx, () => []);
    this.loss = new Chart('Grokking: loss', 'chart-small grokking-loss', ctx, () => []);
    this.el = h(
      'section',
      { className: 'grokking', attrs: { hidden: true, 'aria-label': 'Grokking' } },
      h('h3', {}, 'Grokking'),
      this.summary,
      h('div', { className: 'chart-row' }, this.acc.box, this.loss.box),
      h(
        'div',
        { className: 'chart-row' },
        h('figure', { className: 'chart grokking-figure' }, this.spectrum, this.spectrumNote),
        h('figure', { className: 'chart grokking-figure' }, this.keys, this.keysNote),
      ),
    );
  }

  /** Draws `run`'s progress measures (hides the view when it has none) in `width` pixels. */
  update(run: RunEntry, width: number): void {
    const points = grokkingPoints(run.evals);
    this.el.hidden = points.length === 0;
    this.el.dataset.points = String(points.length);
    if (points.length === 0) return;
    const t = this.ctx.theme;
    const c = (i: number): string => t.series[i % t.series.length] ?? t.text;
    const half = Math.max(260, Math.floor((width - 16) / 2));
    const steps = Float64Array.from(points, (p) => p.step);
    const col = (f: (g: GrokkingMetrics) => number): Float64Array => Float64Array.from(points, (p) => f(p.g));
    const key = `${run.id}|${t.text}`;
    this.acc.update(
      {
        key: `${key}|acc`,
        title: 'Accuracy (log step)',
        height: 200,
        log: false,
        logX: true,
        series: [series('train', c(0), formatPercent), series('test', c(1), formatPercent)],
        data: [steps, col((g) => g.trainAcc), col((g) => g.testAcc)],
      },
      this.ctx,
      half,
      'step',
    );
    const losses = [col((g) => g.trainLoss), col((g) => g.testLoss), col((g) => g.restrictedLoss)];
    const excluded = col((g) => g.excludedLoss);
    const positive = [...losses, excluded].every((a) => a.every((v) => v > 0));
    this.loss.update(
      {
        key: `${key}|loss|${positive}`,
        title: 'Loss (log step, log loss)',
        yLabel: 'nats',
        height: 200,
        log: positive,
        logX: true,
        series: [
          series('train', c(0), formatLoss),
          series('test', c(1), formatLoss),
          series('restricted', c(2), formatLoss),
          series('excluded', c(3), formatLoss),
        ],
        data: [steps, ...losses, excluded],
      },
      this.ctx,
      half,
      'step',
    );
    const last = points[points.length - 1] as Point;
    this.drawSpectrum(last, half);
    this.drawKeys(points, half);
    this.summary.textContent =
      `Step ${formatCount(last.step)}: train accuracy ${formatPercent(last.g.trainAcc)}, test ` +
      `${formatPercent(last.g.testAcc)}; restricted loss ${formatLoss(last.g.restrictedLoss)}, excluded ` +
      `${formatLoss(last.g.excludedLoss)}.`;
  }

  /** A canvas of `w` × `hgt` CSS pixels, sharp on the display, with its 2-D context. */
  private canvas(el: HTMLCanvasElement, w: number, hgt: number): CanvasRenderingContext2D | null {
    const dpr = window.devicePixelRatio || 1;
    el.width = Math.round(w * dpr);
    el.height = Math.round(hgt * dpr);
    el.style.width = `${w}px`;
    el.style.height = `${hgt}px`;
    const g = el.getContext('2d');
    if (!g) return null;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, hgt);
    g.font = `11px ${this.ctx.theme.font}`;
    return g;
  }

  /** Bars of ‖W_E‖ per frequency at the latest validation; key frequencies in the second series colour. */
  private drawSpectrum(last: Point, w: number): void {
    const t = this.ctx.theme;
    const { spectrum, keyFreqs } = last.g;
    const hgt = 200;
    const g = this.canvas(this.spectrum, w, hgt);
    const max = Math.max(1e-12, ...spectrum);
    const left = 36;
    const bottom = hgt - 22;
    const top = 20;
    const bw = (w - left - 8) / Math.max(1, spectrum.length);
    if (g) {
      g.fillStyle = t.text;
      g.fillText(`Fourier spectrum of W_E at step ${formatCount(last.step)}`, left, 12);
      g.strokeStyle = t.grid;
      g.beginPath();
      g.moveTo(left, bottom + 0.5);
      g.lineTo(w - 8, bottom + 0.5);
      g.stroke();
      spectrum.forEach((v, i) => {
        const k = i + 1;
        const bh = ((bottom - top) * v) / max;
        g.fillStyle = keyFreqs.includes(k) ? (t.series[1] ?? t.text) : t.secondary;
        g.fillRect(left + i * bw + 0.5, bottom - bh, Math.max(1, bw - 1), bh);
      });
      g.fillStyle = t.text;
      for (const k of [1, Math.ceil(spectrum.length / 2), spectrum.length])
        g.fillText(String(k), left + (k - 0.5) * bw - 4, hgt - 8);
      g.fillText(formatLoss(max), 2, top + 4);
      g.fillText('0', 2, bottom);
    }
    this.spectrum.dataset.bars = String(spectrum.length);
    this.spectrum.dataset.keys = keyFreqs.join(',');
    const label = keyFreqs.length
      ? `Key frequencies k = ${[...keyFreqs].sort((a, b) => a - b).join(', ')} (of 1–${spectrum.length}).`
      : `No key frequency yet: the embedding spreads over all ${spectrum.length}.`;
    this.spectrum.setAttribute('aria-label', `Fourier spectrum of the embedding. ${label}`);
    this.spectrumNote.textContent = `‖W_E‖ per frequency k of Z_p. ${label}`;
  }

  /** One column per validation (in order, step labels at the ends), a filled cell where k was key. */
  private drawKeys(points: readonly Point[], w: number): void {
    const t = this.ctx.theme;
    const K = (points[points.length - 1] as Point).g.spectrum.length;
    const hgt = 200;
    const g = this.canvas(this.keys, w, hgt);
    const left = 36;
    const top = 20;
    const bottom = hgt - 22;
    const cw = (w - left - 8) / Math.max(1, points.length);
    const ch = (bottom - top) / Math.max(1, K);
    let cells = 0;
    if (g) {
      g.fillStyle = t.text;
      g.fillText('Key frequencies over training', left, 12);
      g.strokeStyle = t.grid;
      g.strokeRect(left - 0.5, top - 0.5, w - left - 7, bottom - top + 1);
      g.fillStyle = t.series[1] ?? t.text;
      points.forEach((p, i) => {
        for (const k of p.g.keyFreqs) {
          g.fillRect(left + i * cw, top + (k - 1) * ch, Math.max(1, cw), Math.max(1, ch));
          cells++;
        }
      });
      g.fillStyle = t.text;
      g.fillText('k=1', 2, top + 8);
      g.fillText(`${K}`, 2, bottom);
      g.fillText(`step ${formatCount((points[0] as Point).step)}`, left, hgt - 8);
      const end = `step ${formatCount((points[points.length - 1] as Point).step)}`;
      g.fillText(end, w - 8 - g.measureText(end).width, hgt - 8);
    } else for (const p of points) cells += p.g.keyFreqs.length;
    this.keys.dataset.columns = String(points.length);
    this.keys.dataset.cells = String(cells);
    this.keys.setAttribute('aria-label', `Key frequencies at each of ${points.length} validations.`);
    this.keysNote.textContent = 'A cell is filled where frequency k was key at that validation (evenly spaced).';
  }

  /** Clears the view (no run). */
  clear(): void {
    this.el.hidden = true;
    replaceChildren(this.summary);
  }
}
