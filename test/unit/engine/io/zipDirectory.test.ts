/**
 * The zip directory reader on hand-built archives: a plain one with a comment, the Zip64 form
 * (the 64-bit sizes and offsets torch.save writes for files past 4 GB), and damaged ones.
 */

import { describe, expect, it } from 'vitest';
import {
  parseCentralDirectory,
  parseZipEnd,
  ZIP_LOCAL_HEADER_BYTES,
  zipDataOffset,
} from '../../../../src/engine/io/zipDirectory';

/** Little-endian byte writer. */
class W {
  readonly b: number[] = [];
  u16(n: number): this {
    this.b.push(n & 0xff, (n >>> 8) & 0xff);
    return this;
  }
  u32(n: number): this {
    return this.u16(n & 0xffff).u16(Math.floor(n / 65536) & 0xffff);
  }
  u64(n: number): this {
    return this.u32(n % 2 ** 32).u32(Math.floor(n / 2 ** 32));
  }
  str(s: string): this {
    for (const c of s) this.b.push(c.charCodeAt(0));
    return this;
  }
  bytes(x: number[]): this {
    this.b.push(...x);
    return this;
  }
}

/** One stored entry `name` holding `data`, local header padded by `pad` extra bytes; Zip64 fields when `zip64`. */
function archive(
  name: string,
  data: number[],
  opts: { zip64?: boolean; pad?: number; comment?: string } = {},
): Uint8Array {
  const pad = opts.pad ?? 0;
  const w = new W();
  // Local header: signature, version, flags, method 0, time, date, crc, sizes, name and extra lengths.
  w.u32(0x04034b50).u16(20).u16(0).u16(0).u16(0).u16(0).u32(0).u32(data.length).u32(data.length);
  w.u16(name.length).u16(pad).str(name).bytes(new Array<number>(pad).fill(0)).bytes(data);
  const cdOffset = w.b.length;
  const big = opts.zip64 === true;
  w.u32(0x02014b50).u16(45).u16(45).u16(0).u16(0).u16(0).u16(0).u32(0);
  w.u32(big ? 0xffffffff : data.length).u32(big ? 0xffffffff : data.length);
  w.u16(name.length)
    .u16(big ? 28 : 0)
    .u16(0)
    .u16(0)
    .u16(0)
    .u32(0)
    .u32(big ? 0xffffffff : 0)
    .str(name);
  if (big) w.u16(1).u16(24).u64(data.length).u64(data.length).u64(0);
  const cdSize = w.b.length - cdOffset;
  if (big) {
    const rec = w.b.length;
    w.u32(0x06064b50).u64(44).u16(45).u16(45).u32(0).u32(0).u64(1).u64(1).u64(cdSize).u64(cdOffset);
    w.u32(0x07064b50).u32(0).u64(rec).u32(1);
  }
  const comment = opts.comment ?? '';
  w.u32(0x06054b50)
    .u16(0)
    .u16(0)
    .u16(big ? 0xffff : 1)
    .u16(big ? 0xffff : 1);
  w.u32(big ? 0xffffffff : cdSize)
    .u32(big ? 0xffffffff : cdOffset)
    .u16(comment.length)
    .str(comment);
  return Uint8Array.from(w.b);
}

function read(z: Uint8Array): { name: string; data: number[] } {
  const end = parseZipEnd(z, z.length, 'z.pt');
  const [e] = parseCentralDirectory(z.subarray(end.cdOffset, end.cdOffset + end.cdSize), end.count, z.length, 'z.pt');
  if (!e) throw new Error('no entry');
  const at = zipDataOffset(z.subarray(e.headerOffset, e.headerOffset + ZIP_LOCAL_HEADER_BYTES), e, z.length, 'z.pt');
  return { name: e.name, data: Array.from(z.subarray(at, at + e.size)) };
}

describe('zip directory', () => {
  it('a stored entry with alignment padding and a comment', () => {
    expect(read(archive('a/data.pkl', [1, 2, 3], { pad: 37, comment: 'PK\x05\x06 inside a comment' }))).toEqual({
      name: 'a/data.pkl',
      data: [1, 2, 3],
    });
  });

  it('Zip64: sizes and offsets from the extra field and the Zip64 end record', () => {
    expect(read(archive('a/data/0', [9, 8, 7, 6], { zip64: true, pad: 5 }))).toEqual({
      name: 'a/data/0',
      data: [9, 8, 7, 6],
    });
  });

  it('the tail of a larger file (the record found where the tail starts past byte 0)', () => {
    const z = archive('x/version', [51]);
    const end = parseZipEnd(z.subarray(4), z.length, 'z.pt');
    expect(end.count).toBe(1);
  });

  it.each([
    ['no end record', (z: Uint8Array) => z.subarray(0, z.length - 3), /no end-of-central-directory record/],
    [
      'a central directory past the end',
      (z: Uint8Array) => {
        const c = z.slice();
        c[c.length - 6] = 0xf0; // the directory's offset
        return c;
      },
      /a central directory past the end of the file/,
    ],
  ] as const)('%s', (_label, edit, re) => {
    expect(() => read(edit(archive('a/data.pkl', [1])))).toThrow(re);
    expect(() => read(edit(archive('a/data.pkl', [1])))).toThrow(/^z\.pt is not a readable zip \(.*\); it was cut off/);
  });

  it('an entry whose data would lie past the file', () => {
    const z = archive('a/data.pkl', [1, 2]);
    const end = parseZipEnd(z, z.length, 'z.pt');
    expect(() =>
      parseCentralDirectory(z.subarray(end.cdOffset, end.cdOffset + end.cdSize), end.count, 20, 'z.pt'),
    ).toThrow(/entry a\/data\.pkl lies past the end of the file/);
  });
});
