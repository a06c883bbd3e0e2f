import { describe, expect, it } from 'vitest';
import type { HeadScoreData } from '../../../../src/protocol/model';
import {
  HeadHistory,
  STACK_SCORES,
  crossingLabel,
  firstCrossing,
  headRows,
} from '../../../../webview/charts/headHistory';
import { DashboardStore } from '../../../../webview/store';

/** 2 layers × 2 heads of decoder self-attention; induction of layer 2 head 1 is `ind`, every other score `base`. */
function heads(ind: number, base = 0.1): HeadScoreData[] {
  const out: HeadScoreData[] = [];
  for (let layer = 0; layer < 2; layer++) {
    for (let head = 0; head < 2; head++) {
      out.push({
        stack: 'decoder.self',
        layer,
        head,
        scores: {
          previousToken: base,
          firstToken: base,
          diagonal: base,
          induction: layer === 1 && head === 0 ? ind : base,
          entropy: 1 + layer,
        },
      });
    }
  }
  return out;
}

describe('HeadHistory', () => {
  it('keeps one column per head and score, aligned with the steps', () => {
    const h = new HeadHistory();
    h.add(0, heads(0.05));
    h.add(100, heads(0.3));
    h.add(200, heads(0.7));
    const s = h.stacks.get('decoder.self');
    expect(h.steps).toEqual([0, 100, 200]);
    expect(s?.layers).toBe(2);
    expect(s?.heads).toBe(2);
    expect(s?.column('induction', 1, 0)).toEqual([0.05, 0.3, 0.7]);
    expect(s?.column('entropy', 1, 1)).toEqual([2, 2, 2]);
    expect(STACK_SCORES['decoder.cross']).toEqual(['diagonal', 'antiDiagonal', 'entropy']);
  });

  it('replaces a step taken again, truncates on resume, and fills heads a snapshot lacked with NaN', () => {
    const h = new HeadHistory();
    h.add(0, heads(0.05));
    h.add(100, heads(0.3));
    h.add(100, heads(0.4));
    expect(h.steps).toEqual([0, 100]);
    expect(h.stacks.get('decoder.self')?.column('induction', 1, 0)).toEqual([0.05, 0.4]);
    h.add(200, heads(0.9).slice(0, 2));
    expect(h.stacks.get('decoder.self')?.column('induction', 1, 0)).toEqual([0.05, 0.4, NaN]);
    h.truncateAfter(150);
    expect(h.steps).toEqual([0, 100]);
    expect(h.stacks.get('decoder.self')?.column('previousToken', 0, 1)).toEqual([0.1, 0.1]);
    expect(() => h.add(50, heads(0))).toThrow(/step 50 arrived after step 100/);
    expect(h.rowAt(99)).toBe(0);
    expect(h.rowAt(100)).toBe(1);
    expect(h.rowAt(-1)).toBe(-1);
  });

  it('finds the first step where any head reaches a threshold, and labels it', () => {
    const h = HeadHistory.of(
      [],
      [
        { step: 0, heads: heads(0.05) },
        { step: 840, heads: heads(0.62) },
        { step: 900, heads: heads(0.8) },
      ],
    );
    const c = firstCrossing(h, 'decoder.self', 'induction', 0.5);
    expect(c).toEqual({ step: 840, stack: 'decoder.self', layer: 1, head: 0, value: 0.62 });
    expect(crossingLabel('induction', '0.5', c as NonNullable<typeof c>)).toBe('induction ≥ 0.5 · L2H1 · step 840');
    expect(firstCrossing(h, 'decoder.self', 'induction', 0.9)).toBeNull();
    expect(firstCrossing(h, 'decoder.cross', 'diagonal', 0.1)).toBeNull();
    expect(firstCrossing(h, 'decoder.self', 'entropy', 2)?.layer).toBe(1);
  });

  it('merges snapshot scores with extra ones by step, and lists every head as rows', () => {
    const snap = (
      step: number,
      ind: number,
    ): {
      step: number;
      srcTokens: string[];
      tgtTokens: string[];
      maps: [];
      masks: [];
      headScores: HeadScoreData[];
    } => ({ step, srcTokens: [], tgtTokens: [], maps: [], masks: [], headScores: heads(ind) });
    const h = HeadHistory.of([snap(0, 0), snap(300, 0.9)], [{ step: 100, heads: heads(0.2) }]);
    expect(h.steps).toEqual([0, 100, 300]);
    const rows = headRows(h);
    expect(rows).toHaveLength(4);
    expect(rows[2]).toEqual({
      stack: 'decoder.self',
      layer: 1,
      head: 0,
      step: 300,
      scores: { previousToken: 0.1, firstToken: 0.1, diagonal: 0.1, induction: 0.9, entropy: 2 },
    });
  });

  it('grows in the store as snapshots stream in, and says when they are of a selection', () => {
    const store = new DashboardStore();
    const model = {
      config: {
        kind: 'decoder-only' as const,
        dModel: 8,
        nHeads: 2,
        dFF: 16,
        nEncoderLayers: 0,
        nDecoderLayers: 2,
        vocabSize: 270,
        maxLen: 8,
      },
      params: 1,
      paramsByModule: {},
      memoryBytes: 1,
      flopsPerToken: 1,
      backend: 'reference',
    };
    store.apply({
      type: 'run/didUpdate',
      runDir: 'r',
      event: {
        type: 'train/didStart',
        runDir: '/r',
        startStep: 0,
        totalSteps: 10,
        segments: [{ fromStep: 0, toStep: 10, schedule: 'constant' }],
        model,
        data: { description: 'task', documents: 0, bytes: 0, trainTokens: 1, valTokens: 1, skipped: [] },
      },
    });
    for (const [step, ind] of [
      [0, 0],
      [5, 0.6],
    ] as const) {
      store.apply({
        type: 'run/didUpdate',
        runDir: 'r',
        event: {
          type: 'train/didSnapshot',
          step,
          srcTokens: [],
          tgtTokens: [],
          maps: [],
          masks: [],
          headScores: heads(ind),
        },
      });
    }
    const r = store.run('r');
    expect(r?.heads.steps).toEqual([0, 5]);
    expect(r?.heads.selection).toBe(false);
    store.apply({
      type: 'run/didUpdate',
      runDir: 'r',
      event: {
        type: 'train/didStart',
        runDir: '/r',
        startStep: 3,
        totalSteps: 10,
        segments: [{ fromStep: 0, toStep: 10, schedule: 'constant' }],
        model,
        data: { description: 'task', documents: 0, bytes: 0, trainTokens: 1, valTokens: 1, skipped: [] },
      },
    });
    expect(r?.heads.steps).toEqual([0]);
    store.apply({
      type: 'run/didUpdate',
      runDir: 'r',
      event: {
        type: 'train/didSnapshot',
        step: 4,
        srcTokens: [],
        tgtTokens: [],
        maps: [],
        masks: [],
        headScores: heads(0.2),
        source: 'selection',
      },
    });
    expect(r?.heads.selection).toBe(true);
  });
});
