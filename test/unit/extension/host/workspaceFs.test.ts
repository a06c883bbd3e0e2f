import { describe, expect, it, vi } from 'vitest';
import { MemoryFs } from '../../../../src/lab/files/memoryFs';

// workspace.fs over an in-memory disk whose reads take a moment, as a remote or browser file
// system's do: enough for two appends to the same file to interleave if nothing orders them.
const disk = new MemoryFs();
const later = (): Promise<void> => new Promise((r) => setTimeout(r, 2));

vi.mock('vscode', () => {
  class FileSystemError extends Error {
    constructor(readonly code: string) {
      super(code);
    }
  }
  const pathOf = (u: { path: string }): string => u.path;
  const wrap = async <T>(f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      throw (e as { code?: string }).code === 'ENOENT' ? new FileSystemError('FileNotFound') : e;
    }
  };
  const FileType = { File: 1, Directory: 2 };
  return {
    FileSystemError,
    FileType,
    Uri: {
      file: (path: string) => ({ scheme: 'file', authority: '', path }),
      from: (c: { scheme: string; authority: string; path: string }) => c,
    },
    workspace: {
      fs: {
        stat: (u: { path: string }) =>
          wrap(async () => {
            const s = await disk.stat(pathOf(u));
            if (!s) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
            return {
              type: s.kind === 'directory' ? FileType.Directory : FileType.File,
              size: s.size,
              mtime: s.mtimeMs,
            };
          }),
        readFile: (u: { path: string }) =>
          wrap(async () => {
            const data = await disk.readFile(pathOf(u));
            await later();
            return data;
          }),
        writeFile: (u: { path: string }, data: Uint8Array) =>
          wrap(async () => {
            // A provider that refuses writes under /locked, as VS Code reports it: a FileSystemError's code.
            if (pathOf(u).startsWith('/locked/')) throw new FileSystemError('NoPermissions');
            await disk.writeFiles([{ path: pathOf(u), data }]);
          }),
        // Without overwrite, a provider checks the target and then renames, a moment apart (as VS Code's file service does).
        rename: (a: { path: string }, b: { path: string }, o?: { overwrite?: boolean }) =>
          wrap(async () => {
            if (o?.overwrite === false) {
              if (await disk.stat(pathOf(b))) throw new FileSystemError('FileExists');
              await later();
            }
            await disk.rename(pathOf(a), pathOf(b));
          }),
        delete: (u: { path: string }) => wrap(() => disk.remove(pathOf(u))),
        readDirectory: (u: { path: string }) =>
          wrap(async () =>
            (await disk.list(pathOf(u))).map((e) => [
              e.name,
              e.kind === 'directory' ? FileType.Directory : FileType.File,
            ]),
          ),
        createDirectory: (u: { path: string }) => wrap(() => disk.mkdir(pathOf(u))),
      },
    },
  };
});

const { WorkspaceFs } = await import('../../../../src/extension/host/workspaceFs');
const { LOG_PART, mergeLogParts } = await import('../../../../src/lab/files/logParts');
const { RunLockedError, readRunLock, takeRunLock, uncheckedIdentity } =
  await import('../../../../src/lab/runs/runLock');

