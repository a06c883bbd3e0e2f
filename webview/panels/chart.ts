/**
 * One uPlot chart of the curves tab in its figure: rebuilt only when its structure changes (a
 * live step just calls setData), with tick labels from formatTicks (distinct, exact), the x
 * value under the cursor in its own format, segment markers placed after every redraw, and an
 * export menu (PNG, SVG of the chart as drawn — zoom included — and the panel's extra items).
 *
 * Leaves out: what the charts show (curves.ts).
 */

import uPlot from 'uplot';
import { h, replaceChildren } from '../base/dom';
import { MISSING, formatCompact, formatCount, formatDuration, formatTicks } from '../../src/common/format';
import type { ExportKind } from '../../src/protocol/webview';
import { exportMenu, imageItems } from '../export/exportMenu';
import { exportFileName } from '../export/exportData';
import type { ExportItem } from '../export/exportMenu';
import type { SegmentMarker } from '../charts/segments';
import { xLabel } from '../charts/series';
import type { XMode } from '../charts/series';
import { lineChartSvg, svgStyle } from '../base/svg';
import type { SvgDoc } from '../base/svg';
import type { PanelContext } from './panel';

/** Columns of a chart: x, then one per series (uPlot's aligned data). */
export type Table = uPlot.AlignedData;

/**
 * uPlot's tick labels: {@link formatTicks} over the ticks it labels; a log axis hands in its
 * unlabelled minor ticks as null, which stay null (no label).
 */
function tickValues(splits: readonly (number | null)[]): (string | null)[] {
  const shown = splits.filter((v): v is number => v !== null && Number.isFinite(v));
  const labels = formatTicks(shown);
  let i = 0;
  return splits.map((v) => (v !== null && Number.isFinite(v) ? (labels[i++] as string) : null));
}

const HOVER_X: Readonly<Record<XMode, (v: number) => string>> = {
  step: formatCount,
  tokens: (v) => formatCompact(v),
  time: formatDuration,
};

/** What one chart draws. */
export interface ChartSpec {
  readonly key: string;
  readonly title: string;
  /** The y axis's label (its unit), when it has one. */
  readonly yLabel?: string;
  readonly height: number;
  readonly log: boolean;
  /** A log x axis (every x must be positive); default linear. */
  readonly logX?: boolean;
  readonly series: uPlot.Series[];
  readonly data: Table;
  /** Segment starts to mark, and whether to write their labels. */
  readonly markers?: readonly SegmentMarker[];
  readonly markerLabels?: boolean;
}

/** One uPlot chart in a box; rebuilt when its structure key changes. */
export class Chart {
  readonly box: HTMLElement;
  private plot: uPlot | null = null;
  private key = '';
  private markers: readonly SegmentMarker[] = [];
  private markerLabels = false;
  private readonly markerLayer = h('div', { className: 'segment-markers' });
  private spec: ChartSpec | null = null;
  private mode: XMode = 'step';

  constructor(label: string, className: string, ctx: PanelContext, extra: () => readonly ExportItem[]) {
    this.box = h('figure', { className: `chart ${className}`, attrs: { 'aria-label': label } });
    const name = (kind: ExportKind): string =>
      exportFileName(
        ctx.run()?.summary.name ?? 'run',
        this.spec?.title ?? label,
        ctx.run()?.steps.lastStep ?? null,
        kind,
      );
    this.box.append(
      exportMenu(
        ctx.host,
        `Export ${label.toLowerCase()}`,
        () => [...(this.spec ? imageItems(() => this.svg(ctx), name) : []), ...extra()],
        (t) => ctx.problem(t),
      ),
    );
  }

