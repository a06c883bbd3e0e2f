/**
 * How the dashboard writes tokens and numbers: whitespace in tokens made visible, PAD
 * recognised, numbers with sensible precision, counts and byte sizes with units. Pure (no
 * DOM), so the tests compute expected labels with the same rules.
 *
 * Leaves out: localisation (labels are English, numbers use "." decimals).
 */

/** A token as people can read it: whitespace made visible, empty shown as ∅. */
export function showToken(token: string): string {
  if (token === '') return '∅';
  return token.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥').replace(/\r/g, '␍');
}

/** Whether a token string is a padding token. */
export function isPadToken(token: string): boolean {
  return token === '<pad>';
}

/** Formats a number for labels: fixed decimals for moderate values, exponent for tiny or huge ones. */
export function fmt(x: number, digits = 3): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(2);
  return Number(x.toFixed(digits)).toString();
}

/** Formats a count with k / M / G suffixes. */
export function fmtCount(x: number): string {
  const a = Math.abs(x);
  if (a >= 1e9) return `${(x / 1e9).toFixed(2)} G`;
  if (a >= 1e6) return `${(x / 1e6).toFixed(2)} M`;
  if (a >= 1e3) return `${(x / 1e3).toFixed(1)} k`;
  return String(Math.round(x));
}

/** Formats bytes with binary units. */
export function fmtBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}
