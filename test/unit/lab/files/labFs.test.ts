/**
 * The contract of the lab's file system (src/lab/files/labFs.ts), run on every
 * implementation the tests can make: paths, reading, atomic writes that leave nothing
 * behind, appends after a torn line, listing, renaming and removing folders.
 */

import { describe, expect, it } from 'vitest';
import {
  TEMP_FILE,
  completeLines,
  exists,
  listNames,
  readText,
  removeStaleTemps,
  scratchFolder,
  writeFile,
} from '../../../../src/lab/files/labFs';
import { shownPath, shownPathsIn } from '../../../../src/lab/files/slashPaths';
import { MemoryFs } from '../../../../src/lab/files/memoryFs';
import { FILE_SYSTEMS, memoryTestFs, remoteTestFs } from './fileSystems';

describe.each(FILE_SYSTEMS)('the lab file system on $name', ({ make }) => {
  it('joins, splits and relates paths', async () => {
    const { fs, dir } = make();
    const d = await dir();
    const f = fs.join(d, 'a', 'b.txt');
    expect(fs.basename(f)).toBe('b.txt');
    expect(fs.dirname(fs.dirname(f))).toBe(fs.resolve(d));
    expect(fs.relative(d, f)).toBe('a/b.txt');
    expect(fs.relative(d, d)).toBe('');
    expect(fs.relative(fs.join(d, 'a'), fs.join(d, 'ab', 'x'))).toBeNull();
    expect(fs.relative(f, d)).toBeNull();
    expect(fs.join(d, 'a/b.txt')).toBe(f);
    expect(fs.resolve('a/b.txt', d)).toBe(f);
    expect(fs.resolve(f, fs.join(d, 'elsewhere'))).toBe(f);
  });

  it('writes, reads, stats and lists', async () => {
    const { fs, dir } = make();
    const d = await dir();
    expect(await fs.stat(fs.join(d, 'nothing'))).toBeNull();
    await writeFile(fs, fs.join(d, 'sub', 'deep', 'x.txt'), 'héllo\n');
    expect(await readText(fs, fs.join(d, 'sub', 'deep', 'x.txt'))).toBe('héllo\n');
    const st = await fs.stat(fs.join(d, 'sub', 'deep', 'x.txt'));
    expect(st).toMatchObject({ kind: 'file', size: 7 });
    expect((await fs.stat(fs.join(d, 'sub')))?.kind).toBe('directory');
    await writeFile(fs, fs.join(d, 'sub', 'y.bin'), new Uint8Array([0, 1, 2, 3, 4, 5]));
    const entries = (await fs.list(fs.join(d, 'sub'))).sort((a, b) => a.name.localeCompare(b.name));
    expect(entries).toEqual([
      { name: 'deep', kind: 'directory' },
      { name: 'y.bin', kind: 'file' },
    ]);
    expect(await fs.readRange(fs.join(d, 'sub', 'y.bin'), 2, 3)).toEqual(new Uint8Array([2, 3, 4]));
    expect(await fs.readRange(fs.join(d, 'sub', 'y.bin'), 4, 10)).toEqual(new Uint8Array([4, 5]));
    await expect(fs.readFile(fs.join(d, 'missing'))).rejects.toThrow();
    expect(await listNames(fs, fs.join(d, 'missing'))).toEqual([]);
  });

  it('replaces files atomically and leaves no temporary file', async () => {
    const { fs, dir } = make();
    const d = await dir();
    const a = fs.join(d, 'a.json');
    const b = fs.join(d, 'b.json');
    await fs.writeFiles([
      { path: a, data: 'one' },
      { path: b, data: 'two' },
    ]);
    await fs.writeFiles([
      { path: a, data: 'three' },
      { path: b, data: new Uint8Array([52]) },
    ]);
    expect(await readText(fs, a)).toBe('three');
    expect(await readText(fs, b)).toBe('4');
    expect((await listNames(fs, d)).sort()).toEqual(['a.json', 'b.json']);
  });

  it('appends lines, starting a new line after a torn one', async () => {
    const { fs, dir } = make();
    const d = await dir();
    const log = fs.join(d, 'log.jsonl');
    await fs.appendLine(log, '{"a":1}\n');
    await fs.appendLine(log, '{"a":2}\n');
    expect(completeLines(await readText(fs, log))).toEqual(['{"a":1}', '{"a":2}']);
    await writeFile(fs, log, '{"a":1}\n{"a":');
    await fs.appendLine(log, '{"a":3}\n');
    expect(await readText(fs, log)).toBe('{"a":1}\n{"a":\n{"a":3}\n');
    expect(completeLines('x\ny')).toEqual(['x']);
  });

  it('renames files and folders, and removes them', async () => {
    const { fs, dir, put } = make();
    const d = await dir();
    await put(d, { 'from/one.txt': '1', 'from/inner/two.txt': '2', 'file.txt': 'f', 'other.txt': 'o' });
    await fs.rename(fs.join(d, 'file.txt'), fs.join(d, 'other.txt'));
    expect(await readText(fs, fs.join(d, 'other.txt'))).toBe('f');
    expect(await exists(fs, fs.join(d, 'file.txt'))).toBe(false);
    await fs.mkdir(fs.join(d, 'to'));
    await fs.rename(fs.join(d, 'from'), fs.join(d, 'to'));
    expect(await readText(fs, fs.join(d, 'to', 'inner', 'two.txt'))).toBe('2');
    expect(await exists(fs, fs.join(d, 'from'))).toBe(false);
    await fs.remove(fs.join(d, 'to'));
    await fs.remove(fs.join(d, 'to'));
    expect((await listNames(fs, d)).sort()).toEqual(['other.txt']);
    await fs.mkdir(fs.join(d, 'to'));
    await fs.mkdir(fs.join(d, 'to'));
    expect(await fs.stat(fs.join(d, 'to'))).toMatchObject({ kind: 'directory' });
  });

  it('removes stale temporary files and names scratch folders that do not exist', async () => {
    const { fs, dir, put } = make();
    const d = await dir();
    await put(d, { '.model.safetensors.123.tmp': 'x', 'model.safetensors': 'm', '.keep': 'k' });
    expect(TEMP_FILE.test('.model.safetensors.123.tmp')).toBe(true);
    await removeStaleTemps(fs, d);
    expect((await listNames(fs, d)).sort()).toEqual(['.keep', 'model.safetensors']);
    const scratch = await scratchFolder(fs, fs.join(d, 'export'), 'export');
    expect(fs.dirname(scratch)).toBe(fs.resolve(d));
    expect(fs.basename(scratch)).toMatch(/^\.export\.export-[a-z0-9]+$/);
    expect(await exists(fs, scratch)).toBe(false);
  });
});

