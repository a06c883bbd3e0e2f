import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SNAPSHOT_BUDGET,
  buildReportHtml,
  reportRunState,
  scriptSafeJson,
  snapshotBytes,
  spread,
} from '../../../src/cli/report';
import type { RunState } from '../../../src/protocol/webview';
import { validateToWebview } from '../../../src/protocol/webview';
import { decodeArrays, encodeArrays } from '../../../src/common/wireCodec';
import { parseCsv } from '../../../src/common/csv';
import { cli, tempDir } from './cliHarness';
import { PAIRS_RECORD } from '../../evalOutputs';

const RUN = path.resolve(__dirname, '../../browser/fixtures/run-reverse');

function embedded(html: string): { format: string; version: number; messages: unknown[] } {
  const m = /<script type="application\/json" id="attention-lab-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m) throw new Error('no embedded data');
  return JSON.parse(m[1] as string) as { format: string; version: number; messages: unknown[] };
}

describe('report', () => {
  it('spread keeps the first and last and spaces the rest evenly', () => {
    expect(spread([1, 2, 3, 4, 5, 6, 7, 8, 9], 3)).toEqual([1, 5, 9]);
    expect(spread([1, 2], 5)).toEqual([1, 2]);
    expect(spread([1, 2, 3], 1)).toEqual([3]);
  });

  it('typed arrays survive JSON through the webview decoder', () => {
    const v = { a: Float32Array.of(1.5, -2), b: [Uint8Array.of(0, 255)] };
    const back = decodeArrays(JSON.parse(JSON.stringify(encodeArrays(v)))) as typeof v;
    expect(Array.from(back.a)).toEqual([1.5, -2]);
    expect(Array.from(back.b[0] ?? [])).toEqual([0, 255]);
  });

  it('escapes anything that could end the data script', () => {
    const s = scriptSafeJson({ t: '</script><!-- \u2028' });
    expect(s).not.toMatch(/<\/script|<!--|\u2028/);
    expect(JSON.parse(s)).toEqual({ t: '</script><!-- \u2028' });
  });

  it('builds a page whose only script and style carry the CSP nonce', () => {
    const state: RunState = {
      run: {
        id: 'r',
        name: 'r',
        runDir: 'r',
        status: 'completed',
        kind: 'decoder-only',
        step: 1,
        totalSteps: 1,
        segments: [{ fromStep: 0, toStep: 1, schedule: 'constant' as const }],
        bestValLoss: null,
        model: null,
        data: null,
      },
      steps: [],
      evals: [],
      snapshots: [],
    };
    const html = buildReportHtml({
      states: [state],
      script: 'var x = "</script>";',
      css: 'a{}',
      nonce: 'N0nce',
      title: 'T <x>',
      generatedAt: '2026-01-01T00:00:00Z',
    });
    expect(html).toContain(`content="default-src 'none'; script-src 'nonce-N0nce'; style-src 'nonce-N0nce';`);
    expect(html.match(/<script nonce="N0nce">/g)).toHaveLength(1);
    expect(html.match(/<style nonce="N0nce">/g)).toHaveLength(1);
    expect(html).toContain('var x = "<\\/script>";');
    expect(html).toContain('<title>T &#60;x&#62;</title>');
    expect(html).not.toMatch(/\b(src|href)=/);
    const data = embedded(html);
    expect(data).toMatchObject({ format: 'attention-lab-report', version: 1 });
    expect(validateToWebview(decodeArrays(data.messages[0])).type).toBe('dashboard/didLoadRuns');
  });

  it('reduces run paths to folder names and thins snapshots', () => {
    const snaps = Array.from({ length: 10 }, (_, i) => ({
      step: i,
      srcTokens: [],
      tgtTokens: [],
      maps: [],
      masks: [],
    }));
    const s = reportRunState(
      {
        run: {
          id: '/home/me/runs/r7',
          name: 'r7',
          runDir: '/home/me/runs/r7',
          status: 'completed',
          kind: 'decoder-only',
          step: 1,
          totalSteps: 1,
          segments: [{ fromStep: 0, toStep: 1, schedule: 'constant' as const }],
          bestValLoss: null,
          model: null,
          data: null,
        },
        steps: [],
        evals: [],
        snapshots: snaps,
      },
      4,
    );
    expect(s.run.id).toBe('r7');
    expect(s.run.runDir).toBe('r7');
    expect(s.snapshots.map((x) => x.step)).toEqual([0, 3, 6, 9]);
    expect(s.headScores).toBeUndefined(); // none of these snapshots had scores
    // Evaluations keep their test files by name only.
    const evaluated = reportRunState(
      { ...s, evaluations: [{ ...PAIRS_RECORD, hypothesesFile: '/home/me/out/hyps.txt' }] },
      4,
    );
    expect(evaluated.evaluations?.[0]?.files.map((f) => f.path)).toEqual(['test.tsv']);
    expect(evaluated.evaluations?.[0]?.hypothesesFile).toBe('hyps.txt');
    expect(evaluated.evaluations?.[0]?.translation).toEqual(PAIRS_RECORD.translation);
  });

  it('keeps the head scores of the snapshots it leaves out, so the Heads view loses no step', () => {
    const heads = (v: number): RunState['snapshots'][number]['headScores'] => [
      {
        stack: 'decoder.self',
        layer: 0,
        head: 0,
        scores: { previousToken: v, firstToken: 0, diagonal: 0, induction: v, entropy: 1 },
      },
    ];
    const snaps = Array.from({ length: 10 }, (_, i) => ({
      step: 10 * i,
      srcTokens: [],
      tgtTokens: [],
      maps: [],
      masks: [],
      headScores: heads(i / 10),
    }));
    const run = {
      id: 'r',
      name: 'r',
      runDir: 'r',
      status: 'completed' as const,
      kind: 'decoder-only' as const,
      step: 1,
      totalSteps: 1,
      segments: [{ fromStep: 0, toStep: 1, schedule: 'constant' as const }],
      bestValLoss: null,
      model: null,
      data: null,
    };
    const s = reportRunState({ run, steps: [], evals: [], snapshots: snaps }, 4);
    expect(s.snapshots.map((x) => x.step)).toEqual([0, 30, 60, 90]);
    expect(s.headScores?.map((x) => x.step)).toEqual([10, 20, 40, 50, 70, 80]);
    expect(s.headScores?.[0]?.heads).toEqual(heads(0.1));
    expect(validateToWebview({ type: 'dashboard/didLoadRuns', runs: [s], selectedId: null }).type).toBe(
      'dashboard/didLoadRuns',
    );
  });

  it('by default keeps only as many snapshots as fit the byte budget', () => {
    const big = new Float32Array(DEFAULT_SNAPSHOT_BUDGET / 4 / 5); // a fifth of the budget each
    const snaps = Array.from({ length: 12 }, (_, i) => ({
      step: i,
      srcTokens: [],
      tgtTokens: [],
      maps: [{ stack: 'decoder.self' as const, layer: 0, shape: [1, 1, big.length] as const, data: big }],
      masks: [],
    }));
    const run = {
      id: 'r',
      name: 'r',
      runDir: 'r',
      status: 'completed' as const,
      kind: 'decoder-only' as const,
      step: 1,
      totalSteps: 1,
      segments: [{ fromStep: 0, toStep: 1, schedule: 'constant' as const }],
      bestValLoss: null,
      model: null,
      data: null,
    };
    expect(snapshotBytes(snaps[0] as RunState['snapshots'][number])).toBe(big.byteLength);
    expect(reportRunState({ run, steps: [], evals: [], snapshots: snaps }, null).snapshots.map((x) => x.step)).toEqual([
      0, 3, 6, 8, 11,
    ]);
    expect(reportRunState({ run, steps: [], evals: [], snapshots: snaps }, 12).snapshots).toHaveLength(12);
  });

  it('the CLI writes a report of a run folder with valid embedded messages', () => {
    const t = tempDir();
    try {
      const out = path.join(t.dir, 'sub', 'r.html');
      const r = cli(['report', '--run', RUN, '--out', out, '--max-snapshots', '2', '--json'], t.dir);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const res = JSON.parse(r.stdout) as { out: string; runs: number; snapshots: number; steps: number };
      expect(res).toMatchObject({ out, runs: 1, snapshots: 2 });
      const html = fs.readFileSync(out, 'utf8');
      expect(html).not.toContain(path.dirname(RUN));
      const msg = validateToWebview(decodeArrays(embedded(html).messages[0]));
      if (msg.type !== 'dashboard/didLoadRuns') throw new Error(msg.type);
      const steps = fs
        .readFileSync(path.join(RUN, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"type":"step"')).length;
      expect(msg.runs[0]?.steps).toHaveLength(steps);
      expect(res.steps).toBe(steps);
      expect(msg.runs[0]?.snapshots[0]?.maps[0]?.data).toBeInstanceOf(Float32Array);
    } finally {
      t.cleanup();
    }
  });

  it('says what to pass when --run is missing or is not a run folder', () => {
    const t = tempDir();
    try {
      const a = cli(['report'], t.dir);
      expect(a.code).toBe(2);
      expect(a.stderr).toMatch(/needs --run DIR/);
      const b = cli(['report', '--run', t.dir], t.dir);
      expect(b.code).toBe(2);
      expect(b.stderr).toMatch(/not a run folder/);
    } finally {
      t.cleanup();
    }
  });

  it('--csv writes the metrics of one or more runs, one row per (run, logged step), to stdout or --out', () => {
    const logged = fs
      .readFileSync(path.join(RUN, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { step: number; loss?: number; lr?: number; kind?: string });
    const r = cli(['report', '--run', RUN, '--csv'], RUN);
    expect(r.code, r.stderr).toBe(0);
    const rows = parseCsv(r.stdout);
    expect(rows[0]?.slice(0, 6)).toEqual(['step', 'run', 'train loss', 'val loss', 'val perplexity', 'lr']);
    const stepsLogged = new Set(logged.map((m) => m.step));
    expect(rows.length - 1).toBe(stepsLogged.size);
    expect(rows.slice(1).every((x) => x[1] === 'run-reverse')).toBe(true);
    const firstStep = logged.find((m) => m.lr !== undefined) as { step: number; loss: number; lr: number };
    const row = rows.find((x) => x[0] === String(firstStep.step));
    expect(Number(row?.[2])).toBe(firstStep.loss);
    expect(Number(row?.[5])).toBe(firstStep.lr);
    const tmp = tempDir();
    try {
      const out = path.join(tmp.dir, 'two.csv');
      const two = cli(['report', '--run', RUN, '--run', RUN, '--csv', '--out', out, '--json'], RUN);
      expect(two.code, two.stderr).toBe(0);
      expect(JSON.parse(two.stdout)).toMatchObject({ out, runs: 2, rows: 2 * stepsLogged.size });
      expect(parseCsv(fs.readFileSync(out, 'utf8'))).toHaveLength(1 + 2 * stepsLogged.size);
    } finally {
      tmp.cleanup();
    }
  });
});
