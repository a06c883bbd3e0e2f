/**
 * The lab file system's exclusive create (labFs.ts `createExclusive`), on every
 * implementation the tests can make: it creates a file only where nothing is, and of many
 * callers at once exactly one gets it.
 */

import { describe, expect, it } from 'vitest';
import { listNames, readText, writeFile } from '../../../../src/lab/files/labFs';
import { FILE_SYSTEMS } from './fileSystems';

describe.each(FILE_SYSTEMS)('createExclusive on $name', ({ make }) => {
  it('creates a missing file with its bytes, and leaves an existing one as it was', async () => {
    const { fs, dir } = make();
    const d = await dir();
    const p = fs.join(d, 'lock.json');
    expect(await fs.createExclusive(p, 'first\n')).toBe(true);
    expect(await readText(fs, p)).toBe('first\n');
    expect(await fs.createExclusive(p, new Uint8Array([1, 2]))).toBe(false);
    expect(await readText(fs, p)).toBe('first\n');
    await writeFile(fs, fs.join(d, 'other'), 'x');
    expect(await fs.createExclusive(fs.join(d, 'other'), 'y')).toBe(false);
    expect(await readText(fs, fs.join(d, 'other'))).toBe('x');
    await fs.mkdir(fs.join(d, 'sub'));
    expect(await fs.createExclusive(fs.join(d, 'sub'), 'z')).toBe(false);
    expect((await listNames(fs, d)).sort()).toEqual(['lock.json', 'other', 'sub']);
  });

  it('gives a file to exactly one of many callers at once', async () => {
    const { fs, dir } = make();
    const d = await dir();
    const p = fs.join(d, 'lock.json');
    const got = await Promise.all(Array.from({ length: 6 }, (_, i) => fs.createExclusive(p, `caller ${i}\n`)));
    expect(got.filter(Boolean)).toHaveLength(1);
    expect(await readText(fs, p)).toBe(`caller ${got.indexOf(true)}\n`);
  });

  it("takes the file beside a killed taker's temporary file, leaving that file alone", async () => {
    const { fs, dir } = make();
    const d = await dir();
    await writeFile(fs, fs.join(d, '.lock.json.4242.tmp'), '{"by": "a session killed while writ');
    expect(await fs.createExclusive(fs.join(d, 'lock.json'), 'whole\n')).toBe(true);
    expect(await readText(fs, fs.join(d, 'lock.json'))).toBe('whole\n');
    expect((await listNames(fs, d)).sort()).toEqual(['.lock.json.4242.tmp', 'lock.json']);
  });

  it('fails where the folder is missing', async () => {
    const { fs, dir } = make();
    const d = await dir();
    await expect(fs.createExclusive(fs.join(d, 'missing', 'lock.json'), 'x')).rejects.toThrow();
  });
});
