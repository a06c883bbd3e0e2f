import { beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryFs } from '../../../../src/lab/files/memoryFs';

// Finding the documents a glob names, with VS Code's workspace API played here: a search that
// answers, and one that never does (a virtual workspace without a file-search provider).

const disk = new MemoryFs();
let search: (glob: string) => Promise<{ path: string }[]> = async () => [];
const excludeSetting: Record<string, unknown> = { '**/.git': true, '**/hidden': true, '**/off': false };

vi.mock('vscode', () => {
  class CancellationTokenSource {
    private readonly ls: (() => void)[] = [];
    readonly token = {
      isCancellationRequested: false,
      onCancellationRequested: (l: () => void) => (this.ls.push(l), { dispose: () => undefined }),
    };
    cancel(): void {
      if (this.token.isCancellationRequested) return;
      this.token.isCancellationRequested = true;
      for (const l of this.ls) l();
    }
    dispose(): void {}
  }
  return {
    CancellationTokenSource,
    Uri: { joinPath: (u: { path: string }, ...parts: string[]) => ({ path: [u.path, ...parts].join('/') }) },
    workspace: {
      workspaceFolders: [{ uri: { path: '/ws' }, name: 'ws' }],
      findFiles: (glob: string) => search(glob),
      getConfiguration: () => ({ get: () => excludeSetting }),
    },
  };
});

const { FindCancelled, findDocumentFiles, findWorkspaceFiles, SETTINGS_FILE } =
  await import('../../../../src/extension/training/trainData');
const { skippedNotice } = await import('../../../../src/extension/training/trainCommand');
const { globMatcher } = await import('../../../../src/extension/training/walkFiles');

const host = { fs: disk, pathOf: (u: { path: string }) => u.path } as never;
const never = (): Promise<never> => new Promise(() => undefined);
/** A cancellation token the test cancels. */
function token() {
  const ls: (() => void)[] = [];
  const t = {
    isCancellationRequested: false,
    onCancellationRequested: (l: () => void) => (ls.push(l), { dispose: () => undefined }),
  };
  return { token: t as never, cancel: () => ((t.isCancellationRequested = true), ls.forEach((l) => l())) };
}

describe('globMatcher', () => {
  it('matches as VS Code globs do', () => {
    const m = globMatcher('**/*.{md,txt}');
    expect(['a.md', 'docs/b.txt', 'x/y/z.md'].every(m)).toBe(true);
    expect(['a.mdx', 'docs/b.ts', 'md'].some(m)).toBe(false);
    expect(globMatcher('*.md')('docs/a.md')).toBe(false);
    expect(globMatcher('docs/**')('docs/a/b.txt')).toBe(true);
    expect(globMatcher('**/hidden')('a/hidden')).toBe(true);
    expect(globMatcher('**/hidden')('a/hidden2')).toBe(false);
    expect(globMatcher('file?.[a-c]')('file1.b')).toBe(true);
    expect(globMatcher('file?.[!a-c]')('file1.b')).toBe(false);
    expect(globMatcher('a+b(1).txt')('a+b(1).txt')).toBe(true);
  });
});

describe('findDocumentFiles', () => {
  beforeEach(async () => {
    await disk.remove('/ws');
    await disk.writeFiles([
      { path: '/ws/a.md', data: 'a' },
      { path: '/ws/docs/b.txt', data: 'b' },
      { path: '/ws/docs/c.ts', data: 'c' },
      { path: '/ws/hidden/d.md', data: 'd' },
      { path: '/ws/.git/e.md', data: 'e' },
      { path: '/ws/off/f.md', data: 'f' },
      { path: '/ws/.attention-lab/runs/r/notes.md', data: 'g' },
      { path: '/ws/.vscode/settings.json', data: '{}' },
    ]);
  });

  it('walks the folders through the file system when the search never answers, honouring files.exclude', async () => {
    search = never;
    const messages: string[] = [];
    const r = await findDocumentFiles(host, '**/*.{md,txt}', '', '/ws/.attention-lab/runs', 100, undefined, {
      graceMs: 0,
      onProgress: (m) => messages.push(m),
    });
    expect(r.files).toEqual(['/ws/a.md', '/ws/docs/b.txt', '/ws/off/f.md']);
    expect(messages.some((m) => /did not answer; listing ws\/docs/.test(m))).toBe(true);
    // The exclude glob is walked for too.
    const x = await findDocumentFiles(host, '**/*.{md,txt}', 'off/**', '/ws/.attention-lab/runs', 100, undefined, {
      graceMs: 0,
    });
    expect(x.files).toEqual(['/ws/a.md', '/ws/docs/b.txt']);
    expect(x.excluded).toBe(1);
    const capped = await findDocumentFiles(host, '**/*.{md,txt}', '', '/ws/.attention-lab/runs', 2, undefined, {
      graceMs: 0,
    });
    expect(capped).toMatchObject({ files: ['/ws/a.md', '/ws/docs/b.txt'], capped: true });
  });

  it('finds the pairs files Configure looks for the same way', async () => {
    search = never;
    vi.useFakeTimers();
    try {
      const p = findWorkspaceFiles(host, '**/*.{ts,txt}', 10, '/ws/.attention-lab/runs');
      await vi.advanceTimersByTimeAsync(5000);
      expect(await p).toEqual(['/ws/docs/b.txt', '/ws/docs/c.ts']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops at once when cancelled while the search hangs', async () => {
    search = never;
    const t = token();
    const p = findDocumentFiles(host, '**/*.md', '', '/runs', 100, t.token, { graceMs: 60_000 });
    t.cancel();
    await expect(p).rejects.toBeInstanceOf(FindCancelled);
  });

  it('takes the search’s answer when it comes, and never trains on the workspace settings file', async () => {
    search = async () => [
      { path: '/ws/a.md' },
      { path: `/ws/${SETTINGS_FILE}` },
      { path: '/ws/.attention-lab/runs/r/notes.md' },
    ];
    const r = await findDocumentFiles(host, '**/*', '', '/ws/.attention-lab/runs', 100, undefined, { graceMs: 60_000 });
    expect(r.files).toEqual(['/ws/a.md']);
    expect(r.settingsLeftOut).toBe(1);
    // The walk leaves it out too.
    search = never;
    const w = await findDocumentFiles(host, '**/*.json', '', '/ws/.attention-lab/runs', 100, undefined, { graceMs: 0 });
    expect(w.files).toEqual([]);
    expect(w.settingsLeftOut).toBe(1);
  });
});

describe('skippedNotice', () => {
  it('says in the finish message how many files were left out and why', () => {
    expect(skippedNotice([])).toBe('');
    expect(skippedNotice([{ path: 'weights.dat', reason: 'binary' }])).toMatch(
      /^ 1 file was not trained on \(1 binary\b.*\); the log lists it\.$/,
    );
    expect(
      skippedNotice([
        { path: 'a.bin', reason: 'binary' },
        { path: 'build/x.txt', reason: 'ignored' },
      ]),
    ).toMatch(/^ 2 files were not trained on \(.*binary.*ignored.*\)/);
  });
});
