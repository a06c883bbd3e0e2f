/**
 * Vector SVG of what the dashboard draws, written by our own code from the same data the
 * canvas shows (not a screenshot): here the shared parts and line charts with their axes,
 * ticks, labels, title and legend as `<path>` and `<text>`; heatmaps (one `<rect>` per cell,
 * every token as `<text>`) are in svgHeatmap.ts. Each file is self-contained: theme colours arrive resolved to
 * concrete values (theme.ts) and are written as `#rrggbb` plus an opacity, fonts as the
 * page's font family, no external references, no scripts. Every string from the user's data
 * (run names, tokens) is XML-escaped, and characters XML cannot hold are dropped.
 *
 * Pure (strings in, a string out, no DOM), so the unit tests parse what it writes.
 *
 * Leaves out: heatmaps (svgHeatmap.ts), rasterising to PNG and saving (exportMenu.ts), and
 * what each panel puts in a chart (the panels).
 */

import { formatTicks } from '../../src/common/format';
import type { Rgba } from './colorRamp';
import { parseColor } from './colorRamp';

/** A finished SVG document and its size in CSS pixels. */
export interface SvgDoc {
  readonly svg: string;
  readonly width: number;
  readonly height: number;
}

/** Text as XML character data or attribute value: markup escaped, characters XML 1.0 forbids dropped. */
export function escapeXml(s: string): string {
  return s
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(
      /[&<>"']/g,
      (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] as string,
    );
}

const hex2 = (v: number): string => Math.round(v).toString(16).padStart(2, '0');

/** `#rrggbb` of a colour (alpha dropped). */
export function hexColor(c: Rgba): string {
  return `#${hex2(c[0])}${hex2(c[1])}${hex2(c[2])}`;
}

/** `#rrggbb` of a packed colour word (ImageData byte order: R in the low byte). */
export function wordColor(w: number): string {
  return `#${hex2(w & 0xff)}${hex2((w >>> 8) & 0xff)}${hex2((w >>> 16) & 0xff)}`;
}

/**
 * A paint attribute pair for a CSS colour: `fill="#3794ff"` (and `fill-opacity` when it is not
 * opaque); `attr` is 'fill' or 'stroke'. A colour the parser does not know is written as given.
 */
export function paint(attr: 'fill' | 'stroke', css: string): string {
  const c = parseColor(css);
  if (!c) return `${attr}="${escapeXml(css)}"`;
  const a = c[3] / 255;
  return `${attr}="${hexColor(c)}"${a < 0.999 ? ` ${attr}-opacity="${Number(a.toFixed(3))}"` : ''}`;
}

/** A number as an SVG coordinate: at most two decimals. */
export function n2(x: number): string {
  return String(Math.round(x * 100) / 100);
}

/** The theme colours and font a drawing uses. */
export interface SvgStyle {
  readonly background: string;
  readonly text: string;
  readonly muted: string;
  readonly grid: string;
  readonly font: string;
}

/** The drawing style of a theme: its resolved colours and font. */
export function svgStyle(t: {
  readonly bg: Rgba;
  readonly muted: Rgba;
  readonly text: string;
  readonly grid: string;
  readonly font: string;
}): SvgStyle {
  const rgb = (c: Rgba): string => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
  return { background: rgb(t.bg), text: t.text, muted: rgb(t.muted), grid: t.grid, font: t.font };
}

/** The start of a document: XML declaration, `<svg>` with its size and viewBox, `<title>`, the background. */
export function openSvg(width: number, height: number, title: string, style: SvgStyle): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}` +
      `" height="${height}" viewBox="0 0 ${width} ${height}" font-family="` +
      `${escapeXml(style.font)}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" ${paint('fill', style.background)}/>`,
  ].join('\n');
}

/** Roughly how wide a text is at a font size (for layout only; SVG viewers measure the real text). */
export function textWidth(s: string, size: number): number {
  return [...s].length * size * 0.6;
}

// ---------------------------------------------------------------- line charts

/** One line of a chart. */
export interface SvgSeries {
  readonly label: string;
  readonly color: string;
  readonly width: number;
  readonly dash?: readonly number[];
  /** Draw a dot at each point (evaluations). */
  readonly points?: boolean;
  /** Marks only: a ring at each point and no line (evaluations on test data). Default false. */
  readonly marksOnly?: boolean;
  readonly y: ArrayLike<number | null | undefined>;
}

/** A chart: shared x values, one or more series. */
export interface SvgLineChart {
  readonly title: string;
  readonly width: number;
  readonly height: number;
  readonly xLabel: string;
  readonly x: ArrayLike<number>;
  readonly series: readonly SvgSeries[];
  readonly yLog: boolean;
  /** The x range shown (a zoomed chart exports what is in view); default: the data's. */
  readonly xRange?: readonly [number, number];
  readonly style: SvgStyle;
}

