/**
 * Strings ⇄ bytes for the tokenizers, lossless for EVERY JavaScript string.
 *
 * A JS string is a sequence of UTF-16 code units and may hold lone (unpaired) surrogates,
 * which UTF-8 cannot encode (TextEncoder turns them into U+FFFD, losing them). We use
 * WTF-8 (https://simonsapin.github.io/wtf-8/): identical to UTF-8 for well-formed text, and a
 * lone surrogate U+D800..U+DFFF is written as the 3-byte sequence UTF-8's algorithm would give
 * it (ED A0..BF 80..BF), as in "generalized UTF-8". A paired surrogate is always written as one
 * 4-byte sequence, so encoding is a bijection onto WTF-8 byte strings and decoding inverts it.
 *
 * Decoding is the WHATWG UTF-8 decoder (Encoding Standard §4.1, "maximal subpart"
 * replacement: each ill-formed subsequence becomes one U+FFFD) with one change: after lead
 * byte ED the second byte may be A0..BF, so encoded surrogates decode to their code unit.
 * (A high surrogate's bytes followed by a low one's decode to the two code units, which a JS
 * string then reads as a pair; encode never produces that sequence.)
 *
 * Leaves out: streaming, other encodings, normalization (text is never normalized: that
 * would break exact round-trips).
 */

/** Appends the WTF-8 bytes of one code point (0..0x10FFFF, surrogates allowed) to `out`. */
export function pushCodePointBytes(cp: number, out: number[]): void {
  if (cp < 0x80) {
    out.push(cp);
  } else if (cp < 0x800) {
    out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  } else {
    out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  }
}

/**
 * The code point starting at code unit `i` of `s`: a surrogate pair gives its astral code
 * point, a lone surrogate gives itself. Callers advance by 2 when the result is > 0xFFFF.
 */
export function codePointAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
  }
  return c;
}

/** WTF-8 bytes of `s` (equal to UTF-8 when `s` has no lone surrogates). */
export function encodeWtf8(s: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < s.length;) {
    const cp = codePointAt(s, i);
    pushCodePointBytes(cp, out);
    i += cp > 0xffff ? 2 : 1;
  }
  return Uint8Array.from(out);
}

/**
 * Called for each ill-formed subsequence bytes[start, end); returns the text to put there.
 * The default writes one U+FFFD.
 */
export type InvalidBytesHandler = (bytes: ArrayLike<number>, start: number, end: number) => string;

const replaceWithFffd: InvalidBytesHandler = () => '\ufffd';

/** Decodes WTF-8 `bytes[0, length)`; never throws: ill-formed bytes go through `onInvalid`. */
export function decodeWtf8(
  bytes: ArrayLike<number>,
  length: number = bytes.length,
  onInvalid: InvalidBytesHandler = replaceWithFffd,
): string {
  const units: number[] = [];
  const parts: string[] = [];
  const emitUnit = (u: number): void => {
    units.push(u);
    if (units.length >= 8192) flushUnits();
  };
  const flushUnits = (): void => {
    if (units.length > 0) parts.push(String.fromCharCode(...units));
    units.length = 0;
  };
  const emitInvalid = (start: number, end: number): void => {
    flushUnits();
    parts.push(onInvalid(bytes, start, end));
  };
  // WHATWG state: code point so far, continuation bytes needed / seen, bounds of the next byte.
  let cp = 0,
    needed = 0,
    seen = 0,
    lower = 0x80,
    upper = 0xbf,
    start = 0;
  for (let i = 0; i < length; i++) {
    const b = (bytes[i] as number) & 0xff;
    if (needed === 0) {
      start = i;
      if (b <= 0x7f) emitUnit(b);
      else if (b >= 0xc2 && b <= 0xdf) {
        needed = 1;
        cp = b & 0x1f;
      } else if (b >= 0xe0 && b <= 0xef) {
        if (b === 0xe0) lower = 0xa0;
        needed = 2;
        cp = b & 0x0f;
      } else if (b >= 0xf0 && b <= 0xf4) {
        if (b === 0xf0) lower = 0x90;
        if (b === 0xf4) upper = 0x8f;
        needed = 3;
        cp = b & 0x07;
      } else emitInvalid(i, i + 1);
      continue;
    }
    if (b < lower || b > upper) {
      // Ill-formed: replace what we have so far and read this byte again as a new start.
      emitInvalid(start, i);
      cp = 0;
      needed = 0;
      seen = 0;
      lower = 0x80;
      upper = 0xbf;
      i--;
      continue;
    }
    lower = 0x80;
    upper = 0xbf;
    cp = (cp << 6) | (b & 0x3f);
    if (++seen === needed) {
      if (cp > 0xffff) {
        emitUnit(0xd800 + ((cp - 0x10000) >> 10));
        emitUnit(0xdc00 + ((cp - 0x10000) & 0x3ff));
      } else {
        emitUnit(cp);
      }
      cp = 0;
      needed = 0;
      seen = 0;
    }
  }
  if (needed !== 0) emitInvalid(start, length);
  flushUnits();
  return parts.join('');
}

