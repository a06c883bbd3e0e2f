/**
 * How every front door prints a number — the dashboard, the extension and the CLI — one
 * function per kind of value, so the same value reads the same everywhere:
 *
 *   formatCount       1,234,567          counts people may want exactly (tokens, pairs, parameters)
 *   formatCompact     12.3k · 1.23M      counts and rates at a glance (tok/s, parameters); with a unit, 12.3 GFLOP/s
 *   formatBytes       512 B · 1.5 KB · 64 MB   sizes, in powers of 1024 as the MB settings and flags count
 *   formatDuration    120ms · 1.4s · 12s · 3m05s · 1h02m
 *   formatLoss        2.3456             cross-entropy in nats (null before the first step)
 *   formatPerplexity  10.52
 *   formatBleu        27.34              corpus BLEU or chrF, 0–100 (as sacreBLEU prints them)
 *   formatBitsPerByte 1.0234             a loss in bits per UTF-8 byte of text
 *   formatDecoding    greedy · beam search (beam 4, length penalty 0.6)
 *   formatPercent     87.5% · <0.1%      a fraction in [0, 1] as a percentage
 *   formatExample     First Citizen: Before we…   a text as a one-line example (placeholders)
 *   formatNumber      0.003 · 1.2e-5     any other number (learning rates, norms, probabilities)
 *   formatTicks       0.0009 · 0.001     the labels of a chart axis: as few digits as keep them exact and distinct
 *
 * A value that is missing or cannot be what it claims (a negative duration, NaN bytes) prints
 * as {@link MISSING}. Pure and free of Node and DOM: part of the common layer (src/common/,
 * test/unit/layers.test.ts), which every layer above the protocol, the webview included, may
 * import.
 *
 * Leaves out: localisation (English; "." decimals and "," thousands whatever the locale, so
 * logs and tests read the same on every machine) and the wording around numbers.
 */

import type { EvalDecoding } from '../protocol/evaluation';

/** What a missing or impossible value prints as. */
export const MISSING = '—';

/** Drops a trailing ".0" ("2.0" → "2"), keeping other decimals. */
function trimZero(s: string): string {
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

/** A whole number with "," between thousands: 1234567 → "1,234,567" (rounded to the nearest integer). */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return MISSING;
  const r = Math.round(n);
  const digits = String(Math.abs(r)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return r < 0 ? `-${digits}` : digits;
}

const SI = ['', 'k', 'M', 'G', 'T', 'P'];

/**
 * A count or rate in three significant digits with an SI prefix: 999 → "999", 1234 → "1.23k",
 * 12345 → "12.3k", 999_999 → "1M". With `unit`, a space and the prefixed unit:
 * (1.23e10, 'FLOP/s') → "12.3 GFLOP/s".
 */
export function formatCompact(n: number, unit = ''): string {
  if (!Number.isFinite(n)) return MISSING;
  const a = Math.abs(n);
  // Round first, then pick the prefix, so 999.6 reads "1k" and 999_500 "1M", never "1000k".
  const r = Math.round(a) < 1000 ? Math.round(a) : Number(a.toPrecision(3));
  let i = 0;
  while (i < SI.length - 1 && r >= 1000 ** (i + 1)) i++;
  const value = r === 0 ? '0' : `${n < 0 ? '-' : ''}${r / 1000 ** i}`;
  return unit ? `${value} ${SI[i]}${unit}` : `${value}${SI[i]}`;
}

const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/**
 * A size in bytes, in powers of 1024 (as the `maxFileSizeMB` setting and `--max-file-mb` count
 * them): "512 B", "1.5 KB", "9.9 MB", "64 MB" — one decimal below 10, none above.
 */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return MISSING;
  let v = n;
  let i = 0;
  const shown = (x: number, unit: number): number =>
    unit === 0 || x >= 9.95 ? Math.round(x) : Math.round(x * 10) / 10;
  while (i < BYTE_UNITS.length - 1 && shown(v, i) >= 1024) {
    v /= 1024;
    i++;
  }
  const x = shown(v, i);
  return `${i === 0 || x >= 10 ? String(x) : trimZero(x.toFixed(1))} ${BYTE_UNITS[i]}`;
}

/**
 * A duration in seconds: "0s", "120ms" (below a second), "1.4s" (below 10 s), "12s", "3m05s",
 * "1h02m". Rounds to whole seconds before splitting from 10 s on, so 59.6 s is "1m00s".
 */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return MISSING;
  if (seconds === 0) return '0s';
  const ms = Math.round(seconds * 1000);
  if (ms < 1000) return ms === 0 ? '<1ms' : `${ms}ms`;
  if (ms < 9950) return `${(ms / 1000).toFixed(1)}s`;
  const total = Math.round(seconds);
  const pad = (x: number): string => String(x).padStart(2, '0');
  if (total < 60) return `${total}s`;
  if (total < 3600) return `${Math.floor(total / 60)}m${pad(total % 60)}s`;
  return `${Math.floor(total / 3600)}h${pad(Math.floor((total % 3600) / 60))}m`;
}

/** A loss in nats with four decimals; {@link MISSING} before there is one; "NaN" or "Infinity" as they are. */
export function formatLoss(loss: number | null): string {
  if (loss === null) return MISSING;
  return Number.isFinite(loss) ? loss.toFixed(4) : String(loss);
}

/** A perplexity (e^loss) with two decimals. */
export function formatPerplexity(ppl: number | null): string {
  if (ppl === null) return MISSING;
  return Number.isFinite(ppl) ? ppl.toFixed(2) : String(ppl);
}

