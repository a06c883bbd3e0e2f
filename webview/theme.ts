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
 * Leaves out: the CSS itself (dashboard.css) and the ramp math (colorRamp.ts).
 */

import type { Rgba } from './colorRamp';
import { buildRamp, mix, over, pack, parseColor } from './colorRamp';

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
  /** CSS colours for chart series, in order. */
  readonly series: readonly string[];
  readonly grid: string;
  readonly text: string;
  readonly font: string;
}

const SERIES_VARS = ['--al-chart-blue', '--al-chart-orange', '--al-chart-green', '--al-chart-purple', '--al-chart-red', '--al-chart-yellow'];

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
    const series = SERIES_VARS.map((v) => css(over(r.color(v, accent), bg)));
    const font = getComputedStyle(document.body).fontFamily || 'sans-serif';
    return {
      kind, bg, fg, muted, accent, masked,
      ramp: buildRamp([bg, mix(bg, accent, 0.6), accent, mix(accent, fg, 0.75)]),
      maskedWord: pack(masked),
      series,
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
