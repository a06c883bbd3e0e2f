import { describe, expect, it } from 'vitest';
import { ActiveRun } from '../../../../src/extension/runs/activeRun';
import type { RunsSource } from '../../../../src/extension/runs/activeRun';
import { Emitter } from '../../../../src/extension/base/emitter';
import type { RunItem } from '../../../../src/extension/runs/runsModel';
import { Memento } from '../memento';

const item = (runDir: string): RunItem => ({
  runDir,
  name: runDir.slice(1),
  status: 'completed',
  kind: 'decoder-only',
  step: 10,
  totalSteps: 10,
  bestValLoss: 1,
  hasModel: true,
  active: false,
  params: 1,
  data: null,
  imported: null,
  error: null,
  note: null,
  backend: 'wasm',
});

class Runs implements RunsSource {
  readonly emitter = new Emitter<readonly RunItem[]>();
  readonly onDidChange = this.emitter.event;
  isLoaded = true;
  constructor(public list: RunItem[]) {}
  find(runDir: string): RunItem | undefined {
    return this.list.find((r) => r.runDir === runDir);
  }
  set(list: RunItem[]): void {
    this.list = list;
    this.emitter.fire(list);
  }
}

describe('ActiveRun', () => {
  it('is set in one place, tells its listeners once per change, and persists in workspace state', async () => {
    const state = new Memento();
    const runs = new Runs([item('/a'), item('/b')]);
    const active = new ActiveRun(state, runs, (d) => d);
    const seen: (string | null)[] = [];
    active.onDidChange((id) => seen.push(id));
    expect(active.id()).toBeNull();
    await active.set('/a');
    await active.set('/a');
    await active.set('/b');
    expect(seen).toEqual(['/a', '/b']);
    expect(active.get()?.name).toBe('b');
    // A new window (a reload) reads the same workspace state.
    expect(new ActiveRun(state, runs, (d) => d).id()).toBe('/b');
  });

  it('stops being the active run when its run disappears, and says so', async () => {
    const runs = new Runs([item('/a'), item('/b')]);
    const active = new ActiveRun(new Memento(), runs, (d) => d);
    await active.set('/a');
    const seen: (string | null)[] = [];
    active.onDidChange((id) => seen.push(id));
    runs.set([item('/b')]);
    expect(active.id()).toBeNull();
    expect(active.get()).toBeUndefined();
    expect(seen).toEqual([null]);
    // Before the runs are read, the remembered run stands (it may well exist).
    const unread = new Runs([]);
    unread.isLoaded = false;
    const state = new Memento();
    await state.update('attentionLab.selectedRun', '/c');
    expect(new ActiveRun(state, unread, (d) => d).id()).toBe('/c');
  });
});
