/**
 * Heatmaps as vector SVG (svg.ts has the shared parts): one attention map or mask with every
 * token labelled along both axes and a colour key, and the layer × head grid of small maps.
 * Cell colours arrive as the packed words the canvas paints (heatmap.ts `cellWord`), so the
 * file shows exactly the colours on screen. Pure, like svg.ts.
 *
 * Leaves out: line charts (svg.ts) and saving (exportMenu.ts).
 */

import type { SvgDoc, SvgStyle } from '../base/svg';
import { escapeXml, n2, openSvg, paint, textWidth, wordColor } from '../base/svg';

/** A heatmap: cell colours (packed words, ImageData byte order) and the tokens of both axes. */
export interface SvgHeatmap {
  readonly title: string;
  readonly rows: number;
  readonly cols: number;
  /** Colour word of cell t·cols + s. */
  cellWord(i: number): number;
  readonly rowLabels: readonly string[];
  readonly colLabels: readonly string[];
  readonly rowTitle: string;
  readonly colTitle: string;
  /** Labels drawn as padding (the theme's error colour, italic). */
  isPad(label: string): boolean;
  readonly padColor: string;
  /** A colour key under the map: [value label, colour word] pairs. */
  readonly legend: readonly (readonly [string, number])[];
  readonly style: SvgStyle;
}

/**
 * A heatmap as SVG: a title, the column title and every column token (written vertically,
 * as on screen: CJK upright), the row title and every row token, one `<rect>` per cell, and a
 * colour key. Cells are 10–40 px so that every token is labelled, whatever the map’s size; a long title wraps.
 */
export function heatmapSvg(m: SvgHeatmap): SvgDoc {
  const { style } = m;
  const cell = Math.max(10, Math.min(40, Math.floor(480 / Math.max(m.rows, m.cols, 1))));
  const font = Math.min(12, cell - 2);
  const longest = (ls: readonly string[]): number => ls.reduce((w, l) => Math.max(w, textWidth(l, font)), 0);
  const rowLabelW = Math.ceil(Math.min(200, longest(m.rowLabels))) + 8;
  const colLabelH = Math.ceil(Math.min(200, longest(m.colLabels))) + 8;
  const left = 24 + rowLabelW;
  const gw = m.cols * cell;
  const gh = m.rows * cell;
  const legendW = m.legend.reduce((w, [text]) => w + 30 + textWidth(text, 11), 0);
  const width = Math.ceil(Math.max(left + gw + 16, left + legendW + 8, 360));
  // Bold 13 px runs wider than the estimate of regular text: wrap as if it were 14 px.
  const titleLines = wrapTitle(m.title, width - 16, 14);
  const titleH = titleLines.length * 18;
  const top = 10 + titleH + 18 + colLabelH;
  const legendH = m.legend.length > 0 ? 34 : 0;
  const height = Math.ceil(top + gh + 16 + legendH);
  const out: string[] = [openSvg(width, height, m.title, style)];
  out.push(
    `<text x="8" y="0" font-size="13" font-weight="600" ` +
      `${paint('fill', style.text)}>` +
      `${titleLines.map((l, i) => `<tspan x="8" y="${22 + 18 * i}">${escapeXml(l)}</tspan>`).join('')}` +
      `</text>`,
  );
  out.push(
    `<text class="col-title" x="${n2(left + gw / 2)}" y="${n2(10 + titleH + 12)}" ` +
      `text-anchor="middle" font-size="12" ${paint('fill', style.muted)}>${escapeXml(m.colTitle)}</text>`,
  );
  out.push(
    `<text class="row-title" transform="translate(14 ${n2(top + gh / 2)}) rotate(-90)" ` +
      `text-anchor="middle" font-size="12" ${paint('fill', style.muted)}>${escapeXml(m.rowTitle)}</text>`,
  );
  const label = (l: string, attrs: string): string =>
    `<text ${attrs}${m.isPad(l) ? ` ${paint('fill', m.padColor)} font-style="italic"` : ''}>${escapeXml(l)}</text>`;
  out.push(`<g class="col-labels" font-size="${font}" ${paint('fill', style.text)}>`);
  // Vertical writing, as on screen: Latin turns sideways, CJK stays upright; each label ends at the map.
  m.colLabels.forEach((l, s) =>
    out.push(
      label(l, `x="${n2(left + (s + 0.5) * cell)}" y="${n2(top - 4)}" writing-mode="vertical-rl" text-anchor="end"`),
    ),
  );
  out.push('</g>');
  out.push(`<g class="row-labels" font-size="${font}" text-anchor="end" ${paint('fill', style.text)}>`);
  m.rowLabels.forEach((l, t) => out.push(label(l, `x="${n2(left - 4)}" y="${n2(top + (t + 0.5) * cell + font / 3)}"`)));
  out.push('</g>');
  out.push('<g class="cells" shape-rendering="crispEdges">');
  for (let t = 0; t < m.rows; t++) {
    for (let s = 0; s < m.cols; s++)
      out.push(
        `<rect x="${left + s * cell}" y="${top + t * cell}" width="${cell}" height="${cell}" ` +
          `fill="${wordColor(m.cellWord(t * m.cols + s))}"/>`,
      );
  }
  out.push('</g>');
  if (m.legend.length > 0) {
    const y = top + gh + 16;
    out.push(`<g class="legend" font-size="11" ${paint('fill', style.text)}>`);
    let x = left;
    for (const [text, word] of m.legend) {
      out.push(
        `<rect x="${n2(x)}" y="${y}" width="14" height="14" fill="${wordColor(word)}" ` +
          `${paint('stroke', style.muted)} stroke-width="0.5"/>`,
      );
      out.push(`<text x="${n2(x + 18)}" y="${y + 11}">${escapeXml(text)}</text>`);
      x += 18 + textWidth(text, 11) + 12;
    }
    out.push('</g>');
  }
  out.push('</svg>', '');
  return { svg: out.join('\n'), width, height };
}

