import { describe, expect, it } from 'vitest';
import type { StepMetrics } from '../../../src/protocol/data';
import type { ModelInfo } from '../../../src/protocol/model';
import type { FromTrainingWorker } from '../../../src/protocol/trainingWorker';
import type { ToWebview, RunState } from '../../../src/protocol/webview';
import { DashboardStore } from '../../../webview/store';
import { PAIRS_RECORD } from '../../evalOutputs';

const step = (s: number, loss = 1): StepMetrics => ({
  step: s,
  loss,
  lr: 0.1,
  gradNorm: 1,
  tokens: 10,
  tokensPerSec: 100,
  elapsedMs: s * 10,
});
const model: ModelInfo = {
  config: { kind: 'decoder-only' },
  params: 10,
  paramsByModule: {},
  memoryBytes: 1,
  flopsPerToken: 1,
  backend: 'reference',
};

function state(id: string, n: number): RunState {
  return {
    run: {
      id,
      name: id,
      runDir: `/r/${id}`,
      status: 'training',
      kind: 'decoder-only',
      step: n,
      totalSteps: 100,
      segments: [{ fromStep: 0, toStep: 100, schedule: 'cosine' }],
      bestValLoss: null,
      model,
      data: null,
    },
    steps: Array.from({ length: n }, (_, i) => step(i + 1)),
    evals: [],
    snapshots: [{ step: 5, srcTokens: [], tgtTokens: ['a'], maps: [], masks: [] }],
  };
}

/** A notification of the run `id` (whose folder is `/r/<id>`, as `state` makes it). */
const update = (id: string, event: FromTrainingWorker): ToWebview => ({
  type: 'run/didUpdate',
  runDir: `/r/${id}`,
  event,
});