describe('WorkspaceFs', () => {
  it('keeps every line of appends to one file made at once, in the order they were made', async () => {
    const fs = new WorkspaceFs();
    await fs.mkdir('/runs/a');
    const file = '/runs/a/metrics.jsonl';
    const lines = Array.from({ length: 20 }, (_, i) => JSON.stringify({ step: i + 1 }));
    await Promise.all([
      ...lines.map((l) => fs.appendLine(file, `${l}\n`)),
      fs.appendLine('/runs/a/log.txt', 'other file\n'),
    ]);
    expect(new TextDecoder().decode(await fs.readFile(file))).toBe(`${lines.join('\n')}\n`);
    expect(new TextDecoder().decode(await fs.readFile('/runs/a/log.txt'))).toBe('other file\n');
    // Each write goes through a temporary file, renamed into place: none is left. The .jsonl
    // log's appends are its part files (lab/files/logParts.ts) until a merge folds them in.
    const names = (await fs.list('/runs/a')).map((e) => e.name);
    expect(names.filter((n) => !LOG_PART.test(n)).sort()).toEqual(['log.txt', 'metrics.jsonl']);
    expect(names.filter((n) => LOG_PART.test(n)).every((n) => n.startsWith('.metrics.jsonl.at-'))).toBe(true);
    await mergeLogParts(fs, '/runs/a');
    expect((await fs.list('/runs/a')).map((e) => e.name).sort()).toEqual(['log.txt', 'metrics.jsonl']);
    expect(new TextDecoder().decode(await fs.readFile(file))).toBe(`${lines.join('\n')}\n`);
  });

  it('reports a failed append to its caller and appends the next one', async () => {
    const fs = new WorkspaceFs();
    await fs.mkdir('/ok/x.jsonl'); // a folder where the log should be
    const first = fs.appendLine('/ok/x.jsonl', 'a\n');
    const second = fs.appendLine('/ok/y.jsonl', 'b\n');
    await expect(first).rejects.toThrow(
      /^\/ok\/x\.jsonl is a folder where a file must be; remove or rename that folder/,
    );
    await second;
    await fs.remove('/ok/x.jsonl');
    await fs.appendLine('/ok/x.jsonl', 'c\n');
    expect(new TextDecoder().decode(await fs.readFile('/ok/x.jsonl'))).toBe('c\n');
  });

  it("creates a file exclusively: of racers that all pass the provider's check, exactly one gets it", async () => {
    const fs = new WorkspaceFs();
    await fs.mkdir('/excl');
    const got = await Promise.all(
      Array.from({ length: 5 }, (_, i) => fs.createExclusive('/excl/lock.json', `racer ${i}\n`)),
    );
    expect(got.filter(Boolean)).toHaveLength(1);
    expect(new TextDecoder().decode(await fs.readFile('/excl/lock.json'))).toBe(`racer ${got.indexOf(true)}\n`);
    expect(await fs.createExclusive('/excl/lock.json', 'late\n')).toBe(false);
    expect((await fs.list('/excl')).map((e) => e.name)).toEqual(['lock.json']);
  });

  it("gives a run folder's lock to one of two web windows at once, and refuses the other in one line", async () => {
    const fs = new WorkspaceFs();
    const web = uncheckedIdentity('VS Code for the web');
    const got = await Promise.allSettled([
      takeRunLock(fs, '/runs/run-w', web, { heartbeatMs: 0, sleep: () => Promise.resolve() }),
      takeRunLock(fs, '/runs/run-w', web, { heartbeatMs: 0, sleep: () => Promise.resolve() }),
    ]);
    const won = got.find((g) => g.status === 'fulfilled');
    const lost = got.find((g) => g.status === 'rejected');
    expect(won).toBeDefined();
    expect(lost && RunLockedError.is(lost.reason) && lost.reason.message).toMatch(
      /^run-w is being trained by VS Code for the web since \d\d:\d\d — stop it first, or wait\.$/,
    );
    await (won as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
    expect(await readRunLock(fs, '/runs/run-w')).toBeNull();
  });

  it('tells a refused write and a folder read as a file in one line naming the file', async () => {
    const fs = new WorkspaceFs();
    await expect(fs.writeFiles([{ path: '/locked/run/run.json', data: '{}' }])).rejects.toThrow(
      /^Permission denied for \/locked\/run\/run\.json; choose a folder you may write to/,
    );
    await fs.mkdir('/runs/b/model.safetensors');
    await expect(fs.readFile('/runs/b/model.safetensors')).rejects.toThrow(
      /^\/runs\/b\/model\.safetensors is a folder where a file must be/,
    );
    await expect(fs.list('/runs/missing')).rejects.toThrow(/^\/runs\/missing does not exist/);
    expect(await fs.stat('/runs/missing')).toBeNull();
  });
});