/** How pairs were decoded, for people: "greedy" or "beam search (beam 4, length penalty 0.6)". */
export function formatDecoding(d: EvalDecoding): string {
  return d.strategy === 'greedy' ? 'greedy' : `beam search (beam ${d.beam}, length penalty ${d.lengthPenalty})`;
}

/** Bits per byte with four decimals (1.2346), as losses are shown. */
export function formatBitsPerByte(bpb: number | null): string {
  return bpb === null || !Number.isFinite(bpb) ? MISSING : bpb.toFixed(4);
}

/** A corpus BLEU or chrF score (0–100) with two decimals. */
export function formatBleu(bleu: number | null): string {
  return bleu === null || !Number.isFinite(bleu) ? MISSING : bleu.toFixed(2);
}

/**
 * A fraction as a percentage with one decimal: 0.875 → "87.5%", 0.5 → "50%", 1 → "100%".
 * A fraction that is not 0 or 1 never prints as either: 0.0004 → "<0.1%", 0.9996 → ">99.9%".
 */
export function formatPercent(fraction: number | null): string {
  if (fraction === null || !Number.isFinite(fraction)) return MISSING;
  const pct = 100 * fraction;
  if (pct > 0 && pct < 0.05) return '<0.1%';
  if (pct > 99.95 && pct < 100) return '>99.9%';
  return `${trimZero(pct.toFixed(1))}%`;
}

/**
 * Any other number: up to `digits` decimals (trailing zeros dropped) for moderate values,
 * exponent notation for tiny or huge ones: 0.125 → "0.125", 3e-5 → "3.00e-5".
 */
export function formatNumber(x: number, digits = 3): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(2);
  return Number(x.toFixed(digits)).toString();
}

/** A tick value with `p` significant digits, trailing zeros dropped; in exponent form when `exp`. */
function tickLabel(v: number, p: number, exp: boolean): string {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  if (exp) {
    const [m, e] = v.toExponential(p - 1).split('e') as [string, string];
    return `${m.includes('.') ? m.replace(/\.?0+$/, '') : m}e${e.replace('+', '')}`;
  }
  return String(Number(v.toPrecision(p)));
}

/**
 * The labels of a chart axis's ticks: the fewest significant digits (the same for every tick)
 * that give each distinct tick its own label and write it exactly (to a millionth of the axis's
 * largest value), so a learning-rate axis never reads "0.001 / 0.001" — 0.00095 and 0.001 print
 * as "0.00095" and "0.001". Exponent form for the whole axis when its largest value is below
 * 0.001 or from a million on: 2e-4 · 4e-4 · 6e-4.
 */
export function formatTicks(values: readonly number[]): string[] {
  const finite = values.filter((v) => Number.isFinite(v));
  const big = finite.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const exp = big !== 0 && (big < 1e-3 || big >= 1e6);
  const distinct = [...new Set(finite)];
  for (let p = 1; p <= 17; p++) {
    const labels = distinct.map((v) => tickLabel(v, p, exp));
    const exact = distinct.every((v, i) => Math.abs(Number(labels[i]) - v) <= 1e-6 * big);
    if (exact && new Set(labels).size === distinct.length) return values.map((v) => tickLabel(v, p, exp));
  }
  return values.map((v) => String(v));
}

/** Longest example {@link formatExample} writes, in characters (before the ellipsis). */
const EXAMPLE_CHARS = 40;

/**
 * `text` as a one-line example for a placeholder: whitespace runs become one space, and a
 * text longer than 40 characters is cut at a word (when there is one) with "…".
 */
export function formatExample(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= EXAMPLE_CHARS) return line;
  const cut = line.slice(0, EXAMPLE_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${space > EXAMPLE_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}

/** Minus sign for signed changes (U+2212, as tables typeset it). */
const MINUS = '\u2212';

/**
 * A change in a loss (nats), signed, with four decimals like {@link formatLoss}: 0.0123 →
 * "+0.0123", −0.5 → "−0.5000"; exactly 0 → "±0" (a change too small for four decimals keeps
 * its sign: "+0.0000").
 */
export function formatLossDelta(d: number): string {
  if (!Number.isFinite(d)) return String(d);
  if (d === 0) return '±0';
  return `${d > 0 ? '+' : MINUS}${Math.abs(d).toFixed(4)}`;
}

/**
 * A change in a probability, in percentage points with one decimal: 0.123 → "+12.3 pp",
 * −0.004 → "−0.4 pp"; exactly 0 → "±0 pp"; a change under 0.05 pp → "+<0.1 pp" / "−<0.1 pp".
 */
export function formatProbDelta(d: number): string {
  if (!Number.isFinite(d)) return String(d);
  if (d === 0) return '±0 pp';
  const pts = Math.abs(100 * d);
  return `${d > 0 ? '+' : MINUS}${pts < 0.05 ? '<0.1' : trimZero(pts.toFixed(1))} pp`;
}

/**
 * What trained a run, for people: our engine's kernel backend as "wasm backend", the PyTorch
 * engine as "PyTorch cpu ×2" (run.json's backendUsed and ModelInfo.backend say "pytorch …"), the
 * WebGPU backend with its adapter: "WebGPU (google swiftshader · Vulkan)" (from "webgpu (…)").
 */
export function formatBackend(backend: string): string {
  if (backend.startsWith('webgpu')) return `WebGPU${backend.slice('webgpu'.length)}`;
  return backend.startsWith('pytorch') ? `PyTorch${backend.slice('pytorch'.length)}` : `${backend} backend`;
}
