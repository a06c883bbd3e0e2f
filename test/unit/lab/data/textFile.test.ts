import { describe, expect, it } from 'vitest';
import { decodeUtf8, firstInvalidUtf8Line, looksBinary, readTextFile } from '../../../../src/lab/data/textFile';
import { extensionOf } from '../../../../src/lab/files/slashPaths';
import { FILE_SYSTEMS } from '../files/fileSystems';

describe('byte checks', () => {
  it('looksBinary finds a NUL only within the first 8 KiB', () => {
    expect(looksBinary(new Uint8Array([65, 0, 66]))).toBe(true);
    expect(looksBinary(new TextEncoder().encode('plain text'))).toBe(false);
    const late = new Uint8Array(9000).fill(65);
    late[8500] = 0;
    expect(looksBinary(late)).toBe(false);
    late[8000] = 0;
    expect(looksBinary(late)).toBe(true);
  });

  it('decodeUtf8 is strict and drops a BOM', () => {
    expect(decodeUtf8(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]))).toBe('a');
    expect(decodeUtf8(new Uint8Array([0xc3, 0xa9]))).toBe('é');
    expect(decodeUtf8(new Uint8Array([0xe9]))).toBeNull();
    expect(decodeUtf8(new Uint8Array([0xed, 0xa0, 0x80]))).toBeNull(); // an encoded surrogate is not UTF-8
  });

  it('firstInvalidUtf8Line names the 1-based line of the first bad byte', () => {
    const enc = (s: string): number[] => [...new TextEncoder().encode(s)];
    expect(firstInvalidUtf8Line(new Uint8Array([...enc('ok\nfine\n'), 0xff, ...enc('\nlater')]))).toBe(3);
    expect(firstInvalidUtf8Line(new Uint8Array([0xc3]))).toBe(1); // truncated sequence
    expect(firstInvalidUtf8Line(new TextEncoder().encode('all\ngood\n'))).toBe(0);
  });

  it('extensionOf lower-cases and drops the dot', () => {
    expect(extensionOf('/a/b/Photo.PNG')).toBe('png');
    expect(extensionOf('Makefile')).toBe('');
    expect(extensionOf('C:\\notes\\A.Md')).toBe('md');
    expect(extensionOf('vscode-vfs://github/o/r/.gitignore')).toBe('');
  });
});

describe.each(FILE_SYSTEMS)('readTextFile on $name', ({ make }) => {
  it('reads text and says why other files are not text', async () => {
    const { fs, dir: fresh, put: putAll } = make();
    const dir = await fresh();
    const put = async (name: string, data: string | Uint8Array): Promise<string> =>
      (await putAll(dir, { [name]: data }))[0] as string;
    expect(await readTextFile(fs, await put('ok.txt', 'héllo'), 100)).toEqual({ ok: true, text: 'héllo', bytes: 6 });
    expect(await readTextFile(fs, await put('big.txt', 'x'.repeat(101)), 100)).toEqual({
      ok: false,
      reason: 'too-large',
    });
    expect(await readTextFile(fs, await put('pic.jpg', 'text inside'), 100)).toEqual({ ok: false, reason: 'binary' });
    expect(await readTextFile(fs, await put('nul.txt', new Uint8Array([104, 0])), 100)).toEqual({
      ok: false,
      reason: 'binary',
    });
    expect(await readTextFile(fs, await put('bad.txt', new Uint8Array([0xff, 0xfe, 0x41])), 100)).toEqual({
      ok: false,
      reason: 'not-utf8',
    });
    expect(await readTextFile(fs, await put('ws.txt', ' \n\r\n\t'), 100)).toEqual({ ok: false, reason: 'empty' });
    expect(await readTextFile(fs, fs.join(dir, 'missing.txt'), 100)).toEqual({ ok: false, reason: 'unreadable' });
    expect(await readTextFile(fs, dir, 100)).toEqual({ ok: false, reason: 'unreadable' });
  });
});
