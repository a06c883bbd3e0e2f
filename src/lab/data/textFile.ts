/**
 * Reading one file as UTF-8 text, or saying why it is not usable text: binary (a known
 * binary extension, or a NUL byte in the first 8 KiB, the heuristic git and grep use),
 * not valid UTF-8 (WHATWG TextDecoder in fatal mode), too large, empty or whitespace
 * only, or unreadable. Shared by corpus collection and the pairs reader.
 *
 * Leaves out: globbing and .gitignore (corpus.ts, gitignore.ts), and any encoding other
 * than UTF-8 (a UTF-8 byte-order mark is dropped; UTF-16 files read as binary or not-utf8).
 */

import type { SkippedFile } from '../../protocol/data';
import type { LabFs } from '../files/labFs';
import { extensionOf } from '../files/slashPaths';

/** How many leading bytes are searched for a NUL byte. */
export const BINARY_SNIFF_BYTES = 8192;

/** Extensions (lower case, no dot) that are binary whatever their bytes look like. */
export const BINARY_EXTENSIONS: ReadonlySet<string> = new Set([
  // images and documents
  'png',
  'jpg',
  'jpeg',
  'gif',
  'bmp',
  'ico',
  'icns',
  'webp',
  'tif',
  'tiff',
  'psd',
  'heic',
  'avif',
  'pdf',
  'doc',
  'docx',
  'xls',
  'xlsx',
  'ppt',
  'pptx',
  'odt',
  'ods',
  'odp',
  'epub',
  // archives and packages
  'zip',
  'gz',
  'tgz',
  'bz2',
  'xz',
  'zst',
  '7z',
  'rar',
  'tar',
  'jar',
  'war',
  'whl',
  'vsix',
  'deb',
  'rpm',
  'dmg',
  'iso',
  // compiled code and libraries
  'exe',
  'dll',
  'so',
  'dylib',
  'o',
  'a',
  'lib',
  'obj',
  'class',
  'pyc',
  'pyo',
  'wasm',
  'bin',
  // audio, video, fonts
  'mp3',
  'mp4',
  'm4a',
  'wav',
  'ogg',
  'flac',
  'aac',
  'mov',
  'avi',
  'mkv',
  'webm',
  'ttf',
  'otf',
  'woff',
  'woff2',
  'eot',
  // data and model weights
  'sqlite',
  'db',
  'npy',
  'npz',
  'pkl',
  'pickle',
  'pt',
  'pth',
  'ckpt',
  'safetensors',
  'onnx',
  'h5',
  'parquet',
  'arrow',
]);

/** A file read as text, or the reason it was left out. */
export type TextFileResult =
  | { readonly ok: true; readonly text: string; readonly bytes: number }
  | { readonly ok: false; readonly reason: SkippedFile['reason'] };

/** True when a NUL byte occurs in the first {@link BINARY_SNIFF_BYTES} bytes. */
export function looksBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

/**
 * True when `file` is binary by the test {@link readTextFile} applies — a known binary
 * extension, or a NUL byte in its first {@link BINARY_SNIFF_BYTES} bytes — reading only those
 * bytes, so a listing can say so of a file too large to read whole. An unreadable file is not
 * called binary (reading it says why).
 */
export async function isBinaryFile(fs: LabFs, file: string): Promise<boolean> {
  if (BINARY_EXTENSIONS.has(extensionOf(file))) return true;
  try {
    return looksBinary(await fs.readRange(file, 0, BINARY_SNIFF_BYTES));
  } catch {
    return false;
  }
}

/** Decodes strict UTF-8 (a leading BOM is dropped); null when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * 1-based number of the first line holding invalid UTF-8, or 0 when all is valid.
 * Splitting on 0x0A is safe: that byte never occurs inside a multi-byte UTF-8 sequence.
 */
export function firstInvalidUtf8Line(bytes: Uint8Array): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let start = 0;
  for (let line = 1; start <= bytes.length; line++) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    try {
      decoder.decode(bytes.subarray(start, end));
    } catch {
      return line;
    }
    start = end + 1;
  }
  return 0;
}

/**
 * Reads `file` as text if it is a regular file of at most `maxBytes` bytes that is not
 * binary, is valid UTF-8 and holds something other than whitespace. Never throws for a
 * file problem: the reason comes back instead.
 */
export async function readTextFile(fs: LabFs, file: string, maxBytes: number): Promise<TextFileResult> {
  let size: number;
  try {
    const st = await fs.stat(file);
    if (st?.kind !== 'file') return { ok: false, reason: 'unreadable' };
    size = st.size;
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  if (size > maxBytes) return { ok: false, reason: 'too-large' };
  if (BINARY_EXTENSIONS.has(extensionOf(file))) return { ok: false, reason: 'binary' };
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(file);
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  if (bytes.length > maxBytes) return { ok: false, reason: 'too-large' }; // grew since stat
  if (looksBinary(bytes)) return { ok: false, reason: 'binary' };
  const text = decodeUtf8(bytes);
  if (text === null) return { ok: false, reason: 'not-utf8' };
  if (text.trim() === '') return { ok: false, reason: 'empty' };
  return { ok: true, text, bytes: bytes.length };
}