describe('the in-memory file system', () => {
  it('fails a write past its capacity as a full disk, keeping the old file and no temporary', async () => {
    const mem = new MemoryFs();
    const { fs } = memoryTestFs(mem);
    await writeFile(fs, '/runs/a.txt', 'old');
    mem.setCapacity(mem.usedBytes + 4);
    await expect(writeFile(fs, '/runs/a.txt', 'new contents')).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await readText(fs, '/runs/a.txt')).toBe('old');
    expect(await listNames(fs, '/runs')).toEqual(['a.txt']);
    await expect(fs.appendLine('/runs/a.txt', 'more than four\n')).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await readText(fs, '/runs/a.txt')).toBe('old');
  });

  it('keeps URI roots apart', async () => {
    const mem = new MemoryFs();
    await writeFile(mem, 'vscode-userdata://host/User/runs/x.txt', 'x');
    expect(await mem.stat('vscode-userdata://host/User/runs/x.txt')).toMatchObject({ kind: 'file' });
    expect(mem.relative('vscode-userdata://host/User', 'vscode-userdata://host/User/runs/x.txt')).toBe('runs/x.txt');
    expect(mem.relative('file://host/User', 'vscode-userdata://host/User/runs/x.txt')).toBeNull();
    expect(mem.dirname('vscode-userdata://host/User')).toBe('vscode-userdata://host/');
    expect(mem.join('vscode-vfs://github/o/r', 'a b', '../c.md')).toBe('vscode-vfs://github/o/r/c.md');
  });
});

