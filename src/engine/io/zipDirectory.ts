/**
 * The directory of a zip file (PKWARE APPNOTE.TXT, sections 4.3 and 4.5), as `torch.save`
 * writes one since PyTorch 1.6 (`archive/data.pkl`, `archive/data/<key>` …, every entry
 * stored uncompressed and aligned to 64 bytes so it can be memory-mapped). Pure: the caller
 * reads the file's tail, the central directory and each entry's local header, and gives the
 * bytes here; the entries' data is then read in place, never copied whole
 * (src/lab/interop/torchCheckpoint.ts).
 *
 * Read: the end-of-central-directory record (with a comment), its Zip64 form (files past
 * 4 GB or 65,535 entries), central-directory entries with their Zip64 extra field, and local
 * headers. Every offset is checked against the file's length. Leaves out: compressed entries
 * (reported, not inflated: torch never compresses), encryption and multi-disk archives.
 */

import { EngineError } from '../errors';

/** One entry of the central directory. */
export interface ZipEntry {
  readonly name: string;
  /** 0 = stored (the only method read), 8 = deflate … */
  readonly method: number;
  readonly compressedSize: number;
  readonly size: number;
  /** Absolute offset of the entry's local header. */
  readonly headerOffset: number;
}

/** Where the central directory lies and how many entries it has. */
export interface ZipEnd {
  readonly cdOffset: number;
  readonly cdSize: number;
  readonly count: number;
}

/** Bytes of the file's end to read for {@link parseZipEnd}: the record, the longest comment, the Zip64 records. */
export const ZIP_TAIL_BYTES = 22 + 0xffff + 20 + 56;
/** Bytes of a local header before its name and extra field. */
export const ZIP_LOCAL_HEADER_BYTES = 30;

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

function corrupt(source: string, what: string): never {
  throw new EngineError(
    'checkpoint/invalid',
    `${source} is not a readable zip (${what}); it was cut off or damaged — copy it again, or re-save it ` +
      'with torch.save.',
  );
}

function u64(v: DataView, at: number, source: string): number {
  const n = v.getUint32(at, true) + v.getUint32(at + 4, true) * 2 ** 32;
  return Number.isSafeInteger(n) ? n : corrupt(source, 'a 64-bit offset past 2^53');
}

/**
 * The end-of-central-directory record from `tail`, the last bytes of a file of `fileSize`
 * bytes (`tail` starts at `fileSize - tail.length`).
 */
export function parseZipEnd(tail: Uint8Array, fileSize: number, source: string): ZipEnd {
  const v = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  const base = fileSize - tail.length;
  let at = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    // The record ends the file: its comment length must reach exactly to the end.
    if (v.getUint32(i, true) === EOCD && i + 22 + v.getUint16(i + 20, true) === tail.length) {
      at = i;
      break;
    }
  }
  if (at < 0) return corrupt(source, 'no end-of-central-directory record');
  let count = v.getUint16(at + 10, true);
  let cdSize = v.getUint32(at + 12, true);
  let cdOffset = v.getUint32(at + 16, true);
  if (v.getUint16(at + 4, true) !== 0 || v.getUint16(at + 6, true) !== 0) corrupt(source, 'a multi-disk archive');
  const loc = at - 20;
  if (loc >= 0 && v.getUint32(loc, true) === ZIP64_LOCATOR) {
    const rec = u64(v, loc + 8, source) - base;
    if (rec < 0 || rec + 56 > loc || v.getUint32(rec, true) !== ZIP64_EOCD)
      return corrupt(source, 'a Zip64 locator that points at no Zip64 record');
    count = u64(v, rec + 32, source);
    cdSize = u64(v, rec + 40, source);
    cdOffset = u64(v, rec + 48, source);
  }
  if (cdOffset + cdSize > fileSize) corrupt(source, 'a central directory past the end of the file');
  return { cdOffset, cdSize, count };
}

/** The `count` entries of the central directory `cd` (its whole bytes). */
export function parseCentralDirectory(cd: Uint8Array, count: number, fileSize: number, source: string): ZipEntry[] {
  const v = new DataView(cd.buffer, cd.byteOffset, cd.byteLength);
  const entries: ZipEntry[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > cd.length || v.getUint32(at, true) !== CENTRAL) corrupt(source, `central directory entry ${i}`);
    const flags = v.getUint16(at + 8, true);
    if (flags & 1) corrupt(source, 'an encrypted entry');
    const method = v.getUint16(at + 10, true);
    let compressedSize = v.getUint32(at + 20, true);
    let size = v.getUint32(at + 24, true);
    const nameLen = v.getUint16(at + 28, true);
    const extraLen = v.getUint16(at + 30, true);
    const commentLen = v.getUint16(at + 32, true);
    let headerOffset = v.getUint32(at + 42, true);
    const end = at + 46 + nameLen + extraLen + commentLen;
    if (end > cd.length) corrupt(source, `central directory entry ${i} runs past the directory`);
    const name = String.fromCharCode(...cd.subarray(at + 46, at + 46 + nameLen));
    // Zip64 extra field (id 1): the 64-bit values of the fields that read 0xFFFFFFFF, in this order.
    for (let e = at + 46 + nameLen; e + 4 <= at + 46 + nameLen + extraLen;) {
      const id = v.getUint16(e, true);
      const len = v.getUint16(e + 2, true);
      if (id === 1) {
        let p = e + 4;
        const next = (): number => {
          if (p + 8 > e + 4 + len) return corrupt(source, `the Zip64 field of ${name}`);
          const n = u64(v, p, source);
          p += 8;
          return n;
        };
        if (size === 0xffffffff) size = next();
        if (compressedSize === 0xffffffff) compressedSize = next();
        if (headerOffset === 0xffffffff) headerOffset = next();
      }
      e += 4 + len;
    }
    if (headerOffset + ZIP_LOCAL_HEADER_BYTES + compressedSize > fileSize)
      corrupt(source, `entry ${name} lies past the end of the file`);
    entries.push({ name, method, compressedSize, size, headerOffset });
    at = end;
  }
  return entries;
}

/**
 * The absolute offset of an entry's data from the first {@link ZIP_LOCAL_HEADER_BYTES} of its
 * local header (whose extra field, torch's alignment padding, differs from the central one).
 */
export function zipDataOffset(local: Uint8Array, entry: ZipEntry, fileSize: number, source: string): number {
  const v = new DataView(local.buffer, local.byteOffset, local.byteLength);
  if (local.length < ZIP_LOCAL_HEADER_BYTES || v.getUint32(0, true) !== LOCAL)
    corrupt(source, `no local header for ${entry.name}`);
  const start = entry.headerOffset + ZIP_LOCAL_HEADER_BYTES + v.getUint16(26, true) + v.getUint16(28, true);
  if (start + entry.compressedSize > fileSize) corrupt(source, `entry ${entry.name} runs past the end of the file`);
  return start;
}
