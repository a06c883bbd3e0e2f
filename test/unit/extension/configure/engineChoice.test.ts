import { beforeEach, describe, expect, it, vi } from 'vitest';

// Configure's engine list with a Python that has no torch, VS Code's quick inputs played here:
// the PyTorch rows lead to choosing a Python instead of doing nothing, and rows stay one line.

type Item = { label: string; value?: unknown; description?: string; detail?: string; kind?: number; way?: string };
/** What the next engine list does once its probe has answered: the label of the row to accept. */
const accept: string[] = [];
const lists: Item[][] = [];
const quickPicks: Item[][] = [];
let pickWay: string | undefined;
let typed: string | undefined;
const updates: [string, unknown, number][] = [];
const commands: string[] = [];
const settings = { python: 'python3' };

vi.mock('vscode', () => {
  const createQuickPick = () => {
    const accepted: (() => void)[] = [];
    const hidden: (() => void)[] = [];
    const qp = {
      items: [] as Item[],
      selectedItems: [] as Item[],
      activeItems: [] as Item[],
      busy: false,
      buttons: [],
      onDidTriggerButton: () => ({ dispose: () => undefined }),
      onDidAccept: (l: () => void) => (accepted.push(l), { dispose: () => undefined }),
      onDidHide: (l: () => void) => (hidden.push(l), { dispose: () => undefined }),
      dispose: () => undefined,
      show: () => {
        // Accept once the probe has answered (the list is no longer busy).
        const wait = (): void => {
          if (qp.busy) return void setTimeout(wait, 1);
          lists.push(qp.items);
          const label = accept.shift();
          const row = qp.items.find((i) => label !== undefined && i.label.includes(label));
          if (!row) return hidden.forEach((l) => l());
          qp.selectedItems = [row];
          accepted.forEach((l) => l());
        };
        wait();
      },
    };
    return qp;
  };
  return {
    QuickPickItemKind: { Separator: -1 },
    QuickInputButtons: { Back: {} },
    InputBoxValidationSeverity: { Info: 1, Warning: 2, Error: 3 },
    ConfigurationTarget: { Global: 1, Workspace: 2 },
    Uri: { joinPath: (_u: unknown, ...p: string[]) => ({ fsPath: `/ext/${p.join('/')}` }) },
    extensions: { getExtension: (id: string) => (id === 'ms-python.python' ? {} : undefined) },
    commands: { executeCommand: async (id: string) => void commands.push(id) },
    workspace: {
      workspaceFolders: [{ uri: {} }],
      getConfiguration: () => ({
        update: async (key: string, value: unknown, target: number) => {
          updates.push([key, value, target]);
          if (key === 'attentionLab.pytorch.python') settings.python = typeof value === 'string' ? value : '';
        },
      }),
    },
    window: {
      createQuickPick,
      showQuickPick: async (items: Item[]) => (quickPicks.push(items), items.find((i) => i.way === pickWay)),
      showInputBox: async () => typed,
      showOpenDialog: async () => undefined,
    },
  };
});

const { DEFAULT_SETTINGS } = await import('../../../../src/extension/base/settings');
const { draftFromSettings } = await import('../../../../src/extension/configure/configureDraft');
const { engineRow, pickEngine, shortTorchLine } = await import('../../../../src/extension/configure/engineChoice');
type EngineChoiceDeps = import('../../../../src/extension/configure/engineChoice').EngineChoiceDeps;

const NO_TORCH =
  "python3 cannot import torch: ModuleNotFoundError: No module named 'torch'; install torch 1.13 or newer into it, or choose another Python";
const current = () => ({
  ...DEFAULT_SETTINGS,
  training: { ...DEFAULT_SETTINGS.training, engine: 'pytorch' as const },
  pytorch: { ...DEFAULT_SETTINGS.pytorch, python: settings.python },
});
const s = {
  settings: current,
  context: { extensionUri: {} },
  log: { info: () => undefined },
  host: {
    pytorch: () => ({
      probeTorch: async (python: string) => {
        if (python !== '/venv/bin/python') throw new Error(NO_TORCH);
        return { torch: '2.3.1', python: '3.12.1', cuda: false, devices: [], bf16: false };
      },
      checkOptions: () => undefined,
      batchShareProblem: () => null,
      describeEnv: (e: { torch: string; python: string }) => `torch ${e.torch} (Python ${e.python}) · CPU only`,
    }),
  },
} as unknown as EngineChoiceDeps;
const step = { title: 'Configure', step: 6, totalSteps: 6, back: true };

describe('the engine choice', () => {
  beforeEach(() => {
    accept.length = 0;
    lists.length = 0;
    quickPicks.length = 0;
    updates.length = 0;
    commands.length = 0;
    settings.python = 'python3';
  });

  it('keeps the review’s engine row to one short line, whatever the probe said', () => {
    const d = draftFromSettings(current());
    const failed = engineRow(d, 'engine', { ok: false, line: `${NO_TORCH} (python3 from setting)` });
    expect(failed.detail).not.toContain('ModuleNotFoundError');
    expect(failed.detail).toMatch(/cannot train with the chosen Python/);
    expect(
      shortTorchLine({
        ok: true,
        line: 'torch 2.3.1 (Python 3.12.1) · CPU only · /a/very/long/venv/bin/python from setting',
      }),
    ).toBe('torch 2.3.1 (Python 3.12.1) · CPU only');
  });

  it('turns Enter on a PyTorch layout the Python cannot train into choosing a Python, then trains with the one typed', async () => {
    settings.python = 'python3';
    accept.push('PyTorch — 2 processes', 'PyTorch — 2 processes');
    pickWay = 'type';
    typed = '/venv/bin/python';
    const d = await pickEngine(s, current(), draftFromSettings(current()), step);
    // First list: no torch; the layout's Enter asked for a Python; the typed one was saved.
    const first = lists[0] ?? [];
    expect(first.find((i) => i.label.includes('PyTorch — 2 processes'))?.value).toBe('python');
    expect(
      first
        .filter((i) => i.kind !== -1)
        .slice(0, -1)
        .every((i) => i.detail === undefined),
    ).toBe(true);
    expect(first.at(-1)?.label).toMatch(/Choose the Python for PyTorch/);
    expect(first.at(-1)?.detail).toContain('No module named');
    expect(quickPicks[0]?.map((i) => i.way)).toEqual(['extension', 'file', 'type', 'clear']);
    expect(updates).toContainEqual(['attentionLab.pytorch.python', '/venv/bin/python', 2]);
    // Second list: the new Python's torch trains the layout.
    expect(lists[1]?.find((i) => i.label.includes('PyTorch — 2 processes'))?.value).toEqual({
      engine: 'pytorch',
      processes: 2,
      device: 'cpu',
    });
    expect(d).toMatchObject({ engine: 'pytorch', processes: 2, device: 'cpu' });
  });

  it("offers the Python extension's interpreter picker, clearing the setting that would win over it", async () => {
    settings.python = '/usr/bin/python3';
    accept.push('Choose the Python for PyTorch');
    pickWay = 'extension';
    expect(await pickEngine(s, current(), draftFromSettings(current()), step)).toBeUndefined();
    expect(commands).toEqual(['python.setInterpreter']);
    expect(updates.filter(([k]) => k === 'attentionLab.pytorch.python').map(([, v]) => v)).toEqual([
      undefined,
      undefined,
    ]);
  });
});
