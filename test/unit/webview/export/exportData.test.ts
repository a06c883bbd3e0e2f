/**
 * The dashboard's CSV exports from its store equal what the CLI writes from the run folder
 * (the same src/common/csv.ts over the same logged values), also across a resume whose clock restarts.
 */
import { describe, expect, it } from 'vitest';
import { headScoresCsv, metricsCsv, parseCsv } from '../../../../src/common/csv';
import type { StepMetrics } from '../../../../src/protocol/data';
import type { RunState } from '../../../../src/protocol/webview';
import { exportFileName, runHeadScoresCsv, runsMetricsCsv } from '../../../../webview/export/exportData';
import { validateFromWebview } from '../../../../src/protocol/webview';
import { DashboardStore } from '../../../../webview/store';
import { presetConfig } from '../../../../src/engine/config';

const steps: StepMetrics[] = [1, 2, 3, 4].map((s) => ({
  step: s,
  loss: 2 / s,
  lr: 3e-4 * s,
  gradNorm: 1 / s,
  tokens: 100 + s,
  tokensPerSec: 1234.5678 * s,
  elapsedMs: s < 3 ? 50 * s : 20 * (s - 2),
}));

function state(id: string, snapshots: RunState['snapshots'] = []): RunState {
  return {
    run: {
      id,
      name: id,
      runDir: `/runs/${id}`,
      status: 'completed',
      kind: 'decoder-only',
      step: 4,
      totalSteps: 4,
      segments: [{ fromStep: 0, toStep: 4, schedule: 'constant' }],
      bestValLoss: null,
      model: null,
      data: null,
    },
    steps,
    evals: [{ step: 2, loss: 1.5, ppl: Math.exp(1.5), exactMatch: null, bleu: null }],
    snapshots,
  };
}

describe('dashboard CSV exports', () => {
  it('metrics of the shown and compared runs equal metricsCsv of the logged steps (elapsed as logged, not the resumed wall clock)', () => {
    const store = new DashboardStore();
    const a = state('a');
    const b = state('b');
    store.apply({ type: 'dashboard/didLoadRuns', runs: [a, b], selectedId: 'a' });
    const csv = runsMetricsCsv([store.run('b'), store.run('a')].filter((r) => r !== undefined));
    expect(csv).toBe(metricsCsv([b, a].map((s) => ({ name: s.run.name, steps: s.steps, evals: s.evals }))));
    const rows = parseCsv(csv);
    expect(rows).toHaveLength(1 + 8);
    expect(rows[1]?.slice(0, 2)).toEqual(['1', 'b']);
    expect(rows[3]?.[9]).toBe('0.02');
  });

  it('head scores of every snapshot of a run', () => {
    const headScores = [
      {
        stack: 'decoder.self' as const,
        layer: 1,
        head: 0,
        scores: { previousToken: 0.7, firstToken: 0.1, diagonal: 0.1, induction: 0.05, entropy: 0.9 },
      },
    ];
    const snap = { step: 4, srcTokens: [], tgtTokens: ['a'], maps: [], masks: [], headScores };
    const store = new DashboardStore();
    store.apply({ type: 'dashboard/didLoadRuns', runs: [state('a', [snap])], selectedId: 'a' });
    const csv = runHeadScoresCsv(store.run('a') as NonNullable<ReturnType<DashboardStore['run']>>);
    expect(csv).toBe(
      headScoresCsv([{ step: 4, stack: 'decoder.self', layer: 2, head: 1, scores: headScores[0]?.scores }]),
    );
  });

  it("head scores of a grouped-query run say each head's key/value head (kvGroup, from 1)", () => {
    const config = presetConfig('decoder-only', 'llama-tiny', 40); // 4 heads, 2 key/value heads
    const scores = { previousToken: 0.7, firstToken: 0.1, diagonal: 0.1, induction: 0.05, entropy: 0.9 };
    const headScores = [0, 1, 2, 3].map((head) => ({ stack: 'decoder.self' as const, layer: 0, head, scores }));
    const snap = { step: 6, srcTokens: [], tgtTokens: ['a'], maps: [], masks: [], headScores };
    const base = state('g', [snap]);
    const model = { config, params: 1, paramsByModule: {}, memoryBytes: 1, flopsPerToken: 1, backend: 'reference' };
    const store = new DashboardStore();
    store.apply({ type: 'dashboard/didLoadRuns', runs: [{ ...base, run: { ...base.run, model } }], selectedId: 'g' });
    const rows = parseCsv(runHeadScoresCsv(store.run('g') as NonNullable<ReturnType<DashboardStore['run']>>));
    expect(rows[0]?.slice(0, 6)).toEqual(['step', 'stack', 'layer', 'head', 'kvGroup', 'previousToken']);
    expect(rows.slice(1).map((r) => `${r[3]}:${r[4]}`)).toEqual(['1:1', '2:1', '3:2', '4:2']);
  });

  it('head scores include the steps whose maps a report left out (RunState.headScores)', () => {
    const scores = (p: number) => ({ previousToken: p, firstToken: 0, diagonal: 0, induction: 0, entropy: 1 });
    const snap = {
      step: 4,
      srcTokens: [],
      tgtTokens: ['a'],
      maps: [],
      masks: [],
      headScores: [{ stack: 'decoder.self' as const, layer: 0, head: 0, scores: scores(0.9) }],
    };
    const store = new DashboardStore();
    store.apply({
      type: 'dashboard/didLoadRuns',
      runs: [
        {
          ...state('a', [snap]),
          headScores: [{ step: 2, heads: [{ stack: 'decoder.self', layer: 0, head: 0, scores: scores(0.5) }] }],
        },
      ],
      selectedId: 'a',
    });
    const rows = parseCsv(runHeadScoresCsv(store.run('a') as NonNullable<ReturnType<DashboardStore['run']>>));
    expect(rows.slice(1).map((r) => [r[0], r[4]])).toEqual([
      ['2', '0.5'],
      ['4', '0.9'],
    ]);
    expect(rows[1]?.[7]).toBe('');
  });
});

describe('export file names', () => {
  it('are plain, short names the host accepts, whatever the run is called', () => {
    expect(exportFileName('run-20261123 (copy)', 'Loss', 800, 'png')).toBe('run-20261123-copy-Loss-step800.png');
    expect(exportFileName('../../etc', '', null, 'csv')).toBe('etc-export.csv');
    expect(exportFileName('Résumé', 'x', null, 'svg')).toBe('Resume-x.svg');
    const long = exportFileName(
      'ü'.repeat(300),
      'Decoder self-attention layer 12 head 16 '.repeat(5),
      123456789,
      'svg',
    );
    expect(long.length).toBeLessThanOrEqual(120);
    for (const fileName of [
      long,
      exportFileName('.hidden', 'x', 1, 'csv'),
      exportFileName('a/b\\c:d', '*?', 0, 'png'),
    ]) {
      expect(
        validateFromWebview({ type: 'export/save', fileName, kind: fileName.slice(-3), content: '' }),
      ).toMatchObject({ fileName });
    }
  });
});