  /** The chart as drawn now (x range as zoomed) in vector form. */
  svg(ctx: PanelContext): SvgDoc {
    const spec = this.spec as ChartSpec;
    const t = ctx.theme;
    const x = spec.data[0] as ArrayLike<number>;
    const scale = this.plot?.scales.x;
    const series = spec.series
      .map((s, i) => ({ s, y: spec.data[i + 1] as ArrayLike<number | null> }))
      .filter(({ s }) => s.show !== false)
      .map(({ s, y }) => ({
        label: String(s.label ?? ''),
        color: typeof s.stroke === 'string' ? s.stroke : t.text,
        width: s.width ?? 1,
        dash: s.dash,
        points: s.points?.show === true,
        marksOnly: s.paths !== undefined,
        y,
      }));
    return lineChartSvg({
      title: spec.title,
      width: this.plot?.width ?? 640,
      height: spec.height + 60,
      xLabel: xLabel(this.mode),
      x,
      series,
      yLog: spec.log,
      xRange: scale?.min !== undefined && scale.max !== undefined ? [scale.min, scale.max] : undefined,
      style: svgStyle(t),
    });
  }

  update(spec: ChartSpec, ctx: PanelContext, width: number, mode: XMode): void {
    const t = ctx.theme;
    this.spec = spec;
    this.mode = mode;
    const structure = `${spec.key}|${spec.logX === true}|${width}|${t.text}|${t.grid}|${t.series.join()}`;
    this.markers = spec.markers ?? [];
    this.markerLabels = spec.markerLabels ?? false;
    if (this.plot && this.key === structure) {
      this.plot.setData(spec.data, true);
      return;
    }
    this.plot?.destroy();
    this.key = structure;
    // Tick labels with as many digits as keep them distinct (no "0.001 / 0.001" on the lr axis).
    const axis = (label: string): uPlot.Axis => ({
      label,
      stroke: t.text,
      grid: { stroke: t.grid, width: 1 },
      ticks: { stroke: t.grid, width: 1 },
      font: `11px ${t.font}`,
      labelFont: `12px ${t.font}`,
      values: (_u, splits) => tickValues(splits),
    });
    const opts: uPlot.Options = {
      title: spec.title,
      width,
      height: spec.height,
      scales: {
        x: spec.logX ? { time: false, distr: 3, log: 10 } : { time: false },
        y: spec.log ? { distr: 3, log: 10 } : { distr: 1 },
      },
      series: [{ label: xLabel(mode), value: (_u, v) => (v == null ? MISSING : HOVER_X[mode](v)) }, ...spec.series],
      axes: [axis(xLabel(mode)), axis(spec.yLabel ?? '')],
      cursor: { sync: { key: 'al-curves' }, drag: { x: true, y: false } },
      legend: { show: true, live: true },
      hooks: { draw: [(u) => this.placeMarkers(u)] },
    };
    this.plot = new uPlot(opts, spec.data, this.box);
  }

  /** Puts a marker over the plot at each segment start inside the x range (after every redraw, so zoom moves them). */
  private placeMarkers(u: uPlot): void {
    if (this.markerLayer.parentNode !== u.over) u.over.appendChild(this.markerLayer);
    const { min, max } = u.scales.x;
    const inRange = this.markers.filter((m) => min !== undefined && max !== undefined && m.x >= min && m.x <= max);
    replaceChildren(
      this.markerLayer,
      ...inRange.map((m) => {
        const left = u.valToPos(m.x, 'x');
        // A label near the right edge reads leftwards, so it stays inside the plot.
        const end = left > 0.6 * u.over.clientWidth;
        const el = h(
          'div',
          {
            className:
              `segment-marker${m.kind === 'threshold' ? ' threshold-marker' : ''}` +
              `${end ? ' segment-marker-end' : ''}`,
            attrs: { 'data-step': m.step, title: m.label },
          },
          this.markerLabels ? h('span', { className: 'segment-label' }, m.label) : null,
        );
        // CSSOM, not a style attribute: the page's CSP allows no inline style attributes.
        el.style.left = `${left}px`;
        return el;
      }),
    );
  }

  destroy(): void {
    this.plot?.destroy();
    this.plot = null;
    this.key = '';
  }
}
