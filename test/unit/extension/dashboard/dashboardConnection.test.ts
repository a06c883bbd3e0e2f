import { vi } from 'vitest';

// Only errors.ts's notification helpers use vscode at run time; the connection never calls them.
vi.mock('vscode', () => ({}));
import { describe, expect, it } from 'vitest';
import type { ToWebview, RunState } from '../../../../src/protocol/webview';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import type { ConnectionDeps } from '../../../../src/extension/dashboard/dashboardConnection';
import { DashboardConnection } from '../../../../src/extension/dashboard/dashboardConnection';
import type { RunItem } from '../../../../src/extension/runs/runsModel';
import type { RunEvent } from '../../../../src/extension/training/trainingController';

// The connection's ordering with a page and a runs model that answer when the test says so, as
// on the web, where reading the run folders takes long enough for training to start meanwhile.

type Listener<T> = (v: T) => void;
class Emitter<T> {
  private readonly ls: Listener<T>[] = [];
  readonly event = (l: Listener<T>): { dispose(): void } => {
    this.ls.push(l);
    return { dispose: () => this.ls.splice(this.ls.indexOf(l), 1) };
  };
  fire(v: T): void {
    for (const l of [...this.ls]) l(v);
  }
}

const item = (runDir: string): RunItem => ({
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
});

const stateOf = (runDir: string): RunState =>
  ({
    run: {
      id: runDir,
      name: runDir.slice(1),
      runDir,
      status: 'stopped',
      kind: 'decoder-only',
      step: 40,
      totalSteps: 100,
      segments: [],
      bestValLoss: 2,
      model: null,
      data: null,
    },
    steps: [],
    evals: [],
    snapshots: [],
  }) as unknown as RunState;

const tick = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A page, a runs model, a lab whose reads the test releases, and a controller it drives. */
function harness() {
  const posted: ToWebview[] = [];
  const resumed: string[] = [];
  const fromPage = new Emitter<unknown>();
  const events = new Emitter<RunEvent>();
  const runsChanged = new Emitter<readonly RunItem[]>();
  let disk: RunItem[] = [];
  let live: { runId: string } | null = null;
  const unreadable = new Set<string>();
  const gates: (() => void)[] = [];
  let gated = false;
  const opened: string[] = [];
  /** What the model client was asked (kind, fields), and how it answers: streams a token, then `{ kind }`. */
  const asked: { kind: string; params: object }[] = [];
  let modelFails: Error | null = null;
  const deps = {
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    lab: {
      get: () => {
        const loadRunState = async (_fs: unknown, dir: string) => {
          if (gated) await new Promise<void>((r) => gates.push(r));
          if (unreadable.has(dir)) throw new Error(`${dir}/run.json is being replaced`);
          return stateOf(dir);
        };
        return {
          loadRunState,
          loadRunStateCounted: async (fs: unknown, dir: string) => ({
            state: await loadRunState(fs, dir),
            skipped: { metrics: 0, evaluations: 0, snapshots: 0 },
          }),
          skippedNote: () => null,
        };
      },
    },
    pytorch: null,
    fs: {},
    controller: {
      get state() {
        return live;
      },
      onEvent: events.event,
    },
    models: {
      request: async (
        kind: string,
        params: { runDir: string },
        hooks: {
          onToken?: (t: string, p: number) => void;
          onProgress?: (done: number, total: number) => void;
          signal?: AbortSignal;
        },
      ): Promise<object> => {
        opened.push(`${kind} ${params.runDir}`);
        asked.push({ kind, params });
        if (modelFails) throw modelFails;
        if (kind === 'decode') hooks.onToken?.('a', -0.5);
        if (kind === 'patch') {
          // A long sweep: progress, then it runs until cancelled (as ModelClient fails an aborted request).
          hooks.onProgress?.(1, 4);
          await new Promise((resolve) => hooks.signal?.addEventListener('abort', resolve));
          throw Object.assign(new Error('Patching was cancelled.'), { code: 'cancelled' });
        }
        return { kind };
      },
    },
    runs: {
      isLoaded: true,
      items: () => disk,
      refresh: async () => disk,
      onDidChange: runsChanged.event,
      find: (d: string) => disk.find((r) => r.runDir === d),
    },
    active: { id: () => null, set: async () => undefined },
    saveExport: async () => undefined,
    resume: (runDir: string) => resumed.push(runDir),
  } as unknown as ConnectionDeps;
  const viewState = new Emitter<unknown>();
  const panel = {
    visible: true,
    onDidChangeViewState: viewState.event,
    webview: {
      onDidReceiveMessage: fromPage.event,
      postMessage: async (m: ToWebview) => {
        posted.push(m);
        return true;
      },
    },
  };
  const connection = new DashboardConnection(panel as never, deps, null);
  return {
    connection,
    posted,
    resumed,
    fromPage: (m: unknown) => fromPage.fire(m),
    ready: () => fromPage.fire({ type: 'webview/ready' }),
    send: (msg: unknown) => fromPage.fire(msg),
    opened,
    asked,
    /** The panel hidden (its page discarded, as VS Code does without retainContextWhenHidden) or shown. */
    setVisible: (visible: boolean) => {
      panel.visible = visible;
      viewState.fire({ webviewPanel: panel });
    },
    failModel: (e: Error | null) => (modelFails = e),
    emit: (runId: string, event: FromTrainingWorker) => events.fire({ runId, event }),
    setDisk: (runs: RunItem[]) => {
      disk = runs;
      runsChanged.fire(runs);
    },
    setLive: (runId: string | null) => (live = runId === null ? null : { runId }),
    unreadable,
    gate: (on: boolean) => (gated = on),
    release: () => {
      gated = false;
      gates.splice(0).forEach((r) => r());
    },
    lists: () =>
      posted
        .filter((m): m is Extract<ToWebview, { type: 'dashboard/didLoadRuns' }> => m.type === 'dashboard/didLoadRuns')
        .map((m) => m.runs.map((r) => r.run.id)),
  };
}

