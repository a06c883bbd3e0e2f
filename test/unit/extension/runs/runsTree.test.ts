import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// The Runs view's rows while a run trains, and the row commands that rename, annotate or delete:
// VS Code (mocked here) hands a row's command the element it finds under the row's handle, and a
// whole-tree refresh empties that map until the rows are read again.

const quickPicks: { items: { run: { runDir: string } }[] }[] = [];
let pickAnswer: ((items: { run: { runDir: string } }[]) => unknown) | null = null;
const infos: string[] = [];

vi.mock('vscode', () => {
  class EventEmitter<T> {
    readonly fired: T[] = [];
    private readonly ls: ((v: T) => void)[] = [];
    readonly event = (l: (v: T) => void): { dispose(): void } => {
      this.ls.push(l);
      return { dispose: () => undefined };
    };
    fire(v: T): void {
      this.fired.push(v);
      for (const l of this.ls) l(v);
    }
    dispose(): void {}
  }
  class TreeItem {
    id?: string;
    description?: string;
    contextValue?: string;
    iconPath?: unknown;
    tooltip?: unknown;
    command?: { command: string; arguments?: unknown[] };
    constructor(readonly label: string) {}
  }
  class MarkdownString {
    value = '';
    appendMarkdown(t: string): this {
      this.value += t;
      return this;
    }
    appendText(t: string): this {
      this.value += t;
      return this;
    }
  }
  class Uri {}
  return {
    EventEmitter,
    TreeItem,
    TreeItemCollapsibleState: { None: 0 },
    ThemeIcon: class {},
    ThemeColor: class {},
    MarkdownString,
    Uri,
    ProgressLocation: { Notification: 15 },
    workspace: { workspaceFolders: undefined },
    window: {
      showQuickPick: async (items: { run: { runDir: string } }[]) => {
        quickPicks.push({ items });
        return pickAnswer?.(items);
      },
      showOpenDialog: async () => [new Uri()],
      withProgress: async (_o: unknown, task: () => Promise<unknown>) => task(),
      showInformationMessage: async (m: string) => void infos.push(m),
      showWarningMessage: async (m: string) => void infos.push(m),
      showInputBox: async () => undefined,
    },
  };
});

const { RunsTree } = await import('../../../../src/extension/runs/runsTree');
const { deleteRunCommand, editRunNoteCommand, exportRunCommand, renameRunCommand } =
  await import('../../../../src/extension/runs/runActions');
type RunItem = import('../../../../src/extension/runs/runsModel').RunItem;
type RunActionDeps = import('../../../../src/extension/runs/runActions').RunActionDeps;

const item = (runDir: string, over: Partial<RunItem> = {}): RunItem => ({
  runDir,
  name: runDir.slice(1),
  status: 'stopped',
  note: null,
  backend: 'wasm',
  kind: 'decoder-only',
  step: 40,
  totalSteps: 100,
  bestValLoss: 2,
  hasModel: true,
  active: false,
  params: 1,
  data: null,
  imported: null,
  error: null,
  ...over,
});

/** A runs model whose list the test sets; every `items()` call returns fresh objects, as the real one does. */
function fakeRuns(initial: RunItem[]) {
  let list = initial;
  const ls: ((v: readonly RunItem[]) => void)[] = [];
  const model = {
    isLoaded: true,
    items: () => list.map((r) => ({ ...r })),
    refresh: async () => model.items(),
    find: (d: string) => model.items().find((r) => r.runDir === d),
    onDidChange: (l: (v: readonly RunItem[]) => void) => {
      ls.push(l);
      return { dispose: () => undefined };
    },
  };
  return { model, set: (next: RunItem[]) => ((list = next), ls.forEach((l) => l(model.items()))) };
}

const noActive = { id: () => null as string | null, onDidChange: () => ({ dispose: () => undefined }) };