/** Ticks 1-2-5 × 10^k covering [lo, hi] with about `n` intervals; the range is widened to whole ticks. */
export function niceTicks(lo: number, hi: number, n = 5): { ticks: number[]; min: number; max: number } {
  if (!(hi > lo)) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    return niceTicks(lo - pad, hi + pad, n);
  }
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const min = Math.floor(lo / step + 1e-9) * step;
  const max = Math.ceil(hi / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let i = 0; min + i * step <= max + step * 1e-9; i++) ticks.push(Number((min + i * step).toPrecision(12)));
  return { ticks, min: ticks[0] as number, max: ticks[ticks.length - 1] as number };
}

/**
 * Ticks of a log-10 axis over [lo, hi] (lo > 0): the decades, plus 2 and 5 within them when fewer than three decades
 * show.
 */
export function logTicks(lo: number, hi: number): { ticks: number[]; min: number; max: number } {
  const a = Math.floor(Math.log10(lo));
  const b = Math.max(a + 1, Math.ceil(Math.log10(hi)));
  const ticks: number[] = [];
  for (let k = a; k <= b; k++)
    for (const m of b - a < 3 ? [1, 2, 5] : [1])
      if (m === 1 || k < b) ticks.push(Number((m * 10 ** k).toPrecision(12)));
  return { ticks, min: 10 ** a, max: 10 ** b };
}

/**
 * A line chart as SVG: title, plot frame with grid, ticks and tick labels on both axes, the x-axis label, one `<path>`
 * per series, a legend.
 */
export function lineChartSvg(c: SvgLineChart): SvgDoc {
  const { style, width } = c;
  const font = 11;
  const legendRows = legendLayout(
    c.series.map((s) => s.label),
    width - 16,
    font,
  );
  const top = 28;
  const bottom = 40 + legendRows.height;
  const left = 64;
  const right = 16;
  const height = Math.max(c.height, top + bottom + 60);
  const pw = width - left - right;
  const ph = height - top - bottom;
  const n = c.x.length;
  let x0 = Infinity;
  let x1 = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = c.x[i] as number;
    if (Number.isFinite(v)) {
      x0 = Math.min(x0, v);
      x1 = Math.max(x1, v);
    }
  }
  if (c.xRange) [x0, x1] = c.xRange;
  if (!(x1 >= x0)) [x0, x1] = [0, 1];
  if (x1 === x0) x1 = x0 + 1;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const s of c.series) {
    for (let i = 0; i < n; i++) {
      const x = c.x[i] as number;
      const y = s.y[i];
      if (y == null || !Number.isFinite(y) || x < x0 || x > x1 || (c.yLog && y <= 0)) continue;
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
    }
  }
  if (!(y1 >= y0)) [y0, y1] = c.yLog ? [0.1, 1] : [0, 1];
  const yAxis = c.yLog ? logTicks(y0, y1) : niceTicks(y0, y1);
  const xAxis = niceTicks(x0, x1, Math.max(2, Math.floor(pw / 90)));
  const px = (x: number): number => left + ((x - x0) / (x1 - x0)) * pw;
  const py = c.yLog
    ? (y: number): number =>
        top + ph - ((Math.log10(y) - Math.log10(yAxis.min)) / (Math.log10(yAxis.max) - Math.log10(yAxis.min))) * ph
    : (y: number): number => top + ph - ((y - yAxis.min) / (yAxis.max - yAxis.min)) * ph;
  const out: string[] = [openSvg(width, height, c.title, style)];
  out.push(
    `<text x="${n2(width / 2)}" y="18" text-anchor="middle" font-size="13" font-weight="600" ` +
      `${paint('fill', style.text)}>${escapeXml(c.title)}</text>`,
  );
  // Grid, ticks and tick labels.
  const xTicks = xAxis.ticks.filter((t) => t >= x0 - 1e-9 * Math.abs(x1 - x0) && t <= x1 + 1e-9 * Math.abs(x1 - x0));
  const yLabels = formatTicks(yAxis.ticks);
  const xLabels = formatTicks(xTicks);
  const g: string[] = [`<g class="grid" ${paint('stroke', style.grid)} stroke-width="1" fill="none">`];
  yAxis.ticks.forEach((t) => g.push(`<path d="M${n2(left)} ${n2(py(t))}H${n2(left + pw)}"/>`));
  xTicks.forEach((t) => g.push(`<path d="M${n2(px(t))} ${n2(top)}V${n2(top + ph)}"/>`));
  g.push('</g>');
  out.push(g.join('\n'));
  out.push(`<g class="y-ticks" font-size="${font}" text-anchor="end" ${paint('fill', style.text)}>`);
  yAxis.ticks.forEach((t, i) =>
    out.push(`<text x="${n2(left - 6)}" y="${n2(py(t) + font / 3)}">${escapeXml(yLabels[i] as string)}</text>`),
  );
  out.push('</g>');
  out.push(`<g class="x-ticks" font-size="${font}" text-anchor="middle" ${paint('fill', style.text)}>`);
  xTicks.forEach((t, i) =>
    out.push(`<text x="${n2(px(t))}" y="${n2(top + ph + font + 4)}">${escapeXml(xLabels[i] as string)}</text>`),
  );
  out.push('</g>');
  out.push(
    `<text class="x-label" x="${n2(left + pw / 2)}" y="${n2(top + ph + 2 * font + 10)}" ` +
      `text-anchor="middle" font-size="12" ${paint('fill', style.text)}>${escapeXml(c.xLabel)}</text>`,
  );
  out.push(
    `<rect x="${left}" y="${top}" width="${n2(pw)}" height="${n2(ph)}" fill="none" ` +
      `${paint('stroke', style.muted)} stroke-width="1"/>`,
  );
  // Series, clipped to the plot.
  out.push(
    `<defs><clipPath id="plot"><rect x="${left}" y="${top}" width="${n2(pw)}" height="${n2(ph)}"/></clipPath></defs>`,
  );
  out.push('<g class="series" clip-path="url(#plot)" fill="none" stroke-linejoin="round" stroke-linecap="round">');
  for (const s of c.series) {
    let d = '';
    let pen = false;
    const dots: string[] = [];
    for (let i = 0; i < n; i++) {
      const x = c.x[i] as number;
      const y = s.y[i];
      const ok = y != null && Number.isFinite(y) && Number.isFinite(x) && !(c.yLog && y <= 0);
      if (!ok) {
        // A gap (NaN, or no value at this x): lines of sparse series (evaluations) join across it.
        if (!s.points) pen = false;
        continue;
      }
      const p = `${n2(px(x))} ${n2(py(y))}`;
      d += `${pen ? 'L' : 'M'}${p}`;
      pen = true;
      if (s.marksOnly)
        dots.push(
          `<circle data-series="${escapeXml(s.label)}" cx="${n2(px(x))}" cy="${n2(py(y))}" r="4.5" ` +
            `fill="none" ${paint('stroke', s.color)} stroke-width="${s.width}"/>`,
        );
      else if (s.points)
        dots.push(`<circle cx="${n2(px(x))}" cy="${n2(py(y))}" r="2.5" ${paint('fill', s.color)} stroke="none"/>`);
    }
    const dash = s.dash && s.dash.length > 0 ? ` stroke-dasharray="${s.dash.join(' ')}"` : '';
    if (!s.marksOnly)
      out.push(
        `<path data-series="${escapeXml(s.label)}" d="${d || `M${left} ${top}`}` +
          `" ${paint('stroke', s.color)} stroke-width="${s.width}"${dash}/>`,
      );
    out.push(...dots);
  }
  out.push('</g>');
  out.push(legendSvg(c.series, legendRows, 8, top + ph + 2 * font + 22, font, style));
  out.push('</svg>', '');
  return { svg: out.join('\n'), width, height };
}