/**
 * Token display, the ONE rendering every surface uses (dashboard axes and tiles, the report,
 * CLI tables, editor hovers): a token is shown as the text it stands for, with whitespace
 * made visible, and raw bytes only where bytes are not text on their own.
 *
 *   space → `·`   newline → `↵`   tab → `→`   CR → `␍`
 *   other C0 controls and DEL → `<0xNN>` (one byte, nothing to print)
 *   C1 controls (U+0080..U+009F) and lone surrogates → `<U+NNNN>`
 *   bytes that do not form a character (part of a multi-byte UTF-8 sequence) → `<0xNN>`
 *
 * Display only; never decoded back (a literal `·` in the text looks like a space here).
 */
const WHITESPACE_MARKS: ReadonlyMap<number, string> = new Map([
  [0x20, '\u00B7'], // ·
  [0x0a, '\u21B5'], // ↵
  [0x09, '\u2192'], // →
  [0x0d, '\u240D'], // ␍
]);

/** A raw byte as `<0xNN>`. */
export function hexByte(b: number): string {
  return `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
}

/**
 * Display text of a single byte token: the character when the byte is text on its own
 * (ASCII, through {@link displayText}), `<0xE2>` otherwise.
 */
export function byteTokenText(b: number): string {
  return b < 0x80 ? displayText(String.fromCharCode(b)) : hexByte(b);
}

/**
 * Readable form of token text (see the rendering above): printable characters as
 * themselves, whitespace as visible marks, invisible code points as `<0xNN>` / `<U+NNNN>`.
 */
export function displayText(s: string): string {
  let out = '';
  for (let i = 0; i < s.length;) {
    const cp = codePointAt(s, i);
    const n = cp > 0xffff ? 2 : 1;
    const mark = WHITESPACE_MARKS.get(cp);
    if (mark !== undefined) out += mark;
    else if (cp < 0x20 || cp === 0x7f) out += hexByte(cp);
    else if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xdfff))
      out += `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>`;
    else out += s.slice(i, i + n);
    i += n;
  }
  return out;
}

/**
 * Display text of a token's bytes: the well-formed parts through {@link displayText}, each
 * byte of an ill-formed part (a token that holds only part of a character) as `<0xNN>`.
 */
export function displayBytes(bytes: ArrayLike<number>): string {
  // Decode run by run: split at ill-formed subsequences so readable text is escaped but the
  // byte markers are not.
  const out: string[] = [];
  let runStart = 0;
  const collect: InvalidBytesHandler = (b, start, end) => {
    out.push(displayText(decodeWtf8(sliceOf(b, runStart, start))));
    for (let i = start; i < end; i++) out.push(hexByte(b[i] as number));
    runStart = end;
    return '';
  };
  decodeWtf8(bytes, bytes.length, collect);
  out.push(displayText(decodeWtf8(sliceOf(bytes, runStart, bytes.length))));
  return out.join('');
}

function sliceOf(b: ArrayLike<number>, start: number, end: number): number[] {
  const out: number[] = [];
  for (let i = start; i < end; i++) out.push(b[i] as number);
  return out;
}
