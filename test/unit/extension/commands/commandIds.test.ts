import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMAND_IDS } from '../../../../src/extension/commands/commandIds';

interface Menu {
  readonly command: string;
  readonly when?: string;
}
const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
  main: string;
  activationEvents: string[];
  engines: { vscode: string };
  contributes: {
    commands: { command: string; title: string; category?: string }[];
    menus: Record<string, Menu[]>;
    views: Record<string, { id: string }[]>;
    viewsWelcome: { view: string; contents: string; when: string }[];
    viewsContainers: { activitybar: { id: string; icon: string }[] };
  };
  capabilities: {
    untrustedWorkspaces: { supported: unknown; restrictedConfigurations: string[] };
    virtualWorkspaces: { supported: unknown };
  };
};
const c = pkg.contributes;
const declared = new Set(c.commands.map((x) => x.command));

describe('the manifest (package.json) and the code agree', () => {
  it('contributes exactly the commands the extension registers', () => {
    expect([...declared].sort()).toEqual([...COMMAND_IDS].sort());
  });

  it('puts every command in the "Attention Lab" category, with the titles people look for', () => {
    for (const cmd of c.commands) expect(cmd.category, cmd.command).toBe('Attention Lab');
    const titles = c.commands.map((x) => x.title);
    for (const t of [
      'Configure Model…',
      'Train',
      'Stop Training',
      'Pause / Resume Training',
      'Decode…',
      'Open Dashboard',
      'Open Run…',
      'Export for PyTorch…',
      'Evaluate on Files…',
      'Score Selection',
      'Show Attention for Selection',
    ]) {
      expect(titles).toContain(t);
    }
  });

  it('names only contributed commands in menus and welcome views', () => {
    for (const [menu, items] of Object.entries(c.menus))
      for (const m of items) expect(declared.has(m.command), `${menu}: ${m.command}`).toBe(true);
    for (const w of c.viewsWelcome) {
      for (const [, id] of w.contents.matchAll(/\(command:([\w.]+)\)/g)) {
        if ((id as string).startsWith('attentionLab.')) expect(declared.has(id as string), id).toBe(true);
      }
    }
  });

  it('hides the commands that need a run or a trained model behind when clauses', () => {
    const palette = new Map(c.menus.commandPalette?.map((m) => [m.command, m.when]) ?? []);
    for (const id of [
      'attentionLab.decode',
      'attentionLab.export',
      'attentionLab.evaluateFiles',
      'attentionLab.scoreSelection',
      'attentionLab.showAttention',
      'attentionLab.continueTraining',
    ])
      expect(palette.get(id), id).toMatch(/attentionLab\.hasTrainedRun/);
    for (const id of ['attentionLab.stop', 'attentionLab.togglePause'])
      expect(palette.get(id), id).toMatch(/attentionLab\.isTraining/);
    // Rename, note and delete ask which run when started from the palette; the other row commands need a row.
    const asks = ['attentionLab.run.rename', 'attentionLab.run.editNote', 'attentionLab.run.delete'];
    for (const id of asks) expect(palette.get(id), id).toBe('attentionLab.hasRuns');
    for (const id of COMMAND_IDS.filter((x) => x.startsWith('attentionLab.run.') && !asks.includes(x)))
      expect(palette.get(id), id).toBe('false');
  });

  it('offers Continue Training… on the runs that can train longer, never while one trains', () => {
    const item = c.menus['view/item/context']?.find((m) => m.command === 'attentionLab.continueTraining');
    expect(item?.when).toBe('view == attentionLab.runs && viewItem =~ /^run\\..*\\.extendable/');
    const cmd = c.commands.find((x) => x.command === 'attentionLab.continueTraining') as
      { title: string; enablement?: string } | undefined;
    expect(cmd?.title).toBe('Continue Training…');
    expect(cmd?.enablement).toBe('!attentionLab.isTraining');
  });

  it('offers "Evaluate on Files…" on trained runs in the Runs view', () => {
    const item = c.menus['view/item/context']?.find((m) => m.command === 'attentionLab.evaluateFiles');
    expect(item?.when).toBe('view == attentionLab.runs && viewItem =~ /^run\\..*\\.trained/');
  });

  it('activates lazily and declares the views, trust and virtual-workspace support', () => {
    expect(pkg.activationEvents).not.toContain('*');
    expect(pkg.activationEvents).toContain('onWebviewPanel:attentionLab.dashboard');
    expect(pkg.main).toBe('./dist/extension.js');
    expect(pkg.engines.vscode).toMatch(/^\^1\.\d+\.\d+$/);
    const views = Object.values(c.views)
      .flat()
      .map((v) => v.id);
    expect(views).toEqual(['attentionLab.runs', 'attentionLab.config']);
    for (const e of pkg.activationEvents.filter((x) => x.startsWith('onView:')))
      expect(views).toContain(e.slice('onView:'.length));
    expect(c.viewsWelcome.every((w) => w.view === 'attentionLab.runs' && /attentionLab\.hasRuns/.test(w.when))).toBe(
      true,
    );
    expect(pkg.capabilities.untrustedWorkspaces.supported).toBe('limited');
    expect(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations).toContain('attentionLab.runs.location');
    expect(pkg.capabilities.virtualWorkspaces.supported).toBe('limited');
  });

  it("speaks of the workspace's files only in a window with a folder open", () => {
    const runs = c.viewsWelcome.filter((w) => w.view === 'attentionLab.runs');
    for (const w of runs.filter((x) => /workspace's files/.test(x.contents)))
      expect(w.when).toMatch(/workbenchState != empty/);
    const noFolder = runs.filter((w) => /workbenchState == empty/.test(w.when));
    expect(noFolder).toHaveLength(1);
    expect(noFolder[0]?.contents).toMatch(/No folder is open/);
    expect(noFolder[0]?.contents).not.toMatch(/workspace's files/);
    // Every window state meets exactly one welcome text: trusted with and without a folder, and Restricted Mode.
    expect(runs.map((w) => w.when).sort()).toEqual([
      '!attentionLab.hasRuns && !isWorkspaceTrusted',
      '!attentionLab.hasRuns && isWorkspaceTrusted && workbenchState != empty',
      '!attentionLab.hasRuns && isWorkspaceTrusted && workbenchState == empty',
    ]);
  });

  it('ships the icons it names', () => {
    const media = readdirSync(new URL('../../../../media/', import.meta.url));
    expect(media).toContain('icon.png');
    for (const container of c.viewsContainers.activitybar)
      expect(media).toContain(container.icon.replace('media/', ''));
  });
});