const start = (runDir: string): FromTrainingWorker =>
  ({
    type: 'train/didStart',
    runDir,
    startStep: 40,
    totalSteps: 100,
    segments: [],
    model: {},
    data: {},
  }) as unknown as FromTrainingWorker;
const step = (n: number): FromTrainingWorker =>
  ({
    type: 'train/didStep',
    step: n,
    loss: 1,
    lr: 1e-3,
    gradNorm: 1,
    tokens: 8,
    tokensPerSec: 1,
    elapsedMs: 1,
  }) as unknown as FromTrainingWorker;

describe('DashboardConnection', () => {
  it('lists a run the runs model reads after the page got its first, empty list', async () => {
    const h = harness();
    h.ready();
    await tick();
    expect(h.lists()).toEqual([[]]);
    h.setDisk([item('/a')]);
    await tick();
    expect(h.lists()).toEqual([[], ['/a']]);
    // The same runs again (a step's change) read nothing again.
    h.setDisk([item('/a')]);
    await tick();
    expect(h.lists()).toHaveLength(2);
    h.connection.dispose();
  });

  it('posts a message about a run after the list that brings the run, not before', async () => {
    const h = harness();
    h.setDisk([item('/a')]);
    h.gate(true);
    h.connection.afterLoad([{ type: 'dashboard/show', runDir: '/a', tab: 'attention' }]);
    h.ready();
    await tick();
    expect(h.posted.map((m) => m.type)).toEqual([]);
    h.release();
    await tick();
    expect(h.posted.map((m) => m.type)).toEqual(['dashboard/didLoadRuns', 'dashboard/show']);
    h.connection.dispose();
  });

  it('forwards the start of a run the page does not list, and the steps after it', async () => {
    const h = harness();
    h.ready();
    await tick();
    h.setLive('/new');
    h.emit('/new', start('/new'));
    h.emit('/new', step(41));
    const updates = h.posted.filter((m) => m.type === 'run/didUpdate');
    expect(updates.map((m) => (m as { event: FromTrainingWorker }).event.type)).toEqual([
      'train/didStart',
      'train/didStep',
    ]);
    h.connection.dispose();
  });

  it('holds live notifications while a list is read and forwards only what it did not hold', async () => {
    const h = harness();
    h.setDisk([item('/a')]);
    h.setLive('/a');
    h.gate(true);
    h.ready();
    h.emit('/a', start('/a'));
    h.emit('/a', step(41));
    expect(h.posted).toEqual([]);
    h.release();
    await tick();
    expect(h.posted.map((m) => (m.type === 'run/didUpdate' ? m.event.type : m.type))).toEqual([
      'dashboard/didLoadRuns',
      'train/didStart',
      'train/didStep',
    ]);
    h.connection.dispose();
  });

  it('posts nothing while the panel is hidden; the next page gets the runs first, then the live steps', async () => {
    const h = harness();
    h.setDisk([item('/a')]);
    h.ready();
    await tick();
    h.setVisible(false);
    h.posted.length = 0;
    // A resume while the dashboard is behind another editor: it starts, is revealed (a new page loads), steps on.
    h.setLive('/a');
    h.emit('/a', start('/a'));
    h.connection.select('/a');
    h.setVisible(true);
    h.emit('/a', step(41));
    await tick();
    expect(h.posted).toEqual([]);
    h.ready();
    await tick();
    h.emit('/a', step(42));
    expect(h.posted.map((m) => (m.type === 'run/didUpdate' ? m.event.type : m.type))).toEqual([
      'dashboard/didLoadRuns',
      'train/didStep',
    ]);
    h.connection.dispose();
  });

  it('reads the list again when the live run it showed could not be read into a new one', async () => {
    const h = harness();
    h.setDisk([item('/a')]);
    h.setLive('/a');
    h.ready();
    await tick();
    h.emit('/a', start('/a'));
    expect(h.lists()).toEqual([['/a']]);
    h.unreadable.add('/a');
    h.connection.reload();
    await tick();
    expect(h.lists()).toEqual([['/a'], []]);
    h.unreadable.delete('/a');
    await tick(1300);
    expect(h.lists()).toEqual([['/a'], [], ['/a']]);
    h.connection.dispose();
  });

  it('opens a model only for a run the runs model knows; a request naming another folder is refused in one line', async () => {
    const h = harness();
    h.setDisk([item('/a')]);
    h.ready();
    await tick();
    const input = { kind: 'decoder-only', prompt: 'x' };
    h.send({ type: 'model/lens', id: 1, runDir: '/etc', input, topK: 3, fit: true });
    h.send({ type: 'model/ablate', id: 2, runDir: '/a/../etc', input, off: [], topK: 3, fit: true });
    h.send({ type: 'model/attend', id: 3, runDir: '/home/someone/other-run', text: 'x' });
    h.send({ type: 'model/attendLayer', id: 4, runDir: '/b', text: 'x', stack: 'decoder.self', layer: 0 });
    h.send({
      type: 'model/decode',
      id: 5,
      runDir: '/b',
      params: {
        input: 'x',
        strategy: 'greedy',
        beam: 1,
        lengthPenalty: 0,
        temperature: 1,
        topK: 0,
        topP: 1,
        maxTokens: 4,
        seed: 1,
      },
    });
    await tick();
    expect(h.opened).toEqual([]);
    const fails = h.posted.filter((m) => m.type.endsWith('/didFail')) as {
      type: string;
      id: number;
      error: { code: string; message: string };
    }[];
    expect(fails.map((m) => [m.type, m.id, m.error.code])).toEqual([
      ['model/didFail', 1, 'input/invalid'],
      ['model/didFail', 2, 'input/invalid'],
      ['model/didFail', 3, 'input/invalid'],
      ['model/didFail', 4, 'input/invalid'],
      ['model/didFail', 5, 'input/invalid'],
    ]);
    expect(fails[0]?.error.message).toBe(
      "/etc is not a run this window lists; pick a run from the dashboard's list or the Runs view.",
    );
    h.send({ type: 'model/lens', id: 6, runDir: '/a', input, topK: 3, fit: true });
    h.send({ type: 'model/attend', id: 7, runDir: '/a', text: 'x' });
    await tick();
    expect(h.opened).toEqual(['lens /a', 'attend /a']);
    h.connection.dispose();
  });

  it("forwards the page's model requests as they came, answering with the page's id, tokens and failures", async () => {
    const h = harness();
    h.setDisk([item('/a')]);
    h.ready();
    await tick();
    const params = {
      input: 'x',
      strategy: 'greedy',
      beam: 1,
      lengthPenalty: 0,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: 4,
      seed: 1,
    };
    h.send({ type: 'model/decode', id: 41, runDir: '/a', params });
    h.send({ type: 'model/attendLayer', id: 42, runDir: '/a', text: 'x', stack: 'decoder.self', layer: 1 });
    await tick();
    expect(h.asked).toEqual([
      { kind: 'decode', params: { type: 'model/decode', id: 41, runDir: '/a', params } },
      {
        kind: 'attendLayer',
        params: { type: 'model/attendLayer', id: 42, runDir: '/a', text: 'x', stack: 'decoder.self', layer: 1 },
      },
    ]);
    const answers = h.posted.filter((m) => m.type.startsWith('model/'));
    expect(answers).toEqual([
      { type: 'model/didToken', id: 41, token: 'a', logprob: -0.5 },
      { type: 'model/didDecode', id: 41, output: { kind: 'decode' } },
      { type: 'model/didAttendLayer', id: 42, output: { kind: 'attendLayer' } },
    ]);
    h.failModel(Object.assign(new Error('Computing the logit lens took longer than 600 s.'), { code: 'timeout' }));
    h.send({
      type: 'model/lens',
      id: 43,
      runDir: '/a',
      input: { kind: 'decoder-only', prompt: 'x' },
      topK: 3,
      fit: true,
    });
    // A request the page may not send (not a `page` entry of modelRequests) is refused on arrival.
    h.send({ type: 'model/export', id: 44, runDir: '/a', outDir: '/tmp', force: true });
    await tick();
    expect(h.posted.filter((m) => m.type.startsWith('model/')).slice(3)).toEqual([
      {
        type: 'model/didFail',
        id: 43,
        error: { code: 'timeout', message: 'Computing the logit lens took longer than 600 s.' },
      },
    ]);
    expect(h.asked.map((a) => a.kind)).toEqual(['decode', 'attendLayer', 'lens']);
    h.connection.dispose();
  });

  it("forwards a page request's progress, and the page's model/cancel stops it; closing the page stops the rest", async () => {
    const h = harness();
    h.setDisk([item('/a')]);
    h.ready();
    await tick();
    const request = { clean: 'a b', corrupted: 'a c', answer: 'b', wrong: 'c', metric: 'logit-diff', what: ['resid'] };
    h.send({ type: 'model/patch', id: 51, runDir: '/a', request });
    h.send({ type: 'model/patch', id: 52, runDir: '/a', request });
    await tick();
    const model = (): unknown[] => h.posted.filter((m) => m.type.startsWith('model/'));
    expect(model()).toEqual([
      { type: 'model/didProgress', id: 51, done: 1, total: 4 },
      { type: 'model/didProgress', id: 52, done: 1, total: 4 },
    ]);
    h.send({ type: 'model/cancel', id: 51 });
    h.send({ type: 'model/cancel', id: 99 }); // not in flight: ignored
    await tick();
    expect(model().slice(2)).toEqual([
      { type: 'model/didFail', id: 51, error: { code: 'cancelled', message: 'Patching was cancelled.' } },
    ]);
    h.connection.dispose();
    await tick();
    expect(model().slice(3)).toEqual([
      { type: 'model/didFail', id: 52, error: { code: 'cancelled', message: 'Patching was cancelled.' } },
    ]);
  });

  it("runs a stopped run's Resume from the page as the Resume command; pause and stop of a run not training do nothing", async () => {
    const h = harness();
    h.setDisk([item('/a')]);
    h.ready();
    await tick();
    h.fromPage({ type: 'train/control', runDir: '/a', action: 'resume' });
    h.fromPage({ type: 'train/control', runDir: '/a', action: 'stop' });
    h.fromPage({ type: 'train/control', runDir: '/gone', action: 'resume' });
    await tick();
    expect(h.resumed).toEqual(['/a']);
  });
});
