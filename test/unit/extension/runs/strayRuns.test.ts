import { describe, expect, it } from 'vitest';
import { exists } from '../../../../src/lab/files/labFs';
import { MemoryFs } from '../../../../src/lab/files/memoryFs';
import { findStrayRuns, uriPath } from '../../../../src/extension/runs/strayRuns';

// VS Code's workspaceStorage as code-server leaves it after the same folder was opened on two
// ports: one storage folder per identity, each naming its folder in workspace.json.

const EXT = 'attention-lab.attention-lab';
const ws = '/data/User/workspaceStorage';

async function storage(): Promise<MemoryFs> {
  const fs = new MemoryFs();
  const run = (id: string, name: string) => ({ path: `${ws}/${id}/${EXT}/runs/${name}/run.json`, data: '{}' });
  await fs.writeFiles([
    {
      path: `${ws}/now/workspace.json`,
      data: JSON.stringify({ folder: 'vscode-remote://localhost:8081/home/me/project' }),
    },
    run('now', 'run-3'),
    {
      path: `${ws}/old/workspace.json`,
      data: JSON.stringify({ folder: 'vscode-remote://localhost:8080/home/me/project/' }),
    },
    run('old', 'run-1'),
    run('old', 'run-2'),
    { path: `${ws}/old/${EXT}/runs/not-a-run/notes.txt`, data: 'x' },
    {
      path: `${ws}/other/workspace.json`,
      data: JSON.stringify({ folder: 'vscode-remote://localhost:8080/home/me/elsewhere' }),
    },
    run('other', 'run-9'),
    { path: `${ws}/nameless/${EXT}/runs/run-7/run.json`, data: '{}' },
    { path: `${ws}/empty/workspace.json`, data: JSON.stringify({ folder: 'file:///home/me/project' }) },
  ]);
  return fs;
}

describe('findStrayRuns', () => {
  it('finds the runs of every other identity, those of the same folder at another port first', async () => {
    const fs = await storage();
    const found = await findStrayRuns(fs, `${ws}/now/${EXT}`, 'vscode-remote://localhost:8081/home/me/project', (d) =>
      exists(fs, `${d}/run.json`),
    );
    expect(found.map((f) => [f.sameFolder, f.folder, f.runs.map((r) => fs.basename(r))])).toEqual([
      [true, 'vscode-remote://localhost:8080/home/me/project/', ['run-1', 'run-2']],
      [false, null, ['run-7']],
      [false, 'vscode-remote://localhost:8080/home/me/elsewhere', ['run-9']],
    ]);
    expect(found[0]?.runsDir).toBe(`${ws}/old/${EXT}/runs`);
  });

  it('finds nothing where the storage cannot be listed', async () => {
    const fs = new MemoryFs();
    expect(await findStrayRuns(fs, '/nowhere/x/ext', null, async () => true)).toEqual([]);
  });

  it('compares folders by path, whatever the address', () => {
    expect(uriPath('vscode-remote://localhost:8080/home/me/a%20b/')).toBe('/home/me/a b');
    expect(uriPath('file:///home/me/a')).toBe('/home/me/a');
    expect(uriPath('vscode-vfs://github/owner/repo')).toBe('/owner/repo');
  });
});
