import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunRegistry, resolveRunsRoot as resolve } from '../../../../src/extension/runs/runStore';
import type { RootInputs } from '../../../../src/extension/runs/runStore';
import { MemoryFs } from '../../../../src/lab/files/memoryFs';
import { NODE_FS } from '../../../../src/lab/files/fs.node';

const resolveRunsRoot = (i: RootInputs): ReturnType<typeof resolve> => resolve(NODE_FS, i);

const runs = (location: 'extensionStorage' | 'workspace', folder = '.attention-lab/runs') => ({ location, folder });

describe('resolveRunsRoot', () => {
  it('keeps runs in extension storage by default', () => {
    expect(
      resolveRunsRoot({ settings: runs('extensionStorage'), trusted: true, storageDir: '/s', workspaceDir: '/w' }),
    ).toEqual({ root: path.join('/s', 'runs'), where: 'extensionStorage', note: null });
  });

  it('uses the workspace folder when asked and allowed', () => {
    expect(
      resolveRunsRoot({ settings: runs('workspace'), trusted: true, storageDir: '/s', workspaceDir: '/w' }),
    ).toEqual({ root: path.resolve('/w/.attention-lab/runs'), where: 'workspace', note: null });
  });

  it('falls back to storage, with a note, when untrusted, without a folder, or pointing outside', () => {
    const cases = [
      resolveRunsRoot({ settings: runs('workspace'), trusted: false, storageDir: '/s', workspaceDir: '/w' }),
      resolveRunsRoot({ settings: runs('workspace'), trusted: true, storageDir: '/s', workspaceDir: null }),
      resolveRunsRoot({
        settings: runs('workspace', '../elsewhere'),
        trusted: true,
        storageDir: '/s',
        workspaceDir: '/w',
      }),
      resolveRunsRoot({ settings: runs('workspace', '.'), trusted: true, storageDir: '/s', workspaceDir: '/w' }),
    ];
    for (const r of cases) {
      expect(r.where).toBe('extensionStorage');
      expect(r.root).toBe(path.join('/s', 'runs'));
    }
    expect(cases.map((c) => c.note)).toEqual([
      expect.stringMatching(/Restricted Mode/),
      expect.stringMatching(/no workspace folder/),
      expect.stringMatching(/outside the workspace/),
      expect.stringMatching(/outside the workspace/),
    ]);
  });

  it('spells the roots in URIs on the web', () => {
    const i = {
      settings: runs('workspace'),
      trusted: true,
      storageDir: 'vscode-userdata://h/User/workspaceStorage/x',
      workspaceDir: 'vscode-vfs://github/o/r',
    };
    expect(resolve(new MemoryFs(), i).root).toBe('vscode-vfs://github/o/r/.attention-lab/runs');
    expect(resolve(new MemoryFs(), { ...i, settings: runs('extensionStorage') }).root).toBe(
      'vscode-userdata://h/User/workspaceStorage/x/runs',
    );
    expect(resolve(new MemoryFs(), { ...i, settings: runs('workspace', '../../x') }).where).toBe('extensionStorage');
  });
});

describe('RunRegistry', () => {
  it('remembers opened run folders that still exist, and the selected run', async () => {
    const data = new Map<string, unknown>();
    const state = {
      get: <T>(k: string, d: T): T => (data.has(k) ? (data.get(k) as T) : d),
      update: async (k: string, v: unknown): Promise<void> => void data.set(k, v),
    };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-registry-'));
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    for (const d of [a, b]) {
      fs.mkdirSync(d);
      fs.writeFileSync(path.join(d, 'run.json'), '{}');
    }
    const r = new RunRegistry(state, NODE_FS);
    await r.addOpened(a);
    await r.addOpened(b);
    await r.addOpened(a);
    expect(await r.opened()).toEqual([a, b]);
    fs.rmSync(b, { recursive: true });
    expect(await r.opened()).toEqual([a]);
    await r.removeOpened(a);
    expect(await r.opened()).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
