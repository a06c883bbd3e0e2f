/**
 * The SVG writers (webview/base/svg.ts, webview/heatmap/svgHeatmap.ts): well-formed XML (checked by a small XML tokenizer here:
 * every tag closed in order, attributes quoted, no stray `<` or `&` in text), the declared
 * size, one element per series / cell, and user text escaped.
 */
import { describe, expect, it } from 'vitest';
import { escapeXml, lineChartSvg, logTicks, niceTicks, paint } from '../../../../webview/base/svg';
import { MAX_GRID_CELLS, heatmapGridSvg, heatmapSvg } from '../../../../webview/heatmap/svgHeatmap';
import type { SvgStyle } from '../../../../webview/base/svg';

const style: SvgStyle = {
  background: 'rgb(31, 31, 31)',
  text: 'rgba(204, 204, 204, 1.000)',
  muted: 'rgb(157, 157, 157)',
  grid: 'rgba(157, 157, 157, 0.235)',
  font: '"Segoe UI", system-ui, sans-serif',
};

interface El {
  readonly name: string;
  readonly attrs: Record<string, string>;
  readonly children: El[];
  text: string;
}

/** Parses the XML subset SVG writers produce; throws on anything not well-formed. */
function parseXml(xml: string): El {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const root: El = { name: '#root', attrs: {}, children: [], text: '' };
  const stack: El[] = [root];
  const entity = /&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g;
  const checkText = (t: string): string => {
    if (/</.test(t)) throw new Error(`stray < in ${JSON.stringify(t.slice(0, 40))}`);
    if (/&/.test(t.replace(entity, ''))) throw new Error(`bad entity in ${JSON.stringify(t.slice(0, 40))}`);
    return t.replace(
      entity,
      (_m, e: string) =>
        ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[e] ??
        String.fromCodePoint(e.startsWith('#x') ? parseInt(e.slice(2), 16) : Number(e.slice(1))),
    );
  };
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
  let i = 0;
  while (i < body.length) {
    const lt = body.indexOf('<', i);
    const text = body.slice(i, lt < 0 ? body.length : lt);
    (stack[stack.length - 1] as El).text += checkText(text);
    if (lt < 0) break;
    tag.lastIndex = lt;
    const m = tag.exec(body);
    if (!m) throw new Error(`malformed tag at ${lt}: ${JSON.stringify(body.slice(lt, lt + 60))}`);
    const [, close, name, attrText, selfClose] = m as unknown as [string, string, string, string, string];
    if (close) {
      const top = stack.pop();
      if (!top || top.name !== name) throw new Error(`</${name}> closes <${top?.name}>`);
    } else {
      const attrs: Record<string, string> = {};
      for (const a of attrText.matchAll(/([\w:-]+)="([^"]*)"/g)) {
        if ((a[1] as string) in attrs) throw new Error(`duplicate attribute ${a[1]} on <${name}>`);
        attrs[a[1] as string] = checkText(a[2] as string);
      }
      const el: El = { name, attrs, children: [], text: '' };
      (stack[stack.length - 1] as El).children.push(el);
      if (!selfClose) stack.push(el);
    }
    i = tag.lastIndex;
  }
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1]?.name}>`);
  if (root.children.length !== 1) throw new Error('not exactly one root element');
  return root.children[0] as El;
}

function all(el: El, name: string): El[] {
  return [...(el.name === name ? [el] : []), ...el.children.flatMap((c) => all(c, name))];
}

describe('escapeXml and paint', () => {
  it('escapes markup and drops characters XML cannot hold', () => {
    expect(escapeXml('<a href="x">&\'</a>')).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;');
    expect(escapeXml('a\u0000b\u0007c\ud800d😀')).toBe('abcd😀');
  });
  it('writes colours as #rrggbb with an opacity', () => {
    expect(paint('fill', 'rgba(55, 148, 255, 0.300)')).toBe('fill="#3794ff" fill-opacity="0.302"');
    expect(paint('stroke', 'rgb(0, 0, 0)')).toBe('stroke="#000000"');
  });
});

describe('axis ticks', () => {
  it('covers the range with 1-2-5 steps', () => {
    expect(niceTicks(0.3, 2.7).ticks).toEqual([0, 0.5, 1, 1.5, 2, 2.5, 3]);
    expect(niceTicks(5, 5).ticks.length).toBeGreaterThan(1);
    expect(logTicks(0.3, 4).ticks).toEqual([0.1, 0.2, 0.5, 1, 2, 5, 10]);
    expect(logTicks(0.3, 40).ticks).toEqual([0.1, 1, 10, 100]);
  });
});

describe('lineChartSvg', () => {
  const x = [1, 2, 3, 4, 5, 6];
  const chart = lineChartSvg({
    title: 'Loss <of> "run & co"',
    width: 640,
    height: 300,
    xLabel: 'step',
    x,
    yLog: false,
    series: [
      { label: 'train', color: 'rgba(55, 148, 255, 1.000)', width: 1, y: [3, 2.5, 2, Number.NaN, 1.5, 1.2] },
      {
        label: 'validation <val>',
        color: 'rgb(209, 134, 22)',
        width: 2,
        points: true,
        y: [null, 2.6, null, 2.1, null, 1.4],
      },
      { label: 'lr', color: '#89d185', width: 1.5, dash: [6, 4], y: [1, 1, 1, 1, 1, 1] },
    ],
    style,
  });
  const svg = parseXml(chart.svg);

  it('is well-formed, with its declared size and viewBox', () => {
    expect(svg.name).toBe('svg');
    expect(svg.attrs.xmlns).toBe('http://www.w3.org/2000/svg');
    expect(svg.attrs.width).toBe(String(chart.width));
    expect(svg.attrs.height).toBe(String(chart.height));
    expect(svg.attrs.viewBox).toBe(`0 0 ${chart.width} ${chart.height}`);
    expect(chart.width).toBe(640);
    expect(chart.height).toBeGreaterThanOrEqual(300);
  });

  it('draws one path per series, breaking at NaN, joining sparse evaluations, dots on points', () => {
    const paths = all(svg, 'path').filter((p) => p.attrs['data-series'] !== undefined);
    expect(paths.map((p) => p.attrs['data-series'])).toEqual(['train', 'validation <val>', 'lr']);
    expect((paths[0]?.attrs.d ?? '').match(/M/g)).toHaveLength(2);
    expect((paths[1]?.attrs.d ?? '').match(/M/g)).toHaveLength(1);
    expect((paths[1]?.attrs.d ?? '').match(/L/g)).toHaveLength(2);
    expect(all(svg, 'circle')).toHaveLength(3);
    expect(paths[2]?.attrs['stroke-dasharray']).toBe('6 4');
  });

  it('writes the title, axis label, distinct tick labels and the legend as text, escaped', () => {
    const texts = all(svg, 'text').map((t) => t.text);
    expect(texts).toContain('Loss <of> "run & co"');
    expect(texts).toContain('step');
    expect(texts).toContain('validation <val>');
    expect(chart.svg).toContain('Loss &lt;of&gt; &quot;run &amp; co&quot;');
    const yTicks =
      all(svg, 'g')
        .find((g) => g.attrs.class === 'y-ticks')
        ?.children.map((t) => t.text) ?? [];
    expect(yTicks.length).toBeGreaterThan(2);
    expect(new Set(yTicks).size).toBe(yTicks.length);
  });
});

describe('heatmapSvg', () => {
  const rows = 3;
  const cols = 4;
  const doc = heatmapSvg({
    title: 'layer 1 · head 2',
    rows,
    cols,
    cellWord: (i) => (0xff000000 | (i * 20)) >>> 0,
    rowLabels: ['<s>', 'a&b', '"q"'],
    colLabels: ['x', '<pad>', '·', '↵'],
    rowTitle: 'queries t (T = 3)',
    colTitle: 'keys s (S = 4)',
    isPad: (l) => l === '<pad>',
    padColor: 'rgb(241, 76, 76)',
    legend: [
      ['p = 0', 0xff000000],
      ['1', 0xffffffff],
    ],
    style,
  });
  const svg = parseXml(doc.svg);

  it('is well-formed with its declared size', () => {
    expect(svg.attrs.viewBox).toBe(`0 0 ${doc.width} ${doc.height}`);
    expect(Number.isInteger(doc.width) && Number.isInteger(doc.height)).toBe(true);
  });

  it('has one rect per cell, in its colour', () => {
    const cells = all(svg, 'g').find((g) => g.attrs.class === 'cells')?.children ?? [];
    expect(cells).toHaveLength(rows * cols);
    expect(cells.every((c) => c.name === 'rect')).toBe(true);
    expect(cells[5]?.attrs.fill).toBe('#640000');
  });

  it('labels every token on both axes, escaped, padding marked', () => {
    const colLabels = all(svg, 'g').find((g) => g.attrs.class === 'col-labels')?.children ?? [];
    const rowLabels = all(svg, 'g').find((g) => g.attrs.class === 'row-labels')?.children ?? [];
    expect(colLabels.map((t) => t.text)).toEqual(['x', '<pad>', '·', '↵']);
    expect(rowLabels.map((t) => t.text)).toEqual(['<s>', 'a&b', '"q"']);
    expect(colLabels[1]?.attrs['font-style']).toBe('italic');
    expect(doc.svg).toContain('&lt;s&gt;');
    expect(doc.svg).not.toContain('<s>');
  });
});

describe('heatmapGridSvg', () => {
  // A causal 4 × 4 map: row t has t + 1 attended cells (each its own colour) then one masked run.
  const MASKED = 0xff0000ff;
  const causal = (caption: string) => ({
    rows: 4,
    cols: 4,
    caption,
    cellWord: (i: number) => (i % 4 > Math.floor(i / 4) ? MASKED : (0xff000000 | (i + 1)) >>> 0),
  });
  const grid = {
    title: 'every layer & head',
    rowHeads: ['layer 1', 'layer 2'],
    colHeads: ['head 1', 'head 2', 'head 3'],
    maps: [0, 1].map((l) => [0, 1, 2].map((h) => causal(`${l}.${h} nats`))),
    style,
  };

  it('draws every map, merging runs of one colour along a row, with headers and captions', () => {
    const doc = heatmapGridSvg(grid);
    const svg = parseXml(doc.svg);
    const maps = all(svg, 'g').filter((g) => g.attrs.class === 'map');
    expect(maps).toHaveLength(6);
    // rows 0–2 have a masked run after their cells (t + 1 + 1 rects), row 3 none (4 rects): 2 + 3 + 4 + 4.
    expect(maps[0]?.children).toHaveLength(13);
    expect(all(svg, 'text').map((t) => t.text)).toEqual(
      expect.arrayContaining(['every layer & head', 'head 3', 'layer 2', '1.2 nats']),
    );
    expect(svg.attrs.viewBox).toBe(`0 0 ${doc.width} ${doc.height}`);
  });

  it('refuses a grid too large for one file, saying what to do instead', () => {
    const big = { rows: 400, cols: 400, caption: '', cellWord: () => 0 };
    expect(() => heatmapGridSvg({ ...grid, maps: [[big, big, big]] })).toThrow(
      `the grid has 480000 cells, more than ${MAX_GRID_CELLS} fit in one SVG; export single heads from the large view`,
    );
  });
});
