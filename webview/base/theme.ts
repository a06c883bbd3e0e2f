/**
 * The theme as the canvas and chart code needs it: colours resolved from the page's CSS
 * variables (dashboard.css maps each `--al-*` variable to a VS Code `--vscode-*` one, with
 * light / dark / high-contrast fallbacks for the standalone page), the heatmap ramp and the
 * masked-cell colour, and a watcher that fires when VS Code switches theme (it rewrites the
 * body class and the variables) or the OS scheme changes.
 *
 * Colours are resolved through a hidden probe element, so whatever syntax a theme uses
 * (hex, rgba(), named colours) comes back as the browser's computed rgb().
 *
 * Chart series are opaque and reach 3:1 against the background (contrast.ts `readable`): a
 * theme's chart colour is used at full opacity when that passes — Light and Dark Modern give
 * `charts.orange` one-third opacity (#EA5C0055), which over the background would be a pale
 * peach line — else our palette's colour for light or dark backgrounds, else the colour moved
 * toward the foreground until it passes. The training and validation lines get the first two
 * (blue and orange); the raw training loss under the smoothed curve the training colour moved
 * toward the background as far as it stays readable.
 *
 * Leaves out: the CSS itself (dashboard.css) and the ramp math (colorRamp.ts).
 */

import type { Rgba } from './colorRamp';
import { buildRamp, mix, over, pack, parseColor } from './colorRamp';
import { luminance, quieter, readable } from './contrast';

/** Resolved theme colours. */
export interface Theme {
  readonly kind: 'light' | 'dark' | 'high-contrast';
  readonly bg: Rgba;
  readonly fg: Rgba;
  readonly muted: Rgba;
  readonly accent: Rgba;
  /** Opaque colour of a masked cell (the theme's red over the background). */
  readonly masked: Rgba;
  /** Heatmap ramp (packed words), background → accent → foreground. */
  readonly ramp: Uint32Array;
  readonly maskedWord: number;
  /** CSS colours for chart series, in order: opaque, each at least 3:1 against `bg`. */
  readonly series: readonly string[];
  /**
   * CSS colour of a quieter line of the first series' hue (the raw training loss under its smoothed curve): opaque, at
   * least 3:1 against `bg`.
   */
  readonly secondary: string;
  readonly grid: string;
  readonly text: string;
  readonly font: string;
}

/**
 * The series' theme variables, with our colour for light and for dark backgrounds when the
 * theme's fails (VS Code's Light and Dark Modern values, orange made opaque).
 */
const SERIES: readonly (readonly [string, Rgba, Rgba])[] = [
  ['--al-chart-blue', [0, 99, 211, 255], [89, 164, 249, 255]],
  ['--al-chart-orange', [234, 92, 0, 255], [209, 134, 22, 255]],
  ['--al-chart-green', [56, 138, 52, 255], [137, 209, 133, 255]],
  ['--al-chart-purple', [101, 45, 144, 255], [177, 128, 215, 255]],
  ['--al-chart-red', [229, 20, 0, 255], [241, 76, 76, 255]],
  ['--al-chart-yellow', [191, 136, 3, 255], [204, 167, 0, 255]],
];

function themeKind(): Theme['kind'] {
  const c = document.body.classList;
  if (c.contains('vscode-high-contrast') || c.contains('vscode-high-contrast-light')) return 'high-contrast';
  if (c.contains('vscode-dark')) return 'dark';
  if (c.contains('vscode-light')) return 'light';
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** Resolves CSS colours of variables through one probe element. */
function resolver(): { color(varName: string, fallback: Rgba): Rgba; dispose(): void } {
  const probe = document.createElement('span');
  probe.style.display = 'none';
  document.body.appendChild(probe);
  return {
    color(varName: string, fallback: Rgba): Rgba {
      probe.style.color = '';
      probe.style.setProperty('color', `var(${varName})`);
      return parseColor(getComputedStyle(probe).color) ?? fallback;
    },
    dispose(): void {
      probe.remove();
    },
  };
}

function css(c: Rgba): string {
  return `rgba(${c[0]}, ${c[1]}, ${c[2]}, ${(c[3] / 255).toFixed(3)})`;
}

/** Reads the theme now. */
export function readTheme(): Theme {
  const r = resolver();
  try {
    const kind = themeKind();
    const dark = kind !== 'light';
    const bgRaw = r.color('--al-bg', dark ? [30, 30, 30, 255] : [255, 255, 255, 255]);
    const bg = over(bgRaw, dark ? [0, 0, 0, 255] : [255, 255, 255, 255]);
    const fg = over(r.color('--al-fg', dark ? [204, 204, 204, 255] : [31, 31, 31, 255]), bg);
    const muted = over(r.color('--al-muted', fg), bg);
    const accent = over(r.color('--al-heat', [26, 133, 255, 255]), bg);
    const red = r.color('--al-masked', [229, 20, 0, 255]);
    // Half-strength red reads as "off" without shouting; high contrast needs it near full.
    const masked = over([red[0], red[1], red[2], Math.round((kind === 'high-contrast' ? 0.85 : 0.45) * 255)], bg);
    const lightBg = luminance(bg) > 0.18;
    const seriesRgba = SERIES.map(([v, onLight, onDark]) =>
      readable(r.color(v, accent), lightBg ? onLight : onDark, bg, fg),
    );
    const series = seriesRgba.map(css);
    const secondary = css(quieter(seriesRgba[0] as Rgba, bg));
    const font = getComputedStyle(document.body).fontFamily || 'sans-serif';
    return {
      kind,
      bg,
      fg,
      muted,
      accent,
      masked,
      ramp: buildRamp([bg, mix(bg, accent, 0.6), accent, mix(accent, fg, 0.75)]),
      maskedWord: pack(masked),
      series,
      secondary,
      grid: css([muted[0], muted[1], muted[2], 60]),
      text: css(fg),
      font,
    };
  } finally {
    r.dispose();
  }
}

/** Calls `onChange` when the theme may have changed; returns a function that stops watching. */
export function watchTheme(onChange: () => void): () => void {
  const mo = new MutationObserver(onChange);
  mo.observe(document.body, { attributes: true, attributeFilter: ['class', 'data-vscode-theme-kind'] });
  mo.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
  const mq = window.matchMedia('(prefers-color-scheme: dark)');
  mq.addEventListener('change', onChange);
  return () => {
    mo.disconnect();
    mq.removeEventListener('change', onChange);
  };
}