/** A title broken at spaces into lines of at most `maxWidth` (estimated). */
function wrapTitle(title: string, maxWidth: number, size: number): string[] {
  const parts = title.split(/(?<= )/);
  const lines: string[] = [];
  let line = '';
  for (const p of parts) {
    if (line !== '' && textWidth(line + p, size) > maxWidth) {
      lines.push(line.trimEnd());
      line = '';
    }
    line += p;
  }
  if (line !== '') lines.push(line.trimEnd());
  return lines;
}

/** One small map of a grid. */
export interface SvgGridMap {
  readonly rows: number;
  readonly cols: number;
  cellWord(i: number): number;
  /** Written under the map (e.g. "2.02 nats"). */
  readonly caption: string;
}

/** Maps by row (layer) and column (head), with their headers. */
export interface SvgHeatmapGrid {
  readonly title: string;
  readonly rowHeads: readonly string[];
  readonly colHeads: readonly string[];
  readonly maps: readonly (readonly SvgGridMap[])[];
  readonly style: SvgStyle;
}

/** Most cells a grid export writes (each a rect before merging runs); past it, export heads one at a time. */
export const MAX_GRID_CELLS = 400_000;

/**
 * The layer × head grid as SVG: headers, and each map as rects — one per run of equal
 * colour along a row (a causal map's masked triangle is one rect per row), so files stay
 * small — with its caption. Throws when the grid has more than {@link MAX_GRID_CELLS} cells.
 */
export function heatmapGridSvg(g: SvgHeatmapGrid): SvgDoc {
  const { style } = g;
  const all = g.maps.flat();
  const cells = all.reduce((n, m) => n + m.rows * m.cols, 0);
  if (cells > MAX_GRID_CELLS)
    throw new Error(
      `the grid has ${cells} cells, more than ${MAX_GRID_CELLS} fit in one SVG; export single heads ` +
        `from the large view`,
    );
  const longest = Math.max(1, ...all.map((m) => Math.max(m.rows, m.cols)));
  const cell = Math.max(1, Math.min(8, Math.floor(128 / longest)));
  const mapW = Math.max(...all.map((m) => m.cols * cell), 40);
  const mapH = Math.max(...all.map((m) => m.rows * cell), 20);
  const left = 64;
  const top = 52;
  const gapX = 14;
  const gapY = 26;
  const width = Math.ceil(Math.max(left + g.colHeads.length * (mapW + gapX) + 8, textWidth(g.title, 14) + 16, 240));
  const height = Math.ceil(top + g.rowHeads.length * (mapH + gapY) + 8);
  const out: string[] = [openSvg(width, height, g.title, style)];
  out.push(
    `<text x="8" y="20" font-size="13" font-weight="600" ${paint('fill', style.text)}>${escapeXml(g.title)}</text>`,
  );
  out.push(`<g class="col-heads" font-size="11" text-anchor="middle" ${paint('fill', style.muted)}>`);
  g.colHeads.forEach((t, j) =>
    out.push(`<text x="${n2(left + j * (mapW + gapX) + mapW / 2)}" y="${top - 8}">${escapeXml(t)}</text>`),
  );
  out.push('</g>');
  out.push(`<g class="row-heads" font-size="11" text-anchor="end" ${paint('fill', style.muted)}>`);
  g.rowHeads.forEach((t, i) =>
    out.push(`<text x="${left - 8}" y="${n2(top + i * (mapH + gapY) + mapH / 2 + 4)}">${escapeXml(t)}</text>`),
  );
  out.push('</g>');
  g.maps.forEach((row, i) =>
    row.forEach((m, j) => {
      const x0 = left + j * (mapW + gapX);
      const y0 = top + i * (mapH + gapY);
      out.push(`<g class="map" data-layer="${i}" data-head="${j}" shape-rendering="crispEdges">`);
      for (let t = 0; t < m.rows; t++) {
        for (let s = 0; s < m.cols;) {
          const w = m.cellWord(t * m.cols + s);
          let e = s + 1;
          while (e < m.cols && m.cellWord(t * m.cols + e) === w) e++;
          out.push(
            `<rect x="${x0 + s * cell}" y="${y0 + t * cell}" width="${(e - s) * cell}" ` +
              `height="${cell}" fill="${wordColor(w)}"/>`,
          );
          s = e;
        }
      }
      out.push('</g>');
      out.push(
        `<text x="${n2(x0 + mapW / 2)}" y="${y0 + m.rows * cell + 14}" text-anchor="middle" ` +
          `font-size="10" ${paint('fill', style.muted)}>${escapeXml(m.caption)}</text>`,
      );
    }),
  );
  out.push('</svg>', '');
  return { svg: out.join('\n'), width, height };
}