/** Legend items placed left to right, wrapping at `maxWidth`. */
function legendLayout(
  labels: readonly string[],
  maxWidth: number,
  font: number,
): { at: { x: number; row: number }[]; height: number } {
  const at: { x: number; row: number }[] = [];
  let x = 0;
  let row = 0;
  for (const l of labels) {
    const w = 26 + textWidth(l, font) + 14;
    if (x > 0 && x + w > maxWidth) {
      x = 0;
      row++;
    }
    at.push({ x, row });
    x += w;
  }
  return { at, height: labels.length === 0 ? 0 : (row + 1) * (font + 8) };
}

function legendSvg(
  series: readonly SvgSeries[],
  layout: ReturnType<typeof legendLayout>,
  x0: number,
  y0: number,
  font: number,
  style: SvgStyle,
): string {
  const out = [`<g class="legend" font-size="${font}" ${paint('fill', style.text)}>`];
  series.forEach((s, i) => {
    const p = layout.at[i] as { x: number; row: number };
    const y = y0 + p.row * (font + 8);
    const dash = s.dash && s.dash.length > 0 ? ` stroke-dasharray="${s.dash.join(' ')}"` : '';
    out.push(
      `<path d="M${n2(x0 + p.x)} ${n2(y)}h20" ${paint('stroke', s.color)} ` +
        `stroke-width="${Math.max(2, s.width)}"${dash} fill="none"/>`,
    );
    out.push(`<text x="${n2(x0 + p.x + 26)}" y="${n2(y + font / 3)}">${escapeXml(s.label)}</text>`);
  });
  out.push('</g>');
  return out.join('\n');
}