describe('RunsTree', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('gives each run one element for the view’s lifetime, whose tree item is keyed by its folder', async () => {
    const runs = fakeRuns([item('/a'), item('/b', { status: 'training', active: true })]);
    const tree = new RunsTree(runs.model as never, noActive as never);
    const first = await tree.getChildren();
    const again = await tree.getChildren();
    expect(again[0]).toBe(first[0]);
    expect(again[1]).toBe(first[1]);
    const ti = tree.getTreeItem(first[1] as never);
    expect(ti.id).toBe('/b');
    expect(ti.command?.arguments?.[0]).toBe(first[1]);
    expect(String(ti.description)).toMatch(/^training · 40\/100/);
  });

  it('redraws a training run’s steps as a refresh of the same rows, and only a changed list as a whole-tree refresh', async () => {
    const runs = fakeRuns([item('/a'), item('/b', { status: 'training', active: true })]);
    const tree = new RunsTree(runs.model as never, noActive as never);
    const fired = (tree as unknown as { changed: { fired: unknown[] } }).changed.fired;
    const rows = await tree.getChildren();
    // Ten steps arrive: one redraw, of the two rows, not of the whole tree.
    for (let step = 41; step <= 50; step++)
      runs.set([item('/a'), item('/b', { status: 'training', active: true, step })]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toHaveLength(1);
    expect(fired[0]).toEqual(rows);
    expect((fired[0] as unknown[])[1]).toBe(rows[1]);
    expect(String(tree.getTreeItem(rows[1] as never).description)).toMatch(/^training · 50\/100/);
    // A new run: the list changes, so the whole tree is read again at once (keeping the old rows' elements)…
    runs.set([item('/c'), item('/a'), item('/b', { status: 'training', active: true, step: 50 })]);
    expect(fired).toHaveLength(2);
    expect(fired[1]).toBeUndefined();
    // …and the steps that arrive before VS Code reads it stay row refreshes.
    runs.set([item('/c'), item('/a'), item('/b', { status: 'training', active: true, step: 51 })]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toHaveLength(3);
    expect(fired[2]).toEqual(rows);
    const next = await tree.getChildren();
    expect(next.map((r) => r.runDir)).toEqual(['/c', '/a', '/b']);
    expect(next[1]).toBe(rows[0]);
  });
});

describe('renaming, annotating and deleting a run', () => {
  /** The run commands' dependencies with two runs, the training one active, and a lab that records what it labels. */
  function services() {
    const runs = fakeRuns([item('/idle'), item('/training', { status: 'training', active: true })]);
    const labelled: { runDir: string; label: unknown }[] = [];
    const removed: string[] = [];
    const s = {
      runs: runs.model,
      active: { id: () => '/training', get: () => runs.model.find('/training'), set: async () => undefined },
      host: {
        fs: {
          resolve: (p: string) => p,
          basename: (p: string) => p.slice(1),
          remove: async (p: string) => void removed.push(p),
        },
        pathOf: () => null,
      },
      lab: {
        get: () => ({
          runNameProblem: () => null,
          setRunLabel: async (_fs: unknown, runDir: string, label: unknown) => void labelled.push({ runDir, label }),
        }),
      },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      dashboard: { reload: () => undefined },
      registry: { removeOpened: async () => undefined },
    } as unknown as RunActionDeps;
    return { s, labelled, removed };
  }

  beforeEach(() => {
    quickPicks.length = 0;
    infos.length = 0;
    pickAnswer = null;
  });

  it('acts on the row it was invoked on, even while another run trains and is the active run', async () => {
    const { s, labelled } = services();
    expect(await renameRunCommand(s, { runDir: '/idle' }, 'kept name')).toBe('kept name');
    expect(await editRunNoteCommand(s, { runDir: '/idle' }, 'a note')).toBe('a note');
    expect(labelled.map((l) => l.runDir)).toEqual(['/idle', '/idle']);
    expect(quickPicks).toHaveLength(0);
  });

  it('asks which run when given none, instead of taking the active (training) run', async () => {
    const { s, labelled } = services();
    pickAnswer = (items) => items.find((i) => i.run.runDir === '/idle');
    expect(await renameRunCommand(s, undefined, 'picked')).toBe('picked');
    expect(quickPicks).toHaveLength(1);
    expect(quickPicks[0]?.items.map((i) => i.run.runDir)).toEqual(['/idle', '/training']);
    expect(labelled).toEqual([{ runDir: '/idle', label: { displayName: 'picked' } }]);
    // Escape in the pick changes nothing.
    pickAnswer = () => undefined;
    expect(await editRunNoteCommand(s, undefined, 'never')).toBeUndefined();
    expect(await deleteRunCommand(s, undefined)).toBe(false);
    expect(quickPicks).toHaveLength(3);
    expect(labelled).toHaveLength(1);
  });

  it('never answers a Delete without a row with "<the training run> is training"', async () => {
    const { s, removed } = services();
    pickAnswer = () => undefined;
    expect(await deleteRunCommand(s, undefined)).toBe(false);
    expect(infos.filter((m) => /is training/.test(m))).toEqual([]);
    expect(removed).toEqual([]);
  });
});

describe('exporting a run', () => {
  function services() {
    const requests: unknown[] = [];
    const runs = fakeRuns([item('/gpt'), item('/pairs', { kind: 'encoder-decoder' })]);
    const s = {
      runs: runs.model,
      active: { id: () => null, get: () => undefined, set: async () => undefined },
      host: {
        fs: {
          resolve: (p: string) => p,
          basename: (p: string) => p.slice(p.lastIndexOf('/') + 1),
          join: (...p: string[]) => p.join('/'),
          stat: async () => null,
        },
        pathOf: () => '/out',
        uriOf: () => undefined,
      },
      models: {
        request: async (_type: string, params: unknown) => {
          requests.push(params);
          return { dir: '/out/gpt', files: ['/out/gpt/model.safetensors'], tensors: 1, warnings: [] };
        },
      },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    } as unknown as RunActionDeps;
    return { s, requests };
  }

  beforeEach(() => {
    quickPicks.length = 0;
    infos.length = 0;
    pickAnswer = null;
  });

  it('asks a decoder-only run for PyTorch or Hugging Face Llama, and sends the choice to the model worker', async () => {
    const { s, requests } = services();
    pickAnswer = (items) => (items as unknown as { format: string }[]).find((i) => i.format === 'hf');
    expect(await exportRunCommand(s, '/gpt')).toEqual(['/out/gpt/model.safetensors']);
    expect(quickPicks).toHaveLength(1);
    expect(requests).toEqual([{ runDir: '/gpt', outDir: '/out', force: false, format: 'hf' }]);
    expect(infos[0]).toMatch(/^Exported gpt for Hugging Face's LlamaForCausalLM into/);
    // Escape in the format pick exports nothing.
    pickAnswer = () => undefined;
    expect(await exportRunCommand(s, '/gpt')).toBeUndefined();
    expect(requests).toHaveLength(1);
  });

  it('does not ask an encoder-decoder run, nor a call that names the folder (PyTorch unless it names hf)', async () => {
    const { s, requests } = services();
    await exportRunCommand(s, '/pairs');
    await exportRunCommand(s, '/gpt', '/there');
    await exportRunCommand(s, '/gpt', '/there', 'hf');
    expect(quickPicks).toHaveLength(0);
    expect(requests).toEqual([
      { runDir: '/pairs', outDir: '/out', force: false, format: 'pytorch' },
      { runDir: '/gpt', outDir: '/there', force: false, format: 'pytorch' },
      { runDir: '/gpt', outDir: '/there', force: false, format: 'hf' },
    ]);
  });
});