describe('DashboardStore', () => {
  it('loads runs and appends live steps in order', () => {
    const s = new DashboardStore();
    const r = s.apply({ type: 'dashboard/didLoadRuns', runs: [state('a', 3), state('b', 1)], selectedId: 'b' });
    expect(r.problems).toEqual([]);
    expect(s.runs.map((x) => x.id)).toEqual(['a', 'b']);
    expect(s.preferredRunId).toBe('b');
    const e = s.apply(update('a', { type: 'train/didStep', ...step(4, 0.5) }));
    expect(e.events).toEqual([{ kind: 'run', runId: 'a', parts: ['steps'] }]);
    expect(s.run('a')?.steps.length).toBe(4);
    expect(s.run('a')?.steps.column('loss')[3]).toBe(0.5);
  });

  it('refuses out-of-order steps, evals and snapshots with a problem, keeping the data', () => {
    const s = new DashboardStore();
    s.apply({ type: 'dashboard/didLoadRuns', runs: [state('a', 3)], selectedId: null });
    const r = s.apply(update('a', { type: 'train/didStep', ...step(2) }));
    expect(r.events).toEqual([]);
    expect(r.problems[0]).toMatch(/Out-of-order train\/didStep: step 2 arrived after step 3/);
    expect(s.run('a')?.steps.length).toBe(3);
    expect(
      s.apply(update('a', { type: 'train/didSnapshot', step: 4, srcTokens: [], tgtTokens: [], maps: [], masks: [] }))
        .problems[0],
    ).toMatch(/didSnapshot: step 4 arrived after step 5/);
    // The same step again replaces the snapshot (a restart retakes it).
    expect(
      s.apply(update('a', { type: 'train/didSnapshot', step: 5, srcTokens: ['z'], tgtTokens: [], maps: [], masks: [] }))
        .problems,
    ).toEqual([]);
    expect(s.run('a')?.snapshots.map((x) => x.srcTokens)).toEqual([['z']]);
    s.apply(update('a', { type: 'train/didEval', step: 3, loss: 2, ppl: 7, exactMatch: null, bleu: null }));
    expect(
      s.apply(update('a', { type: 'train/didEval', step: 2, loss: 2, ppl: 7, exactMatch: null, bleu: null })).problems,
    ).toHaveLength(1);
    expect(s.run('a')?.summary.bestValLoss).toBe(2);
  });

  it('creates a run on train/didStart and refuses other events for unknown runs', () => {
    const s = new DashboardStore();
    expect(s.apply(update('new-run', { type: 'train/didStep', ...step(1) })).problems[0]).toMatch(
      /has not been told about/,
    );
    const data = { description: 'd', documents: 1, bytes: 1, trainTokens: 1, valTokens: 1, skipped: [] };
    const r = s.apply(
      update('new-run', {
        type: 'train/didStart',
        runDir: '/r/new-run',
        startStep: 0,
        totalSteps: 50,
        segments: [{ fromStep: 0, toStep: 50, schedule: 'cosine' }],
        model,
        data,
      }),
    );
    expect(r.events).toEqual([{ kind: 'runs' }]);
    // Known by its folder, which is its id too.
    expect(s.runAt('/r/new-run')).toBe(s.run('/r/new-run'));
    expect(s.run('/r/new-run')?.summary).toMatchObject({
      name: 'new-run',
      status: 'training',
      totalSteps: 50,
      kind: 'decoder-only',
    });
  });

  it('a resume (didStart at an earlier step) drops what was logged after its checkpoint', () => {
    const s = new DashboardStore();
    s.apply({ type: 'dashboard/didLoadRuns', runs: [state('a', 10)], selectedId: null });
    const data = { description: 'd', documents: 1, bytes: 1, trainTokens: 1, valTokens: 1, skipped: [] };
    s.apply(
      update('a', {
        type: 'train/didStart',
        runDir: '/r/a',
        startStep: 4,
        totalSteps: 100,
        segments: [{ fromStep: 0, toStep: 100, schedule: 'cosine' }],
        model,
        data,
      }),
    );
    expect(s.run('a')?.steps.lastStep).toBe(4);
    expect(s.run('a')?.snapshots).toHaveLength(0);
    expect(s.apply(update('a', { type: 'train/didStep', ...step(5) })).problems).toEqual([]);
  });

  it('tracks status and failures', () => {
    const s = new DashboardStore();
    s.apply({ type: 'dashboard/didLoadRuns', runs: [state('a', 1)], selectedId: null });
    s.apply(update('a', { type: 'train/didPause', step: 1 }));
    expect(s.run('a')?.summary.status).toBe('paused');
    s.apply(
      update('a', { type: 'train/didFail', step: 1, error: { code: 'train/nonFinite', message: 'loss is NaN' } }),
    );
    expect(s.run('a')?.summary.status).toBe('failed');
    expect(s.run('a')?.failure?.message).toBe('loss is NaN');
    // A full disk stops the run (its checkpoint is kept and it resumes); the message still shows.
    s.apply(
      update('a', {
        type: 'train/didFail',
        step: 1,
        error: { code: 'disk/full', message: 'Disk full while saving the checkpoint at step 1' },
      }),
    );
    expect(s.run('a')?.summary.status).toBe('stopped');
    expect(s.run('a')?.failure?.code).toBe('disk/full');
    // So does a lost GPU device (it resumes on WebAssembly).
    s.apply(update('a', { type: 'train/didFail', step: 1, error: { code: 'internal', message: 'x' } }));
    expect(s.run('a')?.summary.status).toBe('failed');
    s.apply(
      update('a', {
        type: 'train/didFail',
        step: 2,
        error: { code: 'gpu/lost', message: 'The GPU device was lost (unknown) after step 2; training stopped …' },
      }),
    );
    expect(s.run('a')?.summary.status).toBe('stopped');
    expect(s.run('a')?.failure?.code).toBe('gpu/lost');
  });

  it("keeps a run's evaluations and adds one that arrives, for runs it lists", () => {
    const s = new DashboardStore();
    s.apply({
      type: 'dashboard/didLoadRuns',
      runs: [{ ...state('a', 3), evaluations: [PAIRS_RECORD] }, state('b', 1)],
      selectedId: null,
    });
    expect(s.run('a')?.evaluations).toEqual([PAIRS_RECORD]);
    expect(s.run('b')?.evaluations).toEqual([]);
    const next = { ...PAIRS_RECORD, step: 3, at: '2025-02-01T00:00:00.000Z' };
    expect(s.apply({ type: 'run/didEvaluate', runDir: '/r/b', evaluation: next })).toEqual({
      events: [{ kind: 'run', runId: 'b', parts: ['evaluations'] }],
      problems: [],
    });
    expect(s.run('b')?.evaluations).toEqual([next]);
    expect(s.apply({ type: 'run/didEvaluate', runDir: 'unknown', evaluation: next })).toEqual({
      events: [],
      problems: [],
    });
  });

  it('streams decodes it requested and refuses answers to others or after the end', () => {
    const s = new DashboardStore();
    const d = s.beginDecode('a', {
      input: 'x',
      strategy: 'greedy',
      beam: 4,
      lengthPenalty: 0.6,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: 5,
      seed: 1,
    });
    expect(s.apply({ type: 'model/didToken', id: d.id, token: 'q', logprob: -0.1 }).problems).toEqual([]);
    expect(s.decode(d.id)?.tokens).toEqual([{ token: 'q', logprob: -0.1 }]);
    expect(s.apply({ type: 'model/didToken', id: d.id + 1, token: 'q', logprob: -0.1 }).problems[0]).toMatch(
      /never requested/,
    );
    s.apply({ type: 'model/didFail', id: d.id, error: { code: 'input/invalid', message: 'too long' } });
    expect(s.apply({ type: 'model/didToken', id: d.id, token: 'r', logprob: -1 }).problems[0]).toMatch(
      /after it finished/,
    );
    expect(
      s.apply({ type: 'model/didFail', id: d.id, error: { code: 'input/invalid', message: 'again' } }).problems[0],
    ).toMatch(/already finished/);
  });

  it('leaves out loaded steps that go backwards, and says so', () => {
    const s = new DashboardStore();
    const st = state('a', 3);
    const r = s.apply({
      type: 'dashboard/didLoadRuns',
      runs: [{ ...st, steps: [...st.steps, step(2)] }],
      selectedId: null,
    });
    expect(r.problems[0]).toMatch(/1 logged step\(s\) were not in increasing order/);
    expect(s.run('a')?.steps.length).toBe(3);
  });

  it('reports duplicate runs in one load', () => {
    const s = new DashboardStore();
    expect(
      s.apply({ type: 'dashboard/didLoadRuns', runs: [state('a', 1), state('a', 2)], selectedId: null }).problems[0],
    ).toMatch(/twice/);
    expect(s.runs).toHaveLength(1);
  });

  it('answers lens and ablation sessions it started, and refuses others, mixed kinds and repeats', () => {
    const s = new DashboardStore();
    const lens = s.beginAnalysis('a', { kind: 'decoder-only', prompt: 'ab' });
    const ab = s.beginAnalysis('a', { kind: 'decoder-only', prompt: 'ab' }, [
      { stack: 'decoder.self', layer: 0, head: 1 },
    ]);
    expect([lens.kind, ab.kind]).toEqual(['lens', 'ablate']);
    expect(ab.id).not.toBe(lens.id);
    const output = { tokens: ['<bos>', 'a', 'b'], layers: [] };
    expect(
      s.apply({
        type: 'model/didAblate',
        id: lens.id,
        output: {
          tokens: [],
          off: [],
          base: { loss: 0, scored: 0, next: [] },
          ablated: { loss: 0, scored: 0, next: [] },
          compare: [],
        },
      }).problems[0],
    ).toMatch(/ablation \d+, which this page never requested/);
    expect(s.apply({ type: 'model/didLens', id: lens.id, output }).events).toEqual([{ kind: 'analysis', id: lens.id }]);
    expect(s.analysis(lens.id)?.output).toEqual(output);
    expect(s.apply({ type: 'model/didFail', id: lens.id, error: { code: 'x', message: 'late' } }).problems[0]).toMatch(
      /had already finished/,
    );
    expect(
      s.apply({ type: 'model/didFail', id: ab.id, error: { code: 'input/invalid', message: 'No attention head' } })
        .events,
    ).toEqual([{ kind: 'analysis', id: ab.id }]);
    expect(s.analysis(ab.id)?.error?.message).toBe('No attention head');
    expect(s.apply({ type: 'model/didLens', id: 99, output }).problems[0]).toMatch(
      /logit lens 99, which this page never requested/,
    );
  });

  it('answers a steering request it started with both decodes, and refuses a lens answer for it', () => {
    const s = new DashboardStore();
    const decode = {
      input: 'x',
      strategy: 'greedy' as const,
      beam: 1,
      lengthPenalty: 0,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: 5,
      seed: 1,
    };
    const st = s.beginSteer('a', { vector: { plus: 'a', minus: 'b', layer: 1, alpha: 2 }, decode });
    expect(st.kind).toBe('steer');
    const d = {
      text: 'yz',
      promptTokens: ['<bos>', 'x'],
      tokens: ['y', 'z'],
      ids: [3, 4],
      logprobs: [-1, -2],
      score: -3,
      attention: null,
      beams: [],
      stopReason: 'maxTokens' as const,
    };
    const output = { layer: 1, alpha: 2, norm: 1.5, streamNorm: 3, steered: d, unsteered: { ...d, text: 'ww' } };
    expect(s.apply({ type: 'model/didLens', id: st.id, output: { tokens: [], layers: [] } }).problems[0]).toMatch(
      /logit lens \d+, which this page never requested/,
    );
    expect(s.apply({ type: 'model/didSteer', id: st.id, output }).events).toEqual([{ kind: 'analysis', id: st.id }]);
    expect(s.analysis(st.id)?.output).toEqual(output);
    expect(s.apply({ type: 'model/didSteer', id: 77, output }).problems[0]).toMatch(
      /steering 77, which this page never requested/,
    );
  });

  it("keeps a patching request's progress until it finishes; progress of another request is a problem", () => {
    const s = new DashboardStore();
    const request = {
      clean: 'a b',
      corrupted: 'a c',
      answer: 'b',
      wrong: 'c',
      metric: 'logit-diff' as const,
      what: ['resid' as const],
    };
    const p = s.beginPatching('a', { kind: 'patch', request });
    expect(p.kind === 'patch' && p.progress).toBeNull();
    expect(s.apply({ type: 'model/didProgress', id: p.id, done: 3, total: 8 })).toEqual({
      events: [{ kind: 'analysis', id: p.id }],
      problems: [],
    });
    expect(s.analysis(p.id)).toMatchObject({ progress: { done: 3, total: 8 } });
    s.apply({ type: 'model/didFail', id: p.id, error: { code: 'cancelled', message: 'Patching was cancelled.' } });
    // A late progress of a request that ended changes nothing and is no problem.
    expect(s.apply({ type: 'model/didProgress', id: p.id, done: 4, total: 8 })).toEqual({ events: [], problems: [] });
    expect(s.analysis(p.id)).toMatchObject({ progress: { done: 3, total: 8 } });
    const lens = s.beginAnalysis('a', { kind: 'decoder-only', prompt: 'x' });
    expect(s.apply({ type: 'model/didProgress', id: lens.id, done: 1, total: 2 }).problems).toEqual([
      `model/didProgress for ${lens.id}, which is no patching this page requested; ignored.`,
    ]);
  });

  it('numbers every model request of the page from one counter, so a model/didFail fails the one it names', () => {
    const s = new DashboardStore();
    s.apply({ type: 'dashboard/didLoadRuns', runs: [state('a', 1)], selectedId: null });
    const d = s.beginDecode('a', {
      input: 'x',
      strategy: 'greedy',
      beam: 1,
      lengthPenalty: 0,
      temperature: 1,
      topK: 0,
      topP: 1,
      maxTokens: 5,
      seed: 1,
    });
    const lens = s.beginAnalysis('a', { kind: 'decoder-only', prompt: 'ab' });
    const insp = s.beginInspection('a', 'ab');
    expect(new Set([d.id, lens.id, insp?.id]).size).toBe(3);
    const error = { code: 'input/invalid', message: 'no' };
    expect(s.apply({ type: 'model/didFail', id: lens.id, error }).events).toEqual([{ kind: 'analysis', id: lens.id }]);
    expect(s.analysis(lens.id)?.error).toEqual(error);
    expect(s.decode(d.id)?.error).toBeNull();
    expect(s.apply({ type: 'model/didFail', id: insp?.id as number, error }).problems).toEqual([]);
    expect(s.run('a')?.inspection?.error).toEqual(error);
    expect(s.decode(d.id)?.error).toBeNull();
    expect(s.apply({ type: 'model/didFail', id: 99, error }).problems[0]).toMatch(
      /99, which this page never requested/,
    );
  });
});