describe('a web worker file system (RemoteFs)', () => {
  it('gathers appended lines and sends them before the next call', async () => {
    const { remote, host } = remoteTestFs();
    await remote.mkdir('vscode-userdata://h/runs');
    for (let i = 0; i < 5; i++) await remote.appendLine('vscode-userdata://h/runs/log.jsonl', `${i}\n`);
    expect(await host.stat('vscode-userdata://h/runs/log.jsonl')).toBeNull(); // not sent yet
    expect(await readText(remote, 'vscode-userdata://h/runs/log.jsonl')).toBe('0\n1\n2\n3\n4\n');
  });

  it('sends gathered lines on its own after a short while', async () => {
    const { remote, host } = remoteTestFs();
    await remote.mkdir('/runs');
    await remote.appendLine('/runs/log.jsonl', 'a\n');
    // Nothing else is asked of the remote side (a call would send the lines itself); a busy
    // machine may run the timer late, so the host is watched for a generous while.
    for (let i = 0; i < 100 && (await host.stat('/runs/log.jsonl')) === null; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(await readText(host, '/runs/log.jsonl')).toBe('a\n');
  });

  it('sends gathered lines when flushed, and a flush reports a failed send', async () => {
    const { remote, host } = remoteTestFs();
    await remote.mkdir('/runs');
    await remote.appendLine('/runs/log.jsonl', 'a\n');
    await remote.flush();
    expect(await readText(host, '/runs/log.jsonl')).toBe('a\n');
    host.setCapacity(0);
    await remote.appendLine('/runs/log.jsonl', 'b\n');
    await expect(remote.flush()).rejects.toMatchObject({ code: 'ENOSPC' });
    host.setCapacity(1000);
    expect(await readText(host, '/runs/log.jsonl')).toBe('a\n');
  });

  it('reports the host file system’s errors with their codes, and a failed append at the next call', async () => {
    const { remote, host } = remoteTestFs();
    await expect(remote.readFile('/nothing')).rejects.toMatchObject({ code: 'ENOENT' });
    host.setCapacity(0);
    await remote.appendLine('/x.log', 'line\n');
    await expect(remote.stat('/x.log')).rejects.toMatchObject({ code: 'ENOSPC' });
    host.setCapacity(1000);
    expect(await remote.stat('/x.log')).toBeNull();
  });
});

describe('paths as a person reads them (shownPath)', () => {
  it("shows a disk's path without its URI root, another file system's authority and path", () => {
    expect(shownPath('/home/me/notes')).toBe('/home/me/notes');
    expect(shownPath('vscode-remote://127.0.0.1:8080/home/me/notes')).toBe('/home/me/notes');
    expect(shownPath('file:///home/me/notes')).toBe('/home/me/notes');
    expect(shownPath('vscode-userdata://host/User/globalStorage/x')).toBe('/User/globalStorage/x');
    expect(shownPath('vscode-vfs://github/owner/repo/docs')).toBe('github/owner/repo/docs');
    expect(shownPath('vscode-vfs://github%2Bmain/owner/repo')).toBe('github+main/owner/repo');
    expect(shownPath('memfs:///notes/a b.md')).toBe('memfs:/notes/a b.md');
    expect(shownPath('vscode-remote://host')).toBe('/');
  });
});

describe('paths inside a message as a person reads them (shownPathsIn)', () => {
  it('rewrites every URI root in a message and leaves the rest, names with spaces and web addresses alone', () => {
    expect(
      shownPathsIn(
        'All 2 files given under vscode-remote://127.0.0.1:8080/home/me/my notes were skipped (a.md is 2 MB).',
      ),
    ).toBe('All 2 files given under /home/me/my notes were skipped (a.md is 2 MB).');
    expect(shownPathsIn('"vscode-vfs://github/owner/repo/x" and (memfs:///a b) at vscode-remote://host')).toBe(
      '"github/owner/repo/x" and (memfs:/a b) at /',
    );
    expect(shownPathsIn('see https://example.org/x, file:///tmp/run')).toBe('see https://example.org/x, /tmp/run');
    expect(shownPathsIn('nothing here: step 3/4')).toBe('nothing here: step 3/4');
  });
});
