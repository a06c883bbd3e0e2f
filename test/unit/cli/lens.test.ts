/**
 * `attention-lab lens` and `attention-lab heads --ablate` on tiny trained runs of both kinds, through
 * the built binary: the JSON shapes, the readable tables, and bad input exiting 2 with one line.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LensOutput } from '../../../src/lab/inference/lens';
import type { OpenRun } from '../../../src/lab/inference/openRun';
import { tinyDocuments, tinySpec, trainTiny } from '../lab/tinyRuns';
import { cli } from './cliHarness';

let lm: OpenRun;
let mt: OpenRun;

beforeAll(async () => {
  lm = await trainTiny(tinySpec(await tinyDocuments()));
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
}, 120_000);

const cwd = os.tmpdir();

describe('attention-lab lens', () => {
  it('--json: a layer × position grid of the top-k, for a prompt and for a source and target', () => {
    const d = JSON.parse(
      cli(['lens', '--run', lm.runDir, '--prompt', 'the cat', '--top-k', '3', '--json'], cwd).stdout,
    ) as LensOutput;
    expect(d.tokens.length).toBe(8); // BOS + 7 characters
    expect(d.layers.length).toBe(lm.model.config.nDecoderLayers + 1);
    for (const l of d.layers)
      for (const p of l.positions)
        expect(p.top.map((t) => Object.keys(t).sort())).toEqual([
          ['prob', 'token'],
          ['prob', 'token'],
          ['prob', 'token'],
        ]);
    const e = JSON.parse(
      cli(['lens', '--run', mt.runDir, '--src', 'abc', '--tgt', 'cba', '--json'], cwd).stdout,
    ) as LensOutput;
    expect(e.tokens.length).toBe(4);
    expect(e.layers[0]?.positions[0]?.top.length).toBe(5);
  });

  it('prints a table: a header of positions, then k rows per layer', () => {
    const r = cli(['lens', '--run', lm.runDir, '--prompt', 'the', '--top-k', '2'], cwd);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^layer/);
    expect(lines.length).toBe(1 + 2 * (lm.model.config.nDecoderLayers + 1));
    expect(lines[1]).toMatch(/^emb/);
  });

  it.each([
    [['lens', '--prompt', 'x'], /needs --run/],
    [['lens', '--run', path.join(cwd, 'no-such-run-lens'), '--prompt', 'x'], /./],
    [['lens', '--run', 'RUN_LM', '--prompt', 'x'.repeat(100)], /exceeds the context/],
    [['lens', '--run', 'RUN_LM', '--src', 'x'], /decoder-only/],
    [['lens', '--run', 'RUN_MT', '--prompt', 'x'], /encoder-decoder/],
    [['lens', '--run', 'RUN_LM', '--prompt', 'x', '--top-k', '0'], /--top-k/],
    [['heads', '--ablate'], /needs --run/],
  ])('bad input %j exits 2 with one line', (args, message) => {
    const r = cli(
      args.map((a) => (a === 'RUN_LM' ? lm.runDir : a === 'RUN_MT' ? mt.runDir : a)),
      cwd,
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n').length).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});

describe('attention-lab heads --ablate', () => {
  it('--json: base loss and a finite Δloss per head, layers and heads from 1', () => {
    const r = cli(['heads', '--run', mt.runDir, '--ablate', '--json'], cwd);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout) as {
      baseLoss: number;
      heads: { stack: string; layer: number; head: number; deltaLoss: number }[];
    };
    const cfg = mt.model.config;
    expect(Number.isFinite(d.baseLoss)).toBe(true);
    expect(d.heads.length).toBe(cfg.nHeads * (cfg.nEncoderLayers + 2 * cfg.nDecoderLayers));
    expect(new Set(d.heads.map((h) => h.stack))).toEqual(new Set(['encoder.self', 'decoder.self', 'decoder.cross']));
    expect(Math.min(...d.heads.map((h) => h.layer))).toBe(1);
    expect(Math.min(...d.heads.map((h) => h.head))).toBe(1);
    expect(d.heads.every((h) => Number.isFinite(h.deltaLoss))).toBe(true);
  });

  it('prints a table with one row per head', () => {
    const r = cli(['heads', '--run', lm.runDir, '--ablate'], cwd);
    expect(r.code).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('decoder.self'));
    expect(rows.length).toBe(lm.model.config.nHeads * lm.model.config.nDecoderLayers);
  });
});
